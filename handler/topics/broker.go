package topics

// NOTE: the Broker interface, what Topics needs of the transport between
// nodes; its implementations are MemoryBus (memorybus.go) and package
// handler/natsbroker.

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
