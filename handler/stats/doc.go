// Package stats holds what a handler.Table counted of its calls, as its
// readers get it: the metrics of each method and of the batches
// (handler.Table.Metrics, with handler.Options.Metrics set) and the
// refusals by limit (handler.Table.LimitRefusals). An exporter — such as
// package engine/metrics, which turns them into Prometheus series —
// reads them; a service built on package handler does not need this
// package.
//
// # Overview
//
// Method is one method's counters: the calls started, the calls handled
// by the code of their reply (CodeCount), and a Histogram of their
// durations with the bounds of DurationBuckets. Batch is the histogram
// of the batches' sizes (BatchSizeBuckets). Refusals counts the calls a
// limit refused. The calls that reach no registered method are counted
// under UnknownMethod and InvalidMethod, so that clients cannot grow
// the number of series.
//
// # Lifetimes
//
// Values are snapshots, owned by their reader, except the *Method given
// to Table.Metrics's callback, which is reused: it is valid until the
// callback returns.
package stats
