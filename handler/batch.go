package handler

// NOTE: batches (dispatch.go). batch plans a batch: each element parsed
// and its method looked up (element). A short batch of inline elements
// runs on the caller in order (runElems). Otherwise parallel cuts it into
// segments — each blocking element alone, runs of at most ParallelBatch
// inline elements together — and runSegments queues those meant for a
// worker on the table's pool (a blocking one the pool has no room for is
// answered busy), runs the rest on the caller, and waits for the workers
// (await): for a timed segment only until its deadline, when it is given
// up, answered -32002, and its worker drops its output. join then appends
// the segments' buffers in request order as one array, within
// MaxBatchResponseSize. A single request of a blocking method with a
// timeout runs as a batch of one segment (timedSingle), its reply bare.

import (
	"context"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/jetrpc/jetrpc/pool/clock"
)

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

// runElems runs elements in order, appending their replies separated by
// commas and noting each one's span. Once the replies pass limit, the
// remaining elements are answered parser.CodeResponseTooLarge without running.
func (t *Table) runElems(ctx context.Context, st *state, dst []byte, elems []element, limit int) []byte {
	start := len(dst)
	obs, timed := t.obs != nil || t.batchHooks != nil, t.obs != nil && t.obs.metrics != nil // the access log and the hooks need no element's time
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
			st.code, st.span = parser.CodeResponseTooLarge, SpanRef{} // not run: in no span
			t.refused(refuseResponseSize)
		} else {
			dst = t.runElem(ctx, st, dst, e)
		}
		if timed {
			now := nanotime()
			e.dur, clock = now-clock, now
		}
		if obs {
			e.code, e.span = st.code, st.span
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
		code := parser.Code(parser.CodeInvalidRequest)
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
		if t.batchHooks != nil {
			t.beginBatch(ctx, st)
		}
		open := len(dst)
		dst = append(dst, '[')
		dst = t.runElems(ctx, st, dst, st.elems, t.opts.MaxBatchResponseSize)
		if t.obs != nil || t.batchHooks != nil {
			for i := range st.elems {
				e := &st.elems[i]
				t.noteElem(st, e, e.code, e.dur, e.span)
			}
		}
		if o := t.obs; o != nil {
			o.endBatch(ctx, st, len(st.elems))
		}
		t.endBatch(ctx, st)
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
	dst = appendErrorStart(dst, parser.Version2, parser.CodeInvalidRequest)
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
	batch     *Batch      // the caller's batch (Call.Batch); nil for a single request
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
	st.deadline, st.batch = s.deadline, s.batch
	s.out.B = s.t.runElems(s.ctx, st, s.out.B, s.elems, maxReplies)
	st.batch = nil // the caller's
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
		dst = appendErrorReply(dst, r.ID, r.Version, parser.CodeInternalError, "Internal error", "", nil)
		e.at, e.code = [2]int{before, len(dst)}, parser.CodeInternalError
	}
	return dst
}

// parallel runs the planned batch in st.elems with the worker pool.
func (t *Table) parallel(ctx context.Context, st *state, dst []byte) []byte {
	if t.batchHooks != nil {
		t.beginBatch(ctx, st)
	}
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
		s.t, s.ctx, s.out, s.wait, s.batch = t, ctx, pool.Parts.Get(), w, st.batch
		if p, ok := ctx.(*CallContext); ok && s.deadline != 0 {
			// A timed call may outlive its caller, whose transport may then
			// reuse its context: the call gets a copy, its head in st's
			// buffers (st is never pooled again if the call outlives it).
			for len(st.heads) <= i {
				st.heads = append(st.heads, nil)
			}
			st.heads[i] = p.Meta.CopyTo(&s.cc.Meta, st.heads[i])
			s.cc.Parent, s.cc.Conn = p.Parent, p.Conn
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
				e.at, e.code, e.dur = [2]int{0, len(s.out.B)}, parser.CodeServerBusy, 0
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
			st.code = parser.CodeDeadline
			return appendTimeout(dst, &e.req, e.m)
		}
		st.code, st.span = e.code, e.span
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
// one array: a late segment's element is answered parser.CodeDeadline, and once
// the replies pass MaxBatchResponseSize every remaining element is
// answered parser.CodeResponseTooLarge instead.
func (t *Table) join(ctx context.Context, st *state, dst []byte) []byte {
	limit := t.opts.MaxBatchResponseSize
	open := len(dst)
	dst = append(dst, '[')
	o := t.obs
	noted := o != nil || t.batchHooks != nil
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
				if noted {
					t.noteElem(st, e, parser.CodeResponseTooLarge, 0, e.span)
				}
			case s.late:
				dst = appendTimeout(dst, &e.req, e.m)
				if noted {
					t.noteElem(st, e, parser.CodeDeadline, nanotime()-st.t0, SpanRef{}) // its worker may still write e: the caller answered it in no span
				}
			default:
				dst = append(dst, s.out.B[e.at[0]:e.at[1]]...)
				if noted {
					t.noteElem(st, e, e.code, e.dur, e.span)
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
	t.endBatch(ctx, st)
	return closeArray(dst, open)
}

// appendBusy answers a request the worker pool had no room for.
func appendBusy(dst []byte, r *parser.Request) []byte {
	if r.Notification {
		return dst
	}
	return appendErrorReply(dst, r.ID, r.Version, parser.CodeServerBusy, "Server busy", "", nil)
}
