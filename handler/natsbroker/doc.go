// Package natsbroker implements topics.Broker (package handler/topics)
// over NATS, so that the topics of several jetrpc nodes (topics.Topics)
// are one set of topics:
// a message published on any node reaches the subscribers of every node.
//
// # Overview
//
// A node dials one NATS connection with Connect and gives the Broker to
// topics.New:
//
//	b, err := natsbroker.Connect("nats://nats:4222", natsbroker.WithName("node-1"))
//	if err != nil {
//		return err // names the URL; nothing listening fails at once
//	}
//	defer b.Close()
//	node := topics.New(b, logger)
//	topics.Register(table, "topic", node)
//
// # Terminology
//
// A node is one process serving the topics (one topics.Topics). A local
// subscriber is one client subscription bound to a topic on that node.
// The subject of topic T is Prefix+"."+T, "jetrpc.topic.T" by default
// (WithPrefix); names topics.Valid accepts are valid NATS subject
// tokens as they are, and contain no wildcard.
//
// # Model
//
// A node holds one NATS subscription per topic that has local
// subscribers, however many they are: topics.Topics subscribes the
// broker for the first local subscriber of a topic and stops that
// subscription when the last one leaves. A message crosses the network
// once per node that listens to its topic and is encoded once per node;
// topics.Topics fans it out to the local subscribers.
//
// The connection is made with nats.NoEcho: the server never sends a node
// its own publications, because topics.Topics has already delivered
// them to the node's local subscribers itself. Echo would deliver them
// twice.
//
// The payload of a message is one JSON value, sent as it is. Programs
// that are not jetrpc nodes may publish on a topic by publishing raw
// JSON on its subject (for example "jetrpc.topic.news"); a payload that
// is not one JSON value is dropped by the receiving node and counted in
// topics.Stats.Invalid, never sent to clients.
//
// # Delivery guarantees
//
// Delivery is at-most-once, that of core NATS: there is no persistence,
// acknowledgement or redelivery. Messages of one publisher on one topic
// reach a subscriber in the order published.
//
// The connection reconnects forever (nats.MaxReconnects(-1)), every
// DefaultReconnectWait plus jitter, and logs each disconnect, reconnect
// and close. While a node is disconnected its calls keep being answered
// and its local fan-out keeps working; only the traffic between nodes
// stops:
//
//   - The node's publications are kept in the NATS client's reconnect
//     buffer (nats.ReconnectBufSize, 8 MiB by default) and sent when it
//     reconnects; past that buffer, Publish returns
//     nats.ErrReconnectBufExceeded and the message reaches the other
//     nodes not at all (topics.Topics counts it in PublishFail; the
//     local subscribers have it).
//   - Messages published by other nodes while this node's connection is
//     down are lost for this node's subscribers: the server holds nothing
//     for a disconnected client. A buffered publication of another node
//     that reconnects before this one is lost for it too.
//   - Subscriptions made while disconnected succeed at once and are sent
//     to the server, with the existing ones, when the connection is made
//     again.
//
// Connect fails, with an error naming the URL, when no server answers
// the first dial: `jetrpc serve --broker` then stops at start-up with a
// clear message instead of serving a node cut off from the others. Give
// nats.RetryOnFailedConnect(true) with WithNATSOptions to start without
// a server and connect in the background instead.
//
// # Concurrency
//
// The methods of a Broker are safe from any goroutine. The NATS client
// runs one goroutine per subscription (its async subscriptions have one
// each), which calls deliver for the messages of that topic, one at a
// time and in order; with one subscription per topic per node, that is
// one goroutine per topic with local subscribers. Subscribe waits for the
// server to acknowledge the subscription (a round trip, at most
// DefaultFlushTimeout, WithFlushTimeout) when connected, so that
// messages published after it returns reach it.
//
// # Limits
//
// Each subscription queues the messages that its goroutine has not yet
// delivered, up to DefaultPendingMsgs messages and DefaultPendingBytes
// bytes (WithPendingLimits). Past either, the NATS client drops the
// messages that arrive (a slow consumer): they are lost for the node's
// subscribers, and the broker logs a warning once per episode with the
// subject and the count dropped so far. Delivery only copies a message
// into the connections' bounded push queues, so the queue builds only
// when the process is starved of CPU.
//
// Messages larger than the server's max_payload (1 MiB by default) are
// refused by Publish (nats.ErrMaxPayload).
package natsbroker
