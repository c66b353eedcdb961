// Package pool holds the reusable resources of jetrpc: byte-buffer pools,
// one per purpose, and a bounded worker pool for blocking handlers and
// parallel batch elements.
//
// # Overview
//
// Buffers wraps github.com/valyala/bytebufferpool: each pool calibrates to
// the sizes it sees, so separate pools are kept for replies (Responses),
// copies of requests handed to workers (Requests) and the parts of a batch
// reply (Parts), lest one size mix calibrate away another's buffers.
//
// Workers is a fixed set of goroutines fed by a bounded queue. TrySubmit
// never blocks and never grows the queue: when it is full it returns false
// and the caller answers "server busy" at once. It wakes a parked worker
// only when no worker is looking for work, and a worker that takes a task
// wakes the next while more wait: a burst of tasks that do not block is
// run by a worker or two, one after the other, rather than a worker woken
// (and parked again) per task, and tasks that block still get a worker
// each.
//
// Its subpackages hold the process-level glue that more than one layer
// needs, so that each imports it downward: clock, the monotonic clock of
// the engine and the method table; fdlimit, which raises the limit on
// open files for the engine and for jetrpc bench's fan-out; gnetlog,
// which routes gnet's log to log/slog for the engine's event loops and
// the load generator's.
//
// # Concurrency
//
// Every method of Buffers and Workers is safe from any goroutine. A buffer
// obtained from Get belongs to the caller until Put.
//
// # Buffer lifetimes
//
// A buffer and every slice obtained from it must not be used after Put.
// Built with the jetrpcdebug tag, Put overwrites the contents with 0xDD so
// that a use after Put shows up as garbage in tests.
//
// # Limits
//
// Buffers over MaxPooled (DefaultMaxPooled, 64 KiB) are dropped by Put
// instead of pooled. Workers has DefaultWorkers goroutines and a queue of
// DefaultQueue tasks unless told otherwise.
package pool
