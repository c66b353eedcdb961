package textlog_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/textlog"
)

// accessRecord is a record like the access log's for one call
// (handler/observe.go: accessLog.call).
func accessRecord() slog.Record {
	return rec(time.Now(), slog.LevelInfo, "jetrpc: call",
		slog.String("method", "add"), slog.Int64("id", 1), slog.Int("code", 0),
		slog.Float64("duration_ms", 0.0352), slog.String("transport", "http"),
		slog.String("remote", "127.0.0.1:54321"))
}

type handlerBenchmark struct {
	name string
	run  func(*testing.B)
}

// handleBenchmark measures Handle of r by h.
func handleBenchmark(h slog.Handler, r slog.Record) func(*testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if err := h.Handle(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// handlerBenchmarks: an access log record through textlog and, the
// baseline, slog.TextHandler, both writing to io.Discard. The record is
// built once: the time cache hits, as it does for all records of a
// second but the first.
func handlerBenchmarks() []handlerBenchmark {
	r := accessRecord()
	return []handlerBenchmark{
		{"textlog", handleBenchmark(textlog.New(io.Discard, nil), r)},
		{"slog.TextHandler", handleBenchmark(slog.NewTextHandler(io.Discard, nil), r)},
	}
}

func BenchmarkHandler(b *testing.B) {
	for _, c := range handlerBenchmarks() {
		b.Run(c.name, c.run)
	}
}

func TestBenchmarkHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	for _, c := range handlerBenchmarks() {
		t.Run(c.name, func(t *testing.T) { runAsTest(t, c.run) })
	}
}

// runAsTest runs a benchmark function for a few iterations, as a test.
func runAsTest(t *testing.T, run func(*testing.B)) {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "20x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	if r := testing.Benchmark(run); r.N == 0 {
		t.Fatal("benchmark failed")
	}
}
