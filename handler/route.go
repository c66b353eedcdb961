package handler

// NOTE: routing before the body: a transport that learns a call's method
// from its head (a header field such as Mcp-Method: engine
// Options.MethodHeader) asks the table about it before it reads the body
// (Admit). What the call would be refused for without reading its params
// — an unknown method, a permission it lacks, its rate limit — is
// refused then, and the cost the rate limits took is not taken again
// when the body's call runs (Meta's prepaid).

import (
	"context"

	"github.com/jetrpc/jetrpc/parser"
)

// Admit checks a call of the method name, as the method's call would be
// checked, before its request is read: the method exists, the caller in
// ctx holds the permissions it requires (Require), and the rate limits
// allow it (Options.RateLimit, Cost) — in that order. It returns 0 when
// the call may go on, else the code of the refusal
// (parser.CodeMethodNotFound, parser.CodeForbidden or
// parser.CodeLimitExceeded) and its detail (a string that lives as long
// as t). A call admitted spent its cost from the rate limits: the next
// call of name run with the same Meta does not spend it again (the
// transport sets the Meta for each request: SetHTTPHeadParsed or
// SetHTTPRequest clear it). A refusal is counted as the call's would be
// (LimitRefusals). name is the method name, unescaped. It allocates
// nothing. Safe from any goroutine, once the methods are registered.
func (t *Table) Admit(ctx *CallContext, name []byte) (parser.Code, string) {
	t.seal()
	m := t.methods[string(name)]
	switch {
	case m == nil:
		return parser.CodeMethodNotFound, "method not found"
	case m.require != nil && !GrantsFrom(ctx).HasAll(m.require...):
		return parser.CodeForbidden, m.forbidden
	case t.limiter != nil:
		meta := &ctx.Meta
		if !t.allow(ctx, meta, m.cost, false) {
			return parser.CodeLimitExceeded, "rate limit"
		}
		meta.prepaid = m.info.Name
	}
	return 0, ""
}

// prepaidFor reports whether the call of m whose metadata is meta was
// charged already, when Admit admitted it, and forgets the charge: one
// call runs for one Admit. Kept inlinable.
func (meta *Meta) prepaidFor(m *method) bool {
	if meta.prepaid == "" || meta.prepaid != m.info.Name {
		return false
	}
	meta.prepaid = ""
	return true
}

// charged spends the cost of a call of m from the rate limits, unless
// Admit spent it already, and reports whether the call may run.
func (t *Table) charged(ctx context.Context, m *method, notification bool) bool {
	meta := callMeta(ctx)
	return meta.prepaidFor(m) || t.allow(ctx, meta, m.cost, notification)
}
