package handler

// NOTE: rate limits. A table with a RateLimit has a limiter: token
// buckets in cost units, one per connection (in the connection's Quota)
// and one per client identity (in a bounded table of identities, split
// into shards).
//
// allow's fast path is the usual call: a connection's, whose Quota
// cached its identity (compared in place, no key built); anything else
// goes through takeIdentity, which builds the key (keyOf) and looks it up
// in the table when the cache does not hold it.
//
// This file holds the options, the limiter and allow. Beside it: the
// identity table (ratelimit_identity.go), and the bucket
// (ratelimit_bucket.go). The time is package clock's.

import (
	"context"
	"hash/maphash"
	"math"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/pool/clock"
)

// DefaultMaxIdentities is the most client identities a table's rate
// limiter tracks at once (RateLimit.MaxIdentities).
const DefaultMaxIdentities = 65_536

// RateLimit limits how fast clients may call, in cost units: every call
// and every notification — each element of a batch alone — spends its
// method's cost (Cost; 1 by default) from token buckets, one of the
// client's identity and one of its connection. A call the buckets cannot
// pay for is refused at once, never queued: a request is answered
// parser.CodeLimitExceeded (-32005), a notification is dropped; both are counted
// (Table.RateLimited). A refused call spends nothing. The zero value
// limits nothing.
//
// A bucket holds Burst units and refills at Rate units a second: a client
// may spend Burst at once, then Rate a second. A call that costs more
// than Burst runs when the bucket is full and leaves it in debt, repaid
// at Rate before the next call runs. Rates are kept to the nanosecond per
// unit (a Rate above 10⁹ counts as 10⁹), and the clock advances by
// steps of about 10 ms: a bucket may let through up to 10 ms' worth of
// units more than an exact one, and never refuses a call an exact one
// would let through.
//
// A client's identity is, in order: the Identity func's name when it
// returns one; else Meta.Principal, the name the transport's Authorizer
// gave the caller (see handler/auth); else its IP address
// (Meta.ClientIP: the remote address, or behind a trusted proxy the
// client's it names) — an IPv4 address, or the /64 prefix of an IPv6 address (what one host or
// subscriber is given; an attacker holding a /64 cannot rotate through
// it). Calls with neither a principal nor an IP address (in process,
// over a Unix socket) share one identity, "local": a transport that sets
// no Remote escapes nothing.
//
// Identities are tracked in a table of at most MaxIdentities. When it is
// full, a new identity takes the place of one whose bucket has refilled
// to full (a full bucket is as good as a new one: nothing is lost); when
// there is none, new identities share an overflow bucket (one for each
// of the table's shards, up to 64, chosen by hash), so that an attacker
// rotating through source addresses gets one identity's rate per
// overflow bucket, not one per address.
//
// A Quota carries a connection's bucket (see Table.NewQuota); calls
// without one (net/http's HTTPHandler, Table.Dispatch) have no
// per-connection limit and find their identity in the table each call.
type RateLimit struct {
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
	// principal or the IP address (a name from a header, say);
	// "" means the default. It runs for every call, on the event loop
	// for inline methods: it must not block, and should not allocate. The
	// name it returns may be a view of the request (it is copied when
	// the identity is first tracked).
	Identity func(m *Meta) string
}

// enabled reports whether r limits anything.
func (r RateLimit) enabled() bool { return limits(r.Rate) || limits(r.ConnRate) }

// limits reports whether rate is a limit: positive and finite.
func limits(rate float64) bool { return rate > 0 && !math.IsInf(rate, 1) }

// Quota is the rate-limit state of one connection: its own bucket
// (RateLimit.ConnRate) and the identity of its last call. A transport
// gets one from Table.NewQuota when the connection opens and puts it in
// the Meta of the connection's calls (Meta.Quota) for the connection's
// life; a Meta copied to a worker carries the same Quota. It must serve
// the calls of that one connection only: it trusts the remote address
// not to change. Safe from any goroutine: the calls of one connection
// may run at once.
type Quota struct {
	lim  *limiter                 // immutable; never nil; the table's
	conn bucket                   // the connection's tokens (RateLimit.ConnRate); atomic only
	id   atomic.Pointer[identity] // the identity of the last call, or nil; may have been evicted since
}

// NewQuota returns a new connection's Quota for Meta.Quota, or nil when
// the table has no rate limit (RateLimit.Rate and ConnRate both 0). A
// Quota counts for the table that made it only. Safe from any goroutine.
func (t *Table) NewQuota() *Quota {
	if t.limiter == nil {
		return nil
	}
	return &Quota{lim: t.limiter}
}

// RateLimited returns the number of calls the rate limits refused
// (answered parser.CodeLimitExceeded) and of notifications they dropped, since
// the table was made. Safe from any goroutine.
func (t *Table) RateLimited() (refused, dropped uint64) {
	if t.limiter == nil {
		return 0, 0
	}
	return t.limiter.refused.Load(), t.limiter.dropped.Load()
}

// allow spends cost units of the buckets of the caller of the call whose
// context is ctx — its connection's (Meta.Quota) and its identity's — and
// reports whether the call may run; when not, it spends nothing and
// counts the call refused, or dropped if it is a notification. Costs
// below 1 count 1. Safe from any goroutine; it does not block and, for a
// caller whose identity is tracked, does not allocate. Kept inlinable.
func (t *Table) allow(ctx context.Context, cost int, notification bool) bool {
	if t.limiter == nil {
		return true
	}
	return t.limiter.allow(ctx, cost, notification)
}

// Bounds of the limiter.
const (
	maxShards   = 64      // identity shards, at most
	minPerShard = 16      // identities per shard, at least (unless MaxIdentities is smaller)
	evictSample = 8       // identities a full shard looks at for one to evict
	maxSpan     = 1 << 52 // ns (52 days): the most a bucket's depth or one call's cost may span
)

// limiter holds a table's rate limits.
type limiter struct {
	id, conn rateCfg            // immutable; RateLimit's Rate and Burst, ConnRate and ConnBurst
	identity func(*Meta) string // immutable; RateLimit.Identity
	seed     maphash.Seed       // immutable; chooses an identity's shard
	shards   []shard            // immutable; a power of two of them
	perShard int                // immutable; the most identities a shard holds
	testNow  func() int64       // tests only, set before use: the clock; nil: package clock's
	byQuota  bool               // immutable; a connection's call may go by the identity its Quota cached (allowFast): identities only, no custom Identity

	refused, dropped atomic.Uint64 // calls refused, notifications dropped
}

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

// newLimiter returns the limiter of r, or nil when r limits nothing.
func newLimiter(r RateLimit) *limiter {
	if !r.enabled() {
		return nil
	}
	l := &limiter{
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

// allow is Table.allow for a table with rate limits. The usual call —
// a connection's, allowed by the bucket of the identity its Quota
// cached — takes the short way; the rest, allowSlow.
func (l *limiter) allow(ctx context.Context, cost int, notification bool) bool {
	if c, ok := ctx.(*CallContext); ok && l.byQuota && l.testNow == nil {
		m := &c.Meta
		if q := m.Quota; q != nil && q.lim == l && m.Proxies == nil {
			if id := q.id.Load(); id != nil && id.serves(m.Principal) && id.take(clock.Coarse(), l.id.spend(cost), l.id.depth) == takeOK {
				return true
			}
		}
	}
	return l.allowSlow(ctx, cost, notification)
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

// allowSlow is allow beyond its short way.
func (l *limiter) allowSlow(ctx context.Context, cost int, notification bool) bool {
	var m *Meta
	if c, ok := ctx.(*CallContext); ok {
		m = &c.Meta
	} else {
		m = MetaFrom(ctx)
	}
	q := m.Quota
	if q != nil && q.lim != l {
		q = nil // another table's
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
	if q != nil && l.identity == nil && m.Proxies == nil {
		if id := q.id.Load(); id != nil {
			// A Quota is one connection's, whose address does not change
			// (through a trusted proxy it does: each call names its client):
			// an address identity it cached is the call's unless the call
			// names a principal.
			if id.serves(m.Principal) && id.take(clk.now, l.id.spend(cost), l.id.depth) == takeOK {
				return true
			}
		}
	}
	if !l.takeIdentity(q, m, &clk, cost) {
		if connSpent != 0 {
			q.conn.give(connSpent)
		}
		return l.refuse(notification)
	}
	return true
}

// refuse counts a refused call and returns false.
func (l *limiter) refuse(notification bool) bool {
	if notification {
		l.dropped.Add(1)
	} else {
		l.refused.Add(1)
	}
	return false
}

// takeIdentity spends cost units from the bucket of the identity of the
// call m describes, found through q's cache (q may be nil) or the table.
func (l *limiter) takeIdentity(q *Quota, m *Meta, clk *limitTime, cost int) bool {
	var k idKey
	l.keyOf(m, &k)
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
func (l *limiter) retake(b *bucket, clk *limitTime, e, depth int64) takeResult {
	if clk.precise {
		return takeRefused
	}
	*clk = l.preciseClock()
	return b.take(clk.now, e, depth)
}
