//go:build !race

package engine

import (
	"context"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// TestConn_zeroAllocsWithLimits: with the fair-use limits on — a call
// timeout, rate limits per identity and per connection, a method cost,
// a concurrency bound and the reply caps — a request to an inline
// method, a pipelined burst of them on a stream, a batch and a timed
// call on a worker allocate nothing.
func TestConn_zeroAllocsWithLimits(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	elements := pool.NewWorkers(2, 16)
	defer elements.Close()
	tab := handler.NewTable(handler.WithWorkers(elements), handler.WithCallTimeout(30*time.Second),
		handler.WithRateLimit(handler.RateLimit{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9}))
	demo.Register(tab)
	add := func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }
	handler.Register(tab, "costly_add", add, handler.Inline(), handler.Cost(5), handler.MaxConcurrent(4))
	handler.Register(tab, "slowadd", add)
	assertNoAllocsOnConns(t, tab, []allocCase{
		{"http inline", postOf(add42), `{"jsonrpc":"2.0","result":42,"id":1}`, false},
		{"http costly", postOf(`{"jsonrpc":"2.0","method":"costly_add","params":[40,2],"id":1}`), `"result":42`, false},
		{"http batch", postOf(`[` + add42 + `,{"jsonrpc":"2.0","method":"costly_add","params":[1,2],"id":2}]`), `"result":3,"id":2}]`, false},
		{"http timed on a worker", postOf(`{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), `"result":42`, true},
	})
}
