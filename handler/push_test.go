package handler_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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

func TestAppendJSON(t *testing.T) {
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

func TestNotify(t *testing.T) {
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

func TestSubscription_rules(t *testing.T) {
	tab := handler.NewTable()
	var subs []*handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, p [1]int, sub *handler.Subscription) error {
		if p[0] < 0 {
			return handler.NewError(handler.CodeInvalidParams, "negative")
		}
		subs = append(subs, sub)
		return nil
	}, handler.Inline())
	if err := handler.TryRegisterSubscription(tab, "s", func(context.Context, handler.Raw, *handler.Subscription) error { return nil }); err == nil {
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
