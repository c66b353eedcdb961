//go:build !race

// The race detector slows the load generator itself below the rates it
// probes (an open loop that cannot send on time fails its probe): the
// search would measure the tool, not the server.

package bench_test

// Tests of the capacity search (findmax.go) against a server whose
// capacity is known: jetrpc with a rate limit of 2,000 calls/s for the
// one client the test is, so that above it calls are answered -32005.

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

func TestFindMax_convergesOnAKnownCapacity(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet), handler.WithRateLimit(ratelimit.Limits{Rate: 2000, Burst: 40}))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer e.Stop(context.Background())
	slo, err := bench.ParseThreshold("p99<500ms")
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	c, err := bench.FindMax(t.Context(), bench.Config{Target: "tcp://" + e.Addrs()[0].String(), Conns: 4, Duration: 500 * time.Millisecond,
		Warmup: 100 * time.Millisecond}, bench.FindMaxConfig{SLO: []bench.Threshold{slo}, Start: 250, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	c.WriteTable(&table)
	t.Logf("\n%s", table.String())
	// Over warm-up and window (0.6 s) the limit lets 2,000·0.6 + 40 calls
	// through (a burst over the limiter's 10 ms clock step of 20): up to
	// 2,066/s holds; the search stops within 5 %.
	if c.Max < 1800 || c.Max > 2100 || c.Ceiling <= c.Max || c.Ceiling > 1.06*c.Max {
		t.Fatalf("capacity %g, ceiling %g; want about 2,000", c.Max, c.Ceiling)
	}
	if len(c.Probes) < 5 || !c.Probes[0].Held || c.Probes[0].Rate != 250 || !strings.Contains(table.String(), " requests/s within p99<500ms and no error (") {
		t.Fatalf("%d probes, first %+v", len(c.Probes), c.Probes[0])
	}
	for _, p := range c.Probes {
		if !p.Held && !strings.Contains(strings.Join(p.Failed, ";"), "errors") {
			t.Errorf("probe at %g failed without errors: %v", p.Rate, p.Failed)
		}
	}
	if strings.Count(progress.String(), "\n") != len(c.Probes) {
		t.Errorf("progress lines:\n%s", progress.String())
	}
	var svg strings.Builder
	if err := c.WritePlotSVG(&svg); err != nil || !strings.Contains(svg.String(), "Latency by offered rate") || strings.Count(svg.String(), "<circle") != 2*len(c.Probes) {
		t.Fatalf("svg %v:\n%.300s", err, svg.String())
	}
	if _, err := bench.FindMax(t.Context(), bench.Config{Target: "tcp://x:1", Rate: 5}, bench.FindMaxConfig{}); err == nil {
		t.Fatal("a rate and a capacity search: accepted")
	}
}
