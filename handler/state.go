package handler

// NOTE: the scratch memory of one dispatch (dispatch.go). Every dispatch
// — Dispatch, DispatchInline, a batch segment on a worker — runs with a
// state: from the pool, states (getState, putState), or the spare one an
// event loop's Pending keeps between calls. It holds the parser and the
// sonic decoder, the buffers of unescaped strings, the planned batch
// (elems, segs), the copy of a deferred message (kept) and the marks of
// the observer (observe.go). reset drops every reference into the
// message, and the buffers grown past what is worth pooling, so that a
// pooled state keeps nothing of its last message. A state that the worker
// of a timed-out segment still uses is abandoned: never pooled again, it
// is left to the collector.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytedance/sonic/decoder"
	"github.com/jetrpc/jetrpc/parser"
)

// state is the scratch memory of one dispatch, pooled.
type state struct {
	p       parser.Parser
	dec     decoder.Decoder        // for params decoded by sonic
	msg     parser.Message         // the message being run; spans into it
	req     *parser.Request        // the request being run: in msg or in elems
	decoded bool                   // dec holds a string since getState
	scratch []byte                 // unescaped strings
	keybuf  []byte                 // unescaped member names
	quoted  []byte                 // unquoted values of ",string" fields
	name    []byte                 // unescaped method names
	enc     []byte                 // sonic output
	seen    []uint64               // fields given, by bit
	pending []pend                 // values left for sonic
	reqs    []parser.Request       // batch elements as parsed
	elems   []element              // batch elements
	segs    []segment              // batch segments
	single  *method                // the method of a single request that was deferred
	kept    []byte                 // the copy of a deferred message (Pending); spans point into it
	lastT   *Table                 // the table of the last lookup
	lastM   *method                // the method found by the last lookup
	src     []byte                 // the message being dispatched (Dispatch's, only until it returns)
	heads   [][]byte               // the HTTP heads copied for timed segments, by segment
	wait    waitState              // batch segments on workers
	call    Call                   // the call in the interceptors
	marks   [maxInterceptors]uint8 // what each level's Filter returned for the call (Call.Filtered): written by Call.filter for a table with filters before it is read, never reset
	cc      callCtx                // the context of the method run now (CallFrom)
	code    parser.Code            // the outcome of the last invoke: its code,
	err     error                  // its error,
	res     [2]int                 // and its result's span in the reply

	deadline  int64       // when the call run now must end (a reading of package clock), set by a timed segment or for a deferred timed call (Pending.Deadline); 0: from its method's timeout
	dl        deadlineCtx // the context of a call with a deadline
	abandoned bool        // a timed-out segment's worker still uses the state: never pooled again

	stripe  uint32         // the stripe of the counters it adds to (metrics.go)
	logSkip int64          // messages the access log of logFor passes over before its next sampled record (accessLog.wants)
	logFor  *accessLog     // the access log logSkip counts for (the table's that prepared it); nil: none
	t0      int64          // when the message (or a single request) began, on nanotime's clock, when observed
	cur     *methodMetrics // the counters of the single request run now, when observed
	errs    int            // the batch elements answered with an error, when observed or hooked

	sink     ReplySink // where a streamed method's reply goes in parts (Pending.StreamTo); nil: built whole
	streamed bool      // a part of the streamed reply of the call run now has gone to sink: it cannot be replaced
	sent     int64     // the bytes of that reply gone to sink

	deferSubs bool // a subscribe method's call is deferred even when Inline (Pending.DeferSubscriptions)

	span     SpanRef // the span of the call run now, from its tracer (Call.SetSpan); zero: none
	batch    *Batch  // the batch whose elements run now: &batchObj, or the caller's for a segment on a worker; nil: none
	batchObj Batch   // the Batch of the batch this state plans (trace.go)
}

// waitState is how the caller of a parallel batch waits for its
// segments on workers.
type waitState struct {
	left  atomic.Int32  // segments on workers not yet done or given up
	wake  chan struct{} // signalled when left reaches 0; made on first use
	timer *time.Timer   // the next deadline of a timed segment; made on first use
}

// element is a planned batch element.
type element struct {
	req  parser.Request
	m    *method     // nil when the request is invalid or the method unknown
	at   [2]int      // its reply's span in its segment's output (or in the reply)
	code parser.Code // the code of its reply, once run, when observed
	dur  int64       // its handling time in ns, once run, when observed
	span SpanRef     // the span it ran in (Call.SetSpan), once run, when observed
}

func (e *element) blocking() bool { return e.m != nil && !e.m.inline }

const maxScratch = 64 << 10

// maxPooledHeads: the copied heads of timed segments kept in the pool.
const maxPooledHeads = 16

// maxPooledElems: element slices longer than this are not kept in the pool.
const maxPooledElems = 256

var states = sync.Pool{New: func() any {
	st := new(state)
	st.stripe = stripeSeq.Add(1) & uint32(stripes-1)
	st.dec.SetOptions(decoder.OptionCaseSensitive | decoder.OptionCopyString | decoder.OptionNoValidateJSON)
	return st
}}

func getState(t *Table) *state {
	st := states.Get().(*state)
	st.prepare(t)
	return st
}

// prepare sets the parser options of t, and restarts the access log's
// countdown when the state was used by another table.
func (st *state) prepare(t *Table) {
	st.p.MaxDepth = t.opts.MaxDepth
	st.p.RejectV1 = t.opts.RejectV1
	if st.logFor != t.log {
		st.logFor, st.logSkip = t.log, -1
	}
}

// putState drops every reference into the message and returns st —
// unless a worker still uses it (a timed-out batch segment's), then it
// is left to the collector.
func putState(st *state) {
	if st.abandoned {
		return
	}
	st.reset()
	states.Put(st)
}

// reset drops every reference into the message and the scratch memory
// grown too large.
func (st *state) reset() {
	st.req, st.single, st.src = nil, nil, nil
	st.err, st.cur, st.errs = nil, nil, 0
	st.deadline = 0
	st.sink, st.streamed, st.sent = nil, false, 0
	st.span = SpanRef{}
	st.resetBatch()
	if st.cc.req != nil {
		st.cc = callCtx{Context: context.Background()} // nothing of the message, nor its caller's context, stays in the pool
	}
	if st.call.t != nil {
		st.call = Call{} // nothing of the message stays in the pooled state
	}
	st.msg.Request = parser.Request{}
	if len(st.elems) > 0 {
		clear(st.elems)
		st.elems = st.elems[:0]
	}
	if len(st.reqs) > 0 {
		clear(st.reqs)
		st.reqs = st.reqs[:0]
	}
	if cap(st.reqs) > maxPooledElems {
		st.reqs, st.elems = nil, nil // a long batch's: not worth keeping
	}
	if st.decoded {
		st.dec.Reset("")
		st.decoded = false
	}
	if cap(st.scratch) > maxScratch {
		st.scratch = nil
	}
	if cap(st.keybuf) > maxScratch {
		st.keybuf = nil
	}
	if cap(st.quoted) > maxScratch {
		st.quoted = nil
	}
	if cap(st.name) > maxScratch {
		st.name = nil
	}
	if cap(st.enc) > maxScratch {
		st.enc = nil
	}
	st.kept = st.kept[:0]
	if cap(st.kept) > maxScratch {
		st.kept = nil
	}
	if len(st.heads) > maxPooledHeads {
		clear(st.heads[maxPooledHeads:]) // a long batch's: not worth keeping
		st.heads = st.heads[:maxPooledHeads]
	}
}
