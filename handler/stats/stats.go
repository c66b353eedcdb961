package stats

// NOTE: the snapshot types of a table's counters and the bounds of their
// histograms' buckets, which the table's own counters are sized by.

import (
	"time"

	"github.com/jetrpc/jetrpc/parser"
)

// Method names under which a table's metrics report the calls that reach
// no registered method.
const (
	// UnknownMethod: valid requests for a method the table does not have
	// (answered CodeMethodNotFound), whatever the name, so that clients
	// cannot grow the number of series.
	UnknownMethod = "(unknown)"
	// InvalidMethod: messages and batch elements answered before any
	// method could be looked up — not JSON, not a request (CodeParseError,
	// CodeInvalidRequest), or a batch too long.
	InvalidMethod = "(invalid)"
)

// durationBounds are the upper bounds of the duration histogram's
// buckets, in ns: from 1 µs (an inline call) to 10 s (a slow database
// call), three per decade. Calls longer than the last fall in the +Inf
// bucket.
var durationBounds = [...]time.Duration{
	1e3, 2.5e3, 5e3, 10e3, 25e3, 50e3, 100e3, 250e3, 500e3,
	1e6, 2.5e6, 5e6, 10e6, 25e6, 50e6, 100e6, 250e6, 500e6,
	1e9, 2.5e9, 5e9, 10e9,
}

// batchBounds are the upper bounds of the batch size histogram's
// buckets, in elements.
var batchBounds = [...]int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}

// DurationBuckets returns the upper bounds of the buckets of
// Method.Duration, in increasing order; the last bucket, for longer
// calls, has no bound (+Inf). The slice is the caller's.
func DurationBuckets() []time.Duration { return append([]time.Duration(nil), durationBounds[:]...) }

// BatchSizeBuckets returns the upper bounds of the buckets of
// Batch.Sizes, in elements; the last bucket has no bound (+Inf). The
// slice is the caller's.
func BatchSizeBuckets() []int { return append([]int(nil), batchBounds[:]...) }

// Method is what a table counted of one method's calls since it was made
// (handler.Table.Metrics). Every call counts: requests, notifications
// (with the code their reply would have had) and each batch element.
type Method struct {
	// Method is the registered name, UnknownMethod or InvalidMethod.
	Method string
	// Started counts the calls that began: found in a message and
	// planned. Started minus the sum of Handled is the calls in progress
	// (queued for a worker, or running).
	Started uint64
	// Handled counts the finished calls by the code of their reply: 0
	// for a result. Only codes seen are listed, in increasing order of
	// code, success first.
	Handled []CodeCount
	// Duration is the histogram of the calls' handling time: from when a
	// call began to run — its checks, then its method — to when its
	// reply was written; the wait for a worker is not part of it. A call
	// answered at its deadline counts its time until then (one the engine
	// answers is counted when its method returns: until then it is in
	// progress); one answered without running (busy, a batch over its
	// reply limit) counts 0.
	Duration Histogram
}

// CodeCount is the count of one code in Method.Handled.
type CodeCount struct {
	// Code is the JSON-RPC code, 0 for success. Meaningless when Other.
	Code parser.Code
	// Other is set for the calls with codes beyond the first 32 distinct
	// ones outside the reserved ranges that the table has seen: they are
	// counted together, so that the number of codes stays bounded.
	Other bool
	// Count is the number of calls.
	Count uint64
}

// Histogram is a distribution: Buckets[i] counts the observations at
// most the i-th bound (DurationBuckets, BatchSizeBuckets) and above the
// one before; the last bucket counts those above every bound. Count is
// the sum of Buckets.
type Histogram struct {
	Count   uint64
	Sum     float64 // seconds for durations, elements for batch sizes
	Buckets []uint64
	// Exemplars, when not nil, has one entry per bucket: the last traced
	// observation that fell in it (Exemplar.Valid), linking the bucket to
	// a trace. Only Method.Duration has them, for calls a tracer named
	// the span of (handler.Call.SetSpan).
	Exemplars []Exemplar
}

// Exemplar is one observation of a Histogram with the trace it belongs
// to: what OpenMetrics exposes as a bucket's exemplar (trace_id and
// span_id labels), so that a slow bucket links to a trace.
type Exemplar struct {
	TraceID [16]byte
	SpanID  [8]byte
	// Value is the observation: seconds for durations.
	Value float64
	// Time is when it was observed.
	Time time.Time
}

// Valid reports whether e holds an observation.
func (e *Exemplar) Valid() bool { return e.TraceID != [16]byte{} }

// Batch is what a table counted of its batches (handler.Table.Metrics).
type Batch struct {
	// Sizes is the histogram of their sizes in elements; Sizes.Count is
	// the number of batches. A batch too long to run counts with its
	// length.
	Sizes Histogram
}

// Refusals counts the calls and messages a table refused for a limit,
// since it was made (handler.Table.LimitRefusals).
type Refusals struct {
	// Rate: calls answered CodeLimitExceeded by the rate limits.
	Rate uint64
	// RateDropped: notifications the rate limits dropped.
	RateDropped uint64
	// Concurrency: calls answered CodeServerBusy for a method's
	// MaxConcurrent.
	Concurrency uint64
	// Subscriptions: subscribe calls answered CodeTooManySubscriptions.
	Subscriptions uint64
	// ResponseSize: replies replaced by CodeResponseTooLarge
	// (MaxResponseSize, MaxBatchResponseSize).
	ResponseSize uint64
	// BatchLength: batches longer than MaxBatch, refused whole.
	BatchLength uint64
}
