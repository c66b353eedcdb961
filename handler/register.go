package handler

// NOTE: registration turns a typed Go function into a *method: the params
// plan and the result plan are built here, once, by reflection, and sonic
// compiles its codecs (Pretouch) for every type it will see. The typed
// struct's invoke is then the whole per-call path: decode, call, encode,
// with no reflection and, for hand-coded kinds, no allocation.

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bytedance/sonic/decoder"
	"github.com/bytedance/sonic/encoder"
	"github.com/jetrpc/jetrpc/parser"
)

// MethodOption configures one method at registration.
type MethodOption func(*methodConfig)

type methodConfig struct {
	inline        bool
	desc          string
	summary       string
	errs          []*Error // Errors; nil entries refused at registration
	notifies      reflect.Type
	sub           *subRole           // the methods of RegisterSubscription and RegisterSubscriptionKinds; nil for others
	subNames      *SubscriptionNames // SubscriptionMethods; nil without
	params        []string
	require       []string
	cost          int
	maxConcurrent int
	timeout       time.Duration
	timeoutSet    bool
	httpGet       bool       // HTTPGet
	cacheControl  string     // HTTPGet's Cache-Control value
	envelope      *[2]string // StreamEnvelope's prefix and suffix; nil for none
}

// Inline marks a method as non-blocking: it runs on the caller of
// Dispatch — in the engine, on the event loop itself, the fastest path
// and the one without allocation. Only use it for methods that never
// block (no I/O, no locks held long, no sleeping) and finish in
// microseconds: while an inline method runs, every other connection of
// its event loop waits. Without Inline a method is of the blocking class
// and runs on the worker pool.
func Inline() MethodOption { return func(c *methodConfig) { c.inline = true } }

// Description sets the text MethodInfo reports for the method, which an
// OpenRPC document (package handler/openrpc) gives as its description.
func Description(text string) MethodOption { return func(c *methodConfig) { c.desc = text } }

// ParamNames sets the param names MethodInfo reports, in position order.
// By default they are the JSON names of the params struct fields.
func ParamNames(names ...string) MethodOption {
	return func(c *methodConfig) { c.params = append([]string(nil), names...) }
}

// Require makes a method callable only by callers that hold every one
// of perms (see Grants): the grants an Authorizer gave the caller's
// transport, or those an interceptor set with WithGrants. A call without
// them is answered parser.CodeForbidden, -32003 "Forbidden: requires permission
// P" — inside a batch too, while the other elements run — and the
// method does not run. Interceptors see the refusal (Call.Code).
func Require(perms ...string) MethodOption {
	return func(c *methodConfig) { c.require = append(c.require, perms...) }
}

// Cost sets what one call of the method spends from the rate limits'
// token buckets (Options.RateLimit), in cost units; the default is 1. A batch
// spends the costs of its elements, each alone. Costs below 1 count 1.
func Cost(n int) MethodOption { return func(c *methodConfig) { c.cost = max(n, 1) } }

// MaxConcurrent bounds the calls of the method running at once: a call
// beyond n is answered parser.CodeServerBusy at once, so that one slow method
// cannot take the whole worker pool from the others. n ≤ 0 means no
// bound (the default).
func MaxConcurrent(n int) MethodOption {
	return func(c *methodConfig) { c.maxConcurrent = max(n, 0) }
}

// Timeout sets the method's call timeout, instead of the table's
// CallTimeout: the method's context carries the deadline (and is done
// when it passes), and a call of a blocking method still running then
// is answered parser.CodeDeadline, -32002 "Deadline exceeded", at once — inside
// a batch too, beside its siblings' results — and its late result is
// dropped. An inline method is never cut short (it runs on the event
// loop, which it must not hold for long): its context carries the
// deadline alone. d ≤ 0 means no timeout, even when the table has one.
func Timeout(d time.Duration) MethodOption {
	return func(c *methodConfig) { c.timeout, c.timeoutSet = max(d, 0), true }
}

// HTTPGet makes a method callable by HTTP GET as well as by POST, for
// idempotent, cacheable reads: the engine answers
// GET <path>?method=NAME&id=ID&params=<URL-encoded JSON> (see package
// engine, Calls by GET) as it would the POST of the same request, and a
// successful reply carries the header field Cache-Control: cacheControl
// ("max-age=5", "public, max-age=60"); "" means "no-store". An error
// reply always says no-store. A method not marked is refused to a GET
// (405, Allow: POST). Mark only methods without side effects: a GET may
// be repeated, prefetched or answered from a cache. cacheControl must be
// printable ASCII (no control characters); registration fails
// otherwise. MethodInfo reports it (HTTPGet, CacheControl).
func HTTPGet(cacheControl string) MethodOption {
	return func(c *methodConfig) {
		if cacheControl == "" {
			cacheControl = "no-store"
		}
		c.httpGet, c.cacheControl = true, cacheControl
	}
}

// Register adds the method name to t, served by fn. P is the params type:
//
//   - a struct: params by position (an Array, into the exported fields in
//     order) or by name (an Object, into the fields by their json tag
//     names, exact case; unknown members are ignored). A field is
//     required unless it is a pointer, slice, map or interface or is
//     tagged omitempty or omitzero (Raw and json.RawMessage hold a JSON
//     value, not a list: they are required like other values); a missing
//     required field is -32602.
//     Untagged embedded structs are flattened as in encoding/json.
//   - an array [N]T of booleans, numbers or strings: exactly N by position.
//   - a slice: by position; a map with string keys: by name; an
//     interface: either; decoded by sonic.
//   - Raw: the params value verbatim (valid until fn returns);
//     json.RawMessage: a copy of it.
//
// Params that do not fit P are answered with -32602 naming the param. R
// is the result type: booleans, numbers, strings, Raw, json.RawMessage
// and slices or arrays of them are encoded by hand without allocation;
// types implementing JSONAppender write themselves; anything else is
// encoded by sonic (as encoding/json would, without HTML escaping). A Raw
// is written verbatim wherever it appears in R.
//
// Register panics if the name is empty, reserved ("rpc." prefix: see
// RegisterExtension) or taken, if the table has begun dispatching, or if
// P or R is unsupported: these are programming errors found at start-up,
// as net/http's ServeMux.Handle panics on a pattern taken. The panic's
// value is an error (errors.Is ErrDuplicateName, ErrReservedName,
// ErrEmptyName, ErrSealed, ErrBadType), for a program that registers
// names it does not know in advance to recover and report.
func Register[P, R any](t *Table, name string, fn func(context.Context, P) (R, error), opts ...MethodOption) {
	mustNotNil(name, fn == nil)
	must(register(t, name, fn, opts))
}

// mustNotNil panics when the method's function is nil.
func mustNotNil(name string, isNil bool) {
	if isNil {
		panic(fmt.Errorf("jetrpc: nil function for method %q", name))
	}
}

// must panics with a registration's error.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// noParams is the params type of methods registered without params.
type noParams struct{}

// noResult is the result type of methods registered without a result:
// always null.
type noResult struct{}

var (
	noParamsType = reflect.TypeFor[noParams]()
	noResultType = reflect.TypeFor[noResult]()
)

// RegisterNoParams adds a method that takes no params (absent, [] or {};
// anything else is -32602). It panics as Register does.
func RegisterNoParams[R any](t *Table, name string, fn func(context.Context) (R, error), opts ...MethodOption) {
	mustNotNil(name, fn == nil)
	must(register(t, name, func(ctx context.Context, _ noParams) (R, error) { return fn(ctx) }, opts))
}

// RegisterNoResult adds a method whose result is always null, for methods
// called for their effect (often as notifications). It panics as Register
// does.
func RegisterNoResult[P any](t *Table, name string, fn func(context.Context, P) error, opts ...MethodOption) {
	mustNotNil(name, fn == nil)
	must(register(t, name, func(ctx context.Context, p P) (noResult, error) { return noResult{}, fn(ctx, p) }, opts))
}

func register[P, R any](t *Table, name string, fn func(context.Context, P) (R, error), opts []MethodOption) error {
	return registerMethod(t, name, fn, opts, false)
}

// registerMethod compiles fn and adds it to t; ext allows an "rpc." name.
func registerMethod[P, R any](t *Table, name string, fn func(context.Context, P) (R, error), opts []MethodOption, ext bool) error {
	mt, _, err := compileMethod(t, name, fn, opts, ext)
	if err != nil {
		return err
	}
	return t.add(mt)
}

// compileMethod compiles fn into the method name of t, without adding
// it, and returns it with its typed invoker.
func compileMethod[P, R any](t *Table, name string, fn func(context.Context, P) (R, error), opts []MethodOption, ext bool) (*method, *typed[P, R], error) {
	var cfg methodConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(name); err != nil {
		return nil, nil, err
	}
	pt, rt := reflect.TypeFor[P](), reflect.TypeFor[R]()
	pp, err := buildParams(pt)
	if err != nil {
		return nil, nil, fmt.Errorf("jetrpc: method %q: %w", name, err)
	}
	rp, err := buildResult(rt)
	if err != nil {
		return nil, nil, fmt.Errorf("jetrpc: method %q: %w", name, err)
	}
	// Compile sonic's codecs now rather than on the first call (which
	// would take milliseconds).
	if !pp.fast {
		if err := decoder.Pretouch(pt); err != nil {
			return nil, nil, fmt.Errorf("jetrpc: method %q: params: %w", name, err)
		}
	}
	if !rp.fast() && !rp.appender {
		if err := encoder.Pretouch(rt); err != nil {
			return nil, nil, fmt.Errorf("jetrpc: method %q: result: %w", name, err)
		}
	}
	m := &typed[P, R]{fn: fn, pp: pp, rp: rp, name: name, table: t}
	m.ppool.New = func() any { return new(P) }
	m.rpool.New = func() any { return new(R) }
	params := cfg.params
	if params == nil {
		params = pp.names()
	}
	if cfg.envelope != nil && fn != nil {
		return nil, nil, fmt.Errorf("jetrpc: method %q: StreamEnvelope is for streamed methods (RegisterStream, RegisterTextStream): %w", name, ErrBadType)
	}
	mt := &method{
		envelope: cfg.envelope,
		inline:   cfg.inline,
		ext:      ext,
		info:     MethodInfo{Name: name, Description: cfg.desc, Params: params, Inline: cfg.inline, Require: cfg.require},
		impl:     m,
	}
	mt.info.Summary, mt.info.Errors = cfg.summary, cfg.errs
	mt.info.HTTPGet, mt.info.CacheControl = cfg.httpGet, cfg.cacheControl
	if pt != noParamsType {
		mt.info.ParamsType = pt
	}
	if rt != noResultType {
		mt.info.ResultType = rt
	}
	if cfg.sub != nil {
		mt.info.Subscription = cfg.sub.ns
		mt.subscribe = cfg.sub.subscribe
		if cfg.sub.subscribe {
			mt.info.Notification, mt.info.Unsubscribe, mt.info.NotificationType = cfg.sub.names.Notification, cfg.sub.names.Unsubscribe, cfg.notifies
		}
	}
	mt.cost = max(cfg.cost, 1)
	mt.maxConc = int32(min(cfg.maxConcurrent, 1<<30))
	mt.timeout = t.opts.CallTimeout
	if cfg.timeoutSet {
		mt.timeout = cfg.timeout
	}
	mt.info.Cost, mt.info.MaxConcurrent, mt.info.Timeout = mt.cost, int(mt.maxConc), mt.timeout
	mt.timedOut = timeoutReplies(mt.timeout)
	mt.busy = name + " runs " + strconv.Itoa(int(mt.maxConc)) + " calls at most at once"
	if len(cfg.require) > 0 {
		mt.require = cfg.require
		mt.forbidden = "requires permission " + strings.Join(cfg.require, ", ")
		if len(cfg.require) > 1 {
			mt.forbidden = "requires permissions " + strings.Join(cfg.require, ", ")
		}
	}
	return mt, m, nil
}

// method is a registered method. Immutable but for running.
type method struct {
	envelope  *[2]string // StreamEnvelope's, for a streamed method; nil for none
	inline    bool
	streamed  bool // RegisterStream's: its reply may go in parts
	subscribe bool // a subscribe method (RegisterSubscription): its call needs a Conn that can push
	ext       bool // an extension method (RegisterExtension): its name begins with "rpc."
	checked   bool // a call must pass checks before it runs (permissions, limits, a timeout): never straight to impl
	info      MethodInfo
	impl      invoker
	require   []string       // permissions the caller must hold (Require); nil for none
	forbidden string         // the detail of the reply to a caller without them
	cost      int            // cost units per call (Cost)
	maxConc   int32          // MaxConcurrent, or 0
	timeout   time.Duration  // the call timeout, or 0
	running   atomic.Int32   // calls running now, counted when maxConc > 0
	timedOut  timeoutHeads   // the reply to a call past its timeout up to its id, by version
	busy      string         // the detail of the reply to a call past maxConc
	stats     *methodMetrics // its counters (Options.Metrics), made at registration; nil without
}

// invoker runs one call. invoke reads the request from st.req, and
// appends the reply (nothing for a notification) to dst.
type invoker interface {
	invoke(ctx context.Context, st *state, dst []byte) []byte
}

// typed is a method compiled for its params type P and result type R.
type typed[P, R any] struct {
	fn    func(context.Context, P) (R, error)
	pp    *paramsPlan
	rp    *resultPlan
	ppool sync.Pool // *P, for params that sonic decodes (must be on the heap)
	rpool sync.Pool // *R, for results that sonic or AppendJSON encode
	name  string
	table *Table
}

func (m *typed[P, R]) invoke(ctx context.Context, st *state, dst []byte) []byte {
	req := st.req
	st.code = 0 // the outcome is this call's alone: a success leaves it so (st.err goes with a code)
	ctx = st.enter(ctx, m.name)
	var (
		r      R
		err    error
		crash  any
		reason string
	)
	var p P // on the stack: neither decoder lets it escape
	var e paramErr
	if m.pp.fast { // the hand-coded decoders, here: a call less on the hot path
		e = m.pp.decode(st, unsafe.Pointer(&p), req.Params)
	} else {
		e = decodeParams(st, m.pp, &m.ppool, req.Params, &p)
	}
	if e.bad() {
		return m.paramsError(st, dst, e)
	}
	r, err, crash = m.call(ctx, p)
	if crash != nil {
		m.table.opts.Logger.Error("jetrpc: method panicked", "method", m.name, "panic", crash, "stack", string(debug.Stack()))
		st.code, st.err = parser.CodeInternalError, ErrInternal
		if req.Notification {
			return dst
		}
		return appendErrorReply(dst, req.ID, req.Version, parser.CodeInternalError, "Internal error", "the method panicked", nil)
	}
	if err != nil {
		return m.appendError(st, dst, err)
	}
	if req.Notification {
		return dst
	}
	start := len(dst)
	dst = appendResultHead(dst, req.Version)
	st.res[0] = len(dst)
	if m.rp.fast() { // the hand-coded encoders, here: a call less on the hot path
		dst, reason = m.rp.appendFast(dst, unsafe.Pointer(&r))
	} else {
		dst, reason = appendResult(st, m.rp, &m.rpool, dst, &r)
	}
	if reason != "" {
		st.code, st.err, st.res = parser.CodeInternalError, ErrInternal, [2]int{}
		return appendErrorReply(dst[:start], req.ID, req.Version, parser.CodeInternalError, "Internal error", reason, nil)
	}
	st.res[1] = len(dst)
	return appendReplyTail(dst, req.ID, req.Version)
}

// decodeParams decodes raw, a request's params, into *p with pp: in
// place when the hand-coded decoders take P, else into a *P from pool
// (sonic's target must be on the heap), then copied to *p. It never lets
// p escape.
func decodeParams[P any](st *state, pp *paramsPlan, pool *sync.Pool, raw []byte, p *P) paramErr {
	if pp.fast {
		return pp.decode(st, unsafe.Pointer(p), raw)
	}
	hp := pool.Get().(*P)
	e := pp.decode(st, unsafe.Pointer(hp), raw)
	if !e.bad() {
		e = pp.decodePending(st, unsafe.Pointer(hp))
	} else {
		clear(st.pending)
		st.pending = st.pending[:0]
	}
	if !e.bad() {
		*p = *hp
	}
	var zero P
	*hp = zero
	pool.Put(hp)
	return e
}

// appendResult encodes *r, a result (or a streamed element) of the type
// rp was built for, through a *R from pool when sonic or an AppendJSON
// encodes it. It returns "" or the reason the value cannot be encoded.
// It never lets r escape.
func appendResult[R any](st *state, rp *resultPlan, pool *sync.Pool, dst []byte, r *R) ([]byte, string) {
	switch {
	case rp.fast():
		return rp.appendFast(dst, unsafe.Pointer(r))
	case rp.pointer && *(*unsafe.Pointer)(unsafe.Pointer(r)) == nil:
		return append(dst, "null"...), "" // a nil pointer, as encoding/json
	}
	hr := pool.Get().(*R)
	*hr = *r
	var direct any
	if rp.pointer {
		direct = *hr // pointer-shaped: no allocation
	}
	dst, reason := rp.appendSlow(st, dst, hr, direct)
	var zero R
	*hr = zero
	pool.Put(hr)
	return dst, reason
}

// appendError answers the error a method returned (nothing for a
// notification), recording its code as the outcome. Turning it into a
// reply runs the error's own code (Error, Unwrap, As targets), which may
// panic — a typed nil, say: that is the method's fault, answered as
// such with the request's id, never the message's.
func (m *typed[P, R]) appendError(st *state, dst []byte, err error) []byte {
	return m.table.appendMethodError(m.name, st, dst, err)
}

// appendMethodError is appendError for the method name of t.
func (t *Table) appendMethodError(name string, st *state, dst []byte, err error) (out []byte) {
	req, start := st.req, len(dst)
	defer func() {
		if v := recover(); v != nil {
			t.opts.Logger.Error("jetrpc: method's error panicked", "method", name, "panic", v)
			st.code, st.err = parser.CodeInternalError, ErrInternal
			out = dst[:start]
			if !req.Notification {
				out = appendErrorReply(out, req.ID, req.Version, parser.CodeInternalError, "Internal error", reasonErrorPanicked, nil)
			}
		}
	}()
	st.code, st.err = ErrorCode(err), err
	if e := asError(err); e != nil {
		st.code = e.Code
	}
	if req.Notification {
		return dst
	}
	return t.appendHandlerError(st, dst, req, err)
}

// reasonErrorPanicked is the data of the reply to a method whose error
// value panicked while it was turned into a reply.
const reasonErrorPanicked = "the method's error value panicked"

// call runs fn, turning a panic into a value.
func (m *typed[P, R]) call(ctx context.Context, p P) (r R, err error, crash any) {
	defer func() {
		if v := recover(); v != nil {
			crash = v
		}
	}()
	r, err = m.fn(ctx, p)
	return r, err, nil
}

func (m *typed[P, R]) paramsError(st *state, dst []byte, e paramErr) []byte {
	return paramsError(st, dst, e)
}

// paramsError answers the params of st.req that do not fit: -32602
// (nothing for a notification).
func paramsError(st *state, dst []byte, e paramErr) []byte {
	req := st.req
	st.code, st.err = parser.CodeInvalidParams, ErrInvalidParams
	if req.Notification {
		return dst
	}
	return appendParamsError(dst, req.ID, req.Version, e)
}
