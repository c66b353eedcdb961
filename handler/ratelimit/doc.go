// Package ratelimit limits how fast clients may call, in cost units:
// the token buckets of a handler.Table's rate limits
// (handler.Options.RateLimit), one per client identity and one per
// connection. It is a leaf: package handler builds a Limiter from its
// Options and asks it about every call; a service sets Limits and needs
// nothing else from here.
//
// # Overview
//
// Every call and every notification — each element of a batch alone —
// spends its method's cost (handler.Cost; 1 by default) from token
// buckets: one of the client's identity and one of its connection
// (Limiter.Allow). A call the buckets cannot pay for is refused at once,
// never queued — handler.Table answers a request -32005 and drops a
// notification — and counted (Limiter.Refusals; handler.Table.LimitRefusals).
// A refused call spends nothing. The zero Limits limits nothing, and New
// returns nil for it: a nil *Limiter allows every call.
//
// A bucket holds Burst units and refills at Rate units a second: a client
// may spend Burst at once, then Rate a second. A call that costs more
// than Burst runs when the bucket is full and leaves it in debt, repaid
// at Rate before the next call runs. Rates are kept to the nanosecond per
// unit (a Rate above 10⁹ counts as 10⁹), and buckets read the coarse
// clock of package pool/clock, which advances by steps of about 10 ms: a
// bucket may let through up to 10 ms' worth of units more than an exact
// one, and never refuses a call an exact one would let through (it reads
// the precise clock before refusing).
//
// # Terminology
//
// A client's identity is, in order: the Limits.Identity func's name when
// it returns one; else Caller.Principal, the name the transport's
// Authorizer gave the caller (see handler/auth); else its IP address
// (Caller.Addr: handler.Meta.ClientIP, the remote address, or behind a
// trusted proxy the client's it names) — an IPv4 address, or the /64
// prefix of an IPv6 address (what one host or subscriber is given; an
// attacker holding a /64 cannot rotate through it). Calls with neither a
// principal nor an IP address (in process, over a Unix socket) share one
// identity, "local": a transport that sets no address escapes nothing.
//
// Identities are tracked in a table of at most MaxIdentities. When it is
// full, a new identity takes the place of one whose bucket has refilled
// to full (a full bucket is as good as a new one: nothing is lost); when
// there is none, new identities share an overflow bucket (one for each
// of the table's shards, up to 64, chosen by hash), so that an attacker
// rotating through source addresses gets one identity's rate per
// overflow bucket, not one per address.
//
// A Quota carries a connection's bucket and caches the identity of its
// last call, so that the usual call — a connection's, by the same
// identity — is compared in place, with no key built and no lookup.
// Calls without one (net/http's handler.HTTPHandler, Table.Dispatch)
// have no per-connection limit and find their identity in the table
// each call.
//
// # Concurrency
//
// A Limiter and its Quotas are safe from any goroutine: buckets are
// single atomic words spent by compare-and-swap, and the identity table
// is split into shards, each behind its own mutex, taken only to track
// a new identity. Allow never blocks, so it may run on an event loop.
//
// # Lifetimes
//
// Limits are read once, by New. A Quota lives as long as its connection
// and counts for the Limiter that made it only (another's is ignored).
// The names Identity returns and the principals Allow is given may be
// views of a request: they are copied when an identity is first tracked,
// never kept otherwise.
//
// # Limits
//
// DefaultMaxIdentities (65,536) identities are tracked at once; each
// costs about 100 bytes plus its name. One call spends at most 52 days'
// worth of a bucket's refill, and a bucket holds at most as much.
package ratelimit
