package bench

// NOTE: a worker's requests in flight, a ring of Config.Pipeline slots
// rounded up to a power of two (ringSize), oldest at worker.head, worker.n
// of them. push (worker.go) puts a request at the tail; a request leaves
// at the head, in order: finish when its replies are all in, lost when
// the connection is given up, timeoutAll at the end of a closed loop.
// Each slot owns its words of worker.seen, a bit per call answered, so
// that a duplicate reply shows; find walks the ring for the request that
// owns a call id. Latencies are recorded here (record), in microseconds.

import "time"

// inflight is a request sent and not fully answered.
type inflight struct {
	first    uint64    // id of its first call
	holes    int       // calls that want a reply
	got      int       // replies received
	seen     []uint64  // bit per call received: this slot's words of worker.seen
	intended time.Time // when it was meant to be sent
	measured bool      // sent after the warmup
	late     bool      // open loop: sent after the end; its latency counts, not its throughput
	batch    bool      // sent as an array: its reply must be one
	ended    bool      // stream: its one reply message is in, short or not
	failed   bool      // ErrHTTPStatus counted: its calls are not also missing
	shaped   bool      // ErrShape counted (once per request)
	msg      int32     // its message in the rotation (runner.msgs)
}

func ringSize(depth int) int {
	n := 1
	for n < depth {
		n <<= 1
	}
	return n
}

// oldest returns the oldest request in flight; only when w.n > 0.
func (w *worker) oldest() *inflight { return &w.queue[w.head] }

// newest returns the latest request in flight; only when w.n > 0.
func (w *worker) newest() *inflight { return &w.queue[(w.head+w.n-1)&(len(w.queue)-1)] }

// lost gives up on everything in flight and reopens the connection. Each
// measured request lost counts one error of kind (a timeout also records
// its latency until now); with none measured in flight, the event counts
// once while the run is measuring.
func (w *worker) lost(kind string) {
	now := time.Now()
	measured := 0
	for w.n > 0 {
		q := w.oldest()
		if q.measured {
			measured++
			w.fail(kind, true)
			if kind == ErrTimeout {
				w.record(now.Sub(q.intended).Microseconds())
			}
		}
		w.pop()
	}
	if measured == 0 {
		w.fail(kind, w.r.measuring(now))
	}
	w.drop()
}

// timeoutAll counts every measured request in flight as timed out, with
// its latency until now, at the end of a closed loop (its event loops
// stopped).
func (w *worker) timeoutAll() {
	now := time.Now()
	for ; w.n > 0; w.pop() {
		if q := w.oldest(); q.measured {
			w.fail(ErrTimeout, true)
			w.record(now.Sub(q.intended).Microseconds())
		}
	}
}

func (w *worker) pop() {
	w.head = (w.head + 1) & (len(w.queue) - 1)
	w.n--
}

// finish records the oldest request as answered.
// record records a measured latency, in µs: in the histogram, and in
// the running sum and maximum the run's time series samples.
func (w *worker) record(us int64) {
	us = max(us, 1)
	_ = w.hist.RecordValue(us)
	w.latSum.Add(us)
	w.latN.Add(1)
	for m := w.latMax.Load(); us > m && !w.latMax.CompareAndSwap(m, us); m = w.latMax.Load() {
	}
}

func (w *worker) finish() {
	q := w.oldest()
	w.answered++
	if q.measured {
		if q.got < q.holes && !q.failed {
			w.fail(ErrMissing, true)
		}
		w.record(time.Since(q.intended).Microseconds())
		if !q.late {
			w.done.Add(1)
			w.calls.Add(int64(q.got))
		}
	}
	w.pop()
}

// find returns the request in flight that owns call id.
func (w *worker) find(id uint64) *inflight {
	for i := range w.n {
		q := &w.queue[(w.head+i)&(len(w.queue)-1)]
		if id >= q.first && id < q.first+uint64(q.holes) {
			return q
		}
	}
	return nil
}
