// Package topics fans one message out to every subscription bound to a
// name (a topic), on this node and, through a Broker, on the other
// nodes of a service: Centrifugo's model, served as JSON-RPC
// subscriptions of package handler.
//
// # Overview
//
// A node makes its Topics with New and serves them with Register, as
// <ns>_subscribe [name] and <ns>_unsubscribe [id] (handler's subscribe
// pattern):
//
//	node := topics.New(nil, logger) // nil: a single node
//	topics.Register(table, "topic", node)
//	n, err := node.Publish("prices.ABC", handler.Raw(`{"bid":101.25}`))
//
// After <ns>_subscribe ["prices.ABC"] answers a subscription id, every
// message published on prices.ABC reaches the client as
// {"jsonrpc":"2.0","method":"<ns>_subscription","params":{"subscription":ID,"result":MESSAGE}}.
// Publish and PublishRaw send at once, from a worker or a goroutine of
// yours; Enqueue publishes from an inline method (queued in order, it
// never blocks the event loop). Topics.Subscribe binds a subscription
// made by a subscribe method of your own.
//
// With a Broker the topics of several nodes are one set: package
// handler/natsbroker implements it over NATS, and MemoryBus joins nodes
// in one process (tests, several tables in one server).
//
// # Terminology
//
// A node is one process serving the topics (one Topics); a local
// subscriber is one client subscription bound to a topic on that node.
// A topic name is what Valid accepts: 1 to MaxLen bytes of ASCII
// letters, digits and "_-:/=+@", in non-empty parts separated by dots
// (valid NATS subjects as they are). A message is one JSON value.
//
// # Model
//
// A node holds one broker subscription per topic that has local
// subscribers, however many they are, and drops it when the last one
// leaves. A message is checked and compacted once per node, then sent
// to each local subscriber with handler.Subscription.NotifyPrepared; a
// topic with many subscribers is sent to by several goroutines, each a
// part of them.
//
// # Compression
//
// A message is compressed at most once per node, whatever the number of
// subscribers: the engine's WebSocket connections that negotiated
// permessage-deflate share one compressed copy of the message
// (handler.Prepared.Deflated, made by the first of them), each sent
// behind its own uncompressed head — the notification up to the
// subscription id and "result": — in a DEFLATE stored block, so that an
// event loop only frames and copies it. Other subscribers (no
// compression, streams, messages under the engine's CompressionMinSize)
// get the plain notification. Measured (package engine's
// BenchmarkFanOutCompression, a 2 KB JSON message to 10,000 WebSocket
// subscribers, on 2 cores): about 260 ns of the event loops' CPU and
// 483 bytes on the wire per delivery compressed once, against 5.2 µs
// and 443 bytes compressed per subscriber, and 850 ns and 2,127 bytes
// not compressed (BenchmarkFanOutLoopback, over loopback sockets: 6.1,
// 11.0 and 7.0 µs). The broker never echoes a node's own publications: the node has
// delivered them to its local subscribers itself. Delivery is at most
// once, in order per publishing goroutine (Publish) or per node (Enqueue).
//
// # Concurrency
//
// The methods of Topics, MemoryBus and a Broker are safe from any
// goroutine. Publish and PublishRaw return once the local subscribers'
// connections have queued the message and the broker has taken it; a
// broker may block (NATS while its buffer is full), so they belong on a
// worker, not in an inline method. Enqueue never blocks: a goroutine per
// shard of topics fans the queued messages out and publishes them, in
// the order Enqueue took them. A subscription leaves its topics when it
// ends (unsubscribe, Unsubscribe, its connection's close), on a
// goroutine of its own (context.AfterFunc).
//
// # Buffer lifetimes
//
// Nothing returned aliases a buffer. Publish, PublishRaw and Enqueue do
// not keep their payload: Enqueue copies it into its queue. A Broker's
// deliver func gets a payload valid only during the call, and its
// Publish a topic and payload valid only during the call.
//
// # Limits
//
// A topic name is at most MaxLen bytes. Enqueue holds at most
// DefaultPublishBacklog bytes of waiting messages (WithPublishBacklog);
// past it it answers ErrPublishBacklog (-32000, to be retried). A
// subscriber that stops reading is disconnected, not waited for (the
// engine's MaxPushQueue); the live subscriptions count against the
// table's MaxSubscriptionsPerConn and MaxSubscriptions.
package topics
