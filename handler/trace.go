package handler

// NOTE: what a tracer needs of a table, without linking one: a call's
// span named for the access log and the metrics' exemplars
// (Call.SetSpan, SpanRef, kept in the dispatch state as st.span, then
// in the batch element as element.span), and batch hooks (UseBatch,
// BatchHook, Batch) that run around a batch's elements, so that a
// tracer can give a batch a span whose children are its elements'.
// The hooks do not change the elements' context: a timed element's
// context is copied from its caller's (runSegments), which a wrapped
// context would hide; a hook leaves what its elements' interceptors
// need in the Batch instead (Set, Get), and they read it there
// (Call.Batch). Nothing here allocates.

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"

	"github.com/jetrpc/jetrpc/parser"
)

// SpanRef names a span by its W3C Trace Context ids: the span a call
// (or a batch) ran in, which a tracer gives the table (Call.SetSpan,
// Batch.SetSpan) so that the access log's record carries trace_id and
// span_id, and the handling_seconds histogram an exemplar linking its
// bucket to the trace. The zero SpanRef names none.
type SpanRef struct {
	TraceID [16]byte
	SpanID  [8]byte
}

// IsValid reports whether r names a span: a trace id that is not all
// zeros.
func (r SpanRef) IsValid() bool { return r.TraceID != [16]byte{} }

// TraceIDString returns the trace id in lower-case hex, as W3C
// traceparent and OpenTelemetry write it.
func (r SpanRef) TraceIDString() string { return hex.EncodeToString(r.TraceID[:]) }

// SpanIDString returns the span id in lower-case hex.
func (r SpanRef) SpanIDString() string { return hex.EncodeToString(r.SpanID[:]) }

// logAttrs appends the access log's trace_id and span_id of r, if valid.
func (r SpanRef) logAttrs(attrs []slog.Attr) []slog.Attr {
	if !r.IsValid() {
		return attrs
	}
	return append(attrs, slog.String("trace_id", r.TraceIDString()), slog.String("span_id", r.SpanIDString()))
}

// SetSpan names the span the call runs in, for its access log record
// (trace_id, span_id) and its metrics' exemplar (Options.Metrics): a
// tracer calls it for a call it traces. A call not given one has none.
// Like Next, call it before the interceptor returns.
func (c *Call) SetSpan(r SpanRef) { c.st.span = r }

// Batch returns the batch the call is an element of — for a tracer's
// interceptor, what the batch's hooks left in it (Batch.Get) — or nil
// for a single request, a notification, a fault of the whole message,
// and any call of a table without batch hooks (UseBatch).
func (c *Call) Batch() *Batch {
	if c.req == nil {
		return nil
	}
	return c.st.batch
}

// maxBatchHooks is the most batch hooks a table takes (UseBatch).
const maxBatchHooks = 8

// BatchHook runs around each batch a table runs (UseBatch): BeginBatch
// before its first element, EndBatch once its reply is complete (every
// element answered, or given up at its deadline). Both run on the
// batch's caller — the engine's event loop for a batch of inline
// methods — and must not block. ctx is the batch's: its metadata
// (MetaFrom) is the transport's. A batch longer than Options.MaxBatch is
// not run, and is refused as one call through the interceptors, with no
// hook. The elements run with ctx as it is; what a hook wants its
// elements to see it sets in the Batch (Set), where their interceptors
// read it (Call.Batch, Get).
type BatchHook interface {
	BeginBatch(ctx context.Context, b *Batch)
	EndBatch(ctx context.Context, b *Batch)
}

// UseBatch adds batch hooks to the table (see BatchHook), in order: the
// first one added begins first and ends last. It panics if the table has
// begun dispatching or it would have more than 8 hooks.
func (t *Table) UseBatch(hooks ...BatchHook) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sealed.Load() {
		panic(ErrSealed)
	}
	for _, h := range hooks {
		if h == nil {
			panic("jetrpc: handler.Table.UseBatch: nil hook")
		}
	}
	if len(t.batchHooks)+len(hooks) > maxBatchHooks {
		panic(fmt.Sprintf("jetrpc: handler.Table.UseBatch: more than %d batch hooks", maxBatchHooks))
	}
	t.batchHooks = append(t.batchHooks, hooks...)
}

// Batch is a batch as its hooks and its elements' interceptors see it.
// It lives in the dispatch's pooled state: valid from BeginBatch until
// EndBatch returns, and for the elements' interceptors while they run;
// it must not be kept.
type Batch struct {
	st   *state
	vals []batchValue
	span SpanRef
}

// batchValue is one of a Batch's values (Set).
type batchValue struct{ key, val any }

// Len returns the number of elements.
func (b *Batch) Len() int { return len(b.st.elems) }

// Method returns the method name of element i (0 ≤ i < Len): its
// registered name, which may be kept, for a registered method; else the
// name as sent ("" for an invalid element), valid until the hook
// returns.
func (b *Batch) Method(i int) string {
	e := &b.st.elems[i]
	switch {
	case e.m != nil:
		return e.m.info.Name
	case !e.req.Err.OK():
		return ""
	case e.req.MethodEscaped:
		b.st.name = e.req.AppendMethod(b.st.name[:0])
		return view(b.st.name)
	}
	return view(e.req.Method)
}

// Registered reports whether the method of element i is registered in
// the table.
func (b *Batch) Registered(i int) bool { return b.st.elems[i].m != nil }

// Set keeps val under key for the batch's elements' interceptors (Get),
// replacing what key had. Keys are compared as context.WithValue's are:
// use a type of your own. Call it in BeginBatch.
func (b *Batch) Set(key, val any) {
	for i := range b.vals {
		if b.vals[i].key == key {
			b.vals[i].val = val
			return
		}
	}
	b.vals = append(b.vals, batchValue{key, val})
}

// Get returns the value Set under key, or nil.
func (b *Batch) Get(key any) any {
	for i := range b.vals {
		if b.vals[i].key == key {
			return b.vals[i].val
		}
	}
	return nil
}

// SetSpan names the span of the batch, for its access log record
// (trace_id, span_id). Call it in BeginBatch.
func (b *Batch) SetSpan(r SpanRef) { b.span = r }

// Errors returns the number of elements answered with an error so far:
// all of them in EndBatch.
func (b *Batch) Errors() int { return b.st.errs }

// beginBatch runs the table's batch hooks' BeginBatch for the batch
// planned in st, and makes it the Batch its elements see.
func (t *Table) beginBatch(ctx context.Context, st *state) {
	st.batch = &st.batchObj
	b := st.batch
	b.st = st
	for _, h := range t.batchHooks {
		h.BeginBatch(ctx, b)
	}
}

// endBatch runs the batch hooks' EndBatch, last added first.
func (t *Table) endBatch(ctx context.Context, st *state) {
	b := st.batch
	if b == nil {
		return
	}
	for i := len(t.batchHooks) - 1; i >= 0; i-- {
		t.batchHooks[i].EndBatch(ctx, b)
	}
}

// noteElem notes the outcome of batch element e: code, after d ns, in
// span — for the batch's error count, and for the observer when there is
// one. span is passed, not read from e: a given-up element's worker may
// still write e.
func (t *Table) noteElem(st *state, e *element, code parser.Code, d int64, span SpanRef) {
	if code != 0 {
		st.errs++
	}
	if o := t.obs; o != nil {
		o.elem(st, e, code, d, span)
	}
}

// resetBatch drops st's batch, its values and span.
func (st *state) resetBatch() {
	if st.batch == nil {
		return
	}
	b := &st.batchObj
	clear(b.vals)
	b.vals = b.vals[:0]
	b.st, b.span = nil, SpanRef{}
	st.batch = nil
}
