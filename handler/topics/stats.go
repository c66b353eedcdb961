package topics

// NOTE: Stats, the counters of a node's topics, and Topics.Stats, which
// reads them (the counters themselves are fields of Topics, topics.go).

// Stats are the counters of a node's topics (Topics.Stats).
type Stats struct {
	Topics      int    // topics with local subscribers: the node's broker subscriptions
	Subscribers int    // local subscriptions bound to them, a subscription once per binding
	Published   uint64 // messages published on this node (Publish, PublishRaw, Enqueue)
	PublishFail uint64 // of those, publications the broker refused
	Backlog     int64  // bytes of messages Enqueue queued that wait for their fan-out
	BacklogFull uint64 // messages Enqueue refused for the backlog (ErrPublishBacklog)
	Received    uint64 // messages received from the broker
	Invalid     uint64 // of those, messages that were not one JSON value (dropped)
	Delivered   uint64 // notifications taken by local connections
	Dropped     uint64 // notifications refused by a local connection: closed (or its subscription ended a moment before), or too slow to read (and then closed)
}

// Stats returns the counters of h. Safe from any goroutine.
func (h *Topics) Stats() Stats {
	s := Stats{
		Published: h.published.Load(), PublishFail: h.failed.Load(),
		Backlog: h.backlog.Load(), BacklogFull: h.backlogFull.Load(),
		Received: h.received.Load(), Invalid: h.invalid.Load(),
		Delivered: h.delivered.Load(), Dropped: h.dropped.Load(),
	}
	h.mu.Lock()
	s.Topics = len(h.topics)
	for _, t := range h.topics {
		s.Subscribers += len(*t.subs.Load())
	}
	h.mu.Unlock()
	return s
}
