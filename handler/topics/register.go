package topics

import (
	"context"

	"github.com/jetrpc/jetrpc/handler"
)

// NOTE: Register, the JSON-RPC methods of a node's topics: handler's
// subscribe pattern (handler.RegisterSubscription) whose start binds
// the new subscription to the topic named in its params.

// Register registers <ns>_subscribe and <ns>_unsubscribe (see
// handler.RegisterSubscription) on t for the topics of h: <ns>_subscribe
// [name] answers a subscription id, then every message published on the
// topic name reaches the client as {"jsonrpc":"2.0","method":"<ns>_subscription",
// "params":{"subscription":ID,"result":MESSAGE}}. opts apply to
// <ns>_subscribe; handler.SubscriptionMethods among them renames the
// three methods. Topics.Subscribe binds any subscription, so a kind of
// handler.RegisterSubscriptionKinds can serve topics too (eth_subscribe
// ["topic", NAME]) by calling it from its start. A name Valid refuses is answered -32602, a broker's
// refusal -32603. <ns>_subscribe runs inline on a single node; with a
// broker, whose first subscription to a topic is a network round trip,
// it runs on a worker. It panics as handler.RegisterSubscription does
// (an empty or taken namespace), with an error.
func Register(t *handler.Table, ns string, h *Topics, opts ...handler.MethodOption) {
	start := func(_ context.Context, p [1]string, sub *handler.Subscription) error {
		return h.Subscribe(sub, p[0])
	}
	base := []handler.MethodOption{handler.Description("subscribe to the messages published on a topic"), handler.ParamNames("topic")}
	if h.broker == nil {
		base = append(base, handler.Inline())
	}
	handler.RegisterSubscription(t, ns, start, append(base, opts...)...)
}
