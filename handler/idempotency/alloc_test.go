//go:build !race

package idempotency_test

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/idempotency"
)

// TestStore_noKeyZeroAllocs: a call without a key — the usual call of a
// table that uses a Store — costs no allocation, inline or blocking.
func TestStore_noKeyZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	tab.Use(idempotency.New(idempotency.Options{}).Intercept)
	ctx := caller("ann", "")
	buf := make([]byte, 0, 512)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		`{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`,
		`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"nope","id":2}]`,
	} {
		b := []byte(msg)
		buf = tab.Dispatch(ctx, buf[:0], b)
		if got := testing.AllocsPerRun(200, func() { buf = tab.Dispatch(ctx, buf[:0], b) }); got != 0 {
			t.Errorf("%s: %v allocs, want 0 (%s)", msg, got, buf)
		}
	}
}
