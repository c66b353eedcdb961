package handler

// NOTE: the call in its method's context. A method learns which call it
// runs for — its id, its method name, whether it is a notification —
// from its context, with CallFrom. The context a method gets is a
// callCtx held in the dispatch's pooled state (st.cc): the context the
// method would have had, wrapped with the request being run. Filling it
// costs a few stores per call and no allocation; reading it costs a type
// assertion (or, through contexts derived from it, a Value lookup).

import (
	"context"

	"github.com/jetrpc/jetrpc/parser"
)

// CallInfo is the call a method runs for, as CallFrom reads it from the
// method's context: a small value, copied out of the dispatch's state.
// The zero CallInfo (Method "") means the context is not a method's.
type CallInfo struct {
	// ID is the request's id as JSON (`1`, `"a"`), or nil for a
	// notification. It is valid until the method returns and must not be
	// modified; copy it to keep it.
	ID Raw
	// Method is the registered name of the method; it may be kept.
	Method string
	// Notification reports whether the call is a notification: it gets
	// no reply, whatever the method returns.
	Notification bool
}

// CallFrom returns the call whose method's context is ctx (or a context
// derived from it): its id, method name and whether it is a
// notification, on every transport and for each element of a batch
// alone, with or without interceptors. It does not allocate. Outside a
// method — an interceptor's context, which has its *Call instead, or a
// context no table gave — it returns the zero CallInfo. Safe from any
// goroutine while the method runs; the call's context, and so what
// CallFrom reads from it, is reused once the method returns.
func CallFrom(ctx context.Context) CallInfo {
	c, ok := ctx.(*callCtx)
	if !ok {
		if c, ok = ctx.Value(callKey{}).(*callCtx); !ok {
			return CallInfo{}
		}
	}
	r := c.req
	if r == nil {
		return CallInfo{}
	}
	info := CallInfo{Method: c.name, Notification: r.Notification}
	if !r.Notification {
		info.ID = Raw(r.ID)
	}
	return info
}

// callCtx is the context a method runs with: the one it would have had,
// plus the request it runs for (CallFrom). It lives in the dispatch's
// state and is refilled for each call (state.enter).
type callCtx struct {
	context.Context                 // the method's context as its caller gave it; never nil in a call
	req             *parser.Request // the request run now; nil between calls
	name            string          // the method's registered name
}

// callKey is the context key of a callCtx, for contexts derived from it.
type callKey struct{}

// Value returns c for CallFrom, and the wrapped context's values for
// every other key.
func (c *callCtx) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// enter returns the context of a call of the method name on st.req: ctx
// wrapped by st's callCtx. Kept inlinable.
func (st *state) enter(ctx context.Context, name string) context.Context {
	st.cc.Context, st.cc.req, st.cc.name = ctx, st.req, name
	return &st.cc
}

// unwrapCall returns the context a callCtx wraps, or ctx itself. Kept
// inlinable: MetaFrom and GrantsFrom read a transport's CallContext in
// place through it.
func unwrapCall(ctx context.Context) context.Context {
	if c, ok := ctx.(*callCtx); ok {
		return c.Context
	}
	return ctx
}
