package ratelimit

import (
	"flag"
	"testing"
)

// allowBenchmarks are the cases of BenchmarkAllow.
func allowBenchmarks() []struct {
	name string
	r    Limits
	ctx  func(*Limiter) *rlCaller
} {
	high := Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9}
	return []struct {
		name string
		r    Limits
		ctx  func(*Limiter) *rlCaller
	}{
		{"none", Limits{}, func(l *Limiter) *rlCaller { return rlCall(rlIP("192.0.2.1"), "", l.NewQuota()) }},
		{"quota-ip", high, func(l *Limiter) *rlCaller { return rlCall(rlIP("192.0.2.1"), "", l.NewQuota()) }},
		{"quota-ip-identity-only", Limits{Rate: 1e9, Burst: 1e9}, func(l *Limiter) *rlCaller { return rlCall(rlIP("192.0.2.1"), "", l.NewQuota()) }},
		{"quota-conn-only", Limits{ConnRate: 1e9, ConnBurst: 1e9}, func(l *Limiter) *rlCaller { return rlCall(rlIP("192.0.2.1"), "", l.NewQuota()) }},
		{"quota-principal", high, func(l *Limiter) *rlCaller { return rlCall(rlIP("192.0.2.1"), "alice", l.NewQuota()) }},
		{"lookup-ip", high, func(l *Limiter) *rlCaller { return rlCall(rlIP("192.0.2.1"), "", nil) }},
	}
}

// BenchmarkAllow: the cost of Allow per call, limits too high to refuse
// (the common case). handler's BenchmarkAllow measures it through a
// table (the Caller built from a Meta).
func BenchmarkAllow(b *testing.B) {
	for _, c := range allowBenchmarks() {
		b.Run(c.name, func(b *testing.B) {
			lim := New(c.r)
			ctx := c.ctx(lim)
			b.ReportAllocs()
			for b.Loop() {
				if !rlAllow(lim, ctx, 1, false) {
					b.Fatal("refused")
				}
			}
		})
	}
	// One identity, a connection per goroutine: the identity's bucket
	// is shared (compare-and-swap under contention).
	b.Run("parallel-one-ip", func(b *testing.B) {
		lim := New(Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := rlCall(rlIP("192.0.2.1"), "", lim.NewQuota())
			for pb.Next() {
				rlAllow(lim, ctx, 1, false)
			}
		})
	})
}

func TestBenchmarkAllow(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "100x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	if r := testing.Benchmark(BenchmarkAllow); r.N == 0 {
		t.Fatal("benchmark failed")
	}
}
