package handler

// NOTE: the glue between a table and its rate limiter (package
// handler/ratelimit, Options.RateLimit): the Quota a transport keeps per
// connection (NewQuota) and the per-call check (allow), which hands the
// limiter what it needs of the call's Meta. The refusals are counted by
// the limiter and read by LimitRefusals.

import (
	"context"

	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// NewQuota returns a new connection's rate-limit state for Meta.Quota,
// or nil when the table has no rate limit (Options.RateLimit's Rate and
// ConnRate both 0). A transport that keeps connections gets one when a
// connection opens and puts it in the Meta of each of the connection's
// calls, for the connection's life (see ratelimit.Quota). A Quota
// counts for the table that made it only. Safe from any goroutine.
func (t *Table) NewQuota() *ratelimit.Quota { return t.limiter.NewQuota() }

// allow spends cost units of the rate-limit buckets of the caller of
// the call whose context is ctx and whose metadata is m
// (ratelimit.Limiter.Allow) and reports whether the call may run; a
// refused call is counted by the limiter. The caller is the one m
// describes: its connection's Quota, its principal, and its address
// (Meta.ClientIP, read only when the limiter needs it), which a trusted
// proxy may name (Meta.Proxies). A table without rate limits (a nil
// limiter) allows every call; the dispatch tests t.limiter first, so
// that such a table builds no Caller. Kept inlinable, as is callMeta:
// the call to Allow is the only one of a call allowed by the limiter's
// short way.
func (t *Table) allow(ctx context.Context, m *Meta, cost int, notification bool) bool {
	return t.limiter.Allow(ctx, ratelimit.Caller{Quota: m.Quota, Principal: m.Principal, Addr: m, Forwarded: m.Proxies != nil}, cost, notification)
}

// callMeta is MetaFrom(ctx), with the context of a transport's call
// (*CallContext) read in place. Kept inlinable.
func callMeta(ctx context.Context) *Meta {
	if c, ok := ctx.(*CallContext); ok {
		return &c.Meta
	}
	return MetaFrom(ctx)
}
