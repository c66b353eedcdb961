//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/pool"
)

// TestMethodHeader_zeroAllocs: in the steady state a POST routed by its
// method header — inline or on a worker, under a rate limit — and the
// refusal of a body that disagrees with it allocate nothing.
func TestMethodHeader_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable(handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9}))
	demo.Register(tab)
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	cs, fc := newFakeConnOf(t, tab, WithMethodHeader("Mcp-Method"))
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	req := func(method, body string) string {
		return "POST / HTTP/1.1\r\nHost: x\r\nMcp-Method: " + method + "\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	}
	assertRequestNoAllocs(t, cs, fc, "inline", req("add", `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`), false, `{"jsonrpc":"2.0","result":42,"id":1}`)
	assertRequestNoAllocs(t, cs, fc, "worker", req("slowadd", `{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), true, `{"jsonrpc":"2.0","result":42,"id":1}`)
	assertRequestNoAllocs(t, cs, fc, "mismatch", req("add", `{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), false, "400 Bad Request", `"code":-32600`)
}
