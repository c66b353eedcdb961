package bench

// NOTE: a worker is one connection. It keeps up to Config.Pipeline
// requests in flight: it writes every request it may send in one write,
// reads what has arrived, frames and checks the replies (also those that
// come when nothing is in flight), and records the latency of each
// request whose replies are all in. The closed loop drives workers from
// gnet event loops (loop.go), the open loop from a goroutine each (run).
// Request and reply buffers, and the per-slot bitsets of calls seen, are
// allocated once: a request costs no allocation in steady state.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// worker is one connection.
type worker struct {
	r     *runner
	idx   int
	conn  net.Conn
	wbuf  []byte
	rbuf  []byte
	chunk []byte // a fragmented WebSocket message
	pong  []byte // WebSocket pongs to send
	// chunkDeflated: the fragmented message in chunk had RSV1 set.
	chunkDeflated bool
	// deflate: the WebSocket connection negotiated permessage-deflate;
	// set at each (re)dial.
	deflate bool
	dec     decoder // inflates compressed replies (compress.go)
	next    uint64  // next id
	mi      int     // next message of the rotation
	queue   []inflight
	head    int      // oldest in flight, in queue (a ring)
	n       int      // requests in flight
	seen    []uint64 // the ring slots' bitsets, words each; allocated once
	words   int      // words of seen per slot: enough for the largest message
	sent    int64
	// late: open loop, past the end: what push sends now is late.
	late bool
	// broken: the connection must be closed (event-loop mode).
	broken bool
	frame  parser.Framer
	resp   http1.ResponseReader // frames HTTP replies; reset with rbuf
	hist   *hdrhistogram.Histogram

	// Counters, read by the progress line: atomic.
	done   atomic.Int64 // requests answered, measured
	calls  atomic.Int64 // calls answered or notifications sent, measured
	errors atomic.Int64 // errors, measured
	latSum atomic.Int64 // latencies recorded, µs, summed (the time series)
	latN   atomic.Int64 // latencies recorded
	latMax atomic.Int64 // the largest since the series' last sample, µs (swapped to 0 by it)

	byKind [len(errKinds)]atomic.Int64 // errors by kind (errKinds), measured, for the live line

	rng     *rand.Rand     // the workload's generators' draws
	trace   *rand.Rand     // the traceparent draws (traceparent.go); nil when Config.TraceSample is 0
	body    []byte         // a message with generators, built before its length is written
	mstats  []methodCounts // by workload call (runner.specs); owned by the worker until it ends
	offered int64          // requests due in the measured window, sent (in time or late) or not; owned likewise

	errs   map[string]int64  // by kind; owned by the worker until it ends
	detail map[string]string // the first error's text, by kind (failWith); owned likewise
	codes  map[int64]int64   // error replies by JSON-RPC code, at most maxErrorCodes of them; owned likewise
	others int64             // error replies of codes past those

	// Wire counts over the whole run, warm-up included; owned by the
	// worker until it ends. wireIn and wireOut are the bytes read from
	// and written to the connection (above TLS); answered counts the
	// requests whose replies are all in (and, on a stream, messages of
	// notifications only, which get none), measured or not; compressed
	// the replies that came compressed and were decoded.
	wireIn, wireOut, answered, compressed int64
}

// newWorker returns connection idx of r, its buffers allocated.
func newWorker(r *runner, idx int) *worker {
	size := ringSize(r.cfg.Pipeline)
	words := max(1, (maxHoles(r.msgs)+63)/64)
	w := &worker{
		r: r, idx: idx, errs: map[string]int64{}, detail: map[string]string{}, codes: map[int64]int64{},
		rng:    rand.New(rand.NewPCG(uint64(idx)+1, uint64(time.Now().UnixNano()))),
		trace:  newTraceRand(r.cfg.TraceSample),
		mstats: make([]methodCounts, len(r.specs)),
		hist:   hdrhistogram.New(histMin, histMax, histDigits),
		queue:  make([]inflight, size), seen: make([]uint64, size*words), words: words,
		rbuf: make([]byte, 0, 64<<10),
	}
	w.frame.MaxSize = maxMessage
	w.resp.MaxBody = maxMessage
	return w
}

// dial (re)opens the worker's connection.
func (w *worker) dial() bool {
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	c, err := net.DialTimeout(w.r.t.network, w.r.t.address, 5*time.Second)
	if err != nil {
		w.failWith(ErrConnect, err, true)
		return false
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if w.r.tls != nil {
		tc := tls.Client(c, w.r.tls)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			_ = c.Close()
			w.failWith(ErrTLS, err, true)
			return false
		}
		c = tc
	}
	if w.r.t.ws {
		deflate, err := handshakeWS(c, &w.r.t, w.upgradeHeader(), w.r.cfg.WSCompression, 5*time.Second)
		if err != nil {
			_ = c.Close()
			w.failWith(ErrWebSocket, err, true)
			return false
		}
		w.deflate = deflate
	}
	w.conn = c
	w.rbuf = w.rbuf[:0]
	w.frame.Reset()
	w.resp.Reset()
	return true
}

// fail counts an error (when measured).
func (w *worker) fail(kind string, measured bool) {
	if measured {
		w.errs[kind]++
		w.errors.Add(1)
		w.byKind[errKind(kind)].Add(1)
	}
}

// failWith counts an error whose cause is err, and keeps the text of
// the first one of its kind.
func (w *worker) failWith(kind string, err error, measured bool) {
	if measured && err != nil && w.detail[kind] == "" {
		w.detail[kind] = err.Error()
	}
	w.fail(kind, measured)
}

// errServerClosed is the cause of a transport error when the server
// closed the connection; errClosedInFlight when it said so (Connection:
// close) with requests still in flight.
var (
	errServerClosed   = errors.New("the server closed the connection")
	errClosedInFlight = errors.New("the server closed the connection (Connection: close) with requests in flight")
)

// note keeps err's text as the first cause of errors of kind, unless one
// is kept already; io.EOF, or nil, is errServerClosed.
func (w *worker) note(kind string, err error) {
	if w.detail[kind] != "" {
		return
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = errServerClosed
	}
	w.detail[kind] = err.Error()
}

// countCode counts an error reply of code.
func (w *worker) countCode(code int64) {
	if _, ok := w.codes[code]; ok || len(w.codes) < maxErrorCodes {
		w.codes[code]++
	} else {
		w.others++
	}
}

// runClosed is a closed loop on the worker's own goroutine, for targets
// the event loops cannot carry (TLS): it keeps Pipeline requests in
// flight, sending a new one for each reply, and after the end waits for
// those in flight up to Timeout, then counts what is left as timeouts.
func (w *worker) runClosed() {
	r := w.r
	for {
		ending := r.stopping.Load() || r.halted.Load()
		if w.conn == nil {
			if ending {
				return
			}
			if !w.dial() {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		if out := w.fill(); len(out) > 0 {
			_ = w.conn.SetWriteDeadline(time.Now().Add(r.cfg.Timeout))
			n, err := w.conn.Write(out)
			w.wireOut += int64(n)
			if err != nil {
				w.note(ErrTransport, err)
				w.lost(ErrTransport)
				continue
			}
		}
		if w.n == 0 {
			if ending || r.halted.Load() {
				return
			}
			continue
		}
		deadline := w.oldest().intended.Add(r.cfg.Timeout)
		if r.timed() {
			if lim := r.end.Add(r.cfg.Timeout); deadline.After(lim) {
				deadline = lim // never overrun the window by more than Timeout
			}
		}
		err := w.readSome(deadline)
		if err == nil || w.conn == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			w.lost(ErrTimeout) // the oldest is overdue, or the end plus Timeout has come
			if r.stopping.Load() || r.halted.Load() {
				return
			}
			continue
		}
		w.note(ErrTransport, err)
		w.lost(ErrTransport)
	}
}

// run is the worker's open loop: it sends each request at its intended
// time, when a pipeline slot is free, and reads replies in between (and
// whatever comes when nothing is in flight). After the end it still sends
// the requests that were due in the window as slots free up, and waits
// for the replies in flight up to their intended time plus Timeout (never
// past the end plus Timeout); then endOpen counts what is left.
func (w *worker) run(t0 time.Time) {
	r := w.r
	depth := r.cfg.Pipeline
	stagger := time.Duration(0)
	if r.perConn > 0 {
		// Spread the connections' schedules over one interval.
		stagger = time.Duration(float64(time.Second) / r.perConn * float64(w.idx) / float64(r.cfg.Conns))
	}
	nextAt := func(k int64) time.Time {
		return t0.Add(stagger + time.Duration(float64(k)/r.perConn*float64(time.Second)))
	}
	if p := r.plan; p != nil {
		off := float64(w.idx) / float64(r.cfg.Conns) // the connections take turns
		nextAt = func(k int64) time.Time {
			at := p.at(float64(k) + off)
			if at > 1e9 { // never (a schedule that ends at rate 0), or past any run
				return t0.Add(1e9 * time.Second)
			}
			return t0.Add(time.Duration(at * float64(time.Second)))
		}
	}
	defer func() { w.endOpen(nextAt) }()
	for {
		now := time.Now()
		past := r.timed() && !now.Before(r.end)
		halted := r.halted.Load() // ctx done, or the request budget spent
		ending := past || halted
		if w.conn == nil {
			if ending {
				return
			}
			if !w.dial() {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		// Send what is due, as far as the pipeline allows: after the end
		// too, for requests due in the window, so that a request due just
		// before the end is not "unsent" (those count in the latencies,
		// not in the throughput).
		w.late = past
		w.wbuf = append(w.wbuf[:0], w.pong...)
		w.pong = w.pong[:0]
		for w.n < depth && !halted {
			intended := nextAt(w.sent)
			if intended.After(now) || (r.timed() && !intended.Before(r.end)) {
				break // not due yet, or past the window
			}
			if !intended.Before(r.start) && !r.takeBudget() {
				r.halt() // Requests counts measured requests
				halted, ending = true, true
				break
			}
			w.push(intended)
		}
		if len(w.wbuf) > 0 {
			_ = w.conn.SetWriteDeadline(now.Add(r.cfg.Timeout))
			n, err := w.conn.Write(w.wbuf)
			w.wireOut += int64(n)
			if err != nil {
				w.lost(ErrTransport)
				continue
			}
		}
		if w.n == 0 && ending {
			return
		}
		// Read replies, or anything unasked for, until the next send is
		// due, a reply is overdue, or (ending) the last request in flight
		// has had its Timeout.
		deadline := now.Add(r.cfg.Timeout)
		switch {
		case ending:
			deadline = w.newest().intended.Add(r.cfg.Timeout)
		case w.n < depth:
			if next := nextAt(w.sent); next.Before(deadline) {
				deadline = next
			}
		}
		if r.timed() {
			if lim := r.end.Add(r.cfg.Timeout); deadline.After(lim) {
				deadline = lim // never overrun the window by more than Timeout
			}
			if !ending && w.n == 0 && deadline.After(r.end) {
				deadline = r.end
			}
		}
		err := w.readSome(deadline)
		if err == nil || w.conn == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			switch {
			case w.n == 0:
				// A send is due, or the end has come.
			case ending && !time.Now().Before(deadline):
				w.lost(ErrTimeout) // out of time: what is left timed out
				return
			case time.Since(w.oldest().intended) >= r.cfg.Timeout:
				w.lost(ErrTimeout)
			}
			continue
		}
		w.note(ErrTransport, err)
		w.lost(ErrTransport)
	}
}

// readSome reads what the connection has, until deadline at most, and
// checks the replies it completes; it returns the read's error. The read
// buffer grows when a reply fills it.
func (w *worker) readSome(deadline time.Time) error {
	_ = w.conn.SetReadDeadline(deadline)
	if len(w.rbuf) == cap(w.rbuf) {
		w.rbuf = append(w.rbuf, 0)[:len(w.rbuf)]
	}
	k, err := w.conn.Read(w.rbuf[len(w.rbuf):cap(w.rbuf)])
	w.rbuf = w.rbuf[:len(w.rbuf)+k]
	w.wireIn += int64(k)
	if k > 0 {
		w.consume()
	}
	return err
}

// endOpen ends an open loop: the requests due in the measured window that
// were never sent count as ErrUnsent, with their latency until now
// recorded; what is still in flight counts as timed out.
func (w *worker) endOpen(nextAt func(int64) time.Time) {
	r := w.r
	now := time.Now()
	if w.n > 0 {
		w.lost(ErrTimeout)
	}
	if !r.timed() {
		return // a request count: the budget sets what is sent
	}
	stop := r.end
	if now.Before(stop) {
		stop = now // stopped early
	}
	for k := w.sent; ; k++ {
		intended := nextAt(k)
		if !intended.Before(stop) {
			break
		}
		if intended.Before(r.start) {
			continue
		}
		w.fail(ErrUnsent, true)
		w.offered++
		w.record(now.Sub(intended).Microseconds())
	}
}

// appendMsg appends the body of m with ids from first: the one push
// built in w.body for a message with generators.
func (w *worker) appendMsg(dst []byte, m *message, first uint64) []byte {
	if m.gens {
		return append(dst, w.body...)
	}
	return m.appendBody(dst, first, nil)
}

// push writes the next request of the rotation into wbuf and puts it in
// flight.
func (w *worker) push(intended time.Time) {
	r := w.r
	mi := w.mi
	m := &r.msgs[mi]
	w.mi++
	if w.mi == len(r.msgs) {
		w.mi = 0
	}
	first := w.next
	if first == 0 {
		first = 1
	}
	w.next = first + uint64(m.holes)
	var n int // the body's length
	if m.gens {
		w.body = m.appendBody(w.body[:0], first, w.rng) // its generators' values set its length
		n = len(w.body)
	} else {
		n = m.bodyLen(first)
	}
	if r.t.http {
		w.wbuf = append(w.wbuf, r.head.Load().text...)
		w.wbuf = strconv.AppendInt(w.wbuf, int64(n), 10)
		if w.trace == nil {
			w.wbuf = append(w.wbuf, "\r\n\r\n"...)
		} else {
			w.wbuf = append(w.wbuf, "\r\n"...)
			w.wbuf = w.appendTraceparent(w.wbuf)
			w.wbuf = append(w.wbuf, "\r\n"...)
		}
		w.wbuf = w.appendMsg(w.wbuf, m, first)
	} else if r.t.ws {
		w.wbuf = appendWSHeader(w.wbuf, n)
		start := len(w.wbuf)
		w.wbuf = w.appendMsg(w.wbuf, m, first)
		ws.Cipher(w.wbuf[start:], wsMask, 0)
	} else {
		w.wbuf = w.appendMsg(w.wbuf, m, first)
		w.wbuf = append(w.wbuf, '\n')
	}
	w.sent++
	measured := !intended.Before(r.start)
	if measured && r.timed() && intended.Before(r.end) {
		w.offered++
	}
	if !r.t.http && m.holes == 0 {
		// A stream sends nothing back for notifications: done at once.
		w.answered++
		if measured && !w.late {
			w.done.Add(1)
			w.calls.Add(int64(m.calls))
		}
		return
	}
	i := (w.head + w.n) & (len(w.queue) - 1)
	seen := w.seen[i*w.words : i*w.words+(m.holes+63)/64]
	clear(seen)
	w.queue[i] = inflight{first: first, holes: m.holes, seen: seen, intended: intended, measured: measured, late: w.late, batch: m.batch, msg: int32(mi)}
	w.n++
	if measured && !w.late {
		w.calls.Add(int64(m.calls - m.holes)) // notifications need no reply
	}
}

// drop closes the connection, to be reopened, with nothing in flight.
func (w *worker) drop() {
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	w.broken = true
	w.rbuf = w.rbuf[:0]
	w.resp.Reset()
}
