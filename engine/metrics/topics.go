package metrics

import (
	"github.com/jetrpc/jetrpc/handler/topics"
	"github.com/prometheus/client_golang/prometheus"
)

// The series of a node's topics (topics.Topics).
var (
	descTopics = desc("topics",
		"Topics with local subscribers: the node's broker subscriptions, one per topic.")
	descTopicSubs = desc("topic_subscribers",
		"Local subscriptions bound to topics.")
	descTopicMessages = desc("topic_messages_total",
		"Topic messages by source: published on this node (local), or received from the broker (broker).", "source")
	descTopicInvalid = desc("topic_messages_invalid_total",
		"Messages from the broker dropped for not being one JSON value.")
	descTopicPublishFailed = desc("topic_publish_failures_total",
		"Publications on this node the broker refused (their local deliveries were made; the log says when refusals begin and end).")
	descTopicDelivered = desc("topic_deliveries_total",
		"Topic notifications by outcome: taken by a local connection (sent), or refused by one closed or too slow to read (dropped).", "outcome")
	descTopicBacklog = desc("topic_publish_backlog_bytes",
		"Bytes of topic messages queued by publish calls that wait for their fan-out and their broker publication.")
	descTopicBacklogFull = desc("topic_publish_refused_total",
		"Topic messages refused (-32000) because the publish backlog was full: the fan-out or the broker is behind.")
	descBrokerUp = desc("broker_connected",
		"1 while the connection to the broker is up, 0 while it is down (messages of other nodes are missed meanwhile).")
)

// TopicsCollector is a prometheus.Collector of the counters of a node's
// topics (topics.Topics.Stats) and, when given, of its broker
// connection's state.
type TopicsCollector struct {
	h         *topics.Topics
	connected func() bool // nil: no broker series
}

// NewTopicsCollector returns the collector of h. connected, when not
// nil, reports whether the broker's connection is up (the NATS broker's
// Connected method); nil leaves out jsonrpc_server_broker_connected, as
// for a single node.
func NewTopicsCollector(h *topics.Topics, connected func() bool) *TopicsCollector {
	return &TopicsCollector{h: h, connected: connected}
}

// Describe implements prometheus.Collector.
func (c *TopicsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTopics, descTopicSubs, descTopicMessages, descTopicInvalid, descTopicPublishFailed, descTopicDelivered, descTopicBacklog, descTopicBacklogFull} {
		ch <- d
	}
	if c.connected != nil {
		ch <- descBrokerUp
	}
}

// Collect implements prometheus.Collector.
func (c *TopicsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.h.Stats()
	gauge(ch, descTopics, int64(s.Topics))
	gauge(ch, descTopicSubs, int64(s.Subscribers))
	counter(ch, descTopicMessages, s.Published, "local")
	counter(ch, descTopicMessages, s.Received, "broker")
	counter(ch, descTopicInvalid, s.Invalid)
	counter(ch, descTopicPublishFailed, s.PublishFail)
	counter(ch, descTopicDelivered, s.Delivered, "sent")
	counter(ch, descTopicDelivered, s.Dropped, "dropped")
	gauge(ch, descTopicBacklog, s.Backlog)
	counter(ch, descTopicBacklogFull, s.BacklogFull)
	if c.connected != nil {
		up := int64(0)
		if c.connected() {
			up = 1
		}
		gauge(ch, descBrokerUp, up)
	}
}

// RegisterTopics registers on reg the collector of h (see
// NewTopicsCollector).
func RegisterTopics(reg prometheus.Registerer, h *topics.Topics, connected func() bool) error {
	return reg.Register(NewTopicsCollector(h, connected))
}
