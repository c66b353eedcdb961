package bench

// NOTE: the closed loop runs its connections on gnet event loops rather
// than a goroutine each: a burst of replies costs one read, and the
// requests that replace them one write, with no goroutine switch — the
// way wrk works, so that the tool is not what limits a fast server. The
// open loop, which must wake up at send times, uses goroutines (run.go).

import (
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// loopClient is the gnet event handler of a closed-loop run.
type loopClient struct {
	gnet.BuiltinEventEngine
	r     *runner
	cli   *gnet.Client
	wg    sync.WaitGroup // a worker until it is done
	mu    sync.Mutex     // guards done and conns
	done  map[*worker]bool
	conns map[*worker]gnet.Conn
}

// runLoops runs the closed loop of every worker, already dialed, and
// returns when all have finished or the grace period after the end has
// passed.
func (r *runner) runLoops(workers []*worker) error {
	lc := &loopClient{r: r, done: map[*worker]bool{}, conns: map[*worker]gnet.Conn{}}
	cli, err := gnet.NewClient(lc,
		gnet.WithNumEventLoop(runtime.GOMAXPROCS(0)),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(quietGnet{}),
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
			go lc.redial(w)
			continue
		}
		nc := w.conn
		w.conn = nil
		if _, err := cli.EnrollContext(nc, w); err != nil {
			w.fail(ErrConnect, true)
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
			case <-tick.C:
				lc.mu.Lock()
				for _, c := range lc.conns {
					_ = c.Wake(nil)
				}
				lc.mu.Unlock()
			}
		}
	}()
	if r.cfg.Requests <= 0 {
		select {
		case <-finished:
		case <-time.After(time.Until(r.end) + 200*time.Millisecond):
		}
	} else {
		// A request count: wait for the replies, up to the timeout.
		for !r.stopping.Load() {
			select {
			case <-finished:
			case <-time.After(10 * time.Millisecond):
				continue
			}
			break
		}
		select {
		case <-finished:
		case <-time.After(r.cfg.Timeout):
		}
	}
	// Requests still waiting for longer than the timeout count as such.
	lc.mu.Lock()
	for _, w := range workers {
		if !lc.done[w] {
			w.timeoutsAtEnd()
		}
		lc.done[w] = true // late callbacks change nothing
	}
	lc.mu.Unlock()
	return cli.Stop()
}

// timeoutsAtEnd counts the measured requests in flight past the timeout.
func (w *worker) timeoutsAtEnd() {
	for i := range w.n {
		q := &w.queue[(w.head+i)&(len(w.queue)-1)]
		if q.measured && time.Since(q.intended) >= w.r.cfg.Timeout {
			w.fail(ErrTimeout, true)
		}
	}
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

// redial reconnects w after its connection was lost.
func (lc *loopClient) redial(w *worker) {
	for !lc.r.stopping.Load() {
		nc, err := net.DialTimeout(lc.r.t.network, lc.r.t.address, 5*time.Second)
		if err == nil {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			if lc.r.t.ws {
				if err = handshakeWS(nc, &lc.r.t, 5*time.Second); err != nil {
					_ = nc.Close()
				}
			}
			if err == nil {
				if _, err = lc.cli.EnrollContext(nc, w); err == nil {
					return
				}
			}
		}
		w.fail(ErrConnect, true) // racy only with other failures of w: w has no loop now
		time.Sleep(100 * time.Millisecond)
	}
	lc.finish(w)
}

// fill appends the requests w may send now to wbuf.
func (w *worker) fill() []byte {
	r := w.r
	w.wbuf = append(w.wbuf[:0], w.pong...)
	w.pong = w.pong[:0]
	now := time.Now()
	for w.n < r.cfg.Pipeline && !r.stopping.Load() {
		if !now.Before(r.start) && !r.takeBudget() {
			r.stopping.Store(true) // Requests counts measured requests
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
	w.broken = false
	lc.mu.Lock()
	lc.conns[w] = c
	lc.mu.Unlock()
	out := w.fill()
	if len(out) == 0 && w.n == 0 {
		lc.finish(w)
		return nil, gnet.Close
	}
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
		w.rbuf = append(w.rbuf, in...)
		_, _ = c.Discard(len(in))
		w.consume()
	}
	if w.broken {
		return gnet.Close
	}
	if out := w.fill(); len(out) > 0 {
		_, _ = c.Write(out)
	}
	if w.n == 0 && lc.r.stopping.Load() {
		lc.finish(w)
		return gnet.Close
	}
	return gnet.None
}

// OnClose reconnects a worker whose connection was lost. Event loop only.
func (lc *loopClient) OnClose(c gnet.Conn, _ error) gnet.Action {
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
		w.lost(ErrTransport)
	}
	go lc.redial(w)
	return gnet.None
}

// quietGnet silences gnet's own log.
type quietGnet struct{}

func (quietGnet) Debugf(string, ...any) {}
func (quietGnet) Infof(string, ...any)  {}
func (quietGnet) Warnf(f string, a ...any) {
	slog.Debug("gnet: warning", "msg", f)
}
func (quietGnet) Errorf(f string, a ...any) { slog.Debug("gnet: error", "msg", f) }
func (quietGnet) Fatalf(f string, a ...any) { slog.Error("gnet: fatal", "msg", f) }
