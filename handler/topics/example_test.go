package topics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// printConn is a connection that prints what it is sent, with the
// random subscription id *hide replaced by ID.
type printConn struct {
	ctx  context.Context
	hide *string
}

func (c printConn) Send(msg []byte) error {
	fmt.Printf("pushed: %s\n", strings.ReplaceAll(string(msg), *c.hide, "ID"))
	return nil
}
func (c printConn) CanPush() bool            { return true }
func (c printConn) Context() context.Context { return c.ctx }

// Two nodes of one service share their topics through a broker (here a
// MemoryBus; NATS across processes): a message published on one reaches
// the subscribers of both, once each.
func ExampleTopics() {
	bus := topics.NewMemoryBus()
	nodeA, nodeB := topics.New(bus.Node(), nil), topics.New(bus.Node(), nil)
	tabA, tabB := handler.NewTable(), handler.NewTable()
	topics.Register(tabA, "topic", nodeA)
	topics.Register(tabB, "topic", nodeB)

	// One client on each node subscribes to prices.ABC.
	connCtx, closeConns := context.WithCancel(context.Background())
	defer closeConns()
	subscribe := func(tab *handler.Table, id *string) {
		ctx := handler.ContextWithConn(connCtx, printConn{connCtx, id})
		reply := tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["prices.ABC"],"id":1}`))
		var r struct{ Result string }
		_ = json.Unmarshal(reply, &r)
		*id = r.Result
	}
	var idA, idB string
	subscribe(tabA, &idA)
	subscribe(tabB, &idB)
	fmt.Println(nodeA.Local("prices.ABC"), nodeB.Local("prices.ABC"), bus.Subscriptions("prices.ABC"))

	// Published on A: A delivers to its own subscriber, the bus to B's.
	n, err := nodeA.Publish("prices.ABC", handler.Raw(`{"bid": 101.25}`))
	fmt.Println(n, err)
	fmt.Println(nodeB.Stats().Received, topics.Valid("prices.*"))
	fmt.Println(nodeA.Publish("prices.*", 1))
	// Output:
	// 1 1 2
	// pushed: {"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"ID","result":{"bid":101.25}}}
	// pushed: {"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"ID","result":{"bid":101.25}}}
	// 1 <nil>
	// 1 false
	// 0 jetrpc: Invalid params: a topic name is 1 to 255 of A-Z a-z 0-9 _ - : / = + @, in parts separated by single dots (code -32602)
}
