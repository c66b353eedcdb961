package handler_test

// Tests of server push (push.go): AppendJSON, Notify, and the Conn in a
// context.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// recConn records what is sent to it.
type recConn struct {
	ctx  context.Context
	push bool
	mu   sync.Mutex
	sent []string
}

func (c *recConn) Send(msg []byte) error {
	if !c.push {
		return handler.ErrPushUnsupported
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, string(msg))
	return nil
}

func (c *recConn) CanPush() bool            { return c.push }
func (c *recConn) Context() context.Context { return c.ctx }

func TestAppendJSON_values(t *testing.T) {
	type point struct {
		X, Y int
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "null"}, {"a\"b<", `"a\"b<"`}, {42, "42"}, {int64(-7), "-7"}, {uint64(7), "7"}, {true, "true"},
		{handler.Raw(` { "a" : [1, 2] } `), `{"a":[1,2]}`}, {json.RawMessage(`[1]`), `[1]`},
		{point{1, 2}, `{"X":1,"Y":2}`}, {[]string{"x"}, `["x"]`},
	} {
		got, err := handler.AppendJSON(nil, c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%#v: %s %v, want %s", c.v, got, err, c.want)
		}
	}
	if _, err := handler.AppendJSON(nil, handler.Raw(`{`)); err == nil {
		t.Error("invalid Raw accepted")
	}
	if _, err := handler.AppendJSON(nil, make(chan int)); err == nil {
		t.Error("a channel accepted")
	}
}

func TestNotify_sendsNotifications(t *testing.T) {
	c := &recConn{ctx: context.Background(), push: true}
	if err := handler.Notify(c, "ev", []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := handler.Notify(c, "ping", nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.sent, "\n") != `{"jsonrpc":"2.0","method":"ev","params":[1,2]}`+"\n"+`{"jsonrpc":"2.0","method":"ping"}` {
		t.Fatalf("%q", c.sent)
	}
	if err := handler.Notify(nil, "x", nil); err != handler.ErrConnClosed {
		t.Fatal(err)
	}
	if handler.ConnFrom(context.Background()) != nil {
		t.Fatal("a conn from nowhere")
	}
}

type uncomparableConn struct {
	ctx  context.Context
	tags map[string]string
}

func (c uncomparableConn) Send([]byte) error        { return nil }
func (c uncomparableConn) CanPush() bool            { return true }
func (c uncomparableConn) Context() context.Context { return c.ctx }

// Regression from a review of the push API: an uncomparable Conn made unsubscribe panic.
//
// A Conn must be comparable (subscriptions compare connections):
// ContextWithConn says so at once rather than an unsubscribe panicking.
func TestContextWithConn_uncomparableConnPanics(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "not comparable") {
			t.Fatalf("recovered %v", v)
		}
	}()
	handler.ContextWithConn(context.Background(), uncomparableConn{ctx: context.Background(), tags: map[string]string{}})
}

// directRec is a DirectConn over its connection's recConn.
type directRec struct {
	recConn
	of handler.Conn
}

func (d *directRec) Connection() handler.Conn { return d.of }

// TestConnection_subscriptionsUseTheConnections: a subscription made
// through a DirectConn sends through, and is owned by, the connection's
// Conn, so that an unsubscribe through another call's DirectConn of the
// same connection finds it, and one of another connection does not.
func TestConnection_subscriptionsUseTheConnections(t *testing.T) {
	tab := handler.NewTable()
	var sub *handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, _ []int, s *handler.Subscription) error {
		sub = s
		return nil
	}, handler.Inline())
	ctx := context.Background()
	conn := &recConn{ctx: ctx, push: true}
	call := func(of handler.Conn) context.Context {
		return handler.ContextWithConn(ctx, &directRec{recConn{ctx: ctx, push: true}, of})
	}
	reply := tab.Dispatch(call(conn), nil, []byte(`{"jsonrpc":"2.0","method":"s_subscribe","params":[],"id":1}`))
	if sub == nil || sub.Conn() != conn {
		t.Fatalf("the subscription's Conn is not the connection's: %s", reply)
	}
	if err := sub.Notify(1); err != nil || len(conn.sent) != 1 {
		t.Fatalf("notification not sent through the connection's Conn: %v %q", err, conn.sent)
	}
	other := &recConn{ctx: ctx, push: true}
	unsub := []byte(`{"jsonrpc":"2.0","method":"s_unsubscribe","params":["` + sub.ID() + `"],"id":2}`)
	if got := string(tab.Dispatch(call(other), nil, unsub)); !strings.Contains(got, `"error"`) {
		t.Fatalf("another connection's unsubscribe found it: %s", got)
	}
	if got := string(tab.Dispatch(call(conn), nil, unsub)); got != `{"jsonrpc":"2.0","result":true,"id":2}` {
		t.Fatalf("the same connection's unsubscribe: %s", got)
	}
	if handler.Connection(nil) != nil || handler.Connection(conn) != conn {
		t.Fatal("Connection of a plain Conn is not itself")
	}
}
