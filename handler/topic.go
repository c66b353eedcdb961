package handler

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/handler/internal/compact"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// NOTE: topics fan one message out to every subscription bound to a
// name, on this node and, through a Broker, on the other nodes of a
// service (Centrifugo's model). A node holds one broker subscription per
// topic that has local subscribers, however many they are, and drops it
// when the last one leaves. A message is encoded once per node: each
// local subscriber's notification is its own fixed prefix (method and
// subscription id, made when it was bound), the encoded payload, and
// "}}", copied into its connection's bounded push queue by Conn.Send.
// The subscribers of a topic are a copy-on-write slice, read without a
// lock by every delivery.

// Broker carries the messages published on topics between the nodes of
// a service: the processes that serve the same topics, usually behind
// one load balancer. Topics uses one Broker per node; a nil Broker is a
// single node. handler/natsbroker implements it over NATS; MemoryBus
// joins nodes in one process. Its methods are safe from any goroutine.
type Broker interface {
	// Subscribe makes deliver receive the payload of every message that
	// other nodes (or other publishers of the broker) publish on topic,
	// until stop is called; after stop returns, deliver is not called
	// again. Calls of deliver for one subscription are sequential, in the
	// broker's order; the payload is valid only during the call.
	Subscribe(topic string, deliver func(payload []byte)) (stop func(), err error)
	// Publish sends payload, one JSON value, to the subscriptions of the
	// other nodes on topic. It must not deliver it to this node's own
	// subscriptions: Topics delivers to its local subscribers itself.
	// topic and payload are valid only during the call (copy them to
	// keep them). Calls are made in the order of Topics.Enqueue for a
	// topic, one at a time, and should not block long: a broker buffers.
	Publish(topic string, payload []byte) error
}

// MaxTopicLen is the longest topic name.
const MaxTopicLen = 255

// ErrInvalidTopic is the error for a topic name ValidTopic refuses; a
// method answers it as -32602.
var ErrInvalidTopic = &Error{Code: parser.CodeInvalidParams, Message: "Invalid params: a topic name is 1 to 255 of A-Z a-z 0-9 _ - : / = + @, in parts separated by single dots"}

// ValidTopic reports whether name can name a topic: 1 to MaxTopicLen
// bytes of ASCII letters, digits and "_-:/=+@", in non-empty parts
// separated by dots. Those names are valid NATS subjects as they are.
func ValidTopic(name string) bool {
	if len(name) == 0 || len(name) > MaxTopicLen {
		return false
	}
	prev := byte('.')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == ':', c == '/', c == '=', c == '+', c == '@':
		case c == '.':
			if prev == '.' {
				return false
			}
		default:
			return false
		}
		prev = c
	}
	return prev != '.'
}

// Topics holds the topics of one node: which local subscriptions listen
// to each, and the node's broker subscriptions. Make it with NewTopics;
// its methods are safe from any goroutine.
type Topics struct {
	broker Broker       // nil: one node
	log    *slog.Logger // never nil

	mu     sync.Mutex
	topics map[string]*topic // topics with local subscribers; guarded by mu

	delivered atomic.Uint64 // notifications queued to local subscribers
	dropped   atomic.Uint64 // notifications refused by a connection (closed, or too slow)
	received  atomic.Uint64 // messages received from the broker
	invalid   atomic.Uint64 // messages received from the broker that were not one JSON value
	published atomic.Uint64 // messages published here
	failed    atomic.Uint64 // publications the broker refused
	failing   atomic.Bool   // the last queued publication was refused (its failure was logged)

	shards      []pubShard   // Enqueue's queues (topic_queue.go)
	backlog     atomic.Int64 // bytes in them
	backlogMax  int64        // WithPublishBacklog
	backlogFull atomic.Uint64
}

// topicBuffers hold the messages of topics while they are encoded and
// fanned out. Not a pool.Buffers: bytebufferpool drops every buffer
// larger than 95% of those put back, so that the messages of a topic
// larger than most (or than the replies) would allocate at every
// fan-out. Get with getTopicBuffer, give back with putTopicBuffer.
var topicBuffers = sync.Pool{New: func() any { return new([]byte) }}

// getTopicBuffer returns an empty buffer, which must be given back with
// putTopicBuffer.
func getTopicBuffer() *[]byte {
	b := topicBuffers.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// putTopicBuffer gives b back, unless it is over pool.DefaultMaxPooled;
// b and its bytes must not be used after.
func putTopicBuffer(b *[]byte) {
	if cap(*b) <= pool.DefaultMaxPooled {
		topicBuffers.Put(b)
	}
}

// topic is one topic with local subscribers.
type topic struct {
	name  string
	subs  atomic.Pointer[[]*Subscription] // copy-on-write; writers hold Topics.mu
	ready chan struct{}                   // closed once the broker subscription is made (or failed)
	stop  func()                          // ends the broker subscription; set before ready is closed, nil without one
	err   error                           // the broker's refusal; set before ready is closed
}

// NewTopics returns the topics of a node that shares them with other
// nodes through b; a nil b makes a single node (in-process fan-out
// only). log receives broker errors; nil means slog.Default().
func NewTopics(b Broker, log *slog.Logger, opts ...TopicsOption) *Topics {
	if log == nil {
		log = slog.Default()
	}
	h := &Topics{broker: b, log: log, topics: map[string]*topic{}, backlogMax: DefaultPublishBacklog}
	for _, o := range opts {
		o(h)
	}
	h.newShards()
	return h
}

// lookup returns the topic name with local subscribers, nil for none.
func (h *Topics) lookup(name string) *topic {
	h.mu.Lock()
	t := h.topics[name]
	h.mu.Unlock()
	return t
}

// Subscribe binds s to the topic name: from now on, until s ends, every
// message published on it — here with Publish, or on another node — is
// sent to s's client as one notification of s, whose result is the
// message. The first local subscriber of a topic makes the node's broker
// subscription; when the last one ends, it is dropped. It returns
// ErrInvalidTopic for a name ValidTopic refuses, ErrConnClosed when s
// has ended, and the broker's error (s is then not bound). A
// subscription may be bound to several topics; binding it twice to one
// delivers each message twice.
func (h *Topics) Subscribe(s *Subscription, name string) error {
	if !ValidTopic(name) {
		return ErrInvalidTopic
	}
	if s.Context().Err() != nil {
		return ErrConnClosed
	}
	h.mu.Lock()
	t := h.topics[name]
	made := t == nil
	if made {
		t = &topic{name: name, ready: make(chan struct{})}
		empty := []*Subscription{}
		t.subs.Store(&empty)
		h.topics[name] = t
	}
	h.addLocked(t, s) // local messages reach s at once, while the broker subscribes
	h.mu.Unlock()
	if made {
		h.subscribeBroker(t)
	} else {
		<-t.ready
	}
	if t.err != nil {
		h.remove(t, s)
		return &TopicError{Op: "subscribe", Topic: name, Err: t.err}
	}
	context.AfterFunc(s.Context(), func() { h.remove(t, s) })
	return nil
}

// errBrokerPanicked is the error of a topic whose broker panicked in
// Subscribe.
var errBrokerPanicked = errors.New("the broker panicked")

// subscribeBroker makes t's broker subscription, then closes t.ready. A
// panic of the broker is t's error: the subscribers waiting on t.ready
// must not wait forever, nor stay bound to a topic without one.
func (h *Topics) subscribeBroker(t *topic) {
	defer close(t.ready)
	if h.broker == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			t.stop, t.err = nil, errBrokerPanicked
			h.log.Error("jetrpc: the broker panicked subscribing to a topic", "topic", t.name, "panic", r)
		}
	}()
	t.stop, t.err = h.broker.Subscribe(t.name, func(payload []byte) { h.receive(t, payload) })
}

// addLocked appends s to t's subscribers. h.mu must be held.
func (h *Topics) addLocked(t *topic, s *Subscription) {
	old := *t.subs.Load()
	subs := make([]*Subscription, len(old), len(old)+1)
	copy(subs, old)
	subs = append(subs, s)
	t.subs.Store(&subs)
}

// remove takes s out of t's subscribers (once: later calls do nothing)
// and drops the topic, and its broker subscription, after the last one.
func (h *Topics) remove(t *topic, s *Subscription) {
	h.mu.Lock()
	old := *t.subs.Load()
	i := 0
	for i < len(old) && old[i] != s {
		i++
	}
	if i == len(old) {
		h.mu.Unlock()
		return
	}
	subs := make([]*Subscription, 0, len(old)-1)
	subs = append(subs, old[:i]...)
	subs = append(subs, old[i+1:]...)
	t.subs.Store(&subs)
	last := len(subs) == 0 && h.topics[t.name] == t
	if last {
		delete(h.topics, t.name)
	}
	h.mu.Unlock()
	if last {
		<-t.ready // a failed Subscribe removes its s before the broker has answered
		if t.stop != nil {
			t.stop()
		}
	}
}

// Publish sends payload, encoded once as AppendJSON does (Raw and
// json.RawMessage after a validity check, compacted), to every
// subscription bound to the topic name: this node's own at once, and,
// through the broker, those of the other nodes. It returns the number
// of local subscribers whose connections took the notification. A
// broker's refusal is returned, as a *TopicError, with that number (the
// local deliveries are made). Safe from any goroutine; it does not
// block on the local subscribers (their connections queue), but a
// broker's Publish may (NATS while its buffer is full), so call it from
// a worker or a goroutine of your own, not from an inline method (which
// has Enqueue). Messages published from one goroutine reach each
// subscriber in order; those of concurrent Publish calls on one topic
// may reach two subscribers in two orders (Enqueue keeps one order).
func (h *Topics) Publish(name string, payload any) (int, error) {
	if !ValidTopic(name) {
		return 0, ErrInvalidTopic
	}
	b := getTopicBuffer()
	defer putTopicBuffer(b)
	var err error
	if *b, err = AppendJSON(*b, payload); err != nil {
		return 0, err
	}
	return h.publish(name, *b)
}

// PublishRaw is Publish of payload, one JSON value, without boxing it
// in an interface: it allocates nothing. An invalid payload is refused
// with an error and delivered to no one.
func (h *Topics) PublishRaw(name string, payload []byte) (int, error) {
	if !ValidTopic(name) {
		return 0, ErrInvalidTopic
	}
	b := getTopicBuffer()
	defer putTopicBuffer(b)
	var reason string
	if *b, reason = appendRaw(*b, payload); reason != "" {
		return 0, errInvalidPayload
	}
	return h.publish(name, *b)
}

// errInvalidPayload refuses a PublishRaw payload that is not one JSON
// value.
var errInvalidPayload = errors.New("jetrpc: a topic message must be one valid JSON value")

// publish sends msg, one compact valid JSON value, to the topic name's
// local subscribers and to the broker.
func (h *Topics) publish(name string, msg []byte) (int, error) {
	h.published.Add(1)
	n := 0
	if t := h.lookup(name); t != nil {
		n = h.fanOut(t, msg)
	}
	if h.broker != nil {
		if err := h.broker.Publish(name, msg); err != nil {
			h.failed.Add(1)
			return n, &TopicError{Op: "publish", Topic: name, Err: err}
		}
	}
	return n, nil
}

// TopicError is a broker's refusal to subscribe to or publish on a
// topic.
type TopicError struct {
	Op    string // "subscribe" or "publish"
	Topic string
	Err   error // the broker's error
}

// Error implements error.
func (e *TopicError) Error() string {
	return "jetrpc: broker: " + e.Op + " on topic " + strconv.Quote(e.Topic) + ": " + e.Err.Error()
}

// Unwrap returns the broker's error.
func (e *TopicError) Unwrap() error { return e.Err }

// receive delivers a message from the broker to t's local subscribers.
func (h *Topics) receive(t *topic, payload []byte) {
	h.received.Add(1)
	if !parser.Valid(payload) {
		h.invalid.Add(1)
		h.log.Warn("jetrpc: a message from the broker is not one JSON value; dropped", "topic", t.name, "bytes", len(payload))
		return
	}
	// Compact, as Publish sends its own: a foreign publisher's newlines
	// would break the line framing of stream connections.
	b := getTopicBuffer()
	*b = compact.Append(*b, payload)
	h.fanOut(t, *b)
	putTopicBuffer(b)
}

// fanOut sends payload, one valid JSON value, to t's subscribers; it
// returns how many connections took it. A topic with many subscribers
// is sent to by several goroutines, each a part of the subscribers
// (fanout.go); fanOut returns once all are sent to, so that each
// subscriber gets the messages of one caller in order.
func (h *Topics) fanOut(t *topic, payload []byte) int {
	subs := *t.subs.Load()
	if len(subs) == 0 {
		return 0
	}
	var n int
	if parts := fanOutParts(len(subs)); parts > 1 {
		n = fanOutParallel(subs, payload, parts)
	} else {
		n = sendAll(subs, payload)
	}
	h.delivered.Add(uint64(n))
	h.dropped.Add(uint64(len(subs) - n))
	return n
}

// sendAll sends payload to subs; it returns how many took it.
func sendAll(subs []*Subscription, payload []byte) int {
	n := 0
	for _, s := range subs {
		if s.NotifyRaw(payload) == nil {
			n++
		}
	}
	return n
}

// Local returns the number of local subscriptions bound to the topic
// name.
func (h *Topics) Local(name string) int {
	t := h.lookup(name)
	if t == nil {
		return 0
	}
	return len(*t.subs.Load())
}

// TopicStats are the counters of a node's topics (Topics.Stats).
type TopicStats struct {
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

// Stats returns the counters of h.
func (h *Topics) Stats() TopicStats {
	s := TopicStats{
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

// RegisterTopics registers <ns>_subscribe and <ns>_unsubscribe (see
// RegisterSubscription) for the topics of h: <ns>_subscribe [name]
// answers a subscription id, then every message published on the topic
// name reaches the client as {"jsonrpc":"2.0","method":"<ns>_subscription",
// "params":{"subscription":ID,"result":MESSAGE}}. opts apply to
// <ns>_subscribe. A name ValidTopic refuses is answered -32602, a
// broker's refusal -32603. <ns>_subscribe runs inline on a single node;
// with a broker, whose first subscription to a topic is a network round
// trip, it runs on a worker.
func RegisterTopics(t *Table, ns string, h *Topics, opts ...MethodOption) error {
	start := func(_ context.Context, p [1]string, sub *Subscription) error {
		return h.Subscribe(sub, p[0])
	}
	base := []MethodOption{Description("subscribe to the messages published on a topic"), ParamNames("topic")}
	if h.broker == nil {
		base = append(base, Inline())
	}
	return registerSubscription(t, ns, start, append(base, opts...)...)
}

// MemoryBus joins the Topics of several nodes in one process: a Broker
// for each (Node), for tests and for several tables served by one
// process. Messages are delivered synchronously, in Publish.
type MemoryBus struct {
	mu   sync.Mutex
	subs map[string][]*memorySub // guarded by mu
}

type memorySub struct {
	node    *memoryNode
	deliver func([]byte)
	mu      sync.Mutex // held by a delivery; stop takes it so that no delivery follows
	stopped bool
}

type memoryNode struct{ bus *MemoryBus }

// NewMemoryBus returns an empty bus.
func NewMemoryBus() *MemoryBus { return &MemoryBus{subs: map[string][]*memorySub{}} }

// Node returns the Broker of one more node on the bus.
func (m *MemoryBus) Node() Broker { return &memoryNode{bus: m} }

// Subscriptions returns the bus's live subscriptions on topic, all nodes
// together.
func (m *MemoryBus) Subscriptions(topic string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.subs[topic])
}

// Subscribe implements Broker.
func (n *memoryNode) Subscribe(topic string, deliver func([]byte)) (func(), error) {
	if deliver == nil {
		return nil, errors.New("jetrpc: MemoryBus: nil deliver")
	}
	s := &memorySub{node: n, deliver: deliver}
	m := n.bus
	m.mu.Lock()
	m.subs[topic] = append(m.subs[topic], s)
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		list := m.subs[topic]
		for i, x := range list {
			if x == s {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(m.subs, topic)
		} else {
			m.subs[topic] = list
		}
		m.mu.Unlock()
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}, nil
}

// Publish implements Broker.
func (n *memoryNode) Publish(topic string, payload []byte) error {
	m := n.bus
	m.mu.Lock()
	list := append([]*memorySub(nil), m.subs[topic]...)
	m.mu.Unlock()
	for _, s := range list {
		if s.node == n {
			continue
		}
		s.mu.Lock()
		if !s.stopped {
			s.deliver(payload)
		}
		s.mu.Unlock()
	}
	return nil
}
