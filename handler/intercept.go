package handler

// NOTE: interceptors, the middleware of a table. Every call — a single
// request, each element of a batch, a notification, and the calls that
// fail before any method runs (an invalid request, an unknown method, a
// message that is not JSON, a batch too long, a caller without the
// permission) — passes through the chain the table was given with Use,
// where its method runs: on the event loop for inline methods and
// faults, on a worker for blocking ones. A Call lives in the dispatch's
// pooled state: the chain costs no allocation. Call.Next runs the rest
// of the chain and then the call's terminal (the method, or the fault's
// reply), recording the outcome for the interceptors outside; Call.Answer
// writes a result in place of both, recording it the same way.

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// maxInterceptors is the most interceptors a table takes (Use).
const maxInterceptors = 64

// Interceptor runs around every call of a table (Use). It sees the call
// (its method name, id, params) and its context, which carries the
// call's metadata (MetaFrom) and grants (GrantsFrom), and it may:
//
//   - refuse the call: return an error without calling Next; the error
//     is the reply, as a method's would be (an *Error as it is);
//   - run the rest: call call.Next(ctx) once, with ctx or a context
//     derived from it (a deadline, values, WithGrants); after Next,
//     call.Code, call.Err, call.Result and call.Duration tell the
//     outcome; returning an error then replaces the reply with it;
//   - answer the call itself: call.Answer(result) with a result as JSON,
//     and return nil; nothing inside runs (or, after Next, the reply is
//     replaced), and the interceptors outside see a success with that
//     Result; a notification answered gets no reply;
//   - only look: return nil without calling Next; the rest runs after it
//     returns, with its ctx.
//
// Next and Answer must be called on the interceptor's goroutine, before
// it returns; a second Next, or a Next after Answer, does nothing. An
// interceptor that may wait (a lock, another call) asks Call.Inline
// first. The method inside reads the call from its own context with
// CallFrom. An interceptor runs where its call runs —
// on the engine's event loop for inline methods and for faults — so
// there it must not block. A panic in an interceptor is recovered,
// logged and answered -32603, like a method's.
type Interceptor func(ctx context.Context, call *Call) error

// Use adds interceptors to the table's chain. The first one added is the
// outermost: it sees each call first, and its outcome last. It panics if
// the table has begun dispatching or the chain would pass 64
// interceptors, as both are programming errors found at start-up.
func (t *Table) Use(interceptors ...Interceptor) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sealed.Load() {
		panic(ErrSealed)
	}
	for _, f := range interceptors {
		if f == nil {
			panic("jetrpc: handler.Table.Use: nil interceptor")
		}
	}
	if len(t.chain)+len(interceptors) > maxInterceptors {
		panic(fmt.Sprintf("jetrpc: handler.Table.Use: more than %d interceptors", maxInterceptors))
	}
	t.chain = append(t.chain, interceptors...)
	t.filters = append(t.filters, make([]Filter, len(interceptors))...)
}

// Filter tells whether the interceptor it was given with (UseWhen)
// wants a call, before any interceptor runs: it returns 0 when the
// interceptor does not, which then passes the call by as if it were not
// in the chain, and any other value when it does, which the
// interceptor reads with Call.Filtered. It sees the call as interceptors
// do before Next (its Method, ID, Params, Batch, and ctx's metadata),
// and must only look: no Next, Answer or SetSpan. It runs where the call
// runs, must not block, and must not panic (a panic fails the whole
// message, -32603 — for a batch element on a worker, the elements run
// with it there). When every interceptor of a table has a Filter and
// none wants a call, the call runs as if the table had no interceptors
// at all: a tracer that samples 1 % of the calls costs the other 99 %
// their filters alone.
type Filter func(ctx context.Context, call *Call) uint8

// UseWhen adds interceptor to the chain, as Use does, for the calls want
// accepts (see Filter). It panics as Use does, and on a nil argument.
func (t *Table) UseWhen(want Filter, interceptor Interceptor) {
	if want == nil {
		panic("jetrpc: handler.Table.UseWhen: nil filter")
	}
	t.Use(interceptor)
	t.mu.Lock()
	t.filters[len(t.filters)-1] = want
	t.mu.Unlock()
}

// Filtered returns what the running interceptor's Filter returned for
// the call (UseWhen), never 0 as the interceptor would not run; 0 for an
// interceptor added with Use.
func (c *Call) Filtered() uint8 {
	if !c.t.anyFilter {
		return 0 // marks not written for this table's calls: what they hold is another table's
	}
	return c.st.marks[c.level]
}

// filter runs the chain's filters over the call, marking the levels
// whose interceptor does not want it (skip), and reports whether any
// interceptor runs.
func (c *Call) filter(ctx context.Context) bool {
	runs := false
	for i, f := range c.t.filters {
		if f == nil {
			c.st.marks[i], runs = 0, true
			continue
		}
		v := f(ctx, c)
		c.st.marks[i] = v
		if v == 0 {
			c.skip |= 1 << i
		} else {
			runs = true
		}
	}
	return runs
}

// Call is one call as interceptors see it: a request (or notification),
// a batch element, or a fault answered before any method could run. It
// is valid until the interceptor it was given to returns, and must not
// be kept.
type Call struct {
	t        *Table
	st       *state
	req      *parser.Request // nil for a fault of the whole message
	m        *method         // nil for an unknown method or a fault
	fault    *parser.Error   // the fault of the whole message, when req is nil
	tooBig   int             // the length of a batch over MaxBatch, when req and fault are nil
	dst      []byte          // the reply so far; the call's reply starts at start
	start    int
	level    int    // the interceptor running now
	called   uint64 // the levels that called Next, by bit
	answered bool   // the terminal ran, or a refusal replaced its reply
	code     parser.Code
	err      error
	res      [2]int        // the result's span in dst, on success
	skip     uint64        // the levels whose Filter did not want the call, by bit (UseWhen)
	dur      time.Duration // the start of the terminal on the monotonic clock (since epoch); its duration once timed
	timed    bool          // dur holds the duration
	begun    bool          // the terminal ran: dur holds its start
}

// Method returns the method name ("" for a fault of the whole message).
// For a registered method it is the registered name, which may be kept;
// else the returned string is valid until the interceptor returns; copy
// it (strings.Clone) to keep it.
func (c *Call) Method() string {
	switch {
	case c.m != nil:
		return c.m.info.Name
	case c.req == nil:
		return ""
	case c.req.MethodEscaped:
		c.st.name = c.req.AppendMethod(c.st.name[:0])
		return view(c.st.name)
	}
	return view(c.req.Method)
}

// Registered reports whether the method is registered in the table.
func (c *Call) Registered() bool { return c.m != nil }

// ID returns the request's id as JSON (`1`, `"a"`), or nil for a
// notification or a request whose id is unknown. The returned ID is valid
// until the interceptor returns and must not be modified; copy it to keep
// it.
func (c *Call) ID() Raw {
	if c.req == nil || c.Notification() {
		return nil
	}
	return Raw(c.req.ID)
}

// Version returns the call's JSON-RPC version: parser.Version1 for a
// JSON-RPC 1.0 request (no jsonrpc member), else parser.Version2 — a
// fault of the whole message too.
func (c *Call) Version() parser.Version {
	if c.req == nil {
		return parser.Version2
	}
	return c.req.Version
}

// Params returns the params as JSON, or nil when absent. The returned
// Params is valid until the interceptor returns and must not be modified;
// copy it to keep it.
func (c *Call) Params() Raw {
	if c.req == nil {
		return nil
	}
	return Raw(c.req.Params)
}

// Notification reports whether the call is a notification: it gets no
// reply, whatever happens.
func (c *Call) Notification() bool {
	return c.req != nil && c.req.Notification && c.req.Err.OK()
}

// Fault returns the code of the call's fault when it cannot reach a
// method at all — parser.CodeParseError, parser.CodeInvalidRequest or
// parser.CodeMethodNotFound — and 0 otherwise. It is known before Next.
func (c *Call) Fault() parser.Code {
	switch {
	case c.req == nil && c.fault != nil:
		return c.fault.Code
	case c.req == nil:
		return parser.CodeInvalidRequest // a batch too long
	case !c.req.Err.OK():
		return c.req.Err.Code
	case c.m == nil:
		return parser.CodeMethodNotFound
	}
	return 0
}

// Next runs the rest of the chain and the call, with ctx as their
// context. Afterwards Code, Err, Result and Duration tell the outcome.
// Only the first call of each interceptor does anything.
func (c *Call) Next(ctx context.Context) {
	bit := uint64(1) << c.level
	if c.called&bit != 0 {
		return
	}
	c.called |= bit
	if c.level+1 == len(c.t.chain) {
		c.run(ctx) // the innermost interceptor: straight to the call
		return
	}
	c.from(ctx, c.level+1)
}

// run runs the call itself, timed once an interceptor of the table has
// asked for a Duration.
func (c *Call) run(ctx context.Context) {
	if c.t.timing.Load() {
		c.dur, c.begun = time.Since(epoch), true // the start, on the monotonic clock alone (one read, not time.Now's two)
	}
	if m := c.m; m.plain() { // the usual call: straight to its method
		st := c.st
		c.answered = true
		st.req, st.code, st.err, st.res = c.req, 0, nil, [2]int{}
		c.dst = m.impl.invoke(ctx, st, c.dst)
		c.code, c.err, c.res = st.code, st.err, st.res
		return
	}
	c.terminal(ctx)
}

// Code returns the outcome's code, after Next: 0 for a result, else the
// code of the error the reply carries (for a notification, the one it
// would have carried).
func (c *Call) Code() parser.Code { return c.code }

// Err returns the outcome's error, after Next: nil for a result; the
// method's error as it returned it; ErrInvalidParams, ErrMethodNotFound,
// ErrInvalidRequest, ErrParse, ErrForbidden or ErrInternal (a panic) for
// the failures jetrpc answers; or the error an interceptor inside
// returned.
func (c *Call) Err() error { return c.err }

// Result returns the result as JSON, after Next, when the call succeeded
// and wants a reply; else nil. The returned Result is valid until the
// interceptor returns and must not be modified; copy it to keep it.
func (c *Call) Result() Raw {
	if c.code != 0 || c.res[1] <= c.res[0] {
		return nil
	}
	return Raw(c.dst[c.res[0]:c.res[1]])
}

// Duration returns how long the call took, after Next: from when the
// method (or the fault's reply) started to the first time Duration is
// asked — for the innermost interceptor that asks at once, the method's
// own time; for one outside, that of the interceptors inside after Next
// too. It is 0 for a call refused before it ran. A table reads the clock
// for its calls only from the first time one of its interceptors asks a
// Duration — that first answer is 0 — so that interceptors that never
// ask cost no clock reading.
func (c *Call) Duration() time.Duration {
	if !c.timed && c.begun {
		c.dur, c.timed = time.Since(epoch)-c.dur, true
	}
	if !c.timed {
		if c.answered && !c.t.timing.Load() {
			c.t.timing.Store(true)
		}
		return 0
	}
	return c.dur
}

// epoch is the origin of the monotonic readings that time calls.
var epoch = time.Now()

// from runs the chain from level i on, then the terminal, passing by the
// levels whose Filter did not want the call.
func (c *Call) from(ctx context.Context, i int) {
	chain := c.t.chain
	for c.skip != 0 && i < len(chain) && c.skip&(1<<i) != 0 {
		c.called |= 1 << i
		i++
	}
	if i == len(chain) {
		c.run(ctx)
		return
	}
	outer := c.level
	c.level = i
	err := chain[i](ctx, c)
	c.level = outer
	c.afterLevel(ctx, i, err)
}

// afterLevel finishes level i once its interceptor returned err: the
// rest runs if it neither called Next nor refused; an error refuses.
func (c *Call) afterLevel(ctx context.Context, i int, err error) {
	bit := uint64(1) << i
	if c.called&bit == 0 {
		c.called |= bit
		if err == nil {
			c.from(ctx, i+1)
			return
		}
	}
	if err != nil {
		c.refuse(err)
	}
}

// Answer answers the call with result, a JSON value, in place of the
// rest of the chain and the method: called before Next, nothing inside
// runs (Next does nothing after it); called after Next, it replaces the
// reply. Either way the interceptors outside see a success whose Result
// is result (compacted), and the call is counted as one by the metrics
// and the access log. A notification answered gets no reply; inside a
// batch only this element is answered. result is checked and copied into
// the reply, and may be reused once Answer returns; a result that is not
// valid JSON is answered -32603, as a method's invalid Raw is. For the
// fault of a whole message the reply's id is null. It allocates
// nothing. Like Next, it must be called on the interceptor's goroutine
// before the interceptor returns; returning an error afterwards
// replaces the answer with the error.
func (c *Call) Answer(result Raw) {
	c.called |= uint64(1) << c.level // the rest of the chain does not run
	if c.st.streamed {
		return // a streamed reply has begun to go: it cannot be replaced
	}
	c.answered = true
	c.dst = c.dst[:c.start]
	c.code, c.err, c.res = 0, nil, [2]int{}
	if c.Notification() {
		return
	}
	var id []byte
	v := parser.Version2
	if c.req != nil {
		id, v = c.req.ID, c.req.Version
	}
	dst := appendResultHead(c.dst, v)
	from := len(dst)
	dst, reason := appendRaw(dst, result)
	if reason != "" {
		c.code, c.err = parser.CodeInternalError, ErrInternal
		c.dst = appendErrorReply(c.dst, id, v, parser.CodeInternalError, "Internal error", reason, nil)
		return
	}
	c.res = [2]int{from, len(dst)}
	c.dst = appendReplyTail(dst, id, v)
}

// Inline reports whether the call runs where it must not block: the call
// of an inline method, or a fault (neither runs on a worker under the
// engine). An interceptor that may wait — for a lock, another call —
// asks it first, and answers at once instead for such a call.
func (c *Call) Inline() bool { return c.m == nil || c.m.inline }

// refuse replaces the call's reply with err.
func (c *Call) refuse(err error) {
	if c.st.streamed {
		return // a streamed reply has begun to go: it cannot be replaced
	}
	c.answered = true
	c.dst = c.dst[:c.start]
	c.code, c.err, c.res = ErrorCode(err), err, [2]int{}
	if e := asError(err); e != nil {
		c.code = e.Code
	}
	if c.Notification() {
		return
	}
	req := parser.Request{Version: parser.Version2}
	if c.req != nil {
		req.ID, req.Version, req.Method = c.req.ID, c.req.Version, c.req.Method
	}
	c.dst = c.t.appendHandlerError(c.st, c.dst, &req, err)
}

// terminal runs the call itself: the method, or the fault's reply.
func (c *Call) terminal(ctx context.Context) {
	st := c.st
	c.answered = true
	switch {
	case c.req == nil && c.fault != nil:
		c.code, c.err = c.fault.Code, faultErr(c.fault.Code)
		c.dst = AppendFault(c.dst, nil, c.fault)
		return
	case c.req == nil:
		c.code, c.err = parser.CodeInvalidRequest, ErrInvalidRequest
		c.dst = appendTooLong(c.dst, c.tooBig, c.t.opts.MaxBatch)
		return
	}
	st.req = c.req
	st.code, st.err, st.res = 0, nil, [2]int{}
	c.dst = c.t.invoke(ctx, st, c.dst, c.req, c.m)
	c.code, c.err, c.res = st.code, st.err, st.res
}

// faultErr is the error of a fault's code.
func faultErr(code parser.Code) error {
	switch code {
	case parser.CodeParseError:
		return ErrParse
	case parser.CodeMethodNotFound:
		return ErrMethodNotFound
	}
	return ErrInvalidRequest
}

// intercept runs one call through the chain and appends its reply.
func (t *Table) intercept(ctx context.Context, st *state, dst []byte, req *parser.Request, m *method, fault *parser.Error, tooBig int) (out []byte) {
	call := &st.call // filled in place: a Call is large to copy
	call.t, call.st, call.req, call.m, call.fault, call.tooBig = t, st, req, m, fault, tooBig
	call.level, call.skip = 0, 0
	st.span = SpanRef{}
	if t.anyFilter && !call.filter(ctx) && req != nil {
		// No interceptor wants the call (UseWhen): straight to it, as
		// without interceptors (a fault of the whole message, rare, goes
		// the usual way, every level passed by).
		st.req, st.code, st.err, st.res = req, 0, nil, [2]int{}
		return t.invoke(ctx, st, dst, req, m)
	}
	call.dst, call.start, call.called, call.answered = dst, len(dst), 0, false
	call.code, call.err, call.timed, call.begun = 0, nil, false, false // res is set with the outcome
	defer func() {
		if v := recover(); v != nil {
			t.opts.Logger.Error("jetrpc: interceptor panicked", "method", call.Method(), "panic", v, "stack", string(debug.Stack()))
			call.level = len(t.chain) // Next does nothing now
			call.refuse(ErrInternal)
		}
		out = call.dst
		st.code = call.code // the outcome, as an interceptor may have replaced it
		call.dst = nil      // the caller's buffer; the rest is cleared with the state (reset)
	}()
	if call.skip != 0 {
		call.from(ctx, 0)
	} else if err := t.chain[0](ctx, call); call.called&1 == 0 || err != nil { // level 0, as from would run it
		call.afterLevel(ctx, 0, err)
	}
	if !call.answered {
		// An interceptor recovered a panic of one inside it and let the
		// call go unanswered: the call still gets its reply.
		call.refuse(ErrInternal)
	}
	return call.dst
}

// invoke runs a valid request's method, or answers its fault: the
// terminal of every call, with or without interceptors. It records the
// outcome in st.code, st.err and st.res. Kept inlinable: the usual call
// goes straight to its method.
func (t *Table) invoke(ctx context.Context, st *state, dst []byte, r *parser.Request, m *method) []byte {
	if m.plain() {
		st.req = r
		return m.impl.invoke(ctx, st, dst)
	}
	return t.invokeSlow(ctx, st, dst, r, m)
}

// invokeSlow is invoke for faults and for methods whose calls pass
// checks first: the rate limits (Options.RateLimit, Cost), permissions
// (Require), the method's concurrency (MaxConcurrent), and a timeout,
// whose deadline the method's context carries.
func (t *Table) invokeSlow(ctx context.Context, st *state, dst []byte, r *parser.Request, m *method) []byte {
	if m == nil || !r.Err.OK() {
		return t.invokeFault(st, dst, r)
	}
	return t.invokeChecked(ctx, st, dst, r, m)
}

// invokeChecked runs the method m of the valid request r once its call
// has passed the checks, or answers the refusal.
func (t *Table) invokeChecked(ctx context.Context, st *state, dst []byte, r *parser.Request, m *method) []byte {
	if t.limiter != nil && !t.charged(ctx, m, r.Notification) {
		return refuse(st, dst, r, parser.CodeLimitExceeded, "Limit exceeded", "rate limit") // a notification is dropped, and counted by the limiter
	}
	if m.require != nil && !GrantsFrom(ctx).HasAll(m.require...) {
		return refuse(st, dst, r, parser.CodeForbidden, "Forbidden", m.forbidden)
	}
	if m.maxConc > 0 && m.running.Add(1) > m.maxConc {
		m.running.Add(-1)
		t.refused(refuseConcurrency)
		return refuse(st, dst, r, parser.CodeServerBusy, "Server busy", m.busy)
	}
	st.req = r
	if m.timeout <= 0 {
		dst = m.impl.invoke(ctx, st, dst)
	} else {
		// The method's context carries its deadline: a timed segment's or
		// a deferred call's (set by its caller, who answers at that time),
		// else now plus m's timeout, now read from the coarse clock
		// (clock.Coarse: behind the time by 10 ms at most, so such a
		// deadline may come up to 10 ms early), as the system clock costs
		// more than the rest of the call's checks together.
		d := &st.dl
		dl := st.deadline
		if dl == 0 {
			dl = clock.Coarse() + int64(m.timeout)
		}
		d.start(ctx, dl)
		before := len(dst)
		dst = m.impl.invoke(d, st, dst)
		d.end()
		if st.code == parser.CodeDeadline && st.err == context.DeadlineExceeded && !r.Notification && !st.streamed {
			// The method gave up at its deadline: the reply says so as the
			// one given without it would.
			dst = appendTimeout(dst[:before], r, m)
		}
	}
	if m.maxConc > 0 {
		m.running.Add(-1) // the method's own panics are recovered inside invoke
	}
	return dst
}

// invokeFault answers an invalid request or an unknown method.
func (t *Table) invokeFault(st *state, dst []byte, r *parser.Request) []byte {
	if !r.Err.OK() {
		st.code, st.err = r.Err.Code, faultErr(r.Err.Code)
		return AppendFault(dst, r.ID, &r.Err)
	}
	st.code, st.err = parser.CodeMethodNotFound, ErrMethodNotFound
	return notFound(dst, r)
}

// refuse answers r with code, msg and detail instead of running its
// method: nothing for a notification.
func refuse(st *state, dst []byte, r *parser.Request, code parser.Code, msg, detail string) []byte {
	st.code, st.err = code, codeErr(code)
	if r.Notification {
		return dst
	}
	return appendErrorReply(dst, r.ID, r.Version, code, msg, detail, nil)
}

// codeErr is the error of a refusal's code.
func codeErr(code parser.Code) error {
	switch code {
	case parser.CodeLimitExceeded:
		return ErrLimitExceeded
	case parser.CodeForbidden:
		return ErrForbidden
	}
	return ErrServerBusy
}

// plain reports whether m is a method a call may go straight to: found
// (which the lookup does only for a valid request) and without checks
// (no permission, limit or timeout). Kept inlinable.
func (m *method) plain() bool { return m != nil && !m.checked }

// direct reports whether a call to m goes straight to it: m is plain and
// the table has no interceptors. Kept inlinable: the usual call's path.
func (t *Table) direct(m *method) bool { return m.plain() && len(t.chain) == 0 }

// call runs one request (or a fault) through the interceptors, if any,
// and appends its reply.
func (t *Table) call(ctx context.Context, st *state, dst []byte, r *parser.Request, m *method) []byte {
	if len(t.chain) != 0 {
		return t.intercept(ctx, st, dst, r, m, nil, 0)
	}
	return t.invoke(ctx, st, dst, r, m)
}
