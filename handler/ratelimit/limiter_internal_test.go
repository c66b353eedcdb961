package ratelimit

// White-box tests of the limiter (limiter.go, bucket.go, identity.go):
// Allow and the identity table, on a test clock. A table's use of it —
// the -32005 replies, dropped notifications, the caller a Meta names —
// is tested in package handler and with the engine; here calls are
// Allow's, one per call or batch element.

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/jetrpc/jetrpc/handler/internal/testkit"
)

// rlStart is the test clock's start: an hour (a reading of package clock).
const rlStart = int64(time.Hour)

// rlLimiter returns a Limiter of r and its clock, at rlStart.
func rlLimiter(tb testing.TB, r Limits) (*Limiter, *atomic.Int64) {
	tb.Helper()
	lim := New(r)
	if lim == nil {
		tb.Fatalf("%+v: no limiter", r)
	}
	clk := new(atomic.Int64)
	clk.Store(rlStart)
	lim.testNow = clk.Load
	return lim, clk
}

// rlCaller is a call: its context and its caller.
type rlCaller struct {
	ctx context.Context
	c   Caller
}

// rlAddr is an Addresser of a net.Addr, read as handler.Meta.ClientIP
// reads its Remote.
type rlAddr struct{ a net.Addr }

func (r *rlAddr) ClientIP() netip.Addr {
	var ip net.IP
	switch a := r.a.(type) {
	case *net.TCPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	}
	addr, _ := netip.AddrFromSlice(ip)
	return addr.Unmap()
}

// rlCall returns a call from remote, by principal ("" for none), on the
// connection of q (nil for none).
func rlCall(remote net.Addr, principal string, q *Quota) *rlCaller {
	return &rlCaller{ctx: context.Background(), c: Caller{Quota: q, Principal: principal, Addr: &rlAddr{remote}}}
}

// rlIP returns a TCP address of ip.
func rlIP(ip string) *net.TCPAddr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 4242} }

// rlAllow is lim.Allow for the call rc.
func rlAllow(lim *Limiter, rc *rlCaller, cost int, notification bool) bool {
	return lim.Allow(rc.ctx, rc.c, cost, notification)
}

// rlSpend calls n times at cost 1 and returns how many were allowed.
func rlSpend(lim *Limiter, rc *rlCaller, n int) int {
	ok := 0
	for range n {
		if rlAllow(lim, rc, 1, false) {
			ok++
		}
	}
	return ok
}

func TestLimiter_disabled(t *testing.T) {
	for _, r := range []Limits{
		{},
		{Burst: 10, ConnBurst: 10, MaxIdentities: 5},
		{Rate: -1, ConnRate: -1},
		{Rate: math.Inf(1), ConnRate: math.Inf(1)},
	} {
		lim := New(r)
		if r.enabled() || lim != nil || lim.NewQuota() != nil {
			t.Errorf("%+v: enabled", r)
		}
		for range 1000 {
			if !rlAllow(lim, rlCall(rlIP("192.0.2.1"), "", lim.NewQuota()), 1000, false) {
				t.Fatalf("%+v: refused", r)
			}
		}
		if refused, dropped := lim.Refusals(); refused != 0 || dropped != 0 {
			t.Errorf("%+v: Refusals = %d, %d", r, refused, dropped)
		}
	}
}

func TestLimiter_config(t *testing.T) {
	for _, c := range []struct {
		rate         float64
		burst        int
		unit, depth  int64
		maxCostBound bool
	}{
		{rate: 10, burst: 5, unit: 1e8, depth: 5e8},
		{rate: 10, unit: 1e8, depth: 1e9},        // one second's worth
		{rate: 0.5, unit: 2e9, depth: 2e9},       // at least 1
		{rate: 2.5, unit: 4e8, depth: 3 * 4e8},   // rounded up
		{rate: 3e9, burst: 7, unit: 1, depth: 7}, // at most 10⁹ a second
		{rate: 1e6, burst: 1 << 62, unit: 1000, depth: maxSpan},
	} {
		got := newRateCfg(c.rate, c.burst)
		if !got.on || got.unit != c.unit || got.depth != c.depth {
			t.Errorf("newRateCfg(%v, %d) = %+v; want unit %d, depth %d", c.rate, c.burst, got, c.unit, c.depth)
		}
	}
	c := newRateCfg(1000, 1)
	for _, x := range []struct {
		cost int
		e    int64
	}{{-5, 1e6}, {0, 1e6}, {1, 1e6}, {7, 7e6}, {c.maxCost, int64(c.maxCost) * 1e6}, {c.maxCost + 1, maxSpan}, {int(^uint(0) >> 1), maxSpan}} {
		if e := c.spend(x.cost); e != x.e {
			t.Errorf("spend(%d) = %d; want %d", x.cost, e, x.e)
		}
	}
}

// TestLimiter_identity: an identity may spend Burst at once, then
// Rate a second; requests refused are counted apart from notifications
// dropped, and refusals spend nothing.
func TestLimiter_identity(t *testing.T) {
	lim, clk := rlLimiter(t, Limits{Rate: 10, Burst: 5})
	ctx := rlCall(rlIP("192.0.2.1"), "", nil)
	if n := rlSpend(lim, ctx, 8); n != 5 {
		t.Fatalf("burst: %d allowed; want 5", n)
	}
	if rlAllow(lim, ctx, 1, true) {
		t.Fatal("notification over the limit allowed")
	}
	if refused, dropped := lim.Refusals(); refused != 3 || dropped != 1 {
		t.Errorf("Refusals = %d, %d; want 3, 1", refused, dropped)
	}
	clk.Add(int64(99 * time.Millisecond))
	if rlAllow(lim, ctx, 1, false) {
		t.Error("allowed 99 ms later; want 100 ms")
	}
	clk.Add(int64(time.Millisecond))
	if !rlAllow(lim, ctx, 1, false) || rlAllow(lim, ctx, 1, false) {
		t.Error("100 ms later: want one call allowed")
	}
	clk.Add(int64(time.Hour))
	if n := rlSpend(lim, ctx, 10); n != 5 {
		t.Errorf("an hour later: %d allowed; want 5 (Burst)", n)
	}
}

// TestLimiter_batch: a batch of N spends N (each element is a call),
// and a method's cost is spent whole: a batch past the budget gets its
// first elements through and the rest refused.
func TestLimiter_batch(t *testing.T) {
	lim, clk := rlLimiter(t, Limits{Rate: 1000, Burst: 1000})
	ctx := rlCall(rlIP("192.0.2.1"), "", lim.NewQuota())
	if n := rlSpend(lim, ctx, 1000); n != 1000 {
		t.Fatalf("batch of 1000: %d allowed; want 1000", n)
	}
	if rlAllow(lim, ctx, 1, false) {
		t.Fatal("element 1001 allowed")
	}
	clk.Add(int64(10 * time.Millisecond)) // 10 units
	for i, want := range []bool{true, true, false, true, false} {
		cost := []int{3, 6, 2, 1, 1}[i]
		if got := rlAllow(lim, ctx, cost, false); got != want {
			t.Errorf("call %d of cost %d: %v; want %v", i, cost, got, want)
		}
	}
}

// TestLimiter_costOverBurst: a call that costs more than Burst runs on
// a full bucket and leaves it in debt.
func TestLimiter_costOverBurst(t *testing.T) {
	lim, clk := rlLimiter(t, Limits{Rate: 10, Burst: 5})
	ctx := rlCall(rlIP("192.0.2.1"), "", nil)
	if !rlAllow(lim, ctx, 20, false) {
		t.Fatal("cost 20 on a full bucket refused")
	}
	clk.Add(int64(1500 * time.Millisecond)) // the debt of 15 units repaid: 0 tokens
	if rlAllow(lim, ctx, 1, false) {
		t.Error("allowed in debt")
	}
	clk.Add(int64(100 * time.Millisecond))
	if !rlAllow(lim, ctx, 1, false) {
		t.Error("refused once the debt is repaid")
	}
	clk.Add(int64(400 * time.Millisecond)) // 4 tokens of 5
	if rlAllow(lim, ctx, 20, false) {
		t.Error("cost 20 on a bucket that is not full allowed")
	}
	clk.Add(int64(100 * time.Millisecond))
	if !rlAllow(lim, ctx, 20, false) {
		t.Error("cost 20 on a full bucket refused")
	}
}

// TestLimiter_identities: who counts as whom.
func TestLimiter_identities(t *testing.T) {
	type realIP struct{}
	lim, _ := rlLimiter(t, Limits{Rate: 1, Burst: 1, Identity: func(ctx context.Context) string {
		s, _ := ctx.Value(realIP{}).(string) // a header the call's context carries, say
		return s
	}})
	proxied := func(ip string) *rlCaller {
		c := rlCall(rlIP("10.0.0.1"), "proxied", nil)
		c.ctx = context.WithValue(c.ctx, realIP{}, ip)
		return c
	}
	for _, c := range []struct {
		at   string
		a, b *rlCaller
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
		if !rlAllow(lim, c.a, 1, false) {
			t.Errorf("%s: first call refused", c.at)
			continue
		}
		if got := !rlAllow(lim, c.b, 1, false); got != c.same {
			t.Errorf("%s: one identity: %v; want %v", c.at, got, c.same)
		}
	}
	if rlAllow(lim, &rlCaller{ctx: context.Background()}, 1, false) {
		t.Error("a Caller without an Addresser is not local")
	}
}

func rlHere() string { return testkit.CallerLine(2) }

// TestLimiter_conn: each connection's own bucket, beside its
// identity's; a refused call spends from neither.
func TestLimiter_conn(t *testing.T) {
	lim, clk := rlLimiter(t, Limits{Rate: 10, Burst: 5, ConnRate: 10, ConnBurst: 3})
	ip := rlIP("192.0.2.1")
	q1, q2 := lim.NewQuota(), lim.NewQuota()
	c1, c2 := rlCall(ip, "", q1), rlCall(ip, "", q2)
	if n := rlSpend(lim, c1, 5); n != 3 {
		t.Fatalf("conn 1: %d allowed; want 3 (ConnBurst)", n)
	}
	// The identity spent 3 of 5: conn 2 gets 2, and the refusal of its
	// third by the identity gives its connection's unit back.
	if n := rlSpend(lim, c2, 5); n != 2 {
		t.Fatalf("conn 2: %d allowed; want 2 (what the identity has left)", n)
	}
	if tat, want := q2.conn.tat.Load(), rlStart+2*int64(100*time.Millisecond); tat != want {
		t.Errorf("conn 2's bucket: tat %d; want %d (2 units spent)", tat, want)
	}
	// Calls without a Quota have no per-connection limit.
	lim2, _ := rlLimiter(t, Limits{ConnRate: 1, ConnBurst: 1})
	if n := rlSpend(lim2, rlCall(ip, "", nil), 100); n != 100 {
		t.Errorf("no Quota: %d allowed; want all", n)
	}
	q := lim2.NewQuota()
	if n := rlSpend(lim2, rlCall(ip, "", q), 3); n != 1 {
		t.Errorf("ConnRate alone: %d allowed; want 1", n)
	}
	// A Quota counts for its own table only.
	if n := rlSpend(lim2, rlCall(ip, "", q1), 3); n != 3 {
		t.Errorf("another table's Quota: %d allowed; want 3", n)
	}
	clk.Add(int64(time.Second))
	if n := rlSpend(lim, c1, 5); n != 3 {
		t.Errorf("conn 1, a second later: %d allowed; want 3", n)
	}
}

// TestLimiter_quotaCache: a Quota caches its connection's identity,
// follows a change of principal, and drops an identity evicted.
func TestLimiter_quotaCache(t *testing.T) {
	lim, clk := rlLimiter(t, Limits{Rate: 10, Burst: 2, MaxIdentities: 1})
	l := lim
	q := lim.NewQuota()
	a := rlCall(rlIP("192.0.2.1"), "", q)
	if !rlAllow(lim, a, 1, false) {
		t.Fatal("refused")
	}
	idA := q.id.Load()
	if idA == nil || idA.key != ipKey(net.ParseIP("192.0.2.1")) {
		t.Fatalf("cached %+v", idA)
	}
	a.c.Principal = "alice"   // the next request of the HTTP connection
	rlAllow(lim, a, 1, false) // the table is full and 192.0.2.1 is not: alice overflows
	if q.id.Load() != idA {
		t.Error("an overflow identity was cached")
	}
	a.c.Principal = ""
	if !rlAllow(lim, a, 1, false) || rlAllow(lim, a, 1, false) {
		t.Fatal("192.0.2.1 after the others: want 1 more call")
	}
	clk.Add(int64(time.Second)) // 192.0.2.1 is full again: evictable
	b := rlCall(rlIP("192.0.2.2"), "", nil)
	if !rlAllow(lim, b, 1, false) {
		t.Fatal("192.0.2.2 refused")
	}
	if idA.tat.Load() != evictedTAT || l.size() != 1 {
		t.Fatalf("192.0.2.1 not evicted: tat %d, %d tracked", idA.tat.Load(), l.size())
	}
	// The Quota still holds the evicted identity: it must find 192.0.2.1
	// again, which evicts 192.0.2.2 in turn (full again a second later)
	// and gets a new bucket.
	clk.Add(int64(time.Second))
	if n := rlSpend(lim, a, 3); n != 2 {
		t.Errorf("192.0.2.1 after its eviction: %d allowed; want 2 (a new bucket)", n)
	}
	if id := q.id.Load(); id == idA || id == nil || id.key != idA.key || id.tat.Load() == evictedTAT {
		t.Errorf("Quota's cache after eviction: %p (evicted was %p)", id, idA)
	}
}

// TestLimiter_identityTableBound: 100,000 identities never grow the
// table past MaxIdentities; when it is full of identities in use, new
// ones share the overflow buckets (no fresh burst per address); once
// identities refill, new ones take their places.
func TestLimiter_identityTableBound(t *testing.T) {
	const maxIDs, burst = 1000, 5
	lim, clk := rlLimiter(t, Limits{Rate: 1, Burst: burst, MaxIdentities: maxIDs})
	l := lim
	if len(l.shards) != 32 || l.perShard != 31 {
		t.Fatalf("%d shards of %d", len(l.shards), l.perShard)
	}
	allowed := 0
	for i := range 100_000 {
		ip := net.IPv4(10, byte(i>>16), byte(i>>8), byte(i))
		if rlAllow(lim, rlCall(&net.TCPAddr{IP: ip}, "", nil), 1, false) {
			allowed++
		}
		if i%10_000 == 0 {
			if n := l.size(); n > maxIDs {
				t.Fatalf("after %d identities: %d tracked; want ≤ %d", i+1, n, maxIDs)
			}
		}
	}
	tracked := l.size()
	if tracked > maxIDs || tracked < maxIDs-len(l.shards) {
		t.Fatalf("%d tracked; want %d (≤ %d)", tracked, len(l.shards)*l.perShard, maxIDs)
	}
	// Each tracked identity got its call; the rest shared the overflow
	// buckets, burst units each.
	if want := tracked + burst*len(l.shards); allowed != want {
		t.Errorf("%d of 100,000 allowed; want %d: one each for the tracked, %d for each of %d overflow buckets", allowed, want, burst, len(l.shards))
	}
	// Full buckets are evicted for new identities: after 5 s every
	// bucket is full, and new identities each get their own burst, none
	// from an overflow bucket. Principals first, with names that are
	// views of a buffer the caller reuses.
	buf := []byte("principal-000000")
	for i := range 10_000 {
		clk.Add(int64(5 * time.Second))
		copy(buf[len(buf)-6:], fmt.Sprintf("%06d", i))
		if n := rlSpend(lim, rlCall(nil, view(buf), nil), burst+1); n != burst {
			t.Fatalf("new principal %d: %d allowed; want %d", i, n, burst)
		}
	}
	names := 0
	for i := range l.shards {
		for k := range l.shards[i].ids {
			if k.kind != kindPrincipal {
				continue
			}
			names++
			if p := uintptr(unsafe.Pointer(unsafe.StringData(k.name))); p >= uintptr(unsafe.Pointer(&buf[0])) && p < uintptr(unsafe.Pointer(&buf[0]))+uintptr(len(buf)) {
				t.Fatal("a tracked name is a view of the caller's buffer")
			}
		}
	}
	if n := l.size(); n > maxIDs || names == 0 {
		t.Fatalf("%d tracked after principals (%d of them); want ≤ %d", n, names, maxIDs)
	}
	for i := range 100_000 {
		clk.Add(int64(5 * time.Second))
		ctx := rlCall(&net.TCPAddr{IP: net.IPv4(11, byte(i>>16), byte(i>>8), byte(i))}, "", nil)
		if n := rlSpend(lim, ctx, burst+1); n != burst {
			t.Fatalf("new identity %d: %d allowed; want %d", i, n, burst)
		}
	}
	if n := l.size(); n > maxIDs {
		t.Fatalf("%d tracked after evictions; want ≤ %d", n, maxIDs)
	}
}

// TestLimiter_smallTable: the shard count for small bounds.
func TestLimiter_smallTable(t *testing.T) {
	for _, c := range []struct{ max, shards, per int }{
		{1, 1, 1}, {31, 1, 31}, {32, 2, 16}, {100, 4, 25}, {1000, 32, 31}, {1024, 64, 16}, {2048, 64, 32}, {0, 64, 1024}, {-1, 64, 1024},
	} {
		l := New(Limits{Rate: 1, MaxIdentities: c.max})
		if len(l.shards) != c.shards || l.perShard != c.per {
			t.Errorf("MaxIdentities %d: %d shards of %d; want %d of %d", c.max, len(l.shards), l.perShard, c.shards, c.per)
		}
	}
}

// TestLimiter_concurrent: connections of one identity on many
// goroutines spend exactly its burst (the clock stands still), while
// others churn through identities and evict; run with -race.
func TestLimiter_concurrent(t *testing.T) {
	const burst, workers, calls = 5000, 8, 2000
	lim, clk := rlLimiter(t, Limits{Rate: 1, Burst: burst, ConnRate: 1e6, ConnBurst: 1e6, MaxIdentities: 64})
	ip := rlIP("192.0.2.1")
	shared := rlCall(ip, "", lim.NewQuota()) // one WebSocket connection, calls run at once
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			own := rlCall(ip, "", lim.NewQuota())
			for i := range calls {
				ctx := own
				if i%2 == 0 {
					ctx = shared
				}
				if rlAllow(lim, ctx, 1, i%3 == 0) {
					allowed.Add(1)
				}
			}
		}()
		go func() {
			defer wg.Done()
			q := lim.NewQuota()
			for i := range calls {
				if w == 0 && i%100 == 0 {
					clk.Add(int64(time.Hour)) // everyone refills: evictions
				}
				rlAllow(lim, rlCall(&net.TCPAddr{IP: net.IPv4(10, byte(w), byte(i>>8), byte(i))}, "", q), 1, false)
			}
		}()
	}
	wg.Wait()
	if l := lim; l.size() > 64 {
		t.Errorf("%d tracked; want ≤ 64", l.size())
	}
	// 192.0.2.1 may have been evicted (full) when the clock jumped; a
	// still clock would give exactly burst. Run again without churn.
	lim, _ = rlLimiter(t, Limits{Rate: 1, Burst: burst})
	allowed.Store(0)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := rlCall(ip, "", lim.NewQuota())
			for i := range calls {
				ctx := own
				if i%2 == 0 {
					ctx = shared // another table's Quota: ignored
				}
				if rlAllow(lim, ctx, 1, false) {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != burst {
		t.Errorf("%d allowed; want exactly %d", allowed.Load(), burst)
	}
	refused, dropped := lim.Refusals()
	if refused != workers*calls-burst || dropped != 0 {
		t.Errorf("Refusals = %d, %d; want %d, 0", refused, dropped, workers*calls-burst)
	}
}

// TestLimiter_zeroAllocs: a call of a known identity allocates
// nothing, with a Quota (cached) or without (found in the table).
func TestLimiter_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	lim, _ := rlLimiter(t, Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9})
	lim.testNow = nil // the real clocks
	for _, c := range []struct {
		at  string
		ctx *rlCaller
	}{
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "", lim.NewQuota())},
		{at: rlHere(), ctx: rlCall(rlIP("2001:db8::1"), "", lim.NewQuota())},
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "alice", lim.NewQuota())},
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "", nil)},
		{at: rlHere(), ctx: rlCall(rlIP("192.0.2.1"), "bob", nil)},
		{at: rlHere(), ctx: rlCall(nil, "", nil)},
		{at: rlHere(), ctx: &rlCaller{ctx: context.Background()}},
	} {
		rlAllow(lim, c.ctx, 1, false) // tracks the identity
		if n := testing.AllocsPerRun(1000, func() {
			if !rlAllow(lim, c.ctx, 1, false) {
				t.Fatalf("%s: refused", c.at)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocs per call; want 0", c.at, n)
		}
	}
	// Refusals allocate nothing either.
	lim2, _ := rlLimiter(t, Limits{Rate: 1, Burst: 1, ConnRate: 1, ConnBurst: 1})
	ctx := rlCall(rlIP("192.0.2.1"), "", lim2.NewQuota())
	rlAllow(lim2, ctx, 1, false)
	if n := testing.AllocsPerRun(1000, func() { rlAllow(lim2, ctx, 1, false) }); n != 0 {
		t.Errorf("refusal: %v allocs; want 0", n)
	}
}

// TestLimiter_realClock: limits on the real clocks (a refusal reads
// the precise one).
func TestLimiter_realClock(t *testing.T) {
	lim := New(Limits{Rate: 100, Burst: 10, ConnRate: 100, ConnBurst: 10})
	ctx := rlCall(rlIP("192.0.2.1"), "", lim.NewQuota())
	if n := rlSpend(lim, ctx, 20); n < 10 || n > 11 {
		t.Fatalf("%d allowed; want 10", n)
	}
	time.Sleep(50 * time.Millisecond)
	if n := rlSpend(lim, ctx, 20); n < 4 || n > 10 {
		t.Errorf("50 ms later: %d allowed; want about 5", n)
	}
}

// view returns a string that aliases b, as a transport's views of a
// request do.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
