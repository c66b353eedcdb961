package bench

// NOTE: the closed loop runs its connections on gnet event loops rather
// than a goroutine each: a burst of replies costs one read, and the
// requests that replace them one write, with no goroutine switch — the
// way wrk works, so that the tool is not what limits a fast server. The
// open loop, which must wake up at send times, uses goroutines (run.go).

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/jetrpc/jetrpc/pool/gnetlog"
	"github.com/panjf2000/gnet/v2"
)

// loopClient is the gnet event handler of a closed-loop run.
type loopClient struct {
	gnet.BuiltinEventEngine
	r       *runner
	cli     *gnet.Client
	ctx     context.Context // done when the run ends: redials give up
	wg      sync.WaitGroup  // a worker until it is done
	redials sync.WaitGroup  // redial goroutines; Add only under mu, while the worker is not done
	mu      sync.Mutex      // guards done and conns
	done    map[*worker]bool
	conns   map[*worker]gnet.Conn
}

// runLoops runs the closed loop of every worker, already dialed, and
// returns when all have finished: after the end it waits up to
// Config.Timeout for the replies in flight (a healthy server answers at
// once, so only a stalled one delays it), stops the event loops and the
// redials, then counts every measured request still in flight as a
// timeout, its latency until then recorded.
func (r *runner) runLoops(ctx context.Context, workers []*worker) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lc := &loopClient{r: r, ctx: ctx, done: map[*worker]bool{}, conns: map[*worker]gnet.Conn{}}
	cli, err := gnet.NewClient(lc,
		gnet.WithNumEventLoop(runtime.GOMAXPROCS(0)),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetlog.Logger{Level: slog.LevelError}), // its connections close and reopen by design
	)
	if err != nil {
		return err
	}
	if err := cli.Start(); err != nil {
		return err
	}
	lc.cli = cli
	lc.wg.Add(len(workers))
	for _, w := range workers {
		if w.conn == nil {
			lc.startRedial(w)
			continue
		}
		nc := w.conn
		w.conn = nil
		if _, err := cli.EnrollContext(nc, w); err != nil {
			w.failWith(ErrConnect, err, true)
			lc.finish(w)
		}
	}
	finished := make(chan struct{})
	go func() { lc.wg.Wait(); close(finished) }()
	// Wake every connection now and then, so that one whose reply is
	// overdue notices (a loop only runs when there is traffic).
	go func() {
		tick := time.NewTicker(max(r.cfg.Timeout/4, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-finished:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				lc.mu.Lock()
				for _, c := range lc.conns {
					_ = c.Wake(nil)
				}
				lc.mu.Unlock()
			}
		}
	}()
	if r.timed() {
		select {
		case <-finished:
		case <-ctx.Done():
		case <-time.After(time.Until(r.end)):
		}
	} else {
		// A request count: wait until the budget is spent.
		for !r.stopping.Load() {
			select {
			case <-finished:
			case <-time.After(10 * time.Millisecond):
				continue
			}
			break
		}
	}
	r.stopping.Store(true) // no more sends
	// Wait for the replies in flight, up to the timeout.
	select {
	case <-finished:
	case <-time.After(r.cfg.Timeout):
	}
	// Late callbacks change nothing; no redial starts after this.
	lc.mu.Lock()
	for _, w := range workers {
		lc.done[w] = true
	}
	lc.mu.Unlock()
	cancel()
	err = cli.Stop()
	lc.redials.Wait()
	// The loops and redials are over: the workers are ours again.
	for _, w := range workers {
		w.timeoutAll()
	}
	return err
}

// finish marks w as done, once.
func (lc *loopClient) finish(w *worker) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if !lc.done[w] {
		lc.done[w] = true
		lc.wg.Done()
	}
}

func (lc *loopClient) isDone(w *worker) bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.done[w]
}

// startRedial starts redialing w, unless w is done.
func (lc *loopClient) startRedial(w *worker) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.done[w] {
		return
	}
	lc.redials.Add(1)
	go lc.redial(w)
}

// redial reconnects w after its connection was lost; it gives up when the
// run stops. While it runs, w has no event loop: only redial touches it.
func (lc *loopClient) redial(w *worker) {
	defer lc.redials.Done()
	r := lc.r
	d := net.Dialer{Timeout: 5 * time.Second}
	for !r.stopping.Load() {
		kind := ErrConnect
		nc, err := d.DialContext(lc.ctx, r.t.network, r.t.address)
		if err == nil {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			if r.t.ws {
				var deflate bool
				if deflate, err = handshakeWS(nc, &r.t, w.upgradeHeader(), r.cfg.WSCompression, 5*time.Second); err != nil {
					_ = nc.Close()
					kind = ErrWebSocket
				}
				w.deflate = deflate
			}
			if err == nil {
				if _, err = lc.cli.EnrollContext(nc, w); err == nil {
					return
				}
			}
		}
		if r.stopping.Load() {
			break
		}
		w.failWith(kind, err, true)
		select {
		case <-lc.ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	lc.finish(w)
}

// fill appends the requests w may send now to wbuf. A message of
// notifications only does not fill a pipeline slot on a stream, but Run
// refuses a closed loop whose every message is one, so a call comes within
// len(msgs) messages: Pipeline×len(msgs) pushes always suffice.
func (w *worker) fill() []byte {
	r := w.r
	w.wbuf = append(w.wbuf[:0], w.pong...)
	w.pong = w.pong[:0]
	now := time.Now()
	for k := r.cfg.Pipeline * len(r.msgs); k > 0 && w.n < r.cfg.Pipeline && !r.stopping.Load(); k-- {
		if !now.Before(r.start) && !r.takeBudget() {
			r.halt() // Requests counts measured requests
			break
		}
		w.push(now)
	}
	return w.wbuf
}

// OnOpen starts the connection's traffic. Event loop only.
func (lc *loopClient) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	w, _ := c.Context().(*worker)
	if w == nil || lc.isDone(w) {
		return nil, gnet.Close
	}
	w.rbuf = w.rbuf[:0]
	w.frame.Reset()
	w.resp.Reset()
	w.broken = false
	lc.mu.Lock()
	lc.conns[w] = c
	lc.mu.Unlock()
	out := w.fill()
	if len(out) == 0 && w.n == 0 {
		lc.finish(w)
		return nil, gnet.Close
	}
	w.wireOut += int64(len(out))
	return out, gnet.None
}

// OnTraffic checks the replies read and sends their replacements. Event
// loop only.
func (lc *loopClient) OnTraffic(c gnet.Conn) gnet.Action {
	w, _ := c.Context().(*worker)
	if w == nil || lc.isDone(w) {
		return gnet.Close
	}
	if w.n > 0 && time.Since(w.oldest().intended) >= lc.r.cfg.Timeout {
		w.lost(ErrTimeout)
		return gnet.Close
	}
	in, _ := c.Peek(-1)
	if len(in) > 0 {
		w.wireIn += int64(len(in))
		w.rbuf = append(w.rbuf, in...)
		_, _ = c.Discard(len(in))
		w.consume()
	}
	if w.broken {
		return gnet.Close
	}
	if out := w.fill(); len(out) > 0 {
		n, _ := c.Write(out)
		w.wireOut += int64(n)
	}
	if w.n == 0 && lc.r.stopping.Load() {
		lc.finish(w)
		return gnet.Close
	}
	return gnet.None
}

// OnClose reconnects a worker whose connection was lost. Event loop only.
func (lc *loopClient) OnClose(c gnet.Conn, err error) gnet.Action {
	w, _ := c.Context().(*worker)
	if w == nil {
		return gnet.None
	}
	lc.mu.Lock()
	delete(lc.conns, w)
	lc.mu.Unlock()
	if lc.isDone(w) {
		return gnet.None
	}
	if !w.broken && (w.n > 0 || !lc.r.stopping.Load()) {
		w.note(ErrTransport, err)
		w.lost(ErrTransport)
	}
	lc.startRedial(w)
	return gnet.None
}
