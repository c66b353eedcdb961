package handler_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
)

// printConn is a handler.Conn that prints what is sent: a stand-in for
// the engine's WebSocket and stream connections.
type printConn struct {
	ctx  context.Context
	hide *string // printed as ID: the subscription id, random
}

func (c printConn) Send(msg []byte) error {
	fmt.Printf("pushed: %s\n", strings.ReplaceAll(string(msg), *c.hide, "ID"))
	return nil
}
func (c printConn) CanPush() bool            { return true }
func (c printConn) Context() context.Context { return c.ctx }

func ExampleRegisterSubscription() {
	t := handler.NewTable()
	var last *handler.Subscription
	var id string
	handler.RegisterSubscription(t, "news", func(_ context.Context, p [1]string, sub *handler.Subscription) error {
		last, id = sub, sub.ID() // an event source would keep it, and call Notify until sub.Context() is done
		return nil
	}, handler.Inline())

	connCtx, closeConn := context.WithCancel(context.Background())
	ctx := handler.ContextWithConn(connCtx, printConn{connCtx, &id})
	reply := t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"news_subscribe","params":["sports"],"id":1}`))
	fmt.Println(len(reply) > 0, t.Subscriptions("news"))
	_ = last.Notify(map[string]string{"headline": "3-1"})
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"news_unsubscribe","params":["`+last.ID()+`"],"id":2}`)))
	fmt.Println(last.Notify("late"), t.Subscriptions("news"))
	closeConn()
	// Output:
	// true 1
	// pushed: {"jsonrpc":"2.0","method":"news_subscription","params":{"subscription":"ID","result":{"headline":"3-1"}}}
	// {"jsonrpc":"2.0","result":true,"id":2}
	// jetrpc: connection closed 0
}

// A message encoded and checked once goes to many subscriptions as it
// is, without being encoded again for each.
func ExampleSubscription_NotifyRaw() {
	t := handler.NewTable()
	var subs []*handler.Subscription
	var id string
	handler.RegisterSubscription(t, "prices", func(_ context.Context, _ [1]string, sub *handler.Subscription) error {
		subs, id = append(subs, sub), sub.ID()
		return nil
	}, handler.Inline())
	connCtx, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	ctx := handler.ContextWithConn(connCtx, printConn{connCtx, &id})
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"prices_subscribe","params":["ABC"],"id":1}`))

	msg, err := handler.AppendJSON(nil, map[string]float64{"bid": 101.25}) // compact and valid
	if err != nil {
		panic(err)
	}
	for _, sub := range subs {
		fmt.Println(sub.NotifyRaw(msg))
	}
	// Output:
	// pushed: {"jsonrpc":"2.0","method":"prices_subscription","params":{"subscription":"ID","result":{"bid":101.25}}}
	// <nil>
}

// A subscription service that speaks another protocol's method names:
// here Solana's accountSubscribe, accountUnsubscribe and
// accountNotification.
func ExampleSubscriptionMethods() {
	t := handler.NewTable()
	var last *handler.Subscription
	var id string
	handler.RegisterSubscription(t, "account", func(_ context.Context, p [1]string, sub *handler.Subscription) error {
		last, id = sub, sub.ID()
		return nil
	}, handler.Inline(), handler.SubscriptionMethods(handler.SubscriptionNames{
		Subscribe: "accountSubscribe", Unsubscribe: "accountUnsubscribe", Notification: "accountNotification",
	}))
	for _, m := range t.Methods() {
		fmt.Printf("%s notification=%q unsubscribe=%q\n", m.Name, m.Notification, m.Unsubscribe)
	}
	connCtx, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	ctx := handler.ContextWithConn(connCtx, printConn{connCtx, &id})
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"accountSubscribe","params":["7xKX"],"id":1}`))
	_ = last.Notify(map[string]int{"lamports": 5})
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"accountUnsubscribe","params":["`+id+`"],"id":2}`)))
	// Output:
	// accountSubscribe notification="accountNotification" unsubscribe="accountUnsubscribe"
	// accountUnsubscribe notification="" unsubscribe=""
	// pushed: {"jsonrpc":"2.0","method":"accountNotification","params":{"subscription":"ID","result":{"lamports":5}}}
	// {"jsonrpc":"2.0","result":true,"id":2}
}

// geth's shape: one eth_subscribe whose first param is the kind, one
// eth_unsubscribe and one eth_subscription notification for all kinds.
func ExampleRegisterSubscriptionKinds() {
	t := handler.NewTable()
	type filter struct {
		Address string `json:"address"`
	}
	var heads, logs *handler.Subscription
	var id string
	handler.RegisterSubscriptionKinds(t, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("newHeads", func(_ context.Context, _ struct{}, sub *handler.Subscription) error {
			heads, id = sub, sub.ID()
			return nil
		}),
		handler.NewSubscriptionKind("logs", func(_ context.Context, p struct{ Filter filter }, sub *handler.Subscription) error {
			logs = sub
			fmt.Println("logs of", p.Filter.Address)
			return nil
		}),
	}, handler.Inline())

	connCtx, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	ctx := handler.ContextWithConn(connCtx, printConn{connCtx, &id})
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}`))
	_ = heads.Notify(map[string]string{"number": "0x1b4"})
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe","params":["logs",{"address":"0x8320"}],"id":2}`))
	fmt.Println(t.Subscriptions("eth"), logs != nil)
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe","params":["syncing"],"id":3}`)))
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe","params":["logs",{"address":1}],"id":4}`)))
	// Output:
	// pushed: {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"ID","result":{"number":"0x1b4"}}}
	// logs of 0x8320
	// 2 true
	// {"jsonrpc":"2.0","error":{"code":-32601,"message":"no \"syncing\" subscription in eth namespace"},"id":3}
	// {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: Filter: expected string"},"id":4}
}

// A kind's params follow its name: here ["count", 3].
func ExampleNewSubscriptionKind() {
	t := handler.NewTable()
	count := handler.NewSubscriptionKind("count", func(_ context.Context, p [1]int, sub *handler.Subscription) error {
		fmt.Println("count to", p[0])
		return nil
	})
	handler.RegisterSubscriptionKinds(t, "demo", []handler.SubscriptionKind{count}, handler.Inline())
	for _, k := range t.Methods()[0].Kinds {
		fmt.Println("kind", k.Name, k.ParamsType)
	}
	ctx := handler.ContextWithConn(context.Background(), printConn{context.Background(), new(string)})
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"demo_subscribe","params":["count",3],"id":1}`))
	fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"demo_subscribe","params":["count","three"],"id":2}`)))
	// Output:
	// kind count [1]int
	// count to 3
	// {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: param 2: expected an integer"},"id":2}
}

// labelConn is a handler.Conn that prints what is sent with its label:
// directConn stands in for the engine's Conn of a call (a DirectConn,
// whose messages go before the call's reply), conn for its connection's.
type labelConn struct {
	label string
	ctx   context.Context
	of    handler.Conn // the connection's Conn, for a DirectConn
}

func (c *labelConn) Send(msg []byte) error {
	fmt.Printf("%s: %s\n", c.label, msg)
	return nil
}
func (c *labelConn) CanPush() bool            { return true }
func (c *labelConn) Context() context.Context { return c.ctx }

type directConn struct{ labelConn }

func (c *directConn) Connection() handler.Conn { return c.of }

// A method's progress goes through its context's Conn, before its
// reply; a goroutine that goes on sending after the method returns,
// as a subscription made by hand does, takes the connection's Conn,
// whose messages wait for the replies before them.
func ExampleConnection() {
	t := handler.NewTable()
	handler.Register(t, "job", func(ctx context.Context, _ []int) (string, error) {
		c := handler.ConnFrom(ctx)
		_ = handler.Notify(c, "job_progress", map[string]int{"percent": 50})
		later := handler.Connection(c)
		_ = handler.Notify(later, "job_news", []string{"after the reply"})
		return "done", nil
	}, handler.Inline())

	ctx := context.Background()
	conn := &labelConn{label: "conn", ctx: ctx}
	call := &directConn{labelConn{label: "call", ctx: ctx, of: conn}}
	fmt.Printf("%s\n", t.Dispatch(handler.ContextWithConn(ctx, call), nil, []byte(`{"jsonrpc":"2.0","method":"job","id":1}`)))
	// Output:
	// call: {"jsonrpc":"2.0","method":"job_progress","params":{"percent":50}}
	// conn: {"jsonrpc":"2.0","method":"job_news","params":["after the reply"]}
	// {"jsonrpc":"2.0","result":"done","id":1}
}
