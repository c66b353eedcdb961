package handler

// NOTE: what a table observes of its calls — metrics (metrics.go) and
// the access log — hangs on one pointer, Table.obs, nil unless one of
// them is on: a table without them pays a nil check per message. Each
// call's outcome is noted where its reply is final: st.code after a
// single request's dispatch, element.code for batch elements, recorded
// by whoever ran them and read by the caller once it joins them (a late
// element's code is the caller's parser.CodeDeadline: the worker that still
// runs it owns its element). The clock is read once per message and
// once per batch element when the observer is on, never when it is off.

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// AccessLog configures the access log of a table (Options.AccessLog):
// one record per message, at Info for the sampled ones and at Warn for
// the slow ones, and one per refusal a transport reports (Table.Refused).
// Their attributes, in order:
//
//   - a call or notification ("jetrpc: call"): method; id — a string id
//     decoded, a number as a number, null as nil — or notification=true;
//     code; duration_ms;
//   - a batch ("jetrpc: batch"): elements, errors, duration_ms;
//   - a refusal before any JSON-RPC ("jetrpc: refused"): status, the
//     HTTP status (absent when none was sent), and reason, a fixed word;
//
// then the caller's: transport; remote, the connection's address;
// client, the address a trusted proxy names (Meta.ClientIP), behind one;
// principal, the caller the Authorizer named (Meta.Principal), when one
// did. duration_ms is the handling time in milliseconds, a float.
// Method names and string ids are clipped to 128 bytes and "…".
type AccessLog struct {
	// Logger receives the records; nil means no access log.
	Logger *slog.Logger
	// Sample is the share of messages logged, from 0 (none: only the
	// slow ones) to 1 (all).
	Sample float64
	// Slow: a message that took longer than this is logged at Warn
	// ("jetrpc: slow call"), sampled or not; 0 means none. Without
	// Options.Metrics, the messages that are not sampled are timed on a
	// coarse clock (10 ms steps, a load instead of a clock reading): a
	// message within 10 ms of Slow may be taken for either side of it.
	Slow time.Duration
}

// on reports whether a logs anything.
func (a *AccessLog) on() bool { return a.Logger != nil && (a.Sample > 0 || a.Slow > 0) }

// WithAccessLog sets Options.AccessLog.
func WithAccessLog(a AccessLog) Option { return func(o *Options) { o.AccessLog = a } }

// WithMetrics sets Options.Metrics.
func WithMetrics(on bool) Option { return func(o *Options) { o.Metrics = on } }

// observer is what a table observes of its calls; a table has one only
// when something is observed.
type observer struct {
	metrics *tableMetrics // nil without Options.Metrics
	log     *accessLog    // nil without an access log
}

// accessLog is a table's AccessLog with what its checks need ready.
type accessLog struct {
	AccessLog
	slow int64 // Slow in ns, or math.MaxInt64 for none
}

// newObserver returns the observer of opts, or nil when nothing is
// observed.
func newObserver(opts *Options) *observer {
	o := &observer{}
	if opts.Metrics {
		o.metrics = newTableMetrics()
	}
	if opts.AccessLog.on() {
		o.log = &accessLog{AccessLog: opts.AccessLog, slow: math.MaxInt64}
		if opts.AccessLog.Slow > 0 {
			o.log.slow = int64(opts.AccessLog.Slow)
		}
	}
	if o.metrics == nil && o.log == nil {
		return nil
	}
	return o
}

// nanotime reads the monotonic clock shared with the engine, in ns
// (package clock): time.Since costs a sixth more, and it is read for
// every message observed. Kept inlinable.
func nanotime() int64 { return clock.Now() }

// of returns the counters of a call of m for r.
func (tm *tableMetrics) of(r *parser.Request, m *method) *methodMetrics {
	switch {
	case m != nil:
		return m.stats
	case r == nil || !r.Err.OK():
		return tm.invalid
	}
	return tm.unknown
}

// begin returns the start of the handling of a message observed with
// st: now, or, for one of a burst of messages given the same Pending,
// when the one before it ended (see Pending.Flush) — one clock reading
// per message.
func (o *observer) begin(st *state, later *Pending) int64 {
	if later != nil && later.clock != 0 && o.chained(st) { // set only in bursts (Pending.Flush)
		return later.clock
	}
	return o.now(st)
}

// now reads the clock for a message observed with st: the precise clock
// when the message's duration is counted (metrics) or written (the next
// record the access log samples), else the coarse clock (clock.Coarse)
// — a load, not a clock reading — whose 10 ms steps are fine enough to
// tell the slow messages.
func (o *observer) now(st *state) int64 {
	if o.metrics == nil && st.logSkip > 0 {
		return clock.Coarse()
	}
	return nanotime()
}

// chained reports whether a message observed with st may start when
// the message before it in its burst ended (Pending.clock): always with
// metrics, whose readings are all precise; for the access log alone,
// unless the message is the next sampled one, whose start is read
// precisely, as the end before it may have been read coarsely.
func (o *observer) chained(st *state) bool { return o.metrics != nil || st.logSkip > 0 }

// start notes the start of the single request r, for m, in st: its
// counters, and the start of a blocking method's call (an inline one's
// start is counted with its end).
func (o *observer) start(st *state, r *parser.Request, m *method) {
	if tm := o.metrics; tm != nil {
		st.cur = tm.of(r, m)
		if m != nil && !m.inline {
			st.cur.started(st.stripe)
		}
	}
}

// startElems notes the start of the elements of a batch: those of
// blocking methods are counted (an inline call's start is counted with
// its end).
func (o *observer) startElems(st *state) {
	if tm := o.metrics; tm != nil {
		for i := range st.elems {
			if e := &st.elems[i]; e.blocking() {
				e.m.stats.started(st.stripe)
			}
		}
	}
}

// kept notes the start of the calls of a message deferred to a
// Pending: it is run (Pending.Run) or answered busy later.
func (o *observer) kept(st *state) {
	if st.msg.Kind == parser.KindSingle {
		o.start(st, st.req, st.single)
		return
	}
	o.startElems(st)
}

// elem notes the outcome of a batch element: code, after d ns, in span (the
// batch's error count is Table.noteElem's).
func (o *observer) elem(st *state, e *element, code parser.Code, d int64, span SpanRef) {
	if tm := o.metrics; tm != nil {
		mm := tm.of(&e.req, e.m)
		tm.handled(mm, st.stripe, code, d)
		if span.IsValid() {
			mm.exemplar(d, span)
		}
	}
}

// endSingle notes the outcome of the single request r started with
// start: st.code. It returns the time it ended.
func (o *observer) endSingle(ctx context.Context, st *state, r *parser.Request) int64 {
	now := o.now(st)
	o.done(ctx, st, r, now-st.t0)
	return now
}

// endBurst is endSingle for a message of a burst given one Pending,
// whose successes p's tally adds up until the burst ends (Flush).
func (o *observer) endBurst(ctx context.Context, st *state, r *parser.Request, p *Pending) int64 {
	var now int64
	if o.metrics != nil {
		now = nanotime() // o.now's, without its call
	} else {
		now = o.now(st)
	}
	d := now - st.t0
	if tm := o.metrics; tm != nil && st.cur != nil {
		if st.span.IsValid() {
			st.cur.exemplar(d, st.span)
		}
		switch y := &p.tally; {
		case st.code != 0:
			tm.handled(st.cur, st.stripe, st.code, d)
		case y.mm == st.cur && y.stripe == st.stripe && d >= 0: // the burst's method again: tally.add, inlined
			b := bucketOf(d)
			y.n++
			y.sum += uint64(d)
			y.buckets[b]++
			y.touched |= 1 << b
		case y.mm == nil:
			// The burst's first success is counted at once, and the next
			// ones of its method tallied: a burst of one message (HTTP
			// without pipelining) costs no tally.
			tm.handled(st.cur, st.stripe, 0, d)
			y.mm, y.stripe = st.cur, st.stripe
		default:
			y.add(st.cur, st.stripe, d)
		}
	}
	if o.log != nil && o.log.wants(st, d) {
		o.log.call(ctx, st, r, d)
	}
	return now
}

// done notes the outcome of the single request r, st.code, after d ns.
func (o *observer) done(ctx context.Context, st *state, r *parser.Request, d int64) {
	if tm := o.metrics; tm != nil && st.cur != nil {
		tm.handled(st.cur, st.stripe, st.code, d)
		if st.span.IsValid() {
			st.cur.exemplar(d, st.span)
		}
	}
	if o.log != nil && o.log.wants(st, d) {
		o.log.call(ctx, st, r, d)
	}
}

// fault notes a message answered whole before any method: not JSON, not
// a request, or a batch too long (n elements).
func (o *observer) fault(ctx context.Context, st *state, code parser.Code, n int) {
	if tm := o.metrics; tm != nil {
		tm.handled(tm.invalid, st.stripe, code, 0)
		if n > 0 {
			tm.batch(st.stripe, n)
			tm.refusals[refuseBatchLength].Add(1)
		}
	}
	if o.log != nil && o.log.wants(st, 0) {
		st.code = code
		o.log.call(ctx, st, nil, 0)
	}
}

// endBatch notes the end of a batch of n elements, whose elements were
// noted (elem).
func (o *observer) endBatch(ctx context.Context, st *state, n int) {
	if tm := o.metrics; tm != nil {
		tm.batch(st.stripe, n)
	}
	if o.log != nil {
		if d := o.now(st) - st.t0; o.log.wants(st, d) {
			o.log.batch(ctx, st, n, d)
		}
	}
}

// wants reports whether a message of d ns, observed with st, is logged:
// slow, or sampled. Sampling counts down: a dispatch state logs a
// message, then passes over a number of messages drawn from the
// geometric distribution of the gaps between Sample's successes
// (logSkip) — the same chance for every message as a draw per message,
// with one draw per record instead. Kept inlinable: the usual message is
// neither slow nor sampled.
func (a *accessLog) wants(st *state, d int64) bool {
	if st.logSkip <= 0 || d > a.slow {
		return a.wantsSlow(st, d)
	}
	st.logSkip--
	return false
}

// wantsSlow is wants past its usual case. st.logSkip is -1 until the
// state draws for the table (prepare sets it when the table changes).
func (a *accessLog) wantsSlow(st *state, d int64) bool {
	switch {
	case d > a.slow:
		return true // the countdown is not spent on a slow message
	case a.Sample >= 1:
		return true
	case a.Sample <= 0:
		st.logSkip = math.MaxInt64
		return false
	case st.logSkip < 0:
		st.logSkip = logSkip(a.Sample) // the gap before the state's first record
		if st.logSkip > 0 {
			st.logSkip--
			return false
		}
	}
	st.logSkip = logSkip(a.Sample) // the gap after this one
	return true
}

// logSkip draws the number of messages to pass over before the next
// one logged, for a sampling share p in (0, 1): a geometric variable,
// the failures before the first success of trials with chance p.
func logSkip(p float64) int64 {
	u := 1 - rand.Float64() // (0, 1]
	n := math.Floor(math.Log(u) / math.Log1p(-p))
	if n >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int64(n)
}

// level is the record's level: Warn for a slow message.
func (a *accessLog) level(d int64) (slog.Level, bool) {
	if a.Slow > 0 && d > int64(a.Slow) {
		return slog.LevelWarn, true
	}
	return slog.LevelInfo, false
}

// maxLogged bounds the method names and ids an access log record
// carries, in bytes.
const maxLogged = 128

// clip returns s, or its first maxLogged bytes or fewer — whole
// characters — and "…".
func clip[T ~string | ~[]byte](s T) string {
	if len(s) <= maxLogged {
		return string(s)
	}
	n := maxLogged
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]) + "…"
}

// call logs a single request r (nil for a fault of the whole message).
func (a *accessLog) call(ctx context.Context, st *state, r *parser.Request, d int64) {
	level, slow := a.level(d)
	msg := "jetrpc: call"
	if slow {
		msg = "jetrpc: slow call"
	}
	attrs := make([]slog.Attr, 0, 10)
	method := ""
	switch {
	case r == nil:
	case st.cur != nil && st.cur.name != stats.UnknownMethod && st.cur.name != stats.InvalidMethod:
		method = clip(st.cur.name)
	case r.MethodEscaped:
		method = clip(r.AppendMethod(nil))
	default:
		method = clip(r.Method)
	}
	attrs = append(attrs, slog.String("method", method))
	if r != nil && r.Notification && r.Err.OK() {
		attrs = append(attrs, slog.Bool("notification", true))
	} else if r != nil && len(r.ID) > 0 {
		attrs = append(attrs, idAttr(r.ID))
	}
	attrs = append(attrs, slog.Int("code", int(st.code)), durationAttr(d))
	attrs = st.span.logAttrs(attrs)
	a.emit(ctx, level, msg, callerAttrs(ctx, attrs))
}

// idAttr returns the attribute "id" of a request whose id is the JSON
// value raw (Request.ID): a string id as its decoded string, clipped; an
// integer as an Int64 (or a Uint64 past its range); another number as the
// nearest Float64; null as nil (JSON null; "<nil>" in text). A number no
// float64 holds (1e400) is logged as its text, a string.
func idAttr(raw []byte) slog.Attr {
	switch c := raw[0]; {
	case c == '"':
		s := raw[1 : len(raw)-1]
		if len(s) > maxIDInput {
			s = s[:maxIDInput] // enough for more than maxLogged bytes decoded: a longer id is clipped
		}
		var buf [maxLogged + 8]byte
		return slog.String("id", clip(parser.AppendUnquote(buf[:0], s)))
	case c == 'n':
		return slog.Any("id", nil)
	}
	s := clip(raw)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return slog.Int64("id", n)
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return slog.Uint64("id", n)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return slog.Float64("id", f)
	}
	return slog.String("id", s)
}

// maxIDInput bounds the content of a string id that is decoded for the
// log: an escape of 6 bytes (or a surrogate pair of 12) decodes to at
// least 1 byte (3), so this many bytes and a cut escape decode to more
// than maxLogged bytes.
const maxIDInput = 6*(maxLogged+1) + 12

// durationAttr returns the attribute "duration_ms" of d ns: milliseconds,
// a float, the same in text and in JSON.
func durationAttr(d int64) slog.Attr { return slog.Float64("duration_ms", float64(d)/1e6) }

// batch logs a batch of n elements.
func (a *accessLog) batch(ctx context.Context, st *state, n int, d int64) {
	level, slow := a.level(d)
	msg := "jetrpc: batch"
	if slow {
		msg = "jetrpc: slow batch"
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs, slog.Int("elements", n), slog.Int("errors", st.errs), durationAttr(d))
	if b := st.batch; b != nil {
		attrs = b.span.logAttrs(attrs)
	}
	a.emit(ctx, level, msg, callerAttrs(ctx, attrs))
}

// AccessLogEnabled reports whether the table has an access log
// (Options.AccessLog): whether Refused and RefusedConn may log. Safe from
// any goroutine; kept inlinable.
func (t *Table) AccessLogEnabled() bool { return t.log != nil }

// Refused logs, in the table's access log, a request that a transport
// refused before it read any JSON-RPC of it: a record "jetrpc: refused"
// at Info with status, the HTTP status it was answered with (left out
// when 0: it was answered otherwise — a WebSocket close frame, a
// stream's error reply), and reason, a short fixed word
// (httprules.ReasonUnauthorized and the other Reason words), then the
// caller's attributes, as a call's record has them, from the Meta of
// ctx (MetaFrom): transport, remote, client and principal. Refusals are
// sampled with the calls, by the same countdown (AccessLog.Sample);
// Slow does not apply to them. Without an access log it does nothing and
// costs a nil check; a refusal not sampled allocates nothing. Safe from
// any goroutine; kept inlinable.
func (t *Table) Refused(ctx context.Context, status int, reason string) {
	if t.log != nil {
		t.log.refused(t, ctx, nil, status, reason)
	}
}

// RefusedConn is Refused for a connection refused as it was accepted,
// before any transport read it (an address not allowed, too many
// connections): its record has the remote address remote (nil: none),
// and no transport. Safe from any goroutine; kept inlinable.
func (t *Table) RefusedConn(remote net.Addr, reason string) {
	if t.log != nil {
		t.log.refused(t, nil, remote, 0, reason)
	}
}

// refused logs a refusal, if sampled: of ctx's caller, or, with a nil
// ctx, of a connection from remote.
func (a *accessLog) refused(t *Table, ctx context.Context, remote net.Addr, status int, reason string) {
	st := getState(t)
	ok := a.wants(st, 0) // d 0: never slow
	putState(st)
	if !ok {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	if status != 0 {
		attrs = append(attrs, slog.Int("status", status))
	}
	attrs = append(attrs, slog.String("reason", reason))
	if ctx == nil {
		ctx = context.Background()
		attrs = appendCaller(attrs, &Meta{Remote: remote})
	} else {
		attrs = callerAttrs(ctx, attrs)
	}
	a.emit(ctx, slog.LevelInfo, "jetrpc: refused", attrs)
}

// emit sends a record to the logger. The record has no caller's PC
// (slog's AddSource shows none): finding it (runtime.Callers) costs more
// than the rest of the record, and the caller is always this file.
func (a *accessLog) emit(ctx context.Context, level slog.Level, msg string, attrs []slog.Attr) {
	if !a.Logger.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = a.Logger.Handler().Handle(ctx, r)
}

// callerAttrs appends the transport, the remote address, the client
// behind a trusted proxy and the principal of ctx's call.
func callerAttrs(ctx context.Context, attrs []slog.Attr) []slog.Attr {
	m := MetaFrom(ctx)
	attrs = append(attrs, slog.String("transport", m.Transport.String()))
	return appendCaller(attrs, m)
}

// appendCaller appends the remote address, the client behind a trusted
// proxy and the principal of m.
func appendCaller(attrs []slog.Attr, m *Meta) []slog.Attr {
	if m.Remote != nil {
		attrs = append(attrs, slog.String("remote", m.Remote.String()))
	}
	if m.Proxies != nil { // through a trusted proxy: the client it names
		if ip := m.ClientIP(); ip.IsValid() {
			attrs = append(attrs, slog.String("client", ip.String()))
		}
	}
	if m.Principal != "" {
		attrs = append(attrs, slog.String("principal", m.Principal))
	}
	return attrs
}
