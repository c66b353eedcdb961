package handler

// NOTE: dispatch of one message. A single request runs on the caller. A
// batch is first planned (each element parsed and its method looked up);
// if every element is inline and the batch is short, it runs on the
// caller in order. Otherwise it is cut into segments — each blocking
// element alone, runs of inline elements together — that run in parallel
// on the worker pool, each writing into its own buffer, and the buffers
// are joined in request order into one array.
//
// This file holds the entry point Dispatch, the dispatch of a message
// and the run of a single request. Beside it: the pooled scratch memory
// of a dispatch (state.go); the entry for callers that must not block,
// DispatchInline, and the message it defers, Pending (pending.go); and
// batches and their segments (batch.go).

import (
	"context"
	"runtime/debug"

	"github.com/jetrpc/jetrpc/parser"
)

// Dispatch runs one message — a request or a batch — and appends its
// reply to dst: nothing for a notification or an all-notification batch,
// one object for a request or a fault, one array for a batch. It blocks
// until every reply is written: blocking methods of a single request run
// on the calling goroutine, batch elements in parallel on the worker
// pool. msg is only read, and only until Dispatch returns. ctx is passed
// to the methods. Safe from any goroutine.
func (t *Table) Dispatch(ctx context.Context, dst, msg []byte) []byte {
	out, _ := t.dispatch(ctx, dst, msg, false, nil, nil)
	return out
}

// dispatchStreaming is Dispatch for a caller that takes the reply of a
// single request of a streamed method (RegisterStream) in parts through
// sink, as they are made; the rest of the reply is appended to dst.
func (t *Table) dispatchStreaming(ctx context.Context, dst, msg []byte, sink ReplySink) []byte {
	out, _ := t.dispatch(ctx, dst, msg, false, nil, sink)
	return out
}

// dispatchPanicked is the net under jetrpc's own code (methods' panics
// are recovered per request): one bad message must not take the caller
// down. Every entry point recovers and calls it, which logs v and
// appends one -32603 reply to dst.
func (t *Table) dispatchPanicked(v any, dst []byte) []byte {
	t.opts.Logger.Error("jetrpc: dispatch failed", "panic", v, "stack", string(debug.Stack()))
	return appendErrorReply(dst, nil, parser.Version2, parser.CodeInternalError, "Internal error", "", nil)
}

// dispatch runs msg, or with inlineOnly defers it to later when it needs
// a worker.
func (t *Table) dispatch(ctx context.Context, dst, msg []byte, inlineOnly bool, later *Pending, sink ReplySink) (out []byte, oc Outcome) {
	t.seal()
	var st *state
	if later != nil && later.spare != nil {
		st, later.spare = later.spare, nil
		st.prepare(t)
	} else {
		st = getState(t)
	}
	st.sink = sink // a single request's: flushPart ignores it in a batch
	st.deferSubs = later != nil && later.deferSubs
	start := dst
	defer func() {
		if v := recover(); v != nil { // st is left to the collector
			out, oc = t.dispatchPanicked(v, start), Replied
		}
	}()
	st.src = msg
	m := &st.msg
	// A batch's elements come from the pass that validates it, up to the
	// batch limit (a longer batch is refused whole).
	st.reqs = st.p.ParseElems(m, msg, st.reqs[:0], t.opts.MaxBatch)
	ok := true
	switch m.Kind {
	case parser.KindInvalid:
		code := m.Err.Code
		if len(t.chain) == 0 {
			dst = AppendFault(dst, nil, &m.Err)
		} else {
			dst = t.intercept(ctx, st, dst, nil, nil, &m.Err, 0)
			code = st.code // as an interceptor may have replaced it
		}
		if m.Err.Code == parser.CodeParseError {
			oc = Malformed
		}
		if t.obs != nil {
			t.obs.fault(ctx, st, code, 0)
		}
	case parser.KindSingle:
		st.req = &m.Request
		if t.obs == nil {
			dst, ok = t.single(ctx, st, dst, inlineOnly)
			break
		}
		st.t0 = 0 // read by single when the request runs here (begin), not when it is deferred
		if later != nil && t.obs.chained(st) {
			st.t0 = later.clock
		}
		dst, ok = t.single(ctx, st, dst, inlineOnly)
		if ok {
			if later != nil && later.burst {
				later.clock = t.obs.endBurst(ctx, st, st.req, later)
			} else {
				t.obs.endSingle(ctx, st, st.req)
			}
		}
	case parser.KindBatch:
		if t.obs != nil {
			st.t0 = t.obs.begin(st, later)
		}
		dst, ok = t.batch(ctx, st, dst, m, inlineOnly)
	}
	if later != nil && (!ok || m.Kind != parser.KindSingle) {
		later.clock = 0 // the next message's handling starts when it does
	}
	if !ok {
		oc = Deferred
		if later != nil {
			if t.obs != nil {
				t.obs.kept(st)
			}
			later.keep(t, st, msg) // st goes with the Pending
			if m.Kind == parser.KindSingle && st.single.timeout > 0 && !st.single.streamed {
				// A blocking call with a timeout: its deadline counts from
				// when it came, for its caller to watch (Deadline).
				st.deadline = later.now() + int64(st.single.timeout)
			}
			return dst, oc
		}
	}
	if later != nil && later.spare == nil && !st.abandoned {
		st.reset()
		later.spare = st // kept for the next call with this Pending
	} else {
		putState(st)
	}
	return dst, oc
}

// single runs the request in st.req, or reports false when it needs a
// worker and inlineOnly is set (st.single is then its method).
func (t *Table) single(ctx context.Context, st *state, dst []byte, inlineOnly bool) ([]byte, bool) {
	r := st.req
	var m *method
	if r.Err.OK() {
		m = t.lookup(st, r)
		if m != nil && inlineOnly && (!m.inline || m.subscribe && st.deferSubs) {
			st.single = m
			return dst, false // its start is counted if the caller keeps it (Pending)
		}
		if t.obs != nil {
			if st.t0 == 0 {
				st.t0 = t.obs.now(st)
			}
			t.obs.start(st, r, m)
		}
		var out []byte
		switch {
		case t.direct(m):
			out = m.impl.invoke(ctx, st, dst)
		case m != nil && len(t.chain) == 0 && (m.inline || m.timeout == 0):
			out = t.invokeChecked(ctx, st, dst, r, m) // a call with checks, run here
		default:
			return t.runSingle(ctx, st, dst, r, m), true
		}
		if t.tooLarge(out, len(dst)) {
			out = t.replaceTooLarge(st, out, len(dst), r)
		}
		return out, true
	}
	if t.obs != nil {
		if st.t0 == 0 {
			st.t0 = t.obs.now(st)
		}
		t.obs.start(st, r, nil)
	}
	return t.runSingle(ctx, st, dst, r, m), true
}

// runSingle runs a single request through the interceptors on the
// caller — or, for a blocking method with a timeout, on a worker while
// the caller waits for it or for its deadline — and appends its reply.
func (t *Table) runSingle(ctx context.Context, st *state, dst []byte, r *parser.Request, m *method) []byte {
	before := len(dst)
	switch {
	case m != nil && m.timeout > 0 && !m.inline && !m.streamed:
		// Answered at its deadline by the caller; a streamed call's
		// context carries its deadline instead (its reply may have begun).
		dst = t.timedSingle(ctx, st, dst, r, m)
	case len(t.chain) == 0:
		dst = t.invokeSlow(ctx, st, dst, r, m) // what call and invoke would come to, but for a plain method, which it runs too
	default:
		dst = t.intercept(ctx, st, dst, r, m, nil, 0)
	}
	return t.capReply(st, dst, before, r)
}

func notFound(dst []byte, r *parser.Request) []byte {
	if r.Notification {
		return dst
	}
	return appendErrorReply(dst, r.ID, r.Version, parser.CodeMethodNotFound, "Method not found", "", nil)
}

// capReply replaces the reply dst[before:] to r by parser.CodeResponseTooLarge
// when it passes MaxResponseSize.
func (t *Table) capReply(st *state, dst []byte, before int, r *parser.Request) []byte {
	if t.tooLarge(dst, before) {
		return t.replaceTooLarge(st, dst, before, r)
	}
	return dst
}

// tooLarge reports whether the reply dst[before:] passes
// MaxResponseSize. Kept inlinable.
func (t *Table) tooLarge(dst []byte, before int) bool {
	return len(dst)-before > t.opts.MaxResponseSize
}

// replaceTooLarge replaces the reply dst[before:] to r, too large, by
// parser.CodeResponseTooLarge.
func (t *Table) replaceTooLarge(st *state, dst []byte, before int, r *parser.Request) []byte {
	st.code = parser.CodeResponseTooLarge
	t.refused(refuseResponseSize)
	return appendTooLarge(dst[:before], r, len(dst)-before, t.opts.MaxResponseSize)
}
