package handler_test

// Tests of the inline entry (pending.go): DispatchInline's outcomes,
// what it defers, and Pending run or answered busy.

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

func TestDispatchInline_refusesBlocking(t *testing.T) {
	tab := handler.NewTable()
	var ran atomic.Int32
	handler.Register(tab, "slow", func(context.Context, struct{}) (int, error) { ran.Add(1); return 1, nil })
	handler.Register(tab, "fast", func(context.Context, struct{}) (int, error) { ran.Add(1); return 2, nil }, handler.Inline())
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"slow","id":1}`,
		`{"jsonrpc":"2.0","method":"slow"}`,
		`[{"jsonrpc":"2.0","method":"fast","id":1},{"jsonrpc":"2.0","method":"slow","id":2}]`,
	} {
		if out, oc := tab.DispatchInline(context.Background(), []byte("x"), []byte(msg), nil); oc != handler.Deferred || string(out) != "x" {
			t.Errorf("%s: outcome %v, out %q", msg, oc, out)
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("DispatchInline ran %d methods while refusing", ran.Load())
	}
	for _, msg := range []string{`{"jsonrpc":"2.0","method":"fast","id":1}`, `{"jsonrpc":"2.0","method":"nope","id":1}`, `{`, `[]`} {
		if _, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), nil); oc == handler.Deferred {
			t.Errorf("%s refused", msg)
		}
	}
}

func TestDispatchInline_outcomes(t *testing.T) {
	tab := demoTable(t)
	ctx := context.Background()
	cases := []struct {
		msg  string
		want handler.Outcome
	}{
		{`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, handler.Replied},
		{`{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}`, handler.Deferred},
		{`[{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}]`, handler.Deferred},
		{`{"jsonrpc":"2.0","method":`, handler.Malformed},
		{`[1,2`, handler.Malformed},
		{`[]`, handler.Replied},
		{`{"jsonrpc":"2.0","method":1,"id":1}`, handler.Replied},
	}
	for _, c := range cases {
		var later handler.Pending
		out, got := tab.DispatchInline(ctx, []byte("x"), []byte(c.msg), &later)
		if got != c.want {
			t.Errorf("%s: outcome %v, want %v", c.msg, got, c.want)
		}
		if later.Empty() != (got != handler.Deferred) {
			t.Errorf("%s: outcome %v, pending empty: %v", c.msg, got, later.Empty())
		}
		if got == handler.Deferred {
			if string(out) != "x" {
				t.Errorf("%s: deferred, but wrote %q", c.msg, out)
			}
			if run, want := string(later.Run(ctx, nil)), string(tab.Dispatch(ctx, nil, []byte(c.msg))); run != want {
				t.Errorf("%s: Run %s, Dispatch %s", c.msg, run, want)
			}
		}
	}
}

func TestDispatchInline_methodsOwnParseErrorIsReplied(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	handler.Register(tab, "parseInner", func(context.Context, [1]string) (int, error) {
		return 0, &handler.Error{Code: parser.CodeParseError, Message: "inner document is not JSON"}
	}, handler.Inline())
	out, oc := tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"parseInner","params":["{"],"id":1}`), nil)
	if want := `{"jsonrpc":"2.0","error":{"code":-32700,"message":"inner document is not JSON"},"id":1}`; string(out) != want || oc != handler.Replied {
		t.Errorf("got %s, outcome %d; want %s, Replied", out, oc, want)
	}
	out, oc = tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":`), nil)
	if oc != handler.Malformed || len(out) == 0 {
		t.Errorf("truncated JSON: got %s, outcome %d; want a -32700 reply, Malformed", out, oc)
	}
	out, oc = tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":1}`), nil)
	if oc != handler.Replied || len(out) == 0 {
		t.Errorf("invalid request: got %s, outcome %d; want a -32600 reply, Replied", out, oc)
	}
}

func TestPending_busy(t *testing.T) {
	tab := demoTable(t)
	got := busy(t, tab, `[{"jsonrpc":"2.0","method":"sleep","params":[9],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[9]},{"jsonrpc":"2.0","method":1,"id":2},{"jsonrpc":"2.0","method":"nope","id":3}]`)
	want := `[{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":1},{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: method must be a string (offset 130)"},"id":2},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3}]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := busy(t, tab, `{"jsonrpc":"2.0","method":"sleep","params":[9],"id":"a"}`); got != `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":"a"}` {
		t.Fatal(got)
	}
	if got := busy(t, tab, `[{"jsonrpc":"2.0","method":"sleep"}]`); len(got) != 0 {
		t.Fatalf("notifications answered: %s", got)
	}
}

func TestPending_runsWithoutItsMessage(t *testing.T) {
	tab := demoTable(t)
	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"sle\u0065p","params":{"ms":0},"id":"q\"1"}`,
		`  [{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1},{"jsonrpc":"2.0","method":"echo","params":["a\u00e9"],"id":[]},{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":3}]  `,
	} {
		buf := []byte("xx" + msg + "yy")
		var later handler.Pending
		if _, oc := tab.DispatchInline(ctx, nil, buf[2:len(buf)-2], &later); oc != handler.Deferred {
			t.Fatalf("%s: outcome %v", msg, oc)
		}
		for i := range buf {
			buf[i] = '#'
		}
		if got, want := string(later.Run(ctx, nil)), string(tab.Dispatch(ctx, nil, []byte(msg))); got != want {
			t.Fatalf("Run:      %s\nDispatch: %s", got, want)
		}
	}
}
