package handler

// NOTE: dispatch of one message. A single request runs on the caller. A
// batch is first planned (each element parsed and its method looked up);
// if every element is inline and the batch is short, it runs on the
// caller in order. Otherwise it is cut into segments — each blocking
// element alone, runs of inline elements together — that run in parallel
// on the worker pool, each writing into its own buffer, and the buffers
// are joined in request order into one array.

import (
	"context"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/bytedance/sonic/decoder"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
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
	lastT   *Table           // the table of the last lookup
	lastM   *method          // the method found by the last lookup
	wg      sync.WaitGroup   // batch segments on workers
}

// element is a planned batch element.
type element struct {
	req parser.Request
	m   *method // nil when the request is invalid or the method unknown
}

func (e *element) blocking() bool { return e.m != nil && !e.m.inline }

const maxScratch = 64 << 10

// maxPooledElems: element slices longer than this are not kept in the pool.
const maxPooledElems = 256

var states = sync.Pool{New: func() any {
	st := new(state)
	st.dec.SetOptions(decoder.OptionCaseSensitive | decoder.OptionCopyString | decoder.OptionNoValidateJSON)
	return st
}}

func getState(t *Table) *state {
	st := states.Get().(*state)
	st.p.MaxDepth = t.opts.MaxDepth
	st.p.RejectV1 = t.opts.RejectV1
	return st
}

// putState drops every reference into the message and returns st.
func putState(st *state) {
	st.req = nil
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
	states.Put(st)
}

// Dispatch runs one message — a request or a batch — and appends its
// reply to dst: nothing for a notification or an all-notification batch,
// one object for a request or a fault, one array for a batch. It blocks
// until every reply is written: blocking methods of a single request run
// on the calling goroutine, batch elements in parallel on the worker
// pool. msg is only read, and only until Dispatch returns. ctx is passed
// to the methods. Safe from any goroutine.
func (t *Table) Dispatch(ctx context.Context, dst, msg []byte) []byte {
	out, _ := t.dispatch(ctx, dst, msg, false)
	return out
}

// Outcome says what Serve did with a message.
type Outcome uint8

const (
	// Replied: the reply, if any, was appended.
	Replied Outcome = iota
	// Deferred: Serve was asked to run inline only and the message needs
	// a worker; nothing was run or appended.
	Deferred
	// Malformed: the message is not JSON; its -32700 reply was appended.
	// A stream transport cannot frame what follows and should close after
	// sending the reply.
	Malformed
)

// Serve is Dispatch and DispatchInline in one, for transports: with
// inlineOnly it behaves as DispatchInline, otherwise as Dispatch, and it
// tells the caller whether the message was malformed JSON.
func (t *Table) Serve(ctx context.Context, dst, msg []byte, inlineOnly bool) ([]byte, Outcome) {
	return t.dispatch(ctx, dst, msg, inlineOnly)
}

// AppendBusy answers msg without running it, as when no worker can take
// it: -32000 "Server busy" for each request that wants a reply (an array
// for a batch), the usual fault replies for invalid ones, nothing for
// notifications. Safe from any goroutine.
func (t *Table) AppendBusy(dst, msg []byte) []byte {
	st := getState(t)
	defer putState(st)
	m := &st.msg
	st.p.ParseInto(m, msg)
	switch m.Kind {
	case parser.KindInvalid:
		return appendFault(dst, nil, &m.Err)
	case parser.KindSingle:
		return busyOrFault(dst, &m.Request)
	}
	if m.Len > t.opts.MaxBatch {
		return appendTooLong(dst, m.Len, t.opts.MaxBatch)
	}
	open := len(dst)
	dst = append(dst, '[')
	for it := m.Iter(); it.Next(); {
		r := it.Request()
		mark := len(dst)
		if mark > open+1 {
			dst = append(dst, ',')
		}
		before := len(dst)
		if dst = busyOrFault(dst, &r); len(dst) == before {
			dst = dst[:mark]
		}
	}
	return closeArray(dst, open)
}

func busyOrFault(dst []byte, r *parser.Request) []byte {
	if !r.Err.OK() {
		return appendFault(dst, r.ID, &r.Err)
	}
	return appendBusy(dst, r)
}

// DispatchInline is Dispatch for callers that must not block, such as an
// event loop: it runs msg only when that needs no blocking method and no
// worker (a single inline request, a fault, an unknown method, or a batch
// of at most ParallelBatch such elements). Then it appends the reply and
// returns true. Otherwise it runs nothing, returns dst unchanged and
// false, and the caller hands msg to a goroutine that may call Dispatch.
func (t *Table) DispatchInline(ctx context.Context, dst, msg []byte) ([]byte, bool) {
	out, oc := t.dispatch(ctx, dst, msg, true)
	return out, oc != Deferred
}

// dispatch runs msg. The outcome comes from the parser, never from the
// reply's text: a method may well answer -32700 itself.
func (t *Table) dispatch(ctx context.Context, dst, msg []byte, inlineOnly bool) (out []byte, oc Outcome) {
	t.seal()
	st := getState(t)
	start := len(dst)
	// Methods' panics are recovered per request; this is the net under
	// jetrpc's own code: one bad message must not take the caller down.
	defer func() {
		if v := recover(); v != nil {
			t.opts.Logger.Error("jetrpc: dispatch failed", "panic", v, "stack", string(debug.Stack()))
			out, oc = appendErrorReply(dst[:start], nil, parser.Version2, CodeInternalError, "Internal error", "", nil), Replied
		}
	}()
	m := &st.msg
	// A batch's elements come from the pass that validates it, up to the
	// batch limit (a longer batch is refused whole).
	st.reqs = st.p.ParseElems(m, msg, st.reqs[:0], t.opts.MaxBatch)
	ok := true
	switch m.Kind {
	case parser.KindInvalid:
		dst = appendFault(dst, nil, &m.Err)
		if m.Err.Code == parser.CodeParse {
			oc = Malformed
		}
	case parser.KindSingle:
		st.req = &m.Request
		dst, ok = t.single(st, ctx, dst, inlineOnly)
	case parser.KindBatch:
		dst, ok = t.batch(st, ctx, dst, m, inlineOnly)
	}
	putState(st)
	if !ok {
		oc = Deferred
	}
	return dst, oc
}

// single runs the request in st.req.
func (t *Table) single(st *state, ctx context.Context, dst []byte, inlineOnly bool) ([]byte, bool) {
	r := st.req
	if !r.Err.OK() {
		return appendFault(dst, r.ID, &r.Err), true
	}
	m := t.lookup(st, r)
	if m == nil {
		return notFound(dst, r), true
	}
	if inlineOnly && !m.inline {
		return dst, false
	}
	return m.impl.invoke(st, ctx, dst), true
}

func notFound(dst []byte, r *parser.Request) []byte {
	if r.Notification {
		return dst
	}
	return appendErrorReply(dst, r.ID, r.Version, CodeMethodNotFound, "Method not found", "", nil)
}

// runElem runs one planned batch element, appending its reply (if any).
func (t *Table) runElem(st *state, ctx context.Context, dst []byte, e *element) []byte {
	st.req = &e.req
	switch {
	case !e.req.Err.OK():
		return appendFault(dst, e.req.ID, &e.req.Err)
	case e.m == nil:
		return notFound(dst, &e.req)
	}
	return e.m.impl.invoke(st, ctx, dst)
}

// runElems runs elements in order, appending their replies separated by
// commas.
func (t *Table) runElems(st *state, ctx context.Context, dst []byte, elems []element) []byte {
	start := len(dst)
	for i := range elems {
		mark := len(dst)
		if mark > start {
			dst = append(dst, ',')
		}
		before := len(dst)
		if dst = t.runElem(st, ctx, dst, &elems[i]); len(dst) == before {
			dst = dst[:mark] // a notification: no reply, no comma
		}
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
func (t *Table) batch(st *state, ctx context.Context, dst []byte, m *parser.Message, inlineOnly bool) ([]byte, bool) {
	if m.Len > t.opts.MaxBatch {
		return appendTooLong(dst, m.Len, t.opts.MaxBatch), true
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
		dst = t.runElems(st, ctx, dst, st.elems)
		return closeArray(dst, open), true
	}
	if inlineOnly {
		return dst, false
	}
	return t.parallel(st, ctx, dst), true
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
	wg        *sync.WaitGroup
	blocking  bool // a blocking element: busy when the pool is full
	onWorker  bool // meant for a worker
	submitted bool // queued on a worker
}

var _ pool.Task = (*segment)(nil)

// Run executes the segment on a worker. Methods' panics are recovered
// per element; should jetrpc's own code panic, every element of the
// segment that wants a reply gets -32603 rather than none.
func (s *segment) Run() {
	defer s.wg.Done()
	st := getState(s.t)
	defer func() {
		if v := recover(); v != nil {
			s.t.opts.Logger.Error("jetrpc: batch segment failed", "panic", v, "stack", string(debug.Stack()))
			s.out.B = appendInternal(s.out.B[:0], s.elems)
		}
	}()
	s.out.B = s.t.runElems(st, s.ctx, s.out.B, s.elems)
	putState(st)
}

// appendInternal answers each element that wants a reply with -32603.
func appendInternal(dst []byte, elems []element) []byte {
	for i := range elems {
		r := &elems[i].req
		if r.Notification && r.Err.OK() {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, ',')
		}
		dst = appendErrorReply(dst, r.ID, r.Version, CodeInternalError, "Internal error", "", nil)
	}
	return dst
}

// parallel runs the planned batch in st.elems with the worker pool.
func (t *Table) parallel(st *state, ctx context.Context, dst []byte) []byte {
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
	w := t.workers()
	for i := range st.segs {
		s := &st.segs[i]
		s.t, s.ctx, s.out, s.wg = t, ctx, pool.Parts.Get(), &st.wg
		if !s.onWorker {
			continue
		}
		st.wg.Add(1)
		if s.submitted = w.TrySubmit(s); !s.submitted {
			st.wg.Done()
			if s.blocking {
				s.out.B = appendBusy(s.out.B, &s.elems[0].req)
			}
		}
	}
	for i := range st.segs {
		if s := &st.segs[i]; !s.submitted && !(s.onWorker && s.blocking) {
			s.out.B = t.runElems(st, ctx, s.out.B, s.elems)
		}
	}
	st.wg.Wait()
	open := len(dst)
	dst = append(dst, '[')
	for i := range st.segs {
		s := &st.segs[i]
		if len(s.out.B) > 0 {
			if len(dst) > open+1 {
				dst = append(dst, ',')
			}
			dst = append(dst, s.out.B...)
		}
		pool.Parts.Put(s.out)
		*s = segment{}
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
