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
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// Latencies are recorded in microseconds, from 1 µs to 60 s, with 3
// significant digits.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
)

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

// worker is one connection.
type worker struct {
	r     *runner
	idx   int
	conn  net.Conn
	wbuf  []byte
	rbuf  []byte
	chunk []byte // a fragmented WebSocket message
	pong  []byte // WebSocket pongs to send
	next  uint64 // next id
	mi    int    // next message of the rotation
	queue []inflight
	head  int      // oldest in flight, in queue (a ring)
	n     int      // requests in flight
	seen  []uint64 // the ring slots' bitsets, words each; allocated once
	words int      // words of seen per slot: enough for the largest message
	sent  int64
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
	body    []byte         // a message with generators, built before its length is written
	mstats  []methodCounts // by workload call (runner.specs); owned by the worker until it ends
	offered int64          // requests due in the measured window, sent (in time or late) or not; owned likewise

	errs   map[string]int64  // by kind; owned by the worker until it ends
	detail map[string]string // the first error's text, by kind (failWith); owned likewise
	codes  map[int64]int64   // error replies by JSON-RPC code, at most maxErrorCodes of them; owned likewise
	others int64             // error replies of codes past those
}

// newWorker returns connection idx of r, its buffers allocated.
func newWorker(r *runner, idx int) *worker {
	size := ringSize(r.cfg.Pipeline)
	words := max(1, (maxHoles(r.msgs)+63)/64)
	w := &worker{
		r: r, idx: idx, errs: map[string]int64{}, detail: map[string]string{}, codes: map[int64]int64{},
		rng:    rand.New(rand.NewPCG(uint64(idx)+1, uint64(time.Now().UnixNano()))),
		mstats: make([]methodCounts, len(r.specs)),
		hist:   hdrhistogram.New(histMin, histMax, histDigits),
		queue:  make([]inflight, size), seen: make([]uint64, size*words), words: words,
		rbuf: make([]byte, 0, 64<<10),
	}
	w.frame.MaxSize = maxMessage
	w.resp.MaxBody = maxMessage
	return w
}

// runner is one load test.
type runner struct {
	cfg      Config
	t        target
	msgs     []message
	start    time.Time // measurement starts (after warmup)
	end      time.Time // measurement ends (Duration mode)
	budget   atomic.Int64
	perConn  float64     // open loop: requests per second per connection
	plan     *plan       // open loop on a schedule (Config.Schedule): every connection's; immutable
	specs    []callSpec  // the workload's calls (Config.Workload); nil without one; immutable
	stopping atomic.Bool // no more sends (closed loop); set at the end, or with halted
	halted   atomic.Bool // stopped before the end: ctx done, or the request budget spent
	headers  []byte      // Config.Header as header lines; immutable
	tls      *tls.Config // a TLS target's client config, its ServerName set; nil otherwise
	// head is what every HTTP request starts with (header.go); never nil,
	// replaced whole when the JWT is re-minted: atomic only.
	head atomic.Pointer[httpHead]
}

// newRunner returns the runner of a load test; cfg is filled and checked.
func newRunner(cfg Config, t target, msgs []message) *runner {
	r := &runner{cfg: cfg, t: t, msgs: msgs, headers: appendHeaders(nil, cfg.Header)}
	if t.tls {
		r.tls = &tls.Config{}
		if cfg.TLS != nil {
			r.tls = cfg.TLS.Clone()
		}
		if r.tls.ServerName == "" {
			r.tls.ServerName, _, _ = net.SplitHostPort(t.address)
		}
	}
	r.setToken("")
	return r
}

// halt stops the run before its end. Safe from any goroutine.
func (r *runner) halt() {
	r.halted.Store(true)
	r.stopping.Store(true)
}

// Run runs the load test described by cfg and returns its result. After
// the measured window it waits up to cfg.Timeout for the replies in
// flight, then counts the measured requests left unanswered as timeouts
// (see the package doc). It stops early, with what it has measured, when
// ctx is done. It returns an error for a config it cannot run.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	t, err := parseTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	if err := cfg.checkHeaders(&t); err != nil {
		return nil, err
	}
	var msgs []message
	var specs []callSpec
	switch {
	case cfg.Workload != nil:
		if specs, err = cfg.Workload.compile(); err != nil {
			return nil, err
		}
		var rot []int
		if rot, err = rotation(cfg.Workload.Calls); err != nil {
			return nil, err
		}
		msgs = messagesFromWorkload(specs, rot, cfg.Batch)
	case cfg.Bodies != nil:
		msgs, err = messagesFromBodies(cfg.Bodies)
	default:
		msgs, err = messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Rate == 0 && len(cfg.Schedule) == 0 && !t.http && maxHoles(msgs) == 0 {
		return nil, errors.New("jetrpc bench: every message is a notification, and over a stream the server " +
			"never answers notifications: a closed loop has nothing to wait for; set -rate (an open loop)")
	}
	r := newRunner(cfg, t, msgs)
	r.specs = specs
	stopJWT, err := r.startJWT()
	if err != nil {
		return nil, err
	}
	defer stopJWT()
	r.budget.Store(cfg.Requests)
	if cfg.Rate > 0 {
		r.perConn = cfg.Rate / float64(cfg.Conns)
	}
	if len(cfg.Schedule) > 0 {
		r.plan = newPlan(cfg.Schedule, cfg.Conns, cfg.Warmup)
	}
	workers := make([]*worker, cfg.Conns)
	for i := range workers {
		workers[i] = newWorker(r, i)
	}
	// Connect first, so that connection setup is not measured.
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.dial() }()
	}
	wg.Wait()
	now := time.Now()
	r.start = now.Add(cfg.Warmup)
	r.end = r.start.Add(cfg.Duration)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); r.halt() }()
	watch := r.watchServer(ctx) // Config.MetricsURL; nil without one
	if cfg.Requests <= 0 {
		go func() {
			select {
			case <-time.After(time.Until(r.end)):
				r.stopping.Store(true)
			case <-ctx.Done():
			}
		}()
	}
	progressDone := make(chan struct{})
	if cfg.Progress != nil {
		go r.progress(workers, progressDone)
	}
	seriesDone, series := make(chan struct{}), make(chan []Sample, 1)
	go func() { series <- r.sampleSeries(workers, seriesInterval(cfg.Duration), seriesDone) }()
	switch {
	case cfg.Rate > 0 || r.plan != nil:
		for _, w := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); w.run(now) }()
		}
		wg.Wait()
	case t.tls: // the event loops read raw sockets
		for _, w := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); w.runClosed() }()
		}
		wg.Wait()
	default:
		if err := r.runLoops(ctx, workers); err != nil {
			close(progressDone)
			close(seriesDone)
			return nil, err
		}
	}
	stop := time.Now()
	close(progressDone)
	close(seriesDone)
	for _, w := range workers {
		if w.conn != nil {
			_ = w.conn.Close()
		}
	}
	res := r.result(workers, stop)
	res.Series = <-series
	res.Server = watch.view()
	return res, nil
}

func ringSize(depth int) int {
	n := 1
	for n < depth {
		n <<= 1
	}
	return n
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
		if err := handshakeWS(c, &w.r.t, w.r.upgradeHeader(), 5*time.Second); err != nil {
			_ = c.Close()
			w.failWith(ErrWebSocket, err, true)
			return false
		}
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

// takeBudget reserves one request of a Requests-limited run.
func (r *runner) takeBudget() bool {
	if r.cfg.Requests <= 0 {
		return true
	}
	return r.budget.Add(-1) >= 0
}

// measuring reports whether now is in the measured part of the run.
func (r *runner) measuring(now time.Time) bool {
	return !now.Before(r.start) && !r.stopping.Load()
}

// timed reports whether the run ends at a time (not after Requests).
func (r *runner) timed() bool { return r.cfg.Requests <= 0 }

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
			if _, err := w.conn.Write(out); err != nil {
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
			if _, err := w.conn.Write(w.wbuf); err != nil {
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
		w.wbuf = append(w.wbuf, "\r\n\r\n"...)
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

// consume frames and checks the replies in rbuf, also those that come
// when nothing is in flight.
func (w *worker) consume() {
	used := 0
	if w.r.t.ws {
		var bad bool
		if used, bad = w.consumeWS(w.rbuf); bad {
			w.lost(ErrWebSocket)
			return
		}
		n := copy(w.rbuf, w.rbuf[used:])
		w.rbuf = w.rbuf[:n]
		return
	}
	for used < len(w.rbuf) {
		in := w.rbuf[used:]
		if w.r.t.http {
			if w.n == 0 {
				w.lost(ErrUnexpectedReply) // bytes no request asked for
				return
			}
			resp, ok, err := w.resp.Next(in)
			if err != nil {
				w.lost(ErrHTTPFraming)
				return
			}
			if !ok {
				break
			}
			used += resp.Size
			w.checkHTTP(&resp)
			if resp.Close {
				// The server closes the connection after this reply (nginx
				// after keepalive_requests, a server that drains): not an
				// error, unless requests were in flight on it, which will
				// get no reply.
				if w.n > 0 {
					w.note(ErrTransport, errClosedInFlight)
					w.lost(ErrTransport)
				} else {
					w.drop()
				}
				return
			}
			continue
		}
		start, end, st := w.frame.Next(in)
		switch st {
		case parser.NeedMore:
			used += end
			goto done
		case parser.Complete:
		default:
			w.lost(ErrNotJSON)
			return
		}
		w.checkStream(in[start:end])
		used += end
	}
done:
	n := copy(w.rbuf, w.rbuf[used:])
	w.rbuf = w.rbuf[:n]
}

// checkHTTP checks the reply to the oldest request; only when w.n > 0.
func (w *worker) checkHTTP(resp *http1.Response) {
	q := w.oldest()
	switch {
	case q.holes == 0:
		if resp.Status != http1.StatusNoContent && (resp.Status != http1.StatusOK || len(resp.Body) != 0) {
			w.fail(ErrHTTPStatus, q.measured)
		}
	case resp.Status != http1.StatusOK:
		w.fail(ErrHTTPStatus, q.measured)
		q.failed = true // the status says it all: no "missing reply" on top
	case w.r.cfg.NoCheck:
		q.got = q.holes
	default:
		ok, array := eachReply(resp.Body, func(it replyItem) { w.match(q, it) })
		switch {
		case !ok:
			w.fail(ErrNotJSON, q.measured)
		case array != q.batch:
			w.fail(ErrShape, q.measured)
		}
	}
	w.finish()
}

// checkStream matches one reply message to its request, which on a
// stream need not be the oldest. A message with nothing in flight, or
// with a null id, is a reply to no request.
func (w *worker) checkStream(msg []byte) {
	if w.r.cfg.NoCheck {
		// One reply message per request, in order.
		if w.n == 0 {
			w.fail(ErrUnexpectedReply, w.r.measuring(time.Now())) // a message no request asked for
			return
		}
		w.oldest().got = w.oldest().holes
		w.finish()
		return
	}
	var target *inflight
	items := 0
	ok, array := eachReply(msg, func(it replyItem) {
		items++
		if target == nil {
			if it.idOK {
				target = w.find(it.id)
			}
			if target == nil {
				kind := ErrUnknownID
				if it.idNull || w.n == 0 {
					kind = ErrUnexpectedReply
				}
				w.fail(kind, w.r.measuring(time.Now()))
				return
			}
		}
		if it.idNull {
			w.fail(ErrUnexpectedReply, target.measured)
			return
		}
		w.match(target, it)
	})
	switch {
	case !ok:
		w.fail(ErrNotJSON, w.r.measuring(time.Now()))
		return
	case items == 0:
		w.fail(ErrNotJSONRPC, w.r.measuring(time.Now())) // an empty array answers nothing
		return
	case target == nil:
		return
	}
	if array != target.batch && !target.shaped {
		w.fail(ErrShape, target.measured)
		target.shaped = true
	}
	if array && target.batch {
		target.ended = true // a batch's reply is one message: what is missing now stays missing
	}
	// Requests complete in order of their last reply; finish the ones at
	// the head that are complete.
	for w.n > 0 && (w.oldest().got >= w.oldest().holes || w.oldest().ended) {
		w.finish()
	}
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

// match checks one reply object against the request q.
func (w *worker) match(q *inflight, it replyItem) {
	inRange := it.idOK && it.id >= q.first && it.id < q.first+uint64(q.holes)
	var spec *callSpec // the workload's call it answers
	var counts *methodCounts
	if inRange && w.r.specs != nil {
		si := w.r.msgs[q.msg].specs[it.id-q.first]
		spec, counts = &w.r.specs[si], &w.mstats[si]
	}
	expectError := w.r.cfg.ExpectError
	if spec != nil && spec.expect != nil {
		expectError = spec.expect.Error != nil
	}
	switch {
	case !it.valid:
		w.fail(ErrNotJSONRPC, q.measured)
		if !inRange {
			return
		}
	case !inRange:
		w.fail(ErrUnknownID, q.measured)
		return
	case it.isError && !expectError:
		w.fail(ErrUnexpectedError, q.measured)
	case !it.isError && expectError:
		w.fail(ErrUnexpectedOK, q.measured)
	case spec != nil && spec.expect != nil && (it.isError && it.code != *spec.expect.Error || !it.isError && !equalJSONText(it.result, spec.result)):
		w.fail(ErrWrongReply, q.measured)
		if q.measured {
			counts.wrong++
		}
	}
	if it.isError && it.valid && q.measured {
		w.countCode(it.code)
	}
	if counts != nil && q.measured && it.valid {
		counts.replies++
		if it.isError {
			counts.errors++
			counts.count(it.code)
		}
	}
	k := it.id - q.first
	word, bit := k/64, uint64(1)<<(k%64)
	if q.seen[word]&bit != 0 {
		w.fail(ErrDuplicate, q.measured)
		return
	}
	q.seen[word] |= bit
	q.got++
}

// progress prints a line a second.
func (r *runner) progress(workers []*worker, done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last int64
	for {
		select {
		case <-done:
			fmt.Fprint(r.cfg.Progress, "\r\033[K")
			return
		case now := <-tick.C:
			var reqs, errs int64
			var kinds [len(errKinds)]int64
			for _, w := range workers {
				reqs += w.done.Load()
				errs += w.errors.Load()
				for i := range kinds {
					kinds[i] += w.byKind[i].Load()
				}
			}
			phase := "measuring"
			switch {
			case now.Before(r.start):
				phase = "warming up"
			case r.timed() && !now.Before(r.end):
				phase = "waiting for replies"
			}
			fmt.Fprintf(r.cfg.Progress, "\r\033[K%s %5.1fs  %9d req/s  %d requests  %d errors%s",
				phase, time.Since(r.start).Seconds(), reqs-last, reqs, errs, kindsText(kinds[:]))
			last = reqs
		}
	}
}

// kindsText says the errors by kind, for the live line: " (connect 3,
// timeout 1)", or "" for none.
func kindsText(kinds []int64) string {
	var b strings.Builder
	for i, n := range kinds {
		if n == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", errKinds[i], n)
	}
	if b.Len() > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// IsTerminal reports whether f is a terminal (for the progress line).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
