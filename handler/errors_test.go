package handler_test

// Tests of how a method's failure is answered: its error (errors.go,
// reply.go), a panic, an error value that panics; each costs only its own
// reply.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

func TestDispatch_errors(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	handler.Register(tab, "rpcerr", func(context.Context, struct{}) (int, error) {
		return 0, &handler.Error{Code: 42, Message: "the answer", Data: map[string]int{"n": 1}}
	})
	handler.Register(tab, "wrapped", func(context.Context, struct{}) (int, error) {
		return 0, fmt.Errorf("context: %w", handler.NewError(-32050, "custom server error").WithData(handler.Raw(`[1, 2]`)))
	})
	handler.Register(tab, "plain", func(context.Context, struct{}) (int, error) {
		return 0, errors.New("secret database password wrong")
	})
	handler.Register(tab, "cancelled", func(context.Context, struct{}) (int, error) { return 0, context.Canceled })
	handler.Register(tab, "deadline", func(context.Context, struct{}) (int, error) {
		return 0, fmt.Errorf("query: %w", context.DeadlineExceeded)
	})
	handler.Register(tab, "panics", func(context.Context, struct{}) (int, error) { panic("boom") })
	handler.Register(tab, "nan", func(context.Context, struct{}) (float64, error) { return 0 * func() float64 { return 0 }() / 0, nil })
	handler.Register(tab, "badraw", func(context.Context, struct{}) (handler.Raw, error) { return handler.Raw(`{"a":`), nil })
	handler.Register(tab, "baddata", func(context.Context, struct{}) (int, error) {
		return 0, &handler.Error{Code: 7, Message: "m", Data: make(chan int)}
	})
	cases := []struct {
		method string
		code   int
		msg    string // substring of the message
		data   string
	}{
		{"rpcerr", 42, "the answer", `{"n":1}`},
		{"wrapped", -32050, "custom server error", `[1,2]`},
		{"plain", -32603, "Internal error", ""},
		{"cancelled", -32001, "Request cancelled", ""},
		{"deadline", -32002, "Deadline exceeded", ""},
		{"panics", -32603, "panicked", ""},
		{"nan", -32603, "not a finite number", ""},
		{"badraw", -32603, "not valid JSON", ""},
		{"baddata", 7, "m", ""},
	}
	for _, c := range cases {
		r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"`+c.method+`","id":"x"}`))
		if r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.msg) || string(r.Error.Data) != c.data || string(r.ID) != `"x"` || r.Result != nil {
			t.Errorf("%s: got %+v %+v", c.method, r, r.Error)
		}
		if strings.Contains(r.Error.Message, "secret") {
			t.Errorf("%s: internal error text leaked: %q", c.method, r.Error.Message)
		}
		// As notifications: no reply at all, whatever the failure.
		if got := call(t, tab, `{"jsonrpc":"2.0","method":"`+c.method+`"}`); got != "" {
			t.Errorf("%s as a notification replied %q", c.method, got)
		}
	}
	exposed := handler.NewTable(handler.WithExposeErrors(true))
	handler.Register(exposed, "plain", func(context.Context, struct{}) (int, error) { return 0, errors.New("disk full") })
	if r := decodeReply(t, call(t, exposed, `{"jsonrpc":"2.0","method":"plain","id":1}`)); !strings.Contains(r.Error.Message, "disk full") {
		t.Errorf("ExposeErrors: message %q", r.Error.Message)
	}
}

// TestDispatch_panicIsolated: a panic answers -32603 for that request
// alone; its batch siblings are answered normally.
func TestDispatch_panicIsolated(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	handler.Register(tab, "boom", func(context.Context, struct{}) (int, error) { panic("boom") }, handler.Inline())
	handler.Register(tab, "boomBlocking", func(context.Context, struct{}) (int, error) { panic("boom") })
	handler.Register(tab, "one", func(context.Context, struct{}) (int, error) { return 1, nil }, handler.Inline())
	for _, batch := range []string{
		`[{"jsonrpc":"2.0","method":"one","id":1},{"jsonrpc":"2.0","method":"boom","id":2},{"jsonrpc":"2.0","method":"one","id":3}]`,
		`[{"jsonrpc":"2.0","method":"one","id":1},{"jsonrpc":"2.0","method":"boomBlocking","id":2},{"jsonrpc":"2.0","method":"one","id":3}]`,
	} {
		var replies []replyOf
		if err := json.Unmarshal([]byte(call(t, tab, batch)), &replies); err != nil {
			t.Fatal(err)
		}
		if len(replies) != 3 || string(replies[0].Result) != "1" || replies[1].Error == nil || replies[1].Error.Code != -32603 || string(replies[2].Result) != "1" {
			t.Fatalf("replies %+v", replies)
		}
	}
}

// derefError is an application error type whose methods dereference their
// receiver: returned as a typed nil (err != nil), they panic.
type derefError struct{ inner error }

func (e *derefError) Error() string { return "deref: " + e.inner.Error() }
func (e *derefError) Unwrap() error { return e.inner }

func typedNilTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	bad := func(context.Context, [0]int) (int, error) {
		var e *derefError
		return 0, e
	}
	handler.Register(tab, "bad", bad, handler.Inline())
	handler.Register(tab, "badBlocking", bad) // runs on a worker in a batch
	return tab
}

const errPanicked = `"error":{"code":-32603,"message":"Internal error: the method's error value panicked"}`

// Regression from an adversarial review of dispatch: an error value that panics (a typed nil) cost the whole message.
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

// Error data holding a Raw inside a struct is written verbatim, as a
// result is.
func TestDispatch_errorDataRawInside(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "e", func(context.Context) (int, error) {
		return 0, handler.NewError(7, "m").WithData(struct {
			R handler.Raw `json:"r"`
		}{handler.Raw(` [ 1 ] `)})
	})
	if got, want := call(t, tab, `{"jsonrpc":"2.0","method":"e","id":1}`), `{"jsonrpc":"2.0","error":{"code":7,"message":"m","data":{"r":[1]}},"id":1}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
