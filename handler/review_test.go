package handler_test

// Regressions found by an adversarial review of dispatch: a method's
// failure costs only its own reply, and a method's own -32700 is not a
// malformed message.

import (
	"context"
	"log/slog"
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
