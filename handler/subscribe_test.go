package handler_test

// Tests of subscriptions (subscribe.go).

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

func TestSubscription_rules(t *testing.T) {
	tab := handler.NewTable()
	var subs []*handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, p [1]int, sub *handler.Subscription) error {
		if p[0] < 0 {
			return handler.NewError(parser.CodeInvalidParams, "negative")
		}
		subs = append(subs, sub)
		return nil
	}, handler.Inline())
	if err := registerErr(func() {
		handler.RegisterSubscription(tab, "s", func(context.Context, handler.Raw, *handler.Subscription) error { return nil })
	}); err == nil {
		t.Fatal("namespace registered twice")
	}
	call := func(ctx context.Context, msg string) string { return string(tab.Dispatch(ctx, nil, []byte(msg))) }

	// No connection (plain Dispatch, net/http), or one that cannot push.
	if got := call(context.Background(), `{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":1}`); got != `{"jsonrpc":"2.0","error":{"code":-32601,"message":"notifications not supported"},"id":1}` {
		t.Fatal(got)
	}
	httpCtx := handler.ContextWithConn(context.Background(), &recConn{ctx: context.Background()})
	if got := call(httpCtx, `{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":1}`); !strings.Contains(got, "notifications not supported") {
		t.Fatal(got)
	}

	aCtx, closeA := context.WithCancel(context.Background())
	a := &recConn{ctx: aCtx, push: true}
	ctxA := handler.ContextWithConn(aCtx, a)
	b := &recConn{ctx: context.Background(), push: true}
	ctxB := handler.ContextWithConn(context.Background(), b)

	// start's error is the reply, and leaves no subscription.
	if got := call(ctxA, `{"jsonrpc":"2.0","method":"s_subscribe","params":[-1],"id":1}`); !strings.Contains(got, "negative") || tab.Subscriptions("s") != 0 {
		t.Fatal(got, tab.Subscriptions("s"))
	}
	var id string
	reply := call(ctxA, `{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":2}`)
	var r struct{ Result string }
	if err := json.Unmarshal([]byte(reply), &r); err != nil || len(r.Result) != 34 {
		t.Fatal(reply)
	}
	id = r.Result
	call(ctxA, `{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":3}`)
	if tab.Subscriptions("s") != 2 || subs[0].ID() == subs[1].ID() {
		t.Fatal("two subscriptions, two ids")
	}
	// Another connection cannot end it.
	if got := call(ctxB, `{"jsonrpc":"2.0","method":"s_unsubscribe","params":["`+id+`"],"id":4}`); !strings.Contains(got, "subscription not found") {
		t.Fatal(got)
	}
	if err := subs[0].Notify(5); err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","method":"s_subscription","params":{"subscription":"` + id + `","result":5}}`; len(a.sent) != 1 || a.sent[0] != want {
		t.Fatalf("%q", a.sent)
	}
	if got := call(ctxA, `{"jsonrpc":"2.0","method":"s_unsubscribe","params":["`+id+`"],"id":5}`); got != `{"jsonrpc":"2.0","result":true,"id":5}` {
		t.Fatal(got)
	}
	if err := subs[0].Notify(6); !errors.Is(err, handler.ErrConnClosed) || subs[0].Context().Err() == nil {
		t.Fatal("notified after unsubscribe", err)
	}
	// Closing the connection ends the rest.
	closeA()
	<-subs[1].Context().Done()
	// Removed by context.AfterFunc, on its own goroutine.
	for deadline := time.Now().Add(10 * time.Second); tab.Subscriptions("s") != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("subscriptions outlived their connection")
		}
	}
	if len(b.sent) != 0 {
		t.Fatal("b got a's notifications")
	}
}

// nopConn is a Conn for tests of the subscription API without a server.
type nopConn struct{ ctx context.Context }

func (c *nopConn) Send([]byte) error        { return nil }
func (c *nopConn) CanPush() bool            { return true }
func (c *nopConn) Context() context.Context { return c.ctx }

// Regression from a review of the push API: a subscribe whose start panicked left its subscription live.
//
// A subscribe whose start panics ends the subscription it created: it is
// not left live, pushing, until the connection closes.
func TestSubscription_startPanicEndsIt(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	var sub *handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, _ [1]int, s *handler.Subscription) error {
		sub = s
		panic("boom")
	}, handler.Inline())
	ctx := handler.ContextWithConn(context.Background(), &nopConn{ctx: context.Background()})
	out := tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":1}`))
	if !strings.Contains(string(out), "-32603") || !strings.Contains(string(out), `"id":1`) {
		t.Fatalf("reply %s", out)
	}
	if n := tab.Subscriptions("s"); n != 0 || sub.Context().Err() == nil {
		t.Fatalf("a failed subscribe left %d live subscription(s); its context: %v", n, sub.Context().Err())
	}
}

// Regression from a review of the push API: a clash left one of the two methods registered, and a reserved namespace was free on retry.
//
// RegisterSubscription registers both methods or neither.
func TestRegisterSubscription_allOrNothing(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "s_unsubscribe", func(context.Context, [1]string) (bool, error) { return false, nil })
	start := func(context.Context, [1]int, *handler.Subscription) error { return nil }
	if err := registerErr(func() { handler.RegisterSubscription(tab, "s", start) }); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("clash: %v, want ErrDuplicateName", err)
	}
	if found, _ := tab.Lookup("s_subscribe"); found {
		t.Error("the failed registration left s_subscribe registered")
	}
	for i := range 2 {
		if err := registerErr(func() { handler.RegisterSubscription(tab, "rpc.x", start) }); !errors.Is(err, handler.ErrReservedName) {
			t.Errorf("try %d of a reserved namespace: %v, want ErrReservedName", i+1, err)
		}
	}
}

// TestSubscription_notifyRaw: NotifyRaw sends the notification Notify
// sends for the same result, its bytes as they are, and is refused
// once the subscription has ended.
func TestSubscription_notifyRaw(t *testing.T) {
	tab := handler.NewTable()
	var sub *handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, _ [1]int, s *handler.Subscription) error {
		sub = s
		return nil
	}, handler.Inline())
	c := &recConn{ctx: context.Background(), push: true}
	ctx := handler.ContextWithConn(context.Background(), c)
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":1}`))); !strings.Contains(got, `"result":"0x`) {
		t.Fatal(got)
	}
	for _, result := range []string{`{"a":[1,"x y"]}`, `7`, `"s"`, `null`} {
		if err := sub.NotifyRaw([]byte(result)); err != nil {
			t.Fatalf("NotifyRaw(%s): %v", result, err)
		}
		if err := sub.Notify(handler.Raw(result)); err != nil {
			t.Fatalf("Notify(%s): %v", result, err)
		}
		c.mu.Lock()
		sent := c.sent
		c.sent = nil
		c.mu.Unlock()
		want := `{"jsonrpc":"2.0","method":"s_subscription","params":{"subscription":"` + sub.ID() + `","result":` + result + `}}`
		if len(sent) != 2 || sent[0] != want || sent[1] != want {
			t.Fatalf("NotifyRaw and Notify of %s sent %q, want %s twice", result, sent, want)
		}
	}
	sub.Unsubscribe()
	if err := sub.NotifyRaw([]byte(`1`)); !errors.Is(err, handler.ErrConnClosed) {
		t.Fatalf("NotifyRaw after Unsubscribe: %v, want ErrConnClosed", err)
	}
	if len(c.sent) != 0 {
		t.Fatalf("sent after Unsubscribe: %q", c.sent)
	}
}
