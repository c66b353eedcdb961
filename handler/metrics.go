package handler

// NOTE: metrics of calls. With Options.Metrics a table counts every call
// per method — started, handled by code, its duration in a histogram —
// and its batches, in counters made when a method is registered: each
// method holds its own, so an observation is a few atomic adds, no lock,
// no map, no allocation (and the successes of a burst given one Pending
// are tallied without atomics until Pending.Flush). Counters are striped: each dispatch state (one
// per event loop, and pooled per P on workers) adds to its own stripe, so
// the loops of a busy server do not fight over one cache line; a reader
// (Table.Metrics) sums the stripes. Codes have fixed slots for the
// reserved ones and a table-wide registry of the first maxAppCodes others,
// so a client cannot grow the series: unregistered method names fold
// into stats.UnknownMethod, invalid requests into stats.InvalidMethod, codes beyond
// the registry into one "other" slot.

import (
	"math/bits"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
)

// nDurationBounds and nBatchBounds size the counters' histograms: the
// numbers of bounds of stats.DurationBuckets and stats.BatchSizeBuckets.
const (
	nDurationBounds = 22
	nBatchBounds    = 10
)

// durationBounds and batchBounds are the bounds of package stats, in ns
// and elements, as the counters compare with them.
var durationBounds, batchBounds = func() (d [nDurationBounds]int64, b [nBatchBounds]int64) {
	ds, bs := stats.DurationBuckets(), stats.BatchSizeBuckets()
	if len(ds) != nDurationBounds || len(bs) != nBatchBounds {
		panic("handler: the histogram bounds of package stats changed: update nDurationBounds and nBatchBounds")
	}
	for i, v := range ds {
		d[i] = int64(v)
	}
	for i, v := range bs {
		b[i] = int64(v)
	}
	return d, b
}()

// Code slots of a method's handled counters.
const (
	slotOK        = 0  // success
	slotReserved  = 1  // -32700, -32600..-32603: slots 1-5
	slotServer    = 6  // -32000..-32009: slots 6-15
	slotApp       = 16 // the codes of the table's registry
	maxAppCodes   = 32 // distinct other codes a table tells apart
	slotOther     = slotApp + maxAppCodes
	codeSlots     = slotOther + 1
	serverSlotsOf = slotApp - slotServer
)

// callCounters is one stripe of a method's counters: 592 bytes.
type callCounters struct {
	started atomic.Uint64 // the calls begun, of a blocking method; an inline method's count as they end
	sum     atomic.Uint64 // ns
	codes   [codeSlots]atomic.Uint64
	buckets [len(durationBounds) + 1]atomic.Uint64
}

// methodMetrics are the counters of one method (or of stats.UnknownMethod,
// stats.InvalidMethod).
type methodMetrics struct {
	name     string
	blocking bool // a method of the blocking class: its calls' starts are counted
	stripes  []callCounters
	exMu     sync.Mutex                               // guards ex
	ex       *[len(durationBounds) + 1]stats.Exemplar // the last traced call of each bucket (exemplar); nil until one
}

// exemplar keeps a traced call of mm that took d ns, in span, as its
// bucket's exemplar. Only traced calls come here — a share the tracer
// samples — so a lock is cheap enough; it allocates once per method.
func (mm *methodMetrics) exemplar(d int64, span SpanRef) {
	now := time.Now()
	mm.exMu.Lock()
	if mm.ex == nil {
		mm.ex = new([len(durationBounds) + 1]stats.Exemplar)
	}
	mm.ex[bucketOf(d)] = stats.Exemplar{TraceID: span.TraceID, SpanID: span.SpanID, Value: float64(max(d, 0)) / 1e9, Time: now}
	mm.exMu.Unlock()
}

// exemplars copies mm's exemplars into dst (len(durationBounds)+1 long),
// or returns nil when it has none.
func (mm *methodMetrics) exemplars(dst []stats.Exemplar) []stats.Exemplar {
	mm.exMu.Lock()
	defer mm.exMu.Unlock()
	if mm.ex == nil {
		return nil
	}
	if dst == nil {
		dst = make([]stats.Exemplar, len(mm.ex))
	}
	copy(dst, mm.ex[:])
	return dst
}

// batchCounters is one stripe of a table's batch counters.
type batchCounters struct {
	n     atomic.Uint64
	sizes [len(batchBounds) + 1]atomic.Uint64
	sum   atomic.Uint64
	_     [64 - 8]byte // a stripe's own cache lines
}

// Limits a table counts refusals of (LimitRefusals).
const (
	refuseConcurrency = iota
	refuseResponseSize
	refuseBatchLength
	refuseKinds
)

// tableMetrics are a table's counters.
type tableMetrics struct {
	mask     uint32                     // stripes - 1
	unknown  *methodMetrics             // stats.UnknownMethod
	invalid  *methodMetrics             // stats.InvalidMethod
	codes    [maxAppCodes]atomic.Int64  // the registry of other codes: 0 free, else code+1<<32
	batches  []batchCounters            // by stripe
	refusals [refuseKinds]atomic.Uint64 // by limit; rare: not striped
}

// stripes is the number of stripes of every counter: the number of
// CPUs, rounded up to a power of two, at most 32.
var stripes = func() int {
	n := min(runtime.GOMAXPROCS(0), 32)
	return 1 << bits.Len(uint(n-1))
}()

// stripeSeq hands each dispatch state a stripe, in turn.
var stripeSeq atomic.Uint32

func newTableMetrics() *tableMetrics {
	tm := &tableMetrics{mask: uint32(stripes - 1), batches: make([]batchCounters, stripes)}
	tm.unknown = newMethodMetrics(stats.UnknownMethod, false)
	tm.invalid = newMethodMetrics(stats.InvalidMethod, false)
	return tm
}

func newMethodMetrics(name string, blocking bool) *methodMetrics {
	return &methodMetrics{name: name, blocking: blocking, stripes: make([]callCounters, stripes)}
}

// slot returns the handled counter of code.
func (tm *tableMetrics) slot(code parser.Code) int {
	switch {
	case code == 0:
		return slotOK
	case code == parser.CodeParseError:
		return slotReserved
	case code <= -32600 && code >= -32603:
		return slotReserved + 1 + int(-32600-code)
	case code <= -32000 && code > -32000-serverSlotsOf:
		return slotServer + int(-32000-code)
	}
	key := int64(code) + 1<<32 // never 0
	for i := range tm.codes {
		c := &tm.codes[i]
		v := c.Load()
		if v == 0 && c.CompareAndSwap(0, key) {
			return slotApp + i
		}
		if v == key || v == 0 && c.Load() == key {
			return slotApp + i
		}
	}
	return slotOther
}

// slotCode returns the code of slot i, and false for the "other" slot or
// a free one.
func (tm *tableMetrics) slotCode(i int) (parser.Code, bool) {
	switch {
	case i == slotOK:
		return 0, true
	case i == slotReserved:
		return parser.CodeParseError, true
	case i < slotServer:
		return parser.Code(-32600 - (i - slotReserved - 1)), true
	case i < slotApp:
		return parser.Code(-32000 - (i - slotServer)), true
	case i < slotOther:
		v := tm.codes[i-slotApp].Load()
		return parser.Code(v - 1<<32), v != 0
	}
	return 0, false
}

// started counts a call of mm, a blocking method, started on stripe s.
func (mm *methodMetrics) started(s uint32) { mm.stripes[s].started.Add(1) }

// handled counts a call of mm finished on stripe s with code after d ns.
func (tm *tableMetrics) handled(mm *methodMetrics, s uint32, code parser.Code, d int64) {
	c := &mm.stripes[s]
	c.codes[tm.slot(code)].Add(1)
	c.buckets[bucketOf(d)].Add(1)
	if d > 0 {
		c.sum.Add(uint64(d))
	}
}

// bucketOf returns the duration bucket of d ns: from the first bucket
// that can hold a number of d's bit length (bucketFrom), at most a
// couple of bounds on, as bounds grow 2 to 2.5 times each.
func bucketOf(d int64) int {
	if d <= 0 {
		return 0
	}
	b := int(bucketFrom[bits.Len64(uint64(d))])
	for b < len(durationBounds) && d > durationBounds[b] {
		b++
	}
	return b
}

// bucketFrom is, by bit length L, the first bucket whose bound is at
// least the least number of L bits.
var bucketFrom = func() (t [64]uint8) {
	for l := 1; l < len(t); l++ {
		least := int64(1) << (l - 1)
		b := 0
		for b < len(durationBounds) && least > durationBounds[b] {
			b++
		}
		t[l] = uint8(b)
	}
	return t
}()

// tally adds up the successful calls of one method in a burst of
// messages given one Pending — an event loop's, used by one goroutine —
// without atomics; flush adds them to the method's counters. A burst
// of pipelined calls then costs the counters a few atomic adds, not
// three per call.
type tally struct {
	mm      *methodMetrics // the method tallied; nil when empty
	stripe  uint32
	n, sum  uint64
	touched uint32 // buckets with calls, by bit
	buckets [len(durationBounds) + 1]uint32
}

// add tallies a successful call of mm on stripe s that took d ns.
func (y *tally) add(mm *methodMetrics, s uint32, d int64) {
	if y.mm != mm || y.stripe != s {
		y.flush()
		y.mm, y.stripe = mm, s
	}
	b := bucketOf(d)
	y.n++
	y.sum += uint64(max(d, 0))
	y.buckets[b]++
	y.touched |= 1 << b
}

// flush adds the tally to its method's counters and empties it.
func (y *tally) flush() {
	mm := y.mm
	if mm == nil || y.n == 0 {
		y.mm = nil
		return
	}
	c := &mm.stripes[y.stripe]
	c.codes[slotOK].Add(y.n)
	c.sum.Add(y.sum)
	for t := y.touched; t != 0; t &= t - 1 {
		b := bits.TrailingZeros32(t)
		c.buckets[b].Add(uint64(y.buckets[b]))
		y.buckets[b] = 0
	}
	y.mm, y.n, y.sum, y.touched = nil, 0, 0, 0
}

// batch counts a batch of n elements on stripe s.
func (tm *tableMetrics) batch(s uint32, n int) {
	c := &tm.batches[s]
	c.n.Add(1)
	b := 0
	for b < len(batchBounds) && int64(n) > batchBounds[b] {
		b++
	}
	c.sizes[b].Add(1)
	c.sum.Add(uint64(n))
}

// refused counts a refusal for the limit kind.
func (t *Table) refused(kind int) {
	if o := t.obs; o != nil && o.metrics != nil {
		o.metrics.refusals[kind].Add(1)
	}
}

// Metrics calls fn with the metrics of each of the table's methods, in
// name order, then stats.UnknownMethod's and stats.InvalidMethod's, and returns the
// batch metrics; it reports false, calling nothing, when the table was
// made without Options.Metrics. The *stats.Method given to fn is
// reused: it is valid until fn returns. Safe from any goroutine, at any
// time; counters read while calls run may be a few calls apart.
func (t *Table) Metrics(fn func(*stats.Method)) (stats.Batch, bool) {
	o := t.obs
	if o == nil || o.metrics == nil {
		return stats.Batch{}, false
	}
	tm := o.metrics
	t.mu.Lock()
	ms := make([]*methodMetrics, 0, len(t.methods)+2)
	for _, m := range t.methods {
		if m.stats != nil {
			ms = append(ms, m.stats)
		}
	}
	t.mu.Unlock()
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	ms = append(ms, tm.unknown, tm.invalid)
	var mm stats.Method
	mm.Duration.Buckets = make([]uint64, len(durationBounds)+1)
	var codes [codeSlots]uint64
	var ex []stats.Exemplar // reused, as mm is
	for _, s := range ms {
		mm.Method, mm.Started, mm.Handled = s.name, 0, mm.Handled[:0]
		clear(codes[:])
		clear(mm.Duration.Buckets)
		var sum, started uint64
		for i := range s.stripes {
			c := &s.stripes[i]
			sum += c.sum.Load()
			for k := range codes {
				codes[k] += c.codes[k].Load()
			}
			for k := range mm.Duration.Buckets {
				mm.Duration.Buckets[k] += c.buckets[k].Load()
			}
		}
		for i := range s.stripes {
			// After the ends: a call counts its start before its end, so
			// the starts read now are never fewer than the ends read.
			started += s.stripes[i].started.Load()
		}
		other := uint64(0)
		for k, n := range codes {
			if n == 0 {
				continue
			}
			code, ok := tm.slotCode(k)
			if !ok {
				other += n
				continue
			}
			mm.Handled = append(mm.Handled, stats.CodeCount{Code: code, Count: n})
		}
		sort.Slice(mm.Handled, func(i, j int) bool {
			a, b := mm.Handled[i].Code, mm.Handled[j].Code
			return a == 0 || b != 0 && a < b
		})
		if other > 0 {
			mm.Handled = append(mm.Handled, stats.CodeCount{Other: true, Count: other})
		}
		mm.Duration.Count = 0
		for _, n := range mm.Duration.Buckets {
			mm.Duration.Count += n
		}
		mm.Started = mm.Duration.Count // an inline call starts and ends in one go
		if s.blocking {
			mm.Started = started
		}
		mm.Duration.Sum = float64(sum) / 1e9
		mm.Duration.Exemplars = nil
		if e := s.exemplars(ex); e != nil {
			ex, mm.Duration.Exemplars = e, e
		}
		fn(&mm)
	}
	var b stats.Batch
	b.Sizes.Buckets = make([]uint64, len(batchBounds)+1)
	var sum uint64
	for i := range tm.batches {
		c := &tm.batches[i]
		for k := range b.Sizes.Buckets {
			b.Sizes.Buckets[k] += c.sizes[k].Load()
		}
		sum += c.sum.Load()
	}
	for _, n := range b.Sizes.Buckets {
		b.Sizes.Count += n
	}
	b.Sizes.Sum = float64(sum)
	return b, true
}

// LimitRefusals returns the refusals the table counted, by limit. The
// counts of the rate and subscription limits are kept whether or not
// Options.Metrics is set; the others only with it. Safe from any goroutine.
func (t *Table) LimitRefusals() stats.Refusals {
	var r stats.Refusals
	r.Rate, r.RateDropped = t.limiter.Refusals()
	_, r.Subscriptions = t.subscriptionCounts()
	if o := t.obs; o != nil && o.metrics != nil {
		n := &o.metrics.refusals
		r.Concurrency = n[refuseConcurrency].Load()
		r.ResponseSize = n[refuseResponseSize].Load()
		r.BatchLength = n[refuseBatchLength].Load()
	}
	return r
}
