package handler

import (
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// Defaults of the table options.
const (
	// DefaultMaxBatch is the most requests a batch may hold.
	DefaultMaxBatch = 1000
	// DefaultParallelBatch is the length above which a batch of inline
	// methods is split into chunks of this many elements run in parallel
	// on the worker pool.
	DefaultParallelBatch = 64
	// DefaultMaxBatchResponseSize bounds the replies of one batch
	// together, error replies included (geth's
	// --rpc.batch-response-max-size).
	DefaultMaxBatchResponseSize = 25_000_000
	// DefaultMaxSubscriptionsPerConn bounds the live subscriptions of one
	// connection (jsonrpsee's max_subscriptions_per_connection).
	DefaultMaxSubscriptionsPerConn = 1024
	// DefaultMaxSubscriptions bounds the live subscriptions of a table,
	// all connections together.
	DefaultMaxSubscriptions = 100_000
)

// Options configures a Table. The zero value means the defaults.
type Options struct {
	// MaxBatch is the most requests a batch may hold; a longer batch gets
	// one -32600 reply naming the limit. 0 means DefaultMaxBatch.
	MaxBatch int
	// MaxDepth limits the nesting of a message; 0 means
	// parser.DefaultMaxDepth.
	MaxDepth int
	// RejectV1 answers JSON-RPC 1.0 requests with -32600 instead of
	// serving them in 1.0 form.
	RejectV1 bool
	// ExposeErrors sends the text of errors that are not *Error in the
	// -32603 message; by default the message is the generic "Internal
	// error", lest internal details leak to clients.
	ExposeErrors bool
	// ParallelBatch is the batch length above which even inline methods
	// run in parallel, in chunks of this many; 0 means
	// DefaultParallelBatch.
	ParallelBatch int
	// Workers runs blocking methods and parallel batch elements; nil
	// means a pool shared by all tables, started on first use with
	// pool.DefaultWorkers goroutines and a queue of pool.DefaultQueue.
	Workers *pool.Workers
	// CallTimeout is the timeout of the calls of every method registered
	// without Timeout: the method's context carries the deadline, and a
	// blocking call still running when it passes is answered
	// parser.CodeDeadline at once (see Timeout). 0 means none; negative is
	// none too.
	CallTimeout time.Duration
	// MaxResponseSize bounds one reply: a reply larger than this is
	// replaced by parser.CodeResponseTooLarge. 0 means parser.DefaultMaxSize
	// (5 MiB, the size of a message);
	// negative means no limit.
	MaxResponseSize int
	// MaxStreamedResponseSize bounds the reply of a streamed method
	// (RegisterStream) sent in parts: past it the result ends, flagged as
	// failed with parser.CodeResponseTooLarge. 0 means
	// DefaultMaxStreamedResponseSize (1 GiB); negative means no limit. A
	// streamed result built whole (in a batch, through Dispatch) is
	// bounded by MaxResponseSize instead.
	MaxStreamedResponseSize int
	// MaxBatchResponseSize bounds the replies of one batch together,
	// error replies included: once they pass it, every remaining element
	// is answered parser.CodeResponseTooLarge instead of its result. 0 means
	// DefaultMaxBatchResponseSize; negative means no limit.
	MaxBatchResponseSize int
	// RateLimit limits the calls of each client and each connection, in
	// cost units (see package handler/ratelimit and Cost): every call and
	// every notification — each element of a batch alone — spends its
	// method's cost. A call past the limits is refused at once, never
	// queued: a request is answered parser.CodeLimitExceeded (-32005), a
	// notification is dropped; both are counted (LimitRefusals). A
	// client's identity is the limits' Identity name, else
	// Meta.Principal, else Meta.ClientIP; a connection's bucket is its
	// Meta.Quota (NewQuota). The zero value limits nothing.
	RateLimit ratelimit.Limits
	// MaxSubscriptionsPerConn bounds the live subscriptions of one
	// connection, all namespaces together; a subscribe call past it is
	// answered parser.CodeTooManySubscriptions. 0 means
	// DefaultMaxSubscriptionsPerConn; negative means no limit.
	MaxSubscriptionsPerConn int
	// MaxSubscriptions bounds the live subscriptions of the table, all
	// connections together; 0 means DefaultMaxSubscriptions; negative
	// means no limit.
	MaxSubscriptions int
	// Logger receives handler panics; nil means slog.Default().
	Logger *slog.Logger
	// Metrics counts every call per method — started, handled by code,
	// its duration in a histogram — and the batches (Table.Metrics),
	// which engine/metrics exports to Prometheus. The counters of a
	// method are made when the table is sealed: a call adds to them
	// without a lock or an allocation.
	Metrics bool
	// AccessLog logs calls; the zero value logs nothing.
	AccessLog AccessLog
	// Cancel lists the notifications that cancel a call in flight on the
	// same connection (LSPCancel, MCPCancel, or one's own): each is
	// registered as an inline method of that name, so a method of the
	// same name cannot be. A transport whose connections are Cancellers
	// (the engine) then runs each single call of a blocking method with a
	// context of its own, which such a notification cancels; a batch's
	// elements are not reached. nil, the default, means none: calls cost
	// nothing more.
	Cancel []CancelMethod
	// CancelReply is what a call cancelled by a notification of Cancel
	// answers: CancelReplyError (the default, -32800) or CancelReplyNone.
	CancelReply CancelReply
}

// Option sets fields of Options. The With setters are thin
// conveniences: a field without one is set with WithOptions, or with an
// Option of one's own — any func(*Options).
type Option func(*Options)

// WithOptions sets every field of Options to o's. Options after it
// change single fields of it.
func WithOptions(o Options) Option { return func(p *Options) { *p = o } }

// WithMaxBatch sets Options.MaxBatch.
func WithMaxBatch(n int) Option { return func(o *Options) { o.MaxBatch = n } }

// WithMaxDepth sets Options.MaxDepth.
func WithMaxDepth(n int) Option { return func(o *Options) { o.MaxDepth = n } }

// WithRejectV1 sets Options.RejectV1.
func WithRejectV1(reject bool) Option { return func(o *Options) { o.RejectV1 = reject } }

// WithExposeErrors sets Options.ExposeErrors.
func WithExposeErrors(expose bool) Option { return func(o *Options) { o.ExposeErrors = expose } }

// WithParallelBatch sets Options.ParallelBatch.
func WithParallelBatch(n int) Option { return func(o *Options) { o.ParallelBatch = n } }

// WithWorkers sets Options.Workers.
func WithWorkers(w *pool.Workers) Option { return func(o *Options) { o.Workers = w } }

// WithCallTimeout sets Options.CallTimeout.
func WithCallTimeout(d time.Duration) Option { return func(o *Options) { o.CallTimeout = d } }

// WithMaxStreamedResponseSize sets Options.MaxStreamedResponseSize.
func WithMaxStreamedResponseSize(n int) Option {
	return func(o *Options) { o.MaxStreamedResponseSize = n }
}

// WithMaxResponseSize sets Options.MaxResponseSize and
// Options.MaxBatchResponseSize.
func WithMaxResponseSize(single, batch int) Option {
	return func(o *Options) { o.MaxResponseSize, o.MaxBatchResponseSize = single, batch }
}

// WithRateLimit sets Options.RateLimit.
func WithRateLimit(r ratelimit.Limits) Option { return func(o *Options) { o.RateLimit = r } }

// WithMaxSubscriptions sets Options.MaxSubscriptionsPerConn and
// Options.MaxSubscriptions.
func WithMaxSubscriptions(perConn, total int) Option {
	return func(o *Options) { o.MaxSubscriptionsPerConn, o.MaxSubscriptions = perConn, total }
}

// WithCancel sets Options.Cancel and Options.CancelReply.
func WithCancel(reply CancelReply, methods ...CancelMethod) Option {
	return func(o *Options) { o.Cancel, o.CancelReply = methods, reply }
}

// WithLogger sets Options.Logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// Table is the method table: names mapped to compiled methods. Register
// every method before the first Dispatch: from then on the table is read
// without locks, from any goroutine, and further registration fails with
// ErrSealed.
type Table struct {
	opts       Options                   // immutable after NewTable
	methods    map[string]*method        // guarded by mu until sealed, then immutable
	mu         sync.Mutex                // serializes registration
	sealed     atomic.Bool               // set by the first dispatch
	subs       map[string]*subscriptions // by namespace; guarded by mu
	chain      []Interceptor             // Use; guarded by mu until sealed, then immutable
	batchHooks []BatchHook               // UseBatch; guarded by mu until sealed, then immutable
	filters    []Filter                  // by level of chain: UseWhen's, nil for Use's; guarded by mu until sealed, then immutable
	anyFilter  bool                      // an interceptor has a Filter: set when the table is sealed
	timing     atomic.Bool               // an interceptor asked a Duration: calls are timed
	limiter    *ratelimit.Limiter        // the rate limits (Options.RateLimit); nil when none; immutable after NewTable
	obs        *observer                 // metrics and the access log; nil when neither is on; immutable after NewTable
	log        *accessLog                // obs's access log, or nil; immutable after NewTable
}

// NewTable returns an empty table.
func NewTable(opts ...Option) *Table {
	t := &Table{methods: make(map[string]*method)}
	for _, o := range opts {
		o(&t.opts)
	}
	if t.opts.MaxBatch <= 0 {
		t.opts.MaxBatch = DefaultMaxBatch
	}
	if t.opts.MaxDepth <= 0 {
		t.opts.MaxDepth = parser.DefaultMaxDepth
	}
	if t.opts.ParallelBatch <= 0 {
		t.opts.ParallelBatch = DefaultParallelBatch
	}
	if t.opts.Logger == nil {
		t.opts.Logger = slog.Default()
	}
	if t.opts.CallTimeout < 0 {
		t.opts.CallTimeout = 0
	}
	limit := func(n *int, def int) {
		switch {
		case *n == 0:
			*n = def
		case *n < 0:
			*n = int(^uint(0) >> 1)
		}
	}
	limit(&t.opts.MaxResponseSize, parser.DefaultMaxSize)
	limit(&t.opts.MaxBatchResponseSize, DefaultMaxBatchResponseSize)
	limit(&t.opts.MaxStreamedResponseSize, DefaultMaxStreamedResponseSize)
	limit(&t.opts.MaxSubscriptionsPerConn, DefaultMaxSubscriptionsPerConn)
	limit(&t.opts.MaxSubscriptions, DefaultMaxSubscriptions)
	t.limiter = ratelimit.New(t.opts.RateLimit)
	t.obs = newObserver(&t.opts)
	if t.obs != nil {
		t.log = t.obs.log
	}
	if len(t.opts.Cancel) > 0 {
		t.registerCancel()
	}
	return t
}

// Options returns the table's options, defaults filled in.
func (t *Table) Options() Options { return t.opts }

var (
	sharedWorkersMu sync.Mutex                   // serializes the start of sharedWorkers
	sharedWorkers   atomic.Pointer[pool.Workers] // started on first use
)

// workers returns the pool that runs blocking and parallel work.
func (t *Table) workers() *pool.Workers {
	if t.opts.Workers != nil {
		return t.opts.Workers
	}
	if w := sharedWorkers.Load(); w != nil {
		return w
	}
	sharedWorkersMu.Lock()
	defer sharedWorkersMu.Unlock()
	if sharedWorkers.Load() == nil {
		sharedWorkers.Store(pool.NewWorkers(0, -1))
	}
	return sharedWorkers.Load()
}

// Workers returns the pool that runs the table's blocking methods and
// parallel batch elements. Its tasks never wait for other tasks of the
// pool, so a transport that offloads whole messages (which may wait for
// their batch elements) must use a pool of its own.
func (t *Table) Workers() *pool.Workers { return t.workers() }

// UsesPool reports whether w is the pool that runs the table's blocking
// methods and parallel batch elements (Workers), without starting the
// shared pool. A transport that offloads whole messages refuses such a
// pool for itself (see Workers).
func (t *Table) UsesPool(w *pool.Workers) bool {
	if w == nil {
		return false
	}
	if t.opts.Workers != nil {
		return w == t.opts.Workers
	}
	return w == sharedWorkers.Load()
}

// seal marks the table as dispatching.
func (t *Table) seal() {
	if !t.sealed.Load() {
		t.mu.Lock() // after any registration in progress: it then gets ErrSealed, never a map write under a lookup
		t.anyFilter = slices.ContainsFunc(t.filters, func(f Filter) bool { return f != nil })
		t.sealed.Store(true)
		t.mu.Unlock()
	}
}

// MethodInfo describes a registered method, for discovery.
type MethodInfo struct {
	// Name is the method name.
	Name string
	// Description is the text given with Description, if any.
	Description string
	// Params are the param names: those given with ParamNames, or the
	// JSON names of the params struct fields in order.
	Params []string
	// Inline is true for methods registered with Inline.
	Inline bool
	// Streamed is true for methods registered with RegisterStream or
	// RegisterTextStream: the result is sent as it is produced — an
	// array (ResultType is []E), or a string (ResultType is string); with
	// StreamEnvelope, a value of the program's (ResultType is Raw).
	Streamed bool
	// Require lists the permissions a caller needs (Require); nil for
	// none.
	Require []string
	// Cost is what a call spends from the rate limits (Cost); 1 by
	// default.
	Cost int
	// MaxConcurrent bounds the calls running at once (MaxConcurrent); 0
	// for none.
	MaxConcurrent int
	// Timeout is the call timeout (Timeout, or the table's CallTimeout);
	// 0 for none.
	Timeout time.Duration
	// Summary is the text given with Summary, if any.
	Summary string
	// ParamsType is the Go type the params are decoded into (P of
	// Register); nil for a method that takes no params (RegisterNoParams).
	ParamsType reflect.Type
	// ResultType is the Go type of the result (R of Register); nil for a
	// method whose result is always null (RegisterNoResult).
	ResultType reflect.Type
	// Errors are the errors declared with Errors, in order; nil for none.
	// They must not be modified.
	Errors []*Error
	// Subscription is the namespace of the methods RegisterSubscription
	// or RegisterSubscriptionKinds registered (by default <ns>_subscribe
	// and <ns>_unsubscribe; see SubscriptionMethods); "" for others.
	Subscription string
	// Notification is the method of the notifications that the
	// subscriptions of a subscribe method send (by default
	// <ns>_subscription); "" for every other method, the unsubscribe
	// method included.
	Notification string
	// Unsubscribe is the method that ends the subscriptions of a
	// subscribe method (by default <ns>_unsubscribe); "" for every other
	// method.
	Unsubscribe string
	// NotificationType is the type of the result member of those
	// notifications, as declared with Notifies; nil when not declared.
	NotificationType reflect.Type
	// HTTPGet is true for a method registered with HTTPGet: callable by
	// HTTP GET as well as POST.
	HTTPGet bool
	// CacheControl is the Cache-Control value of the successful replies
	// to a GET of the method (HTTPGet; "no-store" by default); "" for a
	// method not callable by GET.
	CacheControl string
	// Kinds are the kinds of a subscribe method of
	// RegisterSubscriptionKinds, in registration order; nil for every
	// other method. They must not be modified.
	Kinds []SubscriptionKindInfo
}

// Methods returns the registered methods sorted by name.
func (t *Table) Methods() []MethodInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]MethodInfo, 0, len(t.methods))
	for _, m := range t.methods {
		info := m.info
		info.Params = append([]string(nil), info.Params...)
		info.Require = append([]string(nil), info.Require...)
		info.Errors = append([]*Error(nil), info.Errors...)
		info.Kinds = append([]SubscriptionKindInfo(nil), info.Kinds...)
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup reports whether name is registered and whether it is inline.
func (t *Table) Lookup(name string) (found, inline bool) {
	if !t.sealed.Load() {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	m := t.methods[name]
	return m != nil, m != nil && m.inline
}

// add registers m under its name.
func (t *Table) add(m *method) error {
	switch {
	case m.info.Name == "":
		return ErrEmptyName
	case strings.HasPrefix(m.info.Name, extensionPrefix) && !m.ext: // RegisterExtension sets ext
		return ErrReservedName
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sealed.Load() {
		return ErrSealed
	}
	if _, dup := t.methods[m.info.Name]; dup {
		return ErrDuplicateName
	}
	m.checked = m.require != nil || m.maxConc > 0 || m.timeout > 0 || t.limiter != nil
	if t.obs != nil && t.obs.metrics != nil {
		m.stats = newMethodMetrics(m.info.Name, !m.inline)
	}
	t.methods[m.info.Name] = m
	return nil
}

// lookup finds the method of a valid request, decoding an escaped name
// into st.name.
func (t *Table) lookup(st *state, r *parser.Request) *method {
	name := r.Method
	if r.MethodEscaped {
		st.name = r.AppendMethod(st.name[:0])
		name = st.name
	}
	// A connection or a benchmark tends to call one method again and
	// again: remember the last one found and skip the hash.
	if m := st.lastM; m != nil && st.lastT == t && m.info.Name == string(name) {
		return m
	}
	m := t.methods[string(name)]
	if m != nil {
		st.lastT, st.lastM = t, m
	}
	return m
}
