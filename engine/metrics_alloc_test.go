//go:build !race

package engine

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
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
	const add42 = `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	post := func(body string) string {
		return "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	}
	cases := []struct {
		name, in, want string
		worker         bool
	}{
		{"http inline", post(add42), `{"jsonrpc":"2.0","result":42,"id":1}`, false},
		{"http batch", post(`[` + add42 + `,{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]`), `"result":3,"id":2}]`, false},
		{"http notification", post(`{"jsonrpc":"2.0","method":"add","params":[1,2]}`), `204 No Content`, false},
		{"http unknown method", post(`{"jsonrpc":"2.0","method":"nope","id":1}`), `-32601`, false},
		{"http timed on a worker", post(`{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), `"result":42`, true},
	}
	cs, fc := newFakeConnOf(t, tab)
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	for _, c := range cases {
		assertRequestNoAllocs(t, cs, fc, c.name, c.in, c.worker, c.want)
	}
	scs, sfc := newFakeConnOf(t, tab)
	in := bytes.Repeat([]byte(add42+"\n"), 16)
	step := func() {
		sfc.in, sfc.out = in, sfc.out[:0]
		scs.traffic()
	}
	step()
	if n := bytes.Count(sfc.out, []byte(`"result":42`)); n != 16 {
		t.Fatalf("stream: %d replies in %q", n, sfc.out)
	}
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("stream pipelined 16: %v allocs per burst, want 0", got)
	}
	var calls uint64
	if _, ok := tab.Metrics(func(m *handler.MethodMetrics) {
		if m.Method == "add" {
			calls = m.Duration.Count
		}
	}); !ok || calls < 200*16 {
		t.Errorf("add counted %d times (metrics on: %v): the calls were not observed", calls, ok)
	}
}
