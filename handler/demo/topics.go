package demo

import (
	"context"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
	"github.com/jetrpc/jetrpc/parser"
)

// TopicParams are the params of topic_publish: [name, payload].
type TopicParams struct {
	Name    string      `json:"name"`
	Payload handler.Raw `json:"payload"`
}

// RegisterTopics registers the topic methods of jetrpc serve on t, over
// the topics of h (shared with other nodes when h has a broker):
//
//   - topic_subscribe ([name]) → a subscription id, then a
//     topic_subscription notification for every message published on the
//     topic name, here or on another node, whose result is the message;
//     topic_unsubscribe ([id]) → true. Over WebSocket and streams only.
//   - topic_publish ([name, payload]) → the number of this node's
//     subscribers the payload (any JSON value) is sent to; the other
//     nodes send it to theirs. It runs inline and queues the message
//     (topics.Topics.Enqueue): the messages of one connection reach
//     every subscriber in the order it sent them, and neither a large
//     fan-out nor a slow broker stalls an event loop. While the queue is
//     full the answer is -32000, to be retried.
//
// Topic names are those topics.Valid accepts; others are answered
// -32602. topic_subscribe runs inline on a single node, on a worker with
// a broker (topics.Register).
func RegisterTopics(t *handler.Table, h *topics.Topics) {
	topics.Register(t, "topic", h)
	handler.Register(t, "topic_publish", func(_ context.Context, p TopicParams) (int, error) {
		n, err := h.Enqueue(p.Name, p.Payload)
		if err != nil {
			if e, ok := err.(*handler.Error); ok {
				return 0, e
			}
			return 0, &handler.Error{Code: parser.CodeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		return n, nil
	}, handler.Description("publish payload on topic name; answers the number of local subscribers it is sent to"),
		handler.ParamNames("name", "payload"), handler.Inline())
}
