package handler_test

// Regressions found by an adversarial review of dispatch: a method's
// failure costs only its own reply, and a method's own -32700 is not a
// malformed message.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// revErr is an application error type whose methods dereference their
// receiver: returned as a typed nil (err != nil), they panic.
type revErr struct{ inner error }

func (e *revErr) Error() string { return "rev: " + e.inner.Error() }
func (e *revErr) Unwrap() error { return e.inner }

func typedNilTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	bad := func(context.Context, [0]int) (int, error) {
		var e *revErr
		return 0, e
	}
	handler.Register(tab, "bad", bad, handler.Inline())
	handler.Register(tab, "badBlocking", bad) // runs on a worker in a batch
	return tab
}

const errPanicked = `"error":{"code":-32603,"message":"Internal error: the method's error value panicked"}`

func TestDispatch_errorValuePanicCostsOnlyItsReply(t *testing.T) {
	tab := typedNilTable()
	for _, c := range []struct{ name, in, want string }{
		{"single", `{"jsonrpc":"2.0","method":"bad","params":[],"id":7}`,
			`{"jsonrpc":"2.0",` + errPanicked + `,"id":7}`},
		{"inline batch", `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"bad","params":[],"id":2}]`,
			`[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0",` + errPanicked + `,"id":2}]`},
		{"batch on workers", `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"badBlocking","params":[],"id":2}]`,
			`[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0",` + errPanicked + `,"id":2}]`},
		{"notification", `{"jsonrpc":"2.0","method":"bad","params":[]}`, ``},
	} {
		if got := string(tab.Dispatch(context.Background(), nil, []byte(c.in))); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// A method may answer -32700 itself (it parsed a document of its own):
// that is a reply like any other, not a message the transport could not
// frame, so a stream must not be closed for it.
func TestServe_methodsOwnParseErrorIsReplied(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	handler.Register(tab, "parseInner", func(context.Context, [1]string) (int, error) {
		return 0, &handler.Error{Code: handler.CodeParseError, Message: "inner document is not JSON"}
	}, handler.Inline())
	out, oc := tab.Serve(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"parseInner","params":["{"],"id":1}`), true)
	if want := `{"jsonrpc":"2.0","error":{"code":-32700,"message":"inner document is not JSON"},"id":1}`; string(out) != want || oc != handler.Replied {
		t.Errorf("got %s, outcome %d; want %s, Replied", out, oc, want)
	}
	out, oc = tab.Serve(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":`), true)
	if oc != handler.Malformed || len(out) == 0 {
		t.Errorf("truncated JSON: got %s, outcome %d; want a -32700 reply, Malformed", out, oc)
	}
	out, oc = tab.Serve(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":1}`), true)
	if oc != handler.Replied || len(out) == 0 {
		t.Errorf("invalid request: got %s, outcome %d; want a -32600 reply, Replied", out, oc)
	}
}

// pushConn is a Conn for tests of the subscription API without a server.
type pushConn struct{ ctx context.Context }

func (c *pushConn) Send([]byte) error        { return nil }
func (c *pushConn) CanPush() bool            { return true }
func (c *pushConn) Context() context.Context { return c.ctx }

// A subscribe whose start panics ends the subscription it created: it is
// not left live, pushing, until the connection closes.
func TestSubscription_startPanicEndsIt(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	var sub *handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, _ [1]int, s *handler.Subscription) error {
		sub = s
		panic("boom")
	}, handler.Inline())
	ctx := handler.ContextWithConn(context.Background(), &pushConn{ctx: context.Background()})
	out := tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":1}`))
	if !strings.Contains(string(out), "-32603") || !strings.Contains(string(out), `"id":1`) {
		t.Fatalf("reply %s", out)
	}
	if n := tab.Subscriptions("s"); n != 0 || sub.Context().Err() == nil {
		t.Fatalf("a failed subscribe left %d live subscription(s); its context: %v", n, sub.Context().Err())
	}
}

// TryRegisterSubscription registers both methods or neither.
func TestTryRegisterSubscription_allOrNothing(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "s_unsubscribe", func(context.Context, [1]string) (bool, error) { return false, nil })
	start := func(context.Context, [1]int, *handler.Subscription) error { return nil }
	if err := handler.TryRegisterSubscription(tab, "s", start); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("clash: %v, want ErrDuplicateName", err)
	}
	if found, _ := tab.Lookup("s_subscribe"); found {
		t.Error("the failed registration left s_subscribe registered")
	}
	for i := range 2 {
		if err := handler.TryRegisterSubscription(tab, "rpc.x", start); !errors.Is(err, handler.ErrReservedName) {
			t.Errorf("try %d of a reserved namespace: %v, want ErrReservedName", i+1, err)
		}
	}
}

// Registering while the first Dispatch seals the table is either done
// before it or refused with ErrSealed, never a data race (go test -race).
func TestTable_registerRacesFirstDispatch(t *testing.T) {
	tab := handler.NewTable()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 200 {
			err := handler.TryRegister(tab, fmt.Sprint("m", i), func(context.Context, [1]int) (int, error) { return 1, nil })
			if err != nil && !errors.Is(err, handler.ErrSealed) {
				t.Errorf("register: %v", err)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"m5","params":[1],"id":1}`))
		}
	}()
	wg.Wait()
}

type valueConn struct {
	ctx  context.Context
	tags map[string]string
}

func (c valueConn) Send([]byte) error        { return nil }
func (c valueConn) CanPush() bool            { return true }
func (c valueConn) Context() context.Context { return c.ctx }

// A Conn must be comparable (subscriptions compare connections):
// ContextWithConn says so at once rather than an unsubscribe panicking.
func TestContextWithConn_uncomparableConnPanics(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "not comparable") {
			t.Fatalf("recovered %v", v)
		}
	}()
	handler.ContextWithConn(context.Background(), valueConn{ctx: context.Background(), tags: map[string]string{}})
}

// A body cut off by an outer limit (http.MaxBytesHandler) is 413, as the
// adapter's own limit is.
func TestHTTPHandler_outerBodyLimitIs413(t *testing.T) {
	srv := httptest.NewServer(http.MaxBytesHandler(handler.NewHTTPHandler(demoTable(t)), 50))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("x", 100)+`"],"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
}

// The demo's subtract refuses a difference that overflows, as add does.
func TestDemo_subtractOverflow(t *testing.T) {
	tab := demoTable(t)
	for _, params := range []string{`[-9223372036854775808,1]`, `[9223372036854775807,-1]`} {
		out := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":`+params+`,"id":1}`)))
		if !strings.Contains(out, `-32602`) {
			t.Errorf("subtract %s: %s, want -32602", params, out)
		}
	}
	if out := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"subtract","params":[-9223372036854775807,1],"id":1}`))); out != `{"jsonrpc":"2.0","result":-9223372036854775808,"id":1}` {
		t.Errorf("subtract at the edge: %s", out)
	}
}
