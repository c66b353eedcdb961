//go:build !race

package engine

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/pool"
)

// TestConn_zeroAllocsWithMetrics: with the table's metrics on, the
// access log on but sampling nothing (a slow-call threshold no call
// reaches) and the engine's counters, a request to an inline method, a
// pipelined burst of them on a stream, a batch, a notification, an
// unknown method and a call on a worker (the slow path: a timeout)
// allocate nothing.
func TestConn_zeroAllocsWithMetrics(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	elements := pool.NewWorkers(2, 16)
	defer elements.Close()
	tab := handler.NewTable(handler.WithWorkers(elements), handler.WithMetrics(true), handler.WithCallTimeout(30*time.Second),
		handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.DiscardHandler), Slow: time.Hour}))
	demo.Register(tab)
	add := func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }
	handler.Register(tab, "slowadd", add)
	assertNoAllocsOnConns(t, tab, []allocCase{
		{"http inline", postOf(add42), `{"jsonrpc":"2.0","result":42,"id":1}`, false},
		{"http batch", postOf(`[` + add42 + `,{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]`), `"result":3,"id":2}]`, false},
		{"http notification", postOf(`{"jsonrpc":"2.0","method":"add","params":[1,2]}`), `204 No Content`, false},
		{"http unknown method", postOf(`{"jsonrpc":"2.0","method":"nope","id":1}`), `-32601`, false},
		{"http timed on a worker", postOf(`{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), `"result":42`, true},
	})
	var calls uint64
	if _, ok := tab.Metrics(func(m *stats.Method) {
		if m.Method == "add" {
			calls = m.Duration.Count
		}
	}); !ok || calls < 200*16 {
		t.Errorf("add counted %d times (metrics on: %v): the calls were not observed", calls, ok)
	}
}
