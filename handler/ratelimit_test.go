package handler

// White-box tests of a table's rate limits (ratelimit.go): the caller
// that Table.allow hands its limiter from a call's Meta. The limiter
// itself is tested in package handler/ratelimit; the dispatch of -32005
// replies and dropped notifications here (metrics_test.go,
// proxy_test.go) and with the engine.

import (
	"context"
	"flag"
	"math"
	"net"
	"testing"

	"github.com/jetrpc/jetrpc/handler/internal/testkit"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/handler/stats"
)

// rlCall returns the context of a call from remote, by principal (""
// for none), on the connection of q (nil for none).
func rlCall(remote net.Addr, principal string, q *ratelimit.Quota) *CallContext {
	return &CallContext{Parent: context.Background(), Meta: Meta{Transport: TransportStream, Remote: remote, Principal: principal, Quota: q}}
}

// rlIP returns a TCP address of ip.
func rlIP(ip string) *net.TCPAddr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 4242} }

// rlAllow is the rate-limit check of invokeChecked, for the call whose
// context is ctx.
func rlAllow(tab *Table, ctx context.Context, cost int, notification bool) bool {
	return tab.limiter == nil || tab.allow(ctx, callMeta(ctx), cost, notification)
}

func rlHere() string { return testkit.CallerLine(2) }

func TestRateLimit_disabled(t *testing.T) {
	for _, r := range []ratelimit.Limits{
		{},
		{Burst: 10, ConnBurst: 10, MaxIdentities: 5},
		{Rate: -1, ConnRate: -1},
		{Rate: math.Inf(1), ConnRate: math.Inf(1)},
	} {
		tab := NewTable(WithRateLimit(r))
		if tab.limiter != nil || tab.NewQuota() != nil {
			t.Errorf("%+v: enabled", r)
		}
		for range 1000 {
			if !rlAllow(tab, context.Background(), 1000, false) {
				t.Fatalf("%+v: refused", r)
			}
		}
		if got := tab.LimitRefusals(); got != (stats.Refusals{}) {
			t.Errorf("%+v: LimitRefusals = %+v", r, got)
		}
	}
}

// TestRateLimit_identities: who counts as whom, as a table reads a call's
// Meta: its Remote (Meta.ClientIP), its Principal, and the Identity func
// given the call's context (MetaFrom).
func TestRateLimit_identities(t *testing.T) {
	tab := NewTable(WithRateLimit(ratelimit.Limits{Rate: 1e-9, Burst: 1, Identity: func(ctx context.Context) string {
		if m := MetaFrom(ctx); m.Principal == "proxied" {
			return m.Header("X-Real-IP")
		}
		return ""
	}}))
	proxied := func(ip string) *CallContext {
		c := rlCall(rlIP("10.0.0.1"), "proxied", nil)
		c.Meta.SetHTTPHead([]byte("POST / HTTP/1.1\r\nX-Real-IP: " + ip + "\r\n\r\n"))
		return c
	}
	for _, c := range []struct {
		at   string
		a, b *CallContext
		same bool
	}{
		{at: rlHere(), a: rlCall(rlIP("192.0.2.1"), "", nil), b: rlCall(rlIP("192.0.2.2"), "", nil)},
		{at: rlHere(), a: rlCall(rlIP("192.0.2.3"), "", nil), b: rlCall(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 3).To4(), Port: 1}, "", nil), same: true},
		{at: rlHere(), a: rlCall(rlIP("::ffff:192.0.2.4"), "", nil), b: rlCall(&net.UDPAddr{IP: net.IPv4(192, 0, 2, 4)}, "", nil), same: true},
		{at: rlHere(), a: rlCall(rlIP("2001:db8:1:2::1"), "", nil), b: rlCall(rlIP("2001:db8:1:2:ffff::9"), "", nil), same: true}, // one /64
		{at: rlHere(), a: rlCall(rlIP("2001:db8:1:3::1"), "", nil), b: rlCall(rlIP("2001:db8:1:4::1"), "", nil)},
		{at: rlHere(), a: rlCall(rlIP("::"), "", nil), b: rlCall(rlIP("0.0.0.0"), "", nil)},
		{at: rlHere(), a: rlCall(rlIP("192.0.2.5"), "alice", nil), b: rlCall(rlIP("198.51.100.5"), "alice", nil), same: true},
		{at: rlHere(), a: rlCall(rlIP("192.0.2.6"), "bob", nil), b: rlCall(rlIP("192.0.2.6"), "", nil)},
		{at: rlHere(), a: rlCall(nil, "", nil), b: rlCall(&net.UnixAddr{Name: "@", Net: "unix"}, "", nil), same: true}, // local
		{at: rlHere(), a: proxied("203.0.113.1"), b: proxied("203.0.113.1"), same: true},
		{at: rlHere(), a: proxied("203.0.113.2"), b: proxied("203.0.113.3")},
		{at: rlHere(), a: proxied("carol"), b: rlCall(rlIP("192.0.2.8"), "carol", nil)}, // Identity's names are not principals
	} {
		if !rlAllow(tab, c.a, 1, false) {
			t.Errorf("%s: first call refused", c.at)
			continue
		}
		if got := !rlAllow(tab, c.b, 1, false); got != c.same {
			t.Errorf("%s: one identity: %v; want %v", c.at, got, c.same)
		}
	}
	if rlAllow(tab, context.Background(), 1, false) {
		t.Error("a context without Meta is not local")
	}
}

// TestRateLimit_zeroAllocs: a call of a known identity allocates
// nothing, through a table (the caller built from its Meta), with a
// Quota (cached) or without (found in the table).
func TestRateLimit_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := NewTable(WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9}))
	for _, c := range []struct {
		at  string
		ctx context.Context
	}{
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "", tab.NewQuota())},
		{at: rlHere(), ctx: rlCall(rlIP("2001:db8::1"), "", tab.NewQuota())},
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "alice", tab.NewQuota())},
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "", nil)},
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "bob", nil)},
		{at: rlHere(), ctx: rlCall(nil, "", nil)},
		{at: rlHere(), ctx: context.Background()},
	} {
		rlAllow(tab, c.ctx, 1, false) // tracks the identity
		if n := testing.AllocsPerRun(1000, func() {
			if !rlAllow(tab, c.ctx, 1, false) {
				t.Fatalf("%s: refused", c.at)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocs per call; want 0", c.at, n)
		}
	}
	// Refusals allocate nothing either.
	tab2 := NewTable(WithRateLimit(ratelimit.Limits{Rate: 1e-9, Burst: 1, ConnRate: 1e-9, ConnBurst: 1}))
	ctx := rlCall(rlIP("192.0.2.1"), "", tab2.NewQuota())
	rlAllow(tab2, ctx, 1, false)
	if n := testing.AllocsPerRun(1000, func() { rlAllow(tab2, ctx, 1, false) }); n != 0 {
		t.Errorf("refusal: %v allocs; want 0", n)
	}
}

// allowBenchmarks are the cases of BenchmarkAllow.
func allowBenchmarks() []struct {
	name string
	r    ratelimit.Limits
	ctx  func(*Table) context.Context
} {
	high := ratelimit.Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9}
	return []struct {
		name string
		r    ratelimit.Limits
		ctx  func(*Table) context.Context
	}{
		{"none", ratelimit.Limits{}, func(t *Table) context.Context { return rlCall(rlIP("192.0.2.1"), "", t.NewQuota()) }},
		{"quota-ip", high, func(t *Table) context.Context { return rlCall(rlIP("192.0.2.1"), "", t.NewQuota()) }},
		{"quota-ip-identity-only", ratelimit.Limits{Rate: 1e9, Burst: 1e9}, func(t *Table) context.Context { return rlCall(rlIP("192.0.2.1"), "", t.NewQuota()) }},
		{"quota-conn-only", ratelimit.Limits{ConnRate: 1e9, ConnBurst: 1e9}, func(t *Table) context.Context { return rlCall(rlIP("192.0.2.1"), "", t.NewQuota()) }},
		{"quota-principal", high, func(t *Table) context.Context { return rlCall(rlIP("192.0.2.1"), "alice", t.NewQuota()) }},
		{"lookup-ip", high, func(t *Table) context.Context { return rlCall(rlIP("192.0.2.1"), "", nil) }},
	}
}

// BenchmarkAllow: the cost of the rate limits per call through a table
// (invokeChecked's check: the caller read from the call's Meta, then
// ratelimit.Limiter.Allow), limits too high to refuse (the common case).
func BenchmarkAllow(b *testing.B) {
	for _, c := range allowBenchmarks() {
		b.Run(c.name, func(b *testing.B) {
			tab := NewTable(WithRateLimit(c.r))
			ctx := c.ctx(tab)
			b.ReportAllocs()
			for b.Loop() {
				if !(tab.limiter == nil || tab.allow(ctx, callMeta(ctx), 1, false)) { // rlAllow, written out as invokeChecked has it: inlined
					b.Fatal("refused")
				}
			}
		})
	}
	// One identity, a connection per goroutine: the identity's bucket
	// is shared (compare-and-swap under contention).
	b.Run("parallel-one-ip", func(b *testing.B) {
		tab := NewTable(WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9}))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := rlCall(rlIP("192.0.2.1"), "", tab.NewQuota())
			for pb.Next() {
				_ = tab.limiter == nil || tab.allow(ctx, callMeta(ctx), 1, false)
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
