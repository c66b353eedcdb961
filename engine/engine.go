package engine

// NOTE: the Engine owns the listeners and a gnet client (its event loops,
// without gnet's own acceptor). Acceptor goroutines, one per listener,
// accept with Go's net package — which backs off on EMFILE instead of
// stopping, as gnet's acceptor does — and enroll each connection into an
// event loop. From then on everything about a connection happens on its
// loop (conn.go), except for messages run on workers, whose replies come
// back through the connection's done queue and one Wake per burst. A
// ticker goroutine keeps the Date header, the timeouts, and the
// connections waiting for their output to drain.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/panjf2000/gnet/v2"
)

// Engine serves a handler.Table on TCP and Unix listeners from gnet event
// loops. Create it with New, start it with Start or Run, stop it with
// Stop. Its methods are safe from any goroutine.
type Engine struct {
	table   *handler.Table // immutable
	opts    Options        // immutable after New
	workers *pool.Workers  // runs messages that need a worker
	ownPool bool           // workers was made by New

	cli       *gnet.Client
	listeners []net.Listener
	addrs     []net.Addr
	baseCtx   context.Context // passed to handlers; cancelled when Stop gives up waiting
	cancel    context.CancelFunc

	mu       sync.Mutex         // guards conns, loops, state
	conns    map[*conn]struct{} // open connections
	waiters  map[*conn]struct{} // connections waiting for their output to drain
	loops    map[gnet.EventLoop]*loopState
	state    int // stateNew, stateRunning, stateDraining, stateStopped
	nconns   atomic.Int64
	draining atomic.Bool
	now      atomic.Int64 // coarse clock (unix nanos), set by the ticker

	acceptWG sync.WaitGroup
	tickDone chan struct{}
	stopped  chan struct{} // closed when Stop has finished
	stopErr  error
	maxConns int
}

const (
	stateNew = iota
	stateRunning
	stateDraining
	stateStopped
)

// ErrNotRunning is returned by Stop on an engine that was never started.
var ErrNotRunning = errors.New("jetrpc: engine not running")

// New returns an engine serving t. It does not listen yet.
func New(t *handler.Table, opts ...Option) *Engine {
	e := &Engine{table: t, conns: map[*conn]struct{}{}, waiters: map[*conn]struct{}{}, loops: map[gnet.EventLoop]*loopState{}, stopped: make(chan struct{})}
	for _, o := range opts {
		o(&e.opts)
	}
	e.opts.fill()
	e.workers = e.opts.Workers
	e.now.Store(time.Now().UnixNano())
	return e
}

// Addrs returns the bound addresses of the listeners, in the order given,
// once Start has returned (a port 0 is resolved here).
func (e *Engine) Addrs() []net.Addr {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]net.Addr(nil), e.addrs...)
}

// Conns returns the number of open connections.
func (e *Engine) Conns() int { return int(e.nconns.Load()) }

// Start listens on every address and starts serving in the background.
func (e *Engine) Start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != stateNew {
		return errors.New("jetrpc: engine already started")
	}
	e.maxConns = e.opts.MaxConns
	if limit := raiseFileLimit(); limit > 0 && e.maxConns > limit {
		e.opts.Logger.Debug("jetrpc: connections capped by the file descriptor limit", "max_conns", limit)
		e.maxConns = limit
	}
	for _, a := range e.opts.Addrs {
		ln, err := e.listen(a)
		if err != nil {
			e.closeListeners()
			return err
		}
		e.listeners = append(e.listeners, ln)
		e.addrs = append(e.addrs, ln.Addr())
	}
	loops := e.opts.Loops
	if loops <= 0 {
		loops = runtime.GOMAXPROCS(0)
	}
	cli, err := gnet.NewClient(e,
		gnet.WithNumEventLoop(loops),
		gnet.WithLogger(gnetLogger{e.opts.Logger}),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
	)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		e.closeListeners()
		return fmt.Errorf("jetrpc: starting event loops: %w", err)
	}
	e.cli = cli
	if e.workers == nil {
		e.workers = pool.NewWorkers(0, -1)
		e.ownPool = true
	}
	e.baseCtx, e.cancel = context.WithCancel(context.Background())
	e.state = stateRunning
	e.tickDone = make(chan struct{})
	go e.ticker()
	for _, ln := range e.listeners {
		e.acceptWG.Add(1)
		go e.accept(ln)
	}
	return nil
}

// Run starts the engine and serves until ctx is done, then stops it
// gracefully, waiting at most 10 seconds for requests in flight.
func (e *Engine) Run(ctx context.Context) error {
	if err := e.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.Stop(stop)
}

// listen opens one listener.
func (e *Engine) listen(addr string) (net.Listener, error) {
	network, address := "tcp", addr
	switch {
	case strings.HasPrefix(addr, "tcp://"):
		address = strings.TrimPrefix(addr, "tcp://")
	case strings.HasPrefix(addr, "tcp4://"):
		network, address = "tcp4", strings.TrimPrefix(addr, "tcp4://")
	case strings.HasPrefix(addr, "tcp6://"):
		network, address = "tcp6", strings.TrimPrefix(addr, "tcp6://")
	case strings.HasPrefix(addr, "unix://"):
		network, address = "unix", strings.TrimPrefix(addr, "unix://")
		if fi, err := os.Stat(address); err == nil && fi.Mode()&os.ModeSocket != 0 && staleSocket(address) {
			_ = os.Remove(address) // left by an earlier run: nobody listens on it
		}
	case strings.Contains(addr, "://"):
		return nil, fmt.Errorf("jetrpc: unsupported address %q (use tcp:// or unix://)", addr)
	}
	lc := net.ListenConfig{}
	if e.opts.ReusePort && network != "unix" {
		lc.Control = setReusePort
	}
	ln, err := lc.Listen(context.Background(), network, address)
	if err != nil {
		return nil, fmt.Errorf("jetrpc: listen %s: %w", addr, err)
	}
	return ln, nil
}

// staleSocket reports whether the Unix socket at path has no listener:
// a connection to it is refused. A live socket is left alone, and Listen
// then fails with "address already in use".
func staleSocket(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

func (e *Engine) closeListeners() {
	for _, ln := range e.listeners {
		_ = ln.Close()
	}
}

// accept accepts connections until the listener is closed. Temporary
// errors, EMFILE among them, are retried after a growing pause: the
// engine never stops because it ran out of file descriptors.
func (e *Engine) accept(ln net.Listener) {
	defer e.acceptWG.Done()
	var pause time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if pause == 0 {
				pause = 5 * time.Millisecond
			} else if pause = 2 * pause; pause > time.Second {
				pause = time.Second
			}
			e.opts.Logger.Warn("jetrpc: accept failed; retrying", "err", err, "pause", pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if e.nconns.Add(1) > int64(e.maxConns) || e.draining.Load() {
			e.nconns.Add(-1) // over the limit (counted across listeners): refused at once
			_ = nc.Close()
			continue
		}
		if _, err := e.cli.EnrollContext(nc, nil); err != nil {
			e.nconns.Add(-1)
			e.opts.Logger.Warn("jetrpc: cannot enroll a connection", "err", err)
		}
	}
}

// stopGrace is how long Stop waits, once its context has ended and the
// handlers' contexts are cancelled, for the replies of those that return.
const stopGrace = 200 * time.Millisecond

// Stop stops accepting, lets the requests already received finish and
// their replies reach the wire, then closes every connection and the
// event loops. If ctx ends first, the handlers still running see their
// contexts cancelled; the replies of those that return within a short
// grace (200 ms) are still written, then the remaining connections are
// closed and ctx's error is returned. Stop must not be called from a handler running inline.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	switch e.state {
	case stateNew:
		e.mu.Unlock()
		return ErrNotRunning
	case stateDraining, stateStopped:
		e.mu.Unlock()
		<-e.stopped
		return e.stopErr
	}
	e.state = stateDraining
	e.draining.Store(true)
	e.closeListeners()
	conns := make([]*conn, 0, len(e.conns))
	for cs := range e.conns {
		conns = append(conns, cs)
	}
	e.mu.Unlock()
	e.acceptWG.Wait()
	for _, cs := range conns {
		_ = cs.gc.Wake(nil) // each one closes itself once done
	}
	var err error
	if !e.drained(ctx.Done()) {
		err = ctx.Err()
	}
	e.cancel()
	if err != nil {
		// The handlers still running see their context cancelled: those
		// that return at once (-32001) get a short grace for their replies
		// to reach the wire before the connections are closed.
		grace, cancel := context.WithTimeout(context.Background(), stopGrace)
		e.drained(grace.Done())
		cancel()
	}
	close(e.tickDone)
	_ = e.cli.Stop()
	if e.ownPool {
		if err == nil {
			e.workers.Close()
		} else {
			// ctx has ended: handlers that ignore their cancelled
			// context must not hold Stop; the pool closes when they
			// return.
			go e.workers.Close()
		}
	}
	e.mu.Lock()
	e.state = stateStopped
	e.stopErr = err
	e.mu.Unlock()
	close(e.stopped)
	return err
}

// drained waits until every connection has closed, or done is closed;
// it reports whether every connection has.
func (e *Engine) drained(done <-chan struct{}) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for e.nconns.Load() > 0 {
		select {
		case <-done:
			return false
		case <-tick.C:
		}
	}
	return true
}

// ticker keeps the clock and the Date header, wakes the connections
// waiting for their output to drain (every 10 ms), and enforces the
// timeouts (a sweep of every connection once a second).
func (e *Engine) ticker() {
	fast := time.NewTicker(10 * time.Millisecond)
	defer fast.Stop()
	lastSweep := time.Now()
	var wake []*conn
	for {
		select {
		case <-e.tickDone:
			return
		case now := <-fast.C:
			e.now.Store(now.UnixNano())
			sweep := now.Sub(lastSweep) >= time.Second
			wake = wake[:0]
			e.mu.Lock()
			for cs := range e.waiters {
				wake = append(wake, cs)
			}
			if sweep {
				lastSweep = now
				for cs := range e.conns {
					if cs.expired(now.UnixNano()) != notExpired {
						wake = append(wake, cs)
					}
				}
			}
			e.mu.Unlock()
			if sweep {
				updateDate(now)
			}
			for _, cs := range wake {
				_ = cs.gc.Wake(nil)
			}
		}
	}
}

// loopState is the scratch memory of one event loop: used only on that
// loop's goroutine, so it needs no lock.
type loopState struct {
	out  []byte // replies of one OnTraffic, written with one Write
	body []byte // one HTTP reply body, before its head is known
}

// OnBoot implements gnet.EventHandler.
func (e *Engine) OnBoot(gnet.Engine) gnet.Action { return gnet.None }

// OnShutdown implements gnet.EventHandler.
func (e *Engine) OnShutdown(gnet.Engine) {}

// OnTick implements gnet.EventHandler (unused: the engine has its own
// ticker).
func (e *Engine) OnTick() (time.Duration, gnet.Action) { return time.Hour, gnet.None }

// OnOpen sets up a connection's state. Event loop only.
func (e *Engine) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	e.mu.Lock()
	ls := e.loops[gc.EventLoop()]
	if ls == nil {
		ls = &loopState{}
		e.loops[gc.EventLoop()] = ls
	}
	cs := e.newConn(gc, ls)
	e.conns[cs] = struct{}{}
	e.mu.Unlock()
	gc.SetContext(cs)
	if e.draining.Load() {
		// Accepted while Stop ran, after it listed the connections to
		// wake: close it now rather than leave it to the idle timeout.
		return nil, gnet.Close
	}
	return nil, gnet.None
}

// newConn makes a connection's state.
func (e *Engine) newConn(gc gnet.Conn, ls *loopState) *conn {
	cs := &conn{e: e, gc: gc, loop: ls}
	cs.ctx, cs.cancel = context.WithCancel(e.baseCtx)
	cs.ctx = handler.ContextWithConn(cs.ctx, cs)
	cs.lastActive.Store(e.now.Load())
	return cs
}

// OnClose releases a connection's state, unless its client half-closed
// with work in flight: the connection then finishes off the loop
// (halfclose.go). Event loop only.
func (e *Engine) OnClose(gc gnet.Conn, err error) gnet.Action {
	cs, _ := gc.Context().(*conn)
	if cs == nil {
		return gnet.None
	}
	if cs.finishesAfterEOF(err) {
		e.mu.Lock()
		delete(e.waiters, cs)
		e.mu.Unlock()
		return gnet.None
	}
	cs.release()
	e.mu.Lock()
	delete(e.conns, cs)
	delete(e.waiters, cs)
	e.mu.Unlock()
	e.nconns.Add(-1)
	return gnet.None
}

// OnTraffic serves a connection's input and its finished work. Event
// loop only.
func (e *Engine) OnTraffic(gc gnet.Conn) gnet.Action {
	cs, _ := gc.Context().(*conn)
	if cs == nil {
		return gnet.Close
	}
	return cs.traffic()
}

var _ gnet.EventHandler = (*Engine)(nil)

// gnetLogger routes gnet's logs to slog, its info and debug lines at
// debug level so that gnet is quiet by default.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(f string, a ...any) { g.l.Debug("gnet: " + fmt.Sprintf(f, a...)) }
func (g gnetLogger) Infof(f string, a ...any)  { g.l.Debug("gnet: " + fmt.Sprintf(f, a...)) }
func (g gnetLogger) Warnf(f string, a ...any)  { g.l.Warn("gnet: " + fmt.Sprintf(f, a...)) }
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Error("gnet: " + fmt.Sprintf(f, a...)) }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Error("gnet: fatal: " + fmt.Sprintf(f, a...)) }

// raiseFileLimit raises the soft limit on open files to the hard limit
// and returns how many connections that leaves room for (0 if unknown).
func raiseFileLimit() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	// Each connection holds one descriptor; keep some for the rest of
	// the process (listeners, pollers, files, outgoing connections).
	reserve := uint64(64)
	if lim.Cur/8 > reserve {
		reserve = min(lim.Cur/8, 1024)
	}
	if lim.Cur <= reserve {
		return 1
	}
	return int(min(lim.Cur-reserve, 1<<30))
}

func setReusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
