package handler_test

// Tests of registration (register.go): the signatures and names it
// refuses.

import (
	"context"
	"errors"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

func TestRegister_refusals(t *testing.T) {
	tab := handler.NewTable()
	ok := func(context.Context, struct{ A int }) (int, error) { return 0, nil }
	cases := []struct {
		name string
		err  error
		do   func() error
	}{
		{"reserved", handler.ErrReservedName, func() error { return registerErr(func() { handler.Register(tab, "rpc.discover", ok) }) }},
		{"empty", handler.ErrEmptyName, func() error { return registerErr(func() { handler.Register(tab, "", ok) }) }},
		{"pointer params", handler.ErrBadType, func() error {
			return registerErr(func() {
				handler.Register(tab, "p", func(context.Context, *struct{ A int }) (int, error) { return 0, nil })
			})
		}},
		{"scalar params", handler.ErrBadType, func() error {
			return registerErr(func() { handler.Register(tab, "s", func(context.Context, int) (int, error) { return 0, nil }) })
		}},
		{"chan result", handler.ErrBadType, func() error {
			return registerErr(func() {
				handler.Register(tab, "c", func(context.Context, struct{}) (chan int, error) { return nil, nil })
			})
		}},
	}
	for _, c := range cases {
		if err := c.do(); !errors.Is(err, c.err) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.err)
		}
	}
	if err := registerErr(func() { handler.Register(tab, "ok", ok) }); err != nil {
		t.Fatal(err)
	}
	if err := registerErr(func() { handler.Register(tab, "ok", ok) }); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("duplicate: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Register of a reserved name did not panic")
			}
		}()
		handler.Register(tab, "rpc.x", ok)
	}()
	call(t, tab, `{"jsonrpc":"2.0","method":"ok","params":[1],"id":1}`)
	if err := registerErr(func() { handler.Register(tab, "late", ok) }); !errors.Is(err, handler.ErrSealed) {
		t.Fatalf("register after dispatch: %v", err)
	}
	// The refused names are not served.
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("rpc.discover served: %+v", r)
	}
}

// Regression (codec suite vs encoding/json): an embedded pointer struct in params is refused at registration.
func TestRegister_embeddedPointerRefused(t *testing.T) {
	type P struct {
		*shadowedBase
		Y int
	}
	err := registerErr(func() {
		handler.Register(handler.NewTable(), "m", func(context.Context, P) (int, error) { return 0, nil })
	})
	if !errors.Is(err, handler.ErrBadType) {
		t.Fatalf("got %v, want ErrBadType", err)
	}
}
