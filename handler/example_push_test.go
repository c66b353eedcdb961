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
