package handler

// NOTE: the inline entry. A transport on an event loop calls
// DispatchInline: it runs what can run without blocking, and hands back
// the rest parsed and planned, with a copy of its bytes (Pending), for a
// goroutine of the transport's own to Run — or to answer Busy when none
// can take it — without parsing it again. A Pending that an event loop
// gives again and again also keeps a spare state (state.go) between
// calls, and the clock and the tally of successes (metrics.go) of a burst
// of input, which Flush ends. A deferred call of a blocking method with a
// timeout has a Deadline, counted from when it came, for its caller to
// watch while RunHere runs it (engine/deadline.go).

import (
	"context"
	"time"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool/clock"
)

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
	return t.dispatch(ctx, dst, msg, true, later, nil)
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

	deferSubs bool // DeferSubscriptions
}

// DeferSubscriptions makes the DispatchInline calls given p defer the
// call of a subscribe method (RegisterSubscription) even when it is
// Inline, while on is true: a transport that gives each deferred call a
// Conn of its own (the engine's HTTP event streams) can then serve
// subscriptions. Safe from the goroutine that owns p.
func (p *Pending) DeferSubscriptions(on bool) { p.deferSubs = on }

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
// parser.CodeDeadline if it is still running — a reading of package clock — and
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
		st.code = parser.CodeDeadline // the reply its caller gave at the deadline
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
func (d *Pending) Busy(ctx context.Context, dst []byte) (out []byte) {
	st, o, start := d.st, d.t.obs, dst
	defer func() {
		if v := recover(); v != nil { // a Filter's or a batch hook's: the message fails, as in Run
			out = d.t.dispatchPanicked(v, start)
		}
		d.release()
	}()
	if st.msg.Kind == parser.KindSingle {
		if o != nil {
			st.code = parser.CodeServerBusy
			o.done(ctx, st, st.req, 0) // answered without running
		}
		return appendBusy(dst, st.req)
	}
	if o != nil {
		st.t0 = o.now(st)
	}
	if d.t.batchHooks != nil {
		d.t.beginBatch(ctx, st)
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
			st.code, st.span = parser.CodeServerBusy, SpanRef{}
		} else {
			dst = d.t.call(ctx, st, dst, &e.req, e.m) // a fault: through the interceptors, as inline
		}
		if o != nil || d.t.batchHooks != nil {
			e.span = st.span
			d.t.noteElem(st, e, st.code, 0, e.span)
		}
		if len(dst) == before {
			dst = dst[:mark]
		}
	}
	if o != nil {
		o.endBatch(ctx, st, len(st.elems))
	}
	d.t.endBatch(ctx, st)
	return closeArray(dst, open)
}

// release returns d's state, and the copy it holds, to their pool; d
// keeps its scratch memory.
func (d *Pending) release() {
	putState(d.st)
	d.t, d.st = nil, nil
}
