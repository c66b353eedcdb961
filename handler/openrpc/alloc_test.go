//go:build !race

package openrpc_test

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/openrpc"
)

// TestRegister_zeroAllocs: once the document is built, an rpc.discover
// call through Dispatch into a reused buffer allocates nothing.
func TestRegister_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	demo.Register(tab)
	if err := openrpc.Register(tab); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`,
		`{"jsonrpc":"2.0","method":"rpc.discover","params":[],"id":1}`,
		`{"jsonrpc":"2.0","method":"rpc.discover","params":{},"id":"x"}`,
	} {
		b := []byte(msg)
		buf := tab.Dispatch(ctx, nil, b) // builds the document, and sizes buf
		if got := testing.AllocsPerRun(100, func() { buf = tab.Dispatch(ctx, buf[:0], b) }); got != 0 {
			t.Errorf("%s: %v allocs per call, want 0", msg, got)
		}
		if got := testing.AllocsPerRun(100, func() { buf, _ = tab.DispatchInline(ctx, buf[:0], b, nil) }); got != 0 {
			t.Errorf("%s: %v allocs per DispatchInline, want 0", msg, got)
		}
	}
}

// TestRegister_filterByGrantsZeroAllocs: under FilterByGrants, once a
// caller's document is built, its rpc.discover calls allocate nothing,
// whether its grants come from its transport (a CallContext) or from
// WithGrants.
func TestRegister_filterByGrantsZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := grantsTable()
	if err := openrpc.Register(tab, openrpc.FilterByGrants(true)); err != nil {
		t.Fatal(err)
	}
	b := []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`)
	for _, g := range []handler.Grants{nil, {"user"}, {"admin"}, {"*"}} {
		for _, ctx := range []context.Context{
			&handler.CallContext{Parent: context.Background(), Meta: handler.Meta{Grants: g}},
			handler.WithGrants(context.Background(), g),
		} {
			buf := tab.Dispatch(ctx, nil, b) // builds the document, and sizes buf
			if got := testing.AllocsPerRun(100, func() { buf = tab.Dispatch(ctx, buf[:0], b) }); got != 0 {
				t.Errorf("grants %q: %v allocs per call, want 0", g, got)
			}
		}
	}
}
