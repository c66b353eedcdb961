//go:build !race

package mcp_test

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
)

// The MCP methods a client calls most allocate nothing per call: the
// constant results are copied, add reads its arguments in place and
// writes its sum into the reply.
func TestDispatch_allocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters allocate")
	}
	tab := handler.NewTable()
	mcp.Register(tab)
	ctx := context.Background()
	for _, m := range benchMessages {
		msg := []byte(m.msg)
		buf := tab.Dispatch(ctx, nil, msg)
		if n := testing.AllocsPerRun(100, func() { buf = tab.Dispatch(ctx, buf[:0], msg) }); n != 0 {
			t.Errorf("%s: %v allocations per call", m.name, n)
		}
	}
}
