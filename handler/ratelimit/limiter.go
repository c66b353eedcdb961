package ratelimit

// NOTE: the limiter. A Limiter holds token buckets in cost units, one
// per connection (in the connection's Quota) and one per client identity
// (in a bounded table of identities, split into shards).
//
// Allow's fast path is the usual call: a connection's, whose Quota
// cached its identity (compared in place, no key built); anything else
// goes through allowSlow and takeIdentity, which builds the key (keyOf)
// and looks it up in the table when the cache does not hold it.
//
// This file holds the limits, the Limiter, the Quota and Allow. Beside
// it: the identity table (identity.go) and the bucket (bucket.go). The
// time is package clock's.

import (
	"context"
	"hash/maphash"
	"math"
	"net/netip"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/pool/clock"
)

// DefaultMaxIdentities is the most client identities a Limiter tracks
// at once (Limits.MaxIdentities).
const DefaultMaxIdentities = 65_536

// Limits are how fast clients may call, in cost units (see the package
// doc). The zero value limits nothing.
type Limits struct {
	// Rate is the cost units per second each client identity may spend,
	// and Burst how many it may spend at once (the bucket's size). Rate
	// 0 (or less, or +Inf) means no per-identity limit. Burst 0 (or
	// less) means one second's worth: Rate, rounded up, at least 1.
	Rate  float64
	Burst int
	// ConnRate and ConnBurst are the same for each connection alone (for
	// transports that keep a Quota per connection, as the engine does).
	// ConnRate 0 (or less, or +Inf) means no per-connection limit;
	// ConnBurst 0 (or less) means one second's worth.
	ConnRate  float64
	ConnBurst int
	// MaxIdentities bounds the identities tracked at once; 0 (or less)
	// means DefaultMaxIdentities. Each costs about 100 bytes (plus its
	// name's length).
	MaxIdentities int
	// Identity, when set, names the client of a call instead of the
	// principal or the IP address (a name from a header, say); "" means
	// the default. It is given the context of the call (Allow's ctx):
	// behind a handler.Table, handler.MetaFrom(ctx) is the call's
	// metadata — its headers, its address. It runs for every call, on
	// the event loop for inline methods: it must not block, and should
	// not allocate. The name it returns may be a view of the request (it
	// is copied when the identity is first tracked).
	Identity func(ctx context.Context) string
}

// enabled reports whether r limits anything.
func (r Limits) enabled() bool { return limits(r.Rate) || limits(r.ConnRate) }

// limits reports whether rate is a limit: positive and finite.
func limits(rate float64) bool { return rate > 0 && !math.IsInf(rate, 1) }

// Caller is what Allow knows of the caller of a call. A transport or a
// method table fills it from the call's metadata (handler.Table does,
// from handler.Meta).
type Caller struct {
	// Quota is the state of the call's connection (Limiter.NewQuota), or
	// nil when the transport keeps none: the call then has no
	// per-connection limit, and its identity is looked up in the table.
	Quota *Quota
	// Principal names the authenticated caller (handler.Meta.Principal);
	// "" when there is none.
	Principal string
	// Addr gives the caller's IP address, read only when the identity is
	// an address (no Identity name, no Principal); nil, or the zero
	// netip.Addr, means none: the call is local. *handler.Meta is one.
	Addr Addresser
	// Forwarded reports that Addr names the client a trusted proxy
	// forwarded the call for, not the connection's peer: it may change
	// from one call of the connection to the next, so that the address
	// identity the Quota cached is not taken for the call's.
	Forwarded bool
}

// Addresser gives the IP address of a caller (Caller.Addr):
// handler.Meta's ClientIP. It must not block, and should not allocate.
type Addresser interface {
	ClientIP() netip.Addr
}

// Quota is the rate-limit state of one connection: its own bucket
// (Limits.ConnRate) and the identity of its last call. A transport gets
// one from Limiter.NewQuota (handler.Table.NewQuota) when the connection
// opens and passes it with each of the connection's calls (Caller.Quota;
// handler.Meta.Quota) for the connection's life. It must serve the calls
// of that one connection only: it trusts the remote address not to
// change. Safe from any goroutine: the calls of one connection may run
// at once.
type Quota struct {
	lim  *Limiter                 // immutable; never nil; the one that made it
	conn bucket                   // the connection's tokens (Limits.ConnRate); atomic only
	id   atomic.Pointer[identity] // the identity of the last call, or nil; may have been evicted since
}

// Limiter holds the buckets of Limits and spends from them (Allow). Make
// one with New; a nil *Limiter limits nothing. Safe from any goroutine.
type Limiter struct {
	id, conn rateCfg                          // immutable; Limits' Rate and Burst, ConnRate and ConnBurst
	identity func(ctx context.Context) string // immutable; Limits.Identity
	seed     maphash.Seed                     // immutable; chooses an identity's shard
	shards   []shard                          // immutable; a power of two of them
	perShard int                              // immutable; the most identities a shard holds
	testNow  func() int64                     // tests only, set before use: the clock; nil: package clock's
	byQuota  bool                             // immutable; a connection's call may go by the identity its Quota cached (Allow's fast path): identities only, no custom Identity

	refused, dropped atomic.Uint64 // calls refused, notifications dropped
}

// New returns the Limiter of r, or nil when r limits nothing (Rate and
// ConnRate both 0, negative or +Inf).
func New(r Limits) *Limiter {
	if !r.enabled() {
		return nil
	}
	l := &Limiter{
		id:       newRateCfg(r.Rate, r.Burst),
		conn:     newRateCfg(r.ConnRate, r.ConnBurst),
		identity: r.Identity,
		seed:     maphash.MakeSeed(),
	}
	l.byQuota = l.id.on && !l.conn.on && l.identity == nil
	maxIDs := r.MaxIdentities
	if maxIDs <= 0 {
		maxIDs = DefaultMaxIdentities
	}
	n := 1
	for n < maxShards && 2*n*minPerShard <= maxIDs {
		n *= 2
	}
	l.shards, l.perShard = make([]shard, n), maxIDs/n
	for i := range l.shards {
		l.shards[i].ids = make(map[idKey]*identity)
		l.shards[i].overflow.key.kind = kindOverflow
	}
	return l
}

// NewQuota returns a new connection's Quota, or nil when l is nil. A
// Quota counts for the Limiter that made it only. Safe from any
// goroutine.
func (l *Limiter) NewQuota() *Quota {
	if l == nil {
		return nil
	}
	return &Quota{lim: l}
}

// Refusals returns the number of calls l refused and of notifications
// it dropped (Allow), since it was made; 0, 0 when l is nil. Safe from
// any goroutine.
func (l *Limiter) Refusals() (refused, dropped uint64) {
	if l == nil {
		return 0, 0
	}
	return l.refused.Load(), l.dropped.Load()
}

// Allow spends cost units of the buckets of the caller c of the call
// whose context is ctx — its connection's (c.Quota) and its identity's —
// and reports whether the call may run; when not, it spends nothing and
// counts the call refused, or dropped if it is a notification. Costs
// below 1 count 1. A nil l allows everything. Safe from any goroutine;
// it does not block and, for a caller whose identity is tracked, does
// not allocate.
//
// The usual call — a connection's, allowed by the bucket of the identity
// its Quota cached — takes the short way; the rest, allowSlow.
func (l *Limiter) Allow(ctx context.Context, c Caller, cost int, notification bool) bool {
	if l == nil {
		return true
	}
	if q := c.Quota; q != nil && l.byQuota && q.lim == l && !c.Forwarded && l.testNow == nil {
		if id := q.id.Load(); id != nil && id.serves(c.Principal) && id.take(clock.Coarse(), l.id.spend(cost), l.id.depth) == takeOK {
			return true
		}
	}
	return l.allowSlow(ctx, &c, cost, notification)
}

// Bounds of the limiter.
const (
	maxShards   = 64      // identity shards, at most
	minPerShard = 16      // identities per shard, at least (unless MaxIdentities is smaller)
	evictSample = 8       // identities a full shard looks at for one to evict
	maxSpan     = 1 << 52 // ns (52 days): the most a bucket's depth or one call's cost may span
)

// rateCfg is one kind of bucket: its unit cost and its depth, in
// nanoseconds.
type rateCfg struct {
	on      bool  // limits; else the rest is 0
	unit    int64 // ns a cost unit spends: 1/Rate, rounded; ≥ 1
	depth   int64 // ns the bucket holds: Burst units; ≤ maxSpan
	maxCost int   // the highest cost that spends less than maxSpan
}

// newRateCfg returns the bucket configuration of rate and burst.
func newRateCfg(rate float64, burst int) rateCfg {
	if !limits(rate) {
		return rateCfg{}
	}
	unit := int64(max(math.Round(1e9/rate), 1))
	if burst <= 0 {
		burst = int(min(max(math.Ceil(rate), 1), 1e9))
	}
	c := rateCfg{on: true, unit: unit, maxCost: int(maxSpan / unit)}
	c.depth = c.spend(burst)
	return c
}

// spend returns the nanoseconds cost units spend (cost < 1 counts 1), at
// most maxSpan.
func (c *rateCfg) spend(cost int) int64 {
	switch {
	case cost <= 1:
		return c.unit
	case cost > c.maxCost:
		return maxSpan
	}
	return int64(cost) * c.unit
}

// serves reports whether id, a connection's cached identity, is that of
// its call with the principal p: the principal's, or when it has none,
// the connection's address (not the overflow bucket, whose identity
// belongs to no call). Kept inlinable.
func (id *identity) serves(p string) bool {
	if p != "" {
		return id.key.kind == kindPrincipal && id.key.name == p
	}
	return id.key.kind <= kindIPv6 // kindLocal, kindIPv4, kindIPv6
}

// allowSlow is Allow beyond its short way.
func (l *Limiter) allowSlow(ctx context.Context, c *Caller, cost int, notification bool) bool {
	q := c.Quota
	if q != nil && q.lim != l {
		q = nil // another Limiter's
	}
	var clk limitTime
	if l.testNow == nil {
		clk.now = clock.Coarse()
	} else {
		clk = l.preciseClock()
	}
	var connSpent int64
	if q != nil && l.conn.on {
		e := l.conn.spend(cost)
		if q.conn.take(clk.now, e, l.conn.depth) != takeOK && l.retake(&q.conn, &clk, e, l.conn.depth) != takeOK {
			return l.refuse(notification)
		}
		connSpent = e
	}
	if !l.id.on {
		return true
	}
	// The usual call: a connection's, by the identity it cached (a
	// principal, or a TCP address), allowed. Else takeIdentity finds the
	// identity, tries again and reads the precise clock before refusing.
	if q != nil && l.identity == nil && !c.Forwarded {
		if id := q.id.Load(); id != nil {
			// A Quota is one connection's, whose address does not change
			// (through a trusted proxy it does: each call names its client):
			// an address identity it cached is the call's unless the call
			// names a principal.
			if id.serves(c.Principal) && id.take(clk.now, l.id.spend(cost), l.id.depth) == takeOK {
				return true
			}
		}
	}
	if !l.takeIdentity(ctx, q, c, &clk, cost) {
		if connSpent != 0 {
			q.conn.give(connSpent)
		}
		return l.refuse(notification)
	}
	return true
}

// refuse counts a refused call and returns false.
func (l *Limiter) refuse(notification bool) bool {
	if notification {
		l.dropped.Add(1)
	} else {
		l.refused.Add(1)
	}
	return false
}

// takeIdentity spends cost units from the bucket of the identity of the
// call of ctx and c, found through q's cache (q may be nil) or the table.
func (l *Limiter) takeIdentity(ctx context.Context, q *Quota, c *Caller, clk *limitTime, cost int) bool {
	var k idKey
	l.keyOf(ctx, c, &k)
	e := l.id.spend(cost)
	var id *identity
	if q != nil {
		id = q.id.Load()
	}
	for {
		if id == nil || !id.key.equal(&k) {
			id = l.lookup(k, clk.now)
			if q != nil && id.key.kind != kindOverflow {
				q.id.Store(id)
			}
		}
		r := id.take(clk.now, e, l.id.depth)
		if r == takeRefused {
			r = l.retake(&id.bucket, clk, e, l.id.depth)
		}
		switch r {
		case takeOK:
			return true
		case takeRefused:
			return false
		}
		id = nil // evicted since it was found: find it again
	}
}

// retake tries b.take again, at the precise time, after b refused at
// clk's coarse time; it sets clk to the precise time.
func (l *Limiter) retake(b *bucket, clk *limitTime, e, depth int64) takeResult {
	if clk.precise {
		return takeRefused
	}
	*clk = l.preciseClock()
	return b.take(clk.now, e, depth)
}
