package bench

// NOTE: one goroutine per connection. Each keeps up to Config.Pipeline
// requests in flight: it writes every request it may send in one write,
// reads what has arrived, frames and checks the replies, and records the
// latency of each request whose replies are all in. Request and reply
// buffers are reused: a request costs no allocation in steady state.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/parser"
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
	seen     uint64    // bit per call received (first 64 calls)
	intended time.Time // when it was meant to be sent
	measured bool      // sent after the warmup
}

// worker is one connection.
type worker struct {
	r     *runner
	idx   int
	conn  net.Conn
	wbuf  []byte
	rbuf  []byte
	chunk []byte // a dechunked HTTP body, or a fragmented WebSocket message
	pong  []byte // WebSocket pongs to send
	next  uint64 // next id
	mi    int    // next message of the rotation
	queue []inflight
	head  int // oldest in flight, in queue (a ring)
	n     int // requests in flight
	sent  int64
	// broken: the connection must be closed (event-loop mode).
	broken bool
	frame  parser.Framer
	hist   *hdrhistogram.Histogram

	// Counters, read by the progress line: atomic.
	done   atomic.Int64 // requests answered, measured
	calls  atomic.Int64 // calls answered or notifications sent, measured
	errors atomic.Int64 // errors, measured

	errs map[string]int64 // by kind; owned by the worker until it ends
}

// runner is one load test.
type runner struct {
	cfg      Config
	t        target
	msgs     []message
	start    time.Time // measurement starts (after warmup)
	end      time.Time // measurement ends (Duration mode)
	budget   atomic.Int64
	perConn  float64 // open loop: requests per second per connection
	stopping atomic.Bool
}

// Run runs the load test described by cfg and returns its result. It
// stops early, with what it has measured, when ctx is done.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	t, err := parseTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	var msgs []message
	if cfg.Bodies != nil {
		msgs, err = messagesFromBodies(cfg.Bodies)
	} else {
		msgs, err = messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
	}
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, t: t, msgs: msgs}
	r.budget.Store(cfg.Requests)
	if cfg.Rate > 0 {
		r.perConn = cfg.Rate / float64(cfg.Conns)
	}
	workers := make([]*worker, cfg.Conns)
	for i := range workers {
		w := &worker{r: r, idx: i, errs: map[string]int64{}, hist: hdrhistogram.New(histMin, histMax, histDigits)}
		w.queue = make([]inflight, ringSize(cfg.Pipeline))
		w.rbuf = make([]byte, 0, 64<<10)
		w.frame.MaxSize = 64 << 20
		workers[i] = w
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
	go func() { <-ctx.Done(); r.stopping.Store(true) }()
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
	if cfg.Rate > 0 {
		for _, w := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); w.run(now) }()
		}
		wg.Wait()
	} else if err := r.runLoops(workers); err != nil {
		close(progressDone)
		return nil, err
	}
	stop := time.Now()
	close(progressDone)
	for _, w := range workers {
		if w.conn != nil {
			_ = w.conn.Close()
		}
	}
	return r.result(workers, stop), nil
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
		w.fail(ErrConnect, true)
		return false
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if w.r.t.ws {
		if err := handshakeWS(c, &w.r.t, 5*time.Second); err != nil {
			_ = c.Close()
			w.fail(ErrWebSocket, true)
			return false
		}
	}
	w.conn = c
	w.rbuf = w.rbuf[:0]
	w.frame.Reset()
	return true
}

// fail counts an error (when measured).
func (w *worker) fail(kind string, measured bool) {
	if measured {
		w.errs[kind]++
		w.errors.Add(1)
	}
}

// takeBudget reserves one request of a Requests-limited run.
func (r *runner) takeBudget() bool {
	if r.cfg.Requests <= 0 {
		return true
	}
	return r.budget.Add(-1) >= 0
}

// run is the worker's loop.
func (w *worker) run(t0 time.Time) {
	r := w.r
	depth := r.cfg.Pipeline
	stagger := time.Duration(0)
	if r.perConn > 0 {
		// Spread the connections' schedules over one interval.
		stagger = time.Duration(float64(time.Second) / r.perConn * float64(w.idx) / float64(r.cfg.Conns))
	}
	for {
		if w.conn == nil {
			if r.stopping.Load() || !w.dial() {
				if r.stopping.Load() {
					return
				}
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		// Send what may be sent.
		w.wbuf = append(w.wbuf[:0], w.pong...)
		w.pong = w.pong[:0]
		now := time.Now()
		for w.n < depth && !r.stopping.Load() {
			intended := now
			if r.perConn > 0 {
				intended = t0.Add(stagger + time.Duration(float64(w.sent)/r.perConn*float64(time.Second)))
				if intended.After(now) {
					break // not due yet
				}
			}
			if !intended.Before(r.start) && !r.takeBudget() {
				r.stopping.Store(true) // Requests counts measured requests
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
		if w.n == 0 {
			if r.stopping.Load() {
				return
			}
			if r.perConn > 0 {
				// Open loop, nothing in flight: wait for the next send.
				next := t0.Add(stagger + time.Duration(float64(w.sent)/r.perConn*float64(time.Second)))
				time.Sleep(time.Until(next))
			}
			continue
		}
		// Read replies; an open loop also wakes up for its next send.
		deadline := now.Add(r.cfg.Timeout)
		if r.perConn > 0 && w.n < depth {
			if next := t0.Add(stagger + time.Duration(float64(w.sent)/r.perConn*float64(time.Second))); next.Before(deadline) {
				deadline = next
			}
		}
		if r.stopping.Load() && r.cfg.Requests <= 0 {
			// Past the end: wait briefly for what is in flight, uncounted.
			if d := now.Add(200 * time.Millisecond); d.Before(deadline) {
				deadline = d
			}
		}
		_ = w.conn.SetReadDeadline(deadline)
		if len(w.rbuf) == cap(w.rbuf) {
			w.rbuf = append(w.rbuf, 0)[:len(w.rbuf)]
		}
		k, err := w.conn.Read(w.rbuf[len(w.rbuf):cap(w.rbuf)])
		w.rbuf = w.rbuf[:len(w.rbuf)+k]
		if k > 0 {
			w.consume()
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if r.stopping.Load() && r.cfg.Requests <= 0 {
					return
				}
				if time.Since(w.oldest().intended) >= r.cfg.Timeout {
					w.lost(ErrTimeout)
				}
				continue
			}
			if err == io.EOF || !r.stopping.Load() {
				w.lost(ErrTransport)
			}
		}
	}
}

// push writes the next request of the rotation into wbuf and puts it in
// flight.
func (w *worker) push(intended time.Time) {
	r := w.r
	m := &r.msgs[w.mi]
	w.mi++
	if w.mi == len(r.msgs) {
		w.mi = 0
	}
	first := w.next
	if first == 0 {
		first = 1
	}
	w.next = first + uint64(m.holes)
	if r.t.http {
		w.wbuf = append(w.wbuf, "POST "...)
		w.wbuf = append(w.wbuf, r.t.path...)
		w.wbuf = append(w.wbuf, " HTTP/1.1\r\nHost: "...)
		w.wbuf = append(w.wbuf, r.t.host...)
		w.wbuf = append(w.wbuf, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		w.wbuf = strconv.AppendInt(w.wbuf, int64(m.bodyLen(first)), 10)
		w.wbuf = append(w.wbuf, "\r\n\r\n"...)
		w.wbuf = m.appendBody(w.wbuf, first)
	} else if r.t.ws {
		w.wbuf = appendWSHeader(w.wbuf, m.bodyLen(first))
		start := len(w.wbuf)
		w.wbuf = m.appendBody(w.wbuf, first)
		ws.Cipher(w.wbuf[start:], wsMask, 0)
	} else {
		w.wbuf = m.appendBody(w.wbuf, first)
		w.wbuf = append(w.wbuf, '\n')
	}
	w.sent++
	measured := !intended.Before(r.start)
	if !r.t.http && m.holes == 0 {
		// A stream sends nothing back for notifications: done at once.
		if measured {
			w.done.Add(1)
			w.calls.Add(int64(m.calls))
		}
		return
	}
	slot := &w.queue[(w.head+w.n)&(len(w.queue)-1)]
	*slot = inflight{first: first, holes: m.holes, intended: intended, measured: measured}
	w.n++
	if measured {
		w.calls.Add(int64(m.calls - m.holes)) // notifications need no reply
	}
}

func (w *worker) oldest() *inflight { return &w.queue[w.head] }

// lost gives up on everything in flight and reopens the connection.
func (w *worker) lost(kind string) {
	measured := false
	for w.n > 0 {
		q := w.oldest()
		measured = measured || q.measured
		w.pop()
	}
	w.fail(kind, measured || !w.r.stopping.Load())
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	w.broken = true
	w.rbuf = w.rbuf[:0]
}

func (w *worker) pop() {
	w.head = (w.head + 1) & (len(w.queue) - 1)
	w.n--
}

// finish records the oldest request as answered.
func (w *worker) finish() {
	q := w.oldest()
	if q.measured {
		if q.got < q.holes {
			w.fail(ErrMissing, true)
		}
		us := time.Since(q.intended).Microseconds()
		_ = w.hist.RecordValue(max(us, 1))
		w.done.Add(1)
		w.calls.Add(int64(q.got))
	}
	w.pop()
}

// consume frames and checks the replies in rbuf.
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
	for used < len(w.rbuf) && w.n > 0 {
		in := w.rbuf[used:]
		if w.r.t.http {
			resp, ok, bad := parseHTTPResponse(in, &w.chunk)
			if bad {
				w.lost(ErrHTTPFraming)
				return
			}
			if !ok {
				break
			}
			used += resp.size
			w.checkHTTP(&resp)
			if resp.close {
				w.lost(ErrTransport)
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

// checkHTTP checks the reply to the oldest request.
func (w *worker) checkHTTP(resp *httpResponse) {
	q := w.oldest()
	switch {
	case q.holes == 0:
		if resp.status != 204 && (resp.status != 200 || len(resp.body) != 0) {
			w.fail(ErrHTTPStatus, q.measured)
		}
	case resp.status != 200:
		w.fail(ErrHTTPStatus, q.measured)
	case w.r.cfg.NoCheck:
		q.got = q.holes
	default:
		if !eachReply(resp.body, func(it replyItem) { w.match(q, it) }) {
			w.fail(ErrNotJSON, q.measured)
		}
	}
	w.finish()
}

// checkStream matches one reply message to its request, which on a
// stream need not be the oldest.
func (w *worker) checkStream(msg []byte) {
	if w.r.cfg.NoCheck {
		// One reply message per request, in order.
		if w.n == 0 {
			w.fail(ErrUnexpectedReply, true) // a message no request asked for
			return
		}
		w.oldest().got = w.oldest().holes
		w.finish()
		return
	}
	var target *inflight
	ok := eachReply(msg, func(it replyItem) {
		if target == nil {
			target = w.find(it.id)
			if target == nil {
				w.fail(ErrUnknownID, true)
				return
			}
		}
		w.match(target, it)
	})
	if !ok {
		w.fail(ErrNotJSON, true)
		return
	}
	// Requests complete in order of their last reply; finish the ones at
	// the head that are complete.
	for w.n > 0 && w.oldest().got >= w.oldest().holes {
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
	switch {
	case !it.valid:
		w.fail(ErrNotJSONRPC, q.measured)
	case !it.idOK || it.id < q.first || it.id >= q.first+uint64(q.holes):
		w.fail(ErrUnknownID, q.measured)
		return
	case it.isError && !w.r.cfg.ExpectError:
		w.fail(ErrUnexpectedError, q.measured)
	case !it.isError && w.r.cfg.ExpectError:
		w.fail(ErrUnexpectedOK, q.measured)
	}
	k := it.id - q.first
	if k < 64 {
		if q.seen&(1<<k) != 0 {
			w.fail(ErrDuplicate, q.measured)
			return
		}
		q.seen |= 1 << k
	}
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
			for _, w := range workers {
				reqs += w.done.Load()
				errs += w.errors.Load()
			}
			phase := "measuring"
			if now.Before(r.start) {
				phase = "warming up"
			}
			fmt.Fprintf(r.cfg.Progress, "\r\033[K%s %5.1fs  %9d req/s  %d requests  %d errors",
				phase, time.Since(r.start).Seconds(), reqs-last, reqs, errs)
			last = reqs
		}
	}
}

// IsTerminal reports whether f is a terminal (for the progress line).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
