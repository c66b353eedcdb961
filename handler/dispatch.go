package handler

// NOTE: dispatch of one message. A single request runs on the caller. A
// batch is first planned (each element parsed and its method looked up);
// if every element is inline and the batch is short, it runs on the
// caller in order. Otherwise it is cut into segments — each blocking
// element alone, runs of inline elements together — that run in parallel
// on the worker pool, each writing into its own buffer, and the buffers
// are joined in request order into one array.
//
// A transport on an event loop calls DispatchInline: it runs what can run
// without blocking, and hands back the rest parsed and planned, with a
// copy of its bytes (Pending), for a goroutine of the transport's own to
// Run — or to answer Busy when none can take it — without parsing it
// again.

import (
	"context"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytedance/sonic/decoder"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// state is the scratch memory of one dispatch, pooled.
type state struct {
	p       parser.Parser
	dec     decoder.Decoder  // for params decoded by sonic
	msg     parser.Message   // the message being run; spans into it
	req     *parser.Request  // the request being run: in msg or in elems
	decoded bool             // dec holds a string since getState
	scratch []byte           // unescaped strings
	keybuf  []byte           // unescaped member names
	quoted  []byte           // unquoted values of ",string" fields
	name    []byte           // unescaped method names
	enc     []byte           // sonic output
	seen    []uint64         // fields given, by bit
	pending []pend           // values left for sonic
	reqs    []parser.Request // batch elements as parsed
	elems   []element        // batch elements
	segs    []segment        // batch segments
	single  *method          // the method of a single request that was deferred
	kept    []byte           // the copy of a deferred message (Pending); spans point into it
	lastT   *Table           // the table of the last lookup
	lastM   *method          // the method found by the last lookup
	src     []byte           // the message being dispatched (Dispatch's, only until it returns)
	heads   [][]byte         // the HTTP heads copied for timed segments, by segment
	wait    waitState        // batch segments on workers
	call    Call             // the call in the interceptors
	code    Code             // the outcome of the last invoke: its code,
	err     error            // its error,
	res     [2]int           // and its result's span in the reply

	deadline  int64       // when the call run now must end (a reading of package clock), set by a timed segment or for a deferred timed call (Pending.Deadline); 0: from its method's timeout
	dl        deadlineCtx // the context of a call with a deadline
	abandoned bool        // a timed-out segment's worker still uses the state: never pooled again

	stripe  uint32         // the stripe of the counters it adds to (metrics.go)
	logSkip int64          // messages the access log of logFor passes over before its next sampled record (accessLog.wants)
	logFor  *accessLog     // the access log logSkip counts for (the table's that prepared it); nil: none
	t0      int64          // when the message (or a single request) began, on nanotime's clock, when observed
	cur     *methodMetrics // the counters of the single request run now, when observed
	errs    int            // the batch elements answered with an error, when observed
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
	m    *method // nil when the request is invalid or the method unknown
	at   [2]int  // its reply's span in its segment's output (or in the reply)
	code Code    // the code of its reply, once run, when observed
	dur  int64   // its handling time in ns, once run, when observed
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

// Dispatch runs one message — a request or a batch — and appends its
// reply to dst: nothing for a notification or an all-notification batch,
// one object for a request or a fault, one array for a batch. It blocks
// until every reply is written: blocking methods of a single request run
// on the calling goroutine, batch elements in parallel on the worker
// pool. msg is only read, and only until Dispatch returns. ctx is passed
// to the methods. Safe from any goroutine.
func (t *Table) Dispatch(ctx context.Context, dst, msg []byte) []byte {
	out, _ := t.dispatch(ctx, dst, msg, false, nil)
	return out
}

// Outcome says what DispatchInline did with a message.
type Outcome uint8

const (
	// Replied: the reply, if any, was appended.
	Replied Outcome = iota
	// Deferred: the message needs a worker; nothing was run or appended.
	Deferred
	// Malformed: the message is not JSON; its -32700 reply was appended.
	// A stream transport cannot frame what follows and should close after
	// sending the reply.
	Malformed
)

// DispatchInline is Dispatch for callers that must not block, such as an
// event loop. It runs msg when that needs no blocking method and no
// worker — a single inline request, a fault, an unknown method, or a
// batch of at most ParallelBatch such elements — appends the reply and
// returns Replied, or Malformed when msg is not JSON (its -32700 reply was
// appended; a stream transport cannot frame what follows). Otherwise it
// runs nothing, appends nothing and returns Deferred; when later is not
// nil, later then holds msg, copied, with what parsing it found, for
// later.Run on a goroutine that may block, or later.Busy where no
// goroutine can take it — the message is never parsed twice. With a nil
// later the caller must Dispatch msg itself. The outcome comes from the
// parser, never from the reply's text: a method may well answer -32700
// itself. msg is only read, and only until DispatchInline returns. Safe
// from any goroutine; an inline method runs on the caller. A caller that
// gives one Pending again and again calls its Flush after each burst of
// input (each read), so that a table with metrics counts the burst.
func (t *Table) DispatchInline(ctx context.Context, dst, msg []byte, later *Pending) ([]byte, Outcome) {
	return t.dispatch(ctx, dst, msg, true, later)
}

// Pending is a message that DispatchInline parsed and planned but could
// not run on its caller, with a copy of its bytes: Run runs it, Busy
// answers it "Server busy", without parsing it again. The zero value is
// empty, ready for DispatchInline. Exactly one of Run and Busy must be
// called on a filled Pending; it is empty again afterwards. A Pending is
// a handle: a copy of a filled one refers to the same message, and only
// one of the copies may be used: a transport takes it (Take) from the
// scratch variable it passes to DispatchInline into the job that runs it.
//
// A Pending given to DispatchInline again and again — an event loop's —
// also keeps the scratch memory of a dispatch between calls, sparing each
// call a round trip to a pool. Such a Pending must not be used by two
// goroutines at once.
type Pending struct {
	t     *Table
	st    *state // the parse, its spans rebased onto st.kept, a copy of the message
	spare *state // scratch memory for the next DispatchInline given this Pending
	clock int64  // when the last message given this Pending ended (nanotime), when observed; 0 after Flush
	read  int64  // a reading of the clock for the burst (now), once its owner ends its bursts; 0 after Flush
	tally tally  // the successes of the burst, not yet in their method's counters (metrics.go)
	burst bool   // Flush was called: its owner ends its bursts, so calls are tallied and the clock chained
}

// now returns the time of the burst of input that is given to
// DispatchInline with p: when the last message of the burst ended, when
// that is known (observed), else a reading of the clock taken once per
// burst — or once per call until the owner ends its bursts (Flush).
func (p *Pending) now() int64 {
	switch {
	case p.clock != 0:
		return p.clock
	case !p.burst:
		return clock.Now()
	case p.read == 0:
		p.read = clock.Now()
	}
	return p.read
}

// Flush ends a burst of input given to DispatchInline with this Pending
// (an event loop calls it after each read). A table with metrics adds
// up the successful calls of a burst in the Pending, and its counters
// get them here; and a table that observes its calls (metrics, the
// access log) reads the clock once per message: a message's handling
// starts when the previous one of its burst ended, or, for the first
// one, when DispatchInline is called. Until its first Flush a Pending
// does neither: each call goes to the counters at once, its clock read
// twice.
func (p *Pending) Flush() {
	p.clock, p.read, p.burst = 0, 0, true
	if p.tally.n != 0 {
		p.tally.flush()
	}
	p.tally.mm = nil
}

// Take moves the message p holds into a Pending of its own, to run or
// answer busy, and leaves p empty, ready for the next DispatchInline with
// the scratch memory it keeps.
func (p *Pending) Take() Pending {
	d := Pending{t: p.t, st: p.st}
	p.t, p.st = nil, nil
	return d
}

// Empty reports whether d holds no message.
func (d *Pending) Empty() bool { return d.st == nil }

// keep fills d with st, whose message is msg: msg is copied into the
// state's own buffer and the parse's spans are moved there.
func (d *Pending) keep(t *Table, st *state, msg []byte) {
	st.kept = append(st.kept[:0], msg...)
	st.msg.Rebase(msg, st.kept)
	for i := range st.elems {
		st.elems[i].req.Rebase(msg, st.kept)
	}
	clear(st.reqs) // copied into elems: nothing may point into msg
	st.reqs = st.reqs[:0]
	st.src = nil
	d.t, d.st = t, st
}

// Run runs the message and appends its reply to dst, as Dispatch would:
// a blocking method runs on the caller, batch elements in parallel on the
// table's worker pool. ctx is passed to the methods. d is empty
// afterwards. Safe from any goroutine, one at a time.
func (d *Pending) Run(ctx context.Context, dst []byte) (out []byte) {
	t, st := d.t, d.st
	defer func() {
		if v := recover(); v != nil {
			out = t.dispatchPanicked(v, dst)
		}
		d.release()
	}()
	if t.obs != nil {
		st.t0 = t.obs.now(st) // the wait for a worker is not the call's
	}
	if st.msg.Kind == parser.KindSingle {
		dst = t.runSingle(ctx, st, dst, st.req, st.single)
		if t.obs != nil {
			t.obs.endSingle(ctx, st, st.req)
		}
		return dst
	}
	return t.parallel(ctx, st, dst)
}

// Deadline reports when the call d holds must be answered
// CodeDeadline if it is still running — a reading of package clock — and
// the timeout it was set from, when it has such a deadline: a single
// request or notification of a blocking method with a timeout (Timeout,
// Options.CallTimeout), whose deadline counts from when DispatchInline
// deferred it. Otherwise it returns 0, 0. A caller that
// watches it runs the call with RunHere, answers it AppendTimeout's reply
// once the deadline passes, and then drops the late reply RunHere
// returns. A batch has no deadline of its own: Run and RunHere answer its
// timed elements at their deadlines themselves. Safe from the goroutine
// that holds d, before Run or RunHere.
func (d *Pending) Deadline() (deadline int64, timeout time.Duration) {
	st := d.st
	if st.deadline == 0 {
		return 0, 0
	}
	return st.deadline, st.single.timeout
}

// AppendTimeout appends the reply the call d holds gets when it passes
// its Deadline: -32002 "Deadline exceeded", with the request's id; nothing
// for a notification. Call it before Run or RunHere (d's message is
// theirs afterwards). Safe from the goroutine that holds d.
func (d *Pending) AppendTimeout(dst []byte) []byte {
	st := d.st
	if st.msg.Kind != parser.KindSingle || st.single == nil {
		return dst
	}
	return appendTimeout(dst, st.req, st.single)
}

// RunHere is Run for a caller that watches the Deadline of the call d
// holds: the call runs on the calling goroutine rather than on a worker
// of the table's pool — no goroutine hop — and its context ends at the
// deadline as Run's would. A call that ends past its deadline is
// answered AppendTimeout's reply, as the caller answered it already,
// and is counted and logged so, with its time until the deadline, once
// its method has returned. The caller must answer the call at its
// deadline if RunHere has not returned by then, and drop the reply
// RunHere returns afterwards. A message without a Deadline runs as Run
// runs it. d is empty afterwards. Safe from any goroutine, one at a
// time.
func (d *Pending) RunHere(ctx context.Context, dst []byte) (out []byte) {
	t, st := d.t, d.st
	if st.deadline == 0 || st.msg.Kind != parser.KindSingle {
		return d.Run(ctx, dst)
	}
	defer func() {
		if v := recover(); v != nil {
			out = t.dispatchPanicked(v, dst)
		}
		d.release()
	}()
	r, m := st.req, st.single
	if t.obs != nil {
		st.t0 = t.obs.now(st) // the wait for a worker is not the call's
	}
	before := len(dst)
	if len(t.chain) == 0 {
		dst = t.invokeChecked(ctx, st, dst, r, m)
	} else {
		dst = t.intercept(ctx, st, dst, r, m, nil, 0)
	}
	// Late or not, by the precise clock: the coarse one lags by a tick, or
	// more on a loaded machine, and a late reply must never go.
	end := clock.Now()
	if end >= st.deadline {
		st.code = CodeDeadline // the reply its caller gave at the deadline
		dst = appendTimeout(dst[:before], r, m)
		end = st.deadline // the call's time is until that answer
	} else {
		dst = t.capReply(st, dst, before, r)
	}
	if t.obs != nil {
		t.obs.done(ctx, st, r, max(end-st.t0, 0))
	}
	return dst
}

// Busy answers the message without running it, as when no worker can
// take it: -32000 "Server busy" for each valid request that wants a reply
// (in an array for a batch), the usual replies to invalid requests and
// unknown methods of a batch — which pass through the interceptors, with
// ctx, as inline faults do — and nothing for notifications. The busy
// answers themselves do not pass through the interceptors: they run on
// the caller, which must not block, and an interceptor of a blocking
// method may. d is empty afterwards. Safe from any goroutine.
func (d *Pending) Busy(ctx context.Context, dst []byte) []byte {
	st, o := d.st, d.t.obs
	defer d.release()
	if st.msg.Kind == parser.KindSingle {
		if o != nil {
			st.code = CodeServerBusy
			o.done(ctx, st, st.req, 0) // answered without running
		}
		return appendBusy(dst, st.req)
	}
	if o != nil {
		st.t0 = o.now(st)
	}
	open := len(dst)
	dst = append(dst, '[')
	for i := range st.elems {
		e := &st.elems[i]
		mark := len(dst)
		if mark > open+1 {
			dst = append(dst, ',')
		}
		before := len(dst)
		if e.req.Err.OK() && e.m != nil {
			dst = appendBusy(dst, &e.req)
			st.code = CodeServerBusy
		} else {
			dst = d.t.call(ctx, st, dst, &e.req, e.m) // a fault: through the interceptors, as inline
		}
		if o != nil {
			o.elem(st, e, st.code, 0)
		}
		if len(dst) == before {
			dst = dst[:mark]
		}
	}
	if o != nil {
		o.endBatch(ctx, st, len(st.elems))
	}
	return closeArray(dst, open)
}

// release returns d's state, and the copy it holds, to their pool; d
// keeps its scratch memory.
func (d *Pending) release() {
	putState(d.st)
	d.t, d.st = nil, nil
}

// dispatchPanicked is the net under jetrpc's own code (methods' panics
// are recovered per request): one bad message must not take the caller
// down. Every entry point recovers and calls it, which logs v and
// appends one -32603 reply to dst.
func (t *Table) dispatchPanicked(v any, dst []byte) []byte {
	t.opts.Logger.Error("jetrpc: dispatch failed", "panic", v, "stack", string(debug.Stack()))
	return appendErrorReply(dst, nil, parser.Version2, CodeInternalError, "Internal error", "", nil)
}

// dispatch runs msg, or with inlineOnly defers it to later when it needs
// a worker.
func (t *Table) dispatch(ctx context.Context, dst, msg []byte, inlineOnly bool, later *Pending) (out []byte, oc Outcome) {
	t.seal()
	var st *state
	if later != nil && later.spare != nil {
		st, later.spare = later.spare, nil
		st.prepare(t)
	} else {
		st = getState(t)
	}
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
		if m.Err.Code == CodeParseError {
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
			if m.Kind == parser.KindSingle && st.single.timeout > 0 {
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
		if m != nil && inlineOnly && !m.inline {
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
	case m != nil && m.timeout > 0 && !m.inline:
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
	return appendErrorReply(dst, r.ID, r.Version, CodeMethodNotFound, "Method not found", "", nil)
}

// runElem runs one planned batch element, appending its reply (if any).
func (t *Table) runElem(ctx context.Context, st *state, dst []byte, e *element) []byte {
	before := len(dst)
	if t.direct(e.m) {
		st.req = &e.req
		dst = e.m.impl.invoke(ctx, st, dst)
	} else {
		dst = t.call(ctx, st, dst, &e.req, e.m)
	}
	return t.capReply(st, dst, before, &e.req)
}

// capReply replaces the reply dst[before:] to r by CodeResponseTooLarge
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
// CodeResponseTooLarge.
func (t *Table) replaceTooLarge(st *state, dst []byte, before int, r *parser.Request) []byte {
	st.code = CodeResponseTooLarge
	t.refused(refuseResponseSize)
	return appendTooLarge(dst[:before], r, len(dst)-before, t.opts.MaxResponseSize)
}

// runElems runs elements in order, appending their replies separated by
// commas and noting each one's span. Once the replies pass limit, the
// remaining elements are answered CodeResponseTooLarge without running.
func (t *Table) runElems(ctx context.Context, st *state, dst []byte, elems []element, limit int) []byte {
	start := len(dst)
	obs, timed := t.obs != nil, t.obs != nil && t.obs.metrics != nil // the access log alone needs no element's time
	var clock int64
	if timed {
		clock = nanotime()
	}
	for i := range elems {
		e := &elems[i]
		mark := len(dst)
		if mark > start {
			dst = append(dst, ',')
		}
		before := len(dst)
		if mark-start > limit {
			dst = appendTooLarge(dst, &e.req, 0, limit)
			st.code = CodeResponseTooLarge
			t.refused(refuseResponseSize)
		} else {
			dst = t.runElem(ctx, st, dst, e)
		}
		if timed {
			now := nanotime()
			e.dur, clock = now-clock, now
		}
		if obs {
			e.code = st.code
		}
		if len(dst) == before {
			dst = dst[:mark] // a notification: no reply, no comma
			e.at = [2]int{mark, mark}
			continue
		}
		e.at = [2]int{before, len(dst)}
	}
	return dst
}

// closeArray wraps the replies appended after dst[:open] in brackets, or
// removes everything when there are none.
func closeArray(dst []byte, open int) []byte {
	if len(dst) == open+1 {
		return dst[:open]
	}
	return append(dst, ']')
}

// batch plans and runs a batch.
func (t *Table) batch(ctx context.Context, st *state, dst []byte, m *parser.Message, inlineOnly bool) ([]byte, bool) {
	if m.Len > t.opts.MaxBatch {
		code := Code(CodeInvalidRequest)
		if len(t.chain) == 0 {
			dst = appendTooLong(dst, m.Len, t.opts.MaxBatch)
		} else {
			dst = t.intercept(ctx, st, dst, nil, nil, nil, m.Len)
			code = st.code // as an interceptor may have replaced it
		}
		if t.obs != nil {
			t.obs.fault(ctx, st, code, m.Len)
		}
		return dst, true
	}
	blocking := 0
	for i := range st.reqs {
		st.elems = append(st.elems, element{req: st.reqs[i]})
		e := &st.elems[len(st.elems)-1]
		if e.req.Err.OK() {
			e.m = t.lookup(st, &e.req)
			if e.blocking() {
				blocking++
			}
		}
	}
	if blocking == 0 && len(st.elems) <= t.opts.ParallelBatch {
		open := len(dst)
		dst = append(dst, '[')
		dst = t.runElems(ctx, st, dst, st.elems, t.opts.MaxBatchResponseSize)
		if o := t.obs; o != nil {
			for i := range st.elems {
				e := &st.elems[i]
				o.elem(st, e, e.code, e.dur)
			}
			o.endBatch(ctx, st, len(st.elems))
		}
		return closeArray(dst, open), true
	}
	if inlineOnly {
		return dst, false // its starts are counted if the caller keeps it (Pending)
	}
	if t.obs != nil {
		t.obs.startElems(st)
	}
	return t.parallel(ctx, st, dst), true
}

func appendTooLong(dst []byte, n, limit int) []byte {
	dst = appendErrorStart(dst, parser.Version2, CodeInvalidRequest)
	dst = append(dst, "Invalid Request: batch of "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, " requests exceeds the limit of "...)
	dst = strconv.AppendInt(dst, int64(limit), 10)
	return appendErrorEnd(dst, nil, nil)
}

// segment is a run of batch elements executed together, a pool.Task.
type segment struct {
	t         *Table
	ctx       context.Context
	elems     []element
	out       *pool.Buffer
	wait      *waitState
	deadline  int64       // a timed segment's (a blocking method with a timeout): when its caller answers without it (a reading of package clock); 0: none
	cc        CallContext // a timed segment's own copy of its caller's context, which the transport may reuse once the caller has answered
	state     atomic.Uint32
	blocking  bool // a blocking element: busy when the pool is full
	onWorker  bool // meant for a worker
	submitted bool // queued on a worker
	late      bool // the caller answered it without waiting (caller only)
}

// States of a segment on a worker.
const (
	segRunning uint32 = iota // queued or running
	segDone                  // finished; the caller joins its output
	segGivenUp               // its caller answered it at the deadline; the worker drops its output
)

var _ pool.Task = (*segment)(nil)

// Run executes the segment on a worker. Methods' panics are recovered
// per element; should jetrpc's own code panic, every element of the
// segment that wants a reply gets -32603 rather than none.
func (s *segment) Run() {
	defer s.finish()
	if s.state.Load() == segGivenUp {
		return // its caller answered it at the deadline while it waited for a worker: nobody waits for it now
	}
	st := getState(s.t)
	defer func() {
		if v := recover(); v != nil {
			s.t.opts.Logger.Error("jetrpc: batch segment failed", "panic", v, "stack", string(debug.Stack()))
			s.out.B = appendInternal(s.out.B[:0], s.elems)
		}
	}()
	st.deadline = s.deadline
	s.out.B = s.t.runElems(s.ctx, st, s.out.B, s.elems, maxReplies)
	putState(st)
}

// finish tells the caller the segment is done — or, when the caller
// gave up on it at its deadline, drops its output.
func (s *segment) finish() {
	w := s.wait
	if s.state.CompareAndSwap(segRunning, segDone) {
		if w.left.Add(-1) == 0 {
			select {
			case w.wake <- struct{}{}:
			default: // a wake is pending already
			}
		}
		return
	}
	pool.Parts.Put(s.out) // the segment is the caller's no more: its state is never reused
	s.out = nil
}

// maxReplies is "no limit" for runElems.
const maxReplies = int(^uint(0) >> 1)

// appendInternal answers each element that wants a reply with -32603.
func appendInternal(dst []byte, elems []element) []byte {
	for i := range elems {
		e := &elems[i]
		r := &e.req
		if r.Notification && r.Err.OK() {
			e.at = [2]int{len(dst), len(dst)}
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, ',')
		}
		before := len(dst)
		dst = appendErrorReply(dst, r.ID, r.Version, CodeInternalError, "Internal error", "", nil)
		e.at, e.code = [2]int{before, len(dst)}, CodeInternalError
	}
	return dst
}

// parallel runs the planned batch in st.elems with the worker pool.
func (t *Table) parallel(ctx context.Context, st *state, dst []byte) []byte {
	elems := st.elems
	long := len(elems) > t.opts.ParallelBatch
	chunk := t.opts.ParallelBatch
	st.segs = st.segs[:0]
	callerHasWork := false
	for i := 0; i < len(elems); {
		if elems[i].blocking() {
			st.segs = append(st.segs, segment{elems: elems[i : i+1], blocking: true, onWorker: true})
			i++
			continue
		}
		j := i + 1
		for j < len(elems) && !elems[j].blocking() && j-i < chunk {
			j++
		}
		// Inline runs stay on the caller unless the batch is long; the
		// caller always keeps the first one, so it works while it waits.
		onWorker := long && callerHasWork
		callerHasWork = true
		st.segs = append(st.segs, segment{elems: elems[i:j], onWorker: onWorker})
		i = j
	}
	return t.runSegments(ctx, st, dst, false)
}

// timedSingle runs a single request of a blocking method with a timeout
// on a worker while the caller waits for it or for its deadline.
func (t *Table) timedSingle(ctx context.Context, st *state, dst []byte, r *parser.Request, m *method) []byte {
	st.elems = append(st.elems[:0], element{req: *r, m: m})
	st.segs = append(st.segs[:0], segment{elems: st.elems[:1], blocking: true, onWorker: true})
	return t.runSegments(ctx, st, dst, true)
}

// runSegments runs the segments planned in st.segs — those meant for a
// worker on the table's pool, the others on the caller — waits for them
// (a timed one only until its deadline), and appends their replies:
// bare, for the one element of a single request, or as an array.
func (t *Table) runSegments(ctx context.Context, st *state, dst []byte, bare bool) []byte {
	var now int64
	timed := false
	for i := range st.segs {
		s := &st.segs[i]
		if s.blocking && s.elems[0].m.timeout > 0 {
			switch {
			case bare && st.deadline != 0:
				s.deadline = st.deadline // a deferred call's, from when it came (Pending.Deadline)
			case now == 0:
				now = clock.Now()
				fallthrough
			default:
				s.deadline = now + int64(s.elems[0].m.timeout)
			}
			timed = true
		}
	}
	if timed && len(st.kept) == 0 {
		// The caller's message is valid only until the caller returns, and
		// a timed-out worker may read it after: copy it.
		st.kept = append(st.kept[:0], st.src...)
		for i := range st.elems {
			st.elems[i].req.Rebase(st.src, st.kept)
		}
	}
	w := &st.wait
	if w.wake == nil {
		w.wake = make(chan struct{}, 1)
	}
	w.left.Store(0)
	pw := t.workers()
	for i := range st.segs {
		s := &st.segs[i]
		s.t, s.ctx, s.out, s.wait = t, ctx, pool.Parts.Get(), w
		if p, ok := ctx.(*CallContext); ok && s.deadline != 0 {
			// A timed call may outlive its caller, whose transport may then
			// reuse its context: the call gets a copy, its head in st's
			// buffers (st is never pooled again if the call outlives it).
			for len(st.heads) <= i {
				st.heads = append(st.heads, nil)
			}
			st.heads[i] = p.Meta.CopyTo(&s.cc.Meta, st.heads[i])
			s.cc.Parent = p.Parent
			s.ctx = &s.cc
		}
		if !s.onWorker {
			continue
		}
		w.left.Add(1)
		if s.submitted = pw.TrySubmit(s); !s.submitted {
			w.left.Add(-1)
			if s.blocking {
				e := &s.elems[0]
				s.out.B = appendBusy(s.out.B, &e.req)
				e.at, e.code, e.dur = [2]int{0, len(s.out.B)}, CodeServerBusy, 0
			}
		}
	}
	for i := range st.segs {
		if s := &st.segs[i]; !s.submitted && !(s.onWorker && s.blocking) {
			s.out.B = t.runElems(ctx, st, s.out.B, s.elems, maxReplies)
		}
	}
	t.await(st)
	if bare {
		s := &st.segs[0]
		e := &s.elems[0]
		if s.late {
			st.code = CodeDeadline
			return appendTimeout(dst, &e.req, e.m)
		}
		st.code = e.code
		dst = append(dst, s.out.B[e.at[0]:e.at[1]]...)
		pool.Parts.Put(s.out)
		*s = segment{}
		return dst
	}
	return t.join(ctx, st, dst)
}

// await waits until every segment on a worker is done, or past its
// deadline: then the segment is given up (late), its worker drops its
// output, and st is never pooled again (that worker still uses it).
func (t *Table) await(st *state) {
	w := &st.wait
	for w.left.Load() > 0 {
		var next int64
		for i := range st.segs {
			s := &st.segs[i]
			if s.submitted && !s.late && s.deadline != 0 && (next == 0 || s.deadline < next) {
				next = s.deadline
			}
		}
		if next == 0 {
			<-w.wake
			continue
		}
		if d := time.Duration(next - clock.Now()); d > 0 {
			if w.timer == nil {
				w.timer = time.NewTimer(d)
			} else {
				w.timer.Reset(d)
			}
			select {
			case <-w.wake:
				w.timer.Stop()
				continue
			case <-w.timer.C:
			}
		}
		now := clock.Now()
		for i := range st.segs {
			s := &st.segs[i]
			if s.submitted && !s.late && s.deadline != 0 && now >= s.deadline && s.state.CompareAndSwap(segRunning, segGivenUp) {
				s.late, st.abandoned = true, true
				w.left.Add(-1)
			}
		}
	}
}

// join appends the replies of a batch's segments, in request order, as
// one array: a late segment's element is answered CodeDeadline, and once
// the replies pass MaxBatchResponseSize every remaining element is
// answered CodeResponseTooLarge instead.
func (t *Table) join(ctx context.Context, st *state, dst []byte) []byte {
	limit := t.opts.MaxBatchResponseSize
	open := len(dst)
	dst = append(dst, '[')
	o := t.obs
	n := 0
	for i := range st.segs {
		s := &st.segs[i]
		n += len(s.elems)
		for k := range s.elems {
			e := &s.elems[k] // a late segment's elements are its worker's: read, never written
			mark := len(dst)
			if mark > open+1 {
				dst = append(dst, ',')
			}
			before := len(dst)
			switch {
			case mark-open-1 > limit:
				dst = appendTooLarge(dst, &e.req, 0, limit)
				t.refused(refuseResponseSize)
				if o != nil {
					o.elem(st, e, CodeResponseTooLarge, 0)
				}
			case s.late:
				dst = appendTimeout(dst, &e.req, e.m)
				if o != nil {
					o.elem(st, e, CodeDeadline, nanotime()-st.t0)
				}
			default:
				dst = append(dst, s.out.B[e.at[0]:e.at[1]]...)
				if o != nil {
					o.elem(st, e, e.code, e.dur)
				}
			}
			if len(dst) == before {
				dst = dst[:mark] // no reply, no comma
			}
		}
		if !s.late {
			pool.Parts.Put(s.out)
			*s = segment{}
		}
	}
	if o != nil {
		o.endBatch(ctx, st, n)
	}
	return closeArray(dst, open)
}

// appendBusy answers a request the worker pool had no room for.
func appendBusy(dst []byte, r *parser.Request) []byte {
	if r.Notification {
		return dst
	}
	return appendErrorReply(dst, r.ID, r.Version, CodeServerBusy, "Server busy", "", nil)
}
