package engine

// NOTE: the Engine owns the listeners (listen.go) and a gnet client: its
// event loops, without gnet's own acceptor. Acceptor goroutines, one per
// listener, accept with Go's net package — which backs off on EMFILE
// instead of stopping, as gnet's acceptor does — and enroll each
// connection into an event loop (loop.go). From then on everything about
// a connection happens on its loop (conn.go, and the codec of its
// protocol: http.go, stream.go, ws.go), except for messages run on
// workers (work.go) and server pushes (push.go), which come back through
// the connection's mailbox and one Wake per burst. A ticker goroutine
// keeps the Date header, the timeouts, and the connections waiting for
// their output to drain.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/jetrpc/jetrpc/pool/clock"
	"github.com/jetrpc/jetrpc/pool/gnetlog"
	"github.com/panjf2000/gnet/v2"
)

// Engine serves a handler.Table on TCP and Unix listeners from gnet event
// loops. Create it with New, start it with Start or Run, stop it with
// Stop. Its methods are safe from any goroutine.
type Engine struct {
	table   *handler.Table // immutable
	opts    Options        // immutable after New
	workers *pool.Workers  // runs messages that need a worker; set by Start
	ownPool bool           // workers was made by Start

	comp compression // the HTTP content codings (Options.Compression, compress.go); immutable

	preflight string            // the header lines of a CORS preflight's answer (Options.CORS); immutable
	corsLines map[string]string // by Access-Control-Allow-Origin value (an origin of Options.CORS, or "*"), the CORS header lines of a reply; immutable
	gets      getMethods        // the methods callable by GET (httpget.go); made once
	route     *methodRoute      // routing by Options.MethodHeader (methodheader.go); nil when off; immutable

	cli       *gnet.Client
	listeners []net.Listener
	addrs     []net.Addr
	baseCtx   context.Context // passed to handlers; cancelled when Stop gives up waiting
	cancel    context.CancelFunc

	mu          sync.Mutex         // guards conns, waiters, loops, state
	conns       map[*conn]struct{} // open connections
	waiters     map[*conn]struct{} // connections waiting for their output to drain
	loops       map[gnet.EventLoop]*loopState
	state       int // stateNew, stateRunning, stateDraining, stateStopped
	nconns      atomic.Int64
	draining    atomic.Bool            // Stop has begun
	drainCalled atomic.Bool            // Drain was called: the health check answers 503 until Undrain
	stopBound   atomic.Bool            // DrainFor was called: the drain leads to Stop, and Undrain cannot undo it
	notReady    atomic.Pointer[string] // the health check's 503 body (SetNotReady), nil while ready
	notice      []byte                 // the close notice (Options.CloseNotice), nil without one; immutable
	now         atomic.Int64           // coarse clock (a reading of package clock), set by the ticker
	maxConns    int                    // MaxConns, lowered to what the file descriptor limit allows
	yield       bool                   // the loops take every P: a worker runs only when a loop lets it (conn.awaitOne); set by Start
	budget      budget                 // MaxOutputBudget: the bytes held for all connections (budget.go)
	stats       engineStats            // the counters of Stats (stats.go)

	acceptWG sync.WaitGroup
	tickDone chan struct{}
	stopped  chan struct{} // closed when Stop has finished
	stopErr  error
}

const (
	stateNew = iota
	stateRunning
	stateDraining
	stateStopped
)

// ErrNotRunning is returned by Stop on an engine that was never started.
var ErrNotRunning = errors.New("jetrpc: engine not running")

// New returns an engine serving t. It does not listen yet. It panics if
// Options.Workers is the table's own pool (t.Workers()): a message on a
// worker waits for its batch elements on the table's pool, and sharing
// one pool could deadlock; and if Options.Compression names a coding
// other than gzip and zstd.
func New(t *handler.Table, opts ...Option) *Engine {
	e := &Engine{table: t, conns: map[*conn]struct{}{}, waiters: map[*conn]struct{}{}, loops: map[gnet.EventLoop]*loopState{}, stopped: make(chan struct{})}
	for _, o := range opts {
		o(&e.opts)
	}
	e.opts.fill()
	e.budget.init(e.opts.MaxOutputBudget)
	if t.UsesPool(e.opts.Workers) {
		panic("jetrpc: engine.New: Options.Workers is the table's own pool (handler.Table.Workers); give the engine a pool of its own, or none")
	}
	e.workers = e.opts.Workers
	for _, name := range e.opts.Compression {
		if _, ok := codingOf([]byte(name)); !ok {
			panic("jetrpc: engine.New: Options.Compression: unknown coding " + strconv.Quote(name) + " (want gzip or zstd)")
		}
	}
	e.comp = newCompression(e.opts.Compression, e.opts.CompressionMinSize)
	e.route = newMethodRoute(e.opts.MethodHeader)
	if e.opts.CORS.Enabled() {
		e.preflight = e.opts.CORS.PreflightHeaders()
		e.corsLines = make(map[string]string, len(e.opts.CORS.Origins))
		for _, o := range e.opts.CORS.Origins {
			e.corsLines[o] = "Access-Control-Allow-Origin: " + o + "\r\nVary: Origin\r\n"
		}
	}
	if e.opts.CloseNotice != "" {
		b := append([]byte(`{"jsonrpc":"2.0","method":`), parser.AppendQuote(nil, e.opts.CloseNotice)...)
		e.notice = append(b, `,"params":{"reason":"server stopping"}}`...)
	}
	e.now.Store(clock.Now())
	return e
}

// Drain takes the engine out of a load balancer's pool without stopping
// it: from now on the health check (Options.HealthPath) answers 503
// {"status":"draining"}, while new connections and calls are served as
// before, except that each HTTP response says Connection: close and is
// its connection's last — nothing the client pipelined behind it is run
// (RFC 9112 9.6) — so that keep-alive clients connect again (through the
// balancer, to a node that is ready). WebSocket and stream connections
// stay open. Stop follows, after the time the balancer's health checks
// need to notice (Run waits Options.DrainGrace). Only Undrain undoes it
// (SetReady does not: it is the application's readiness, not a drain);
// it is safe from any goroutine and more than once.
func (e *Engine) Drain() {
	if !e.drainCalled.Swap(true) {
		e.opts.Logger.Info("jetrpc: draining: the health check answers 503; calls are still served")
	}
}

// Undrain undoes Drain, explicitly: the health check answers 200 again
// (if the application is ready) and HTTP connections persist again — a
// deploy that was called off, a node put back in the pool. It does not
// undo a stop: once Stop or DrainFor (Run's and Wait's stop sequence,
// whose drain leads to Stop) has begun, it does nothing and reports
// false, so that a balancer is not sent calls by a node about to stop.
// It reports whether it undid a drain. Safe from any goroutine.
func (e *Engine) Undrain() bool {
	if e.stopBound.Load() || e.draining.Load() || !e.drainCalled.Swap(false) {
		return false
	}
	e.opts.Logger.Info("jetrpc: undrained: the health check answers as the engine's readiness says")
	return true
}

// SetNotReady makes the health check answer 503
// {"status":"not_ready","reason":REASON} (httprules.NotReadyBody) until
// SetReady, whatever Options.Ready says: the application's own
// readiness — warming up, a dependency down, taken out of the load
// balancer's pool by hand. Unlike Drain, it can be undone, and nothing
// else changes: calls are served, keep-alive connections persist. Safe
// from any goroutine; the last call wins. A drain answers 503
// {"status":"draining"} whatever it says.
func (e *Engine) SetNotReady(reason string) {
	body := httprules.NotReadyBody(reason)
	if e.notReady.Swap(&body) == nil {
		e.opts.Logger.Info("jetrpc: not ready: the health check answers 503", "reason", reason)
	}
}

// SetReady undoes SetNotReady: the health check answers 200 again, if
// Options.Ready agrees and the engine does not drain (SetReady does not
// undo Drain). Safe from any goroutine.
func (e *Engine) SetReady() {
	if e.notReady.Swap(nil) != nil {
		e.opts.Logger.Info("jetrpc: ready: the health check answers 200 again")
	}
}

// Ready reports whether the health check answers 200: false once Drain
// or Stop has been called, after SetNotReady until SetReady, and while
// Options.Ready returns an error (it is called).
func (e *Engine) Ready() bool {
	return e.serving() && e.notReady.Load() == nil && (e.opts.Ready == nil || e.opts.Ready() == nil)
}

// serving reports whether the engine neither drains nor stops: HTTP
// connections persist (keep-alive). Readiness (SetNotReady,
// Options.Ready) does not close them.
func (e *Engine) serving() bool { return !e.drainCalled.Load() && !e.draining.Load() }

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
	e.yield = loops >= runtime.GOMAXPROCS(0)
	cli, err := gnet.NewClient(&events{e: e},
		gnet.WithNumEventLoop(loops),
		gnet.WithLogger(gnetlog.Logger{L: e.opts.Logger}),
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

// Run starts the engine and serves until ctx is done, then drains it
// for Options.DrainGrace (Drain: the health check answers 503 while
// calls are still served) and stops it gracefully, waiting at most
// Options.StopTimeout for the requests in flight. It returns nil after a
// clean stop, the error of Start, or the
// error of Stop (context.DeadlineExceeded when requests were still
// running at the timeout). The usual main is
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	if err := e.Run(ctx); err != nil {
//		log.Fatal(err)
//	}
//
// Run is Start, then Wait: a main with something to do between the two
// (print the addresses Start bound, say) calls them itself.
func (e *Engine) Run(ctx context.Context) error {
	if err := e.Start(); err != nil {
		return err
	}
	return e.Wait(ctx)
}

// Wait is Run for an engine started already (Start): it serves until
// ctx is done, drains for Options.DrainGrace, then stops within
// Options.StopTimeout, and returns Stop's error.
func (e *Engine) Wait(ctx context.Context) error {
	<-ctx.Done()
	e.DrainFor(e.opts.DrainGrace, nil)
	e.opts.Logger.Info("jetrpc: stopping", "timeout", e.opts.StopTimeout)
	stop, cancel := context.WithTimeout(context.Background(), e.opts.StopTimeout)
	defer cancel()
	return e.Stop(stop)
}

// DrainFor calls Drain, then waits for grace to pass or for cut to be
// closed (a nil cut never is), whichever comes first: the drain of a
// rolling deploy, before Stop. With grace 0 it returns at once, without
// calling Drain (Stop makes the health check answer 503 anyway).
func (e *Engine) DrainFor(grace time.Duration, cut <-chan struct{}) {
	e.stopBound.Store(true)
	if grace <= 0 {
		return
	}
	e.Drain()
	e.opts.Logger.Info("jetrpc: stopping after the drain grace", "grace", grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-cut:
	}
}

// stopGrace is how long Stop waits, once its context has ended and the
// handlers' contexts are cancelled, for the replies of those that return.
const stopGrace = 200 * time.Millisecond

// Stop stops accepting, lets the calls already running finish and their
// replies reach the wire, then closes every connection and the event
// loops. Nothing read after Stop began is run, but for one request on
// each HTTP connection, answered with Connection: close: a client may
// safely send again elsewhere whatever got no reply. If ctx ends first, the handlers still running see their
// contexts cancelled; the replies of those that return within a short
// grace (200 ms) are still written, then the remaining connections are
// closed and ctx's error is returned. Stop must not be called from a
// handler running inline.
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
	for c := range e.conns {
		conns = append(conns, c)
	}
	e.mu.Unlock()
	e.acceptWG.Wait()
	for _, c := range conns {
		c.wakeLoop() // each one closes itself once done
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
// waiting for their output to drain (every 10 ms while it moves, less
// often once it has stalled: conn.pollDue), enforces the output budget
// (budget.go) and the timeouts (a sweep of every connection once a
// second, which also wakes those holding output, so that the budget's
// account of them is at most a second old).
func (e *Engine) ticker() {
	fast := time.NewTicker(10 * time.Millisecond)
	defer fast.Stop()
	lastSweep := time.Now()
	var wake []*conn
	var tick uint64
	for {
		select {
		case <-e.tickDone:
			return
		case now := <-fast.C:
			ns := clock.Now()
			e.now.Store(ns)
			tick++
			sweep := now.Sub(lastSweep) >= time.Second
			wake = wake[:0]
			e.mu.Lock()
			if sweep {
				lastSweep = now
				for c := range e.conns {
					_, waiting := e.waiters[c]
					if waiting || c.holding() || c.expired(ns) != notExpired {
						wake = append(wake, c)
					}
				}
			} else {
				for c := range e.waiters {
					if c.pollDue(ns, tick) {
						wake = append(wake, c)
					}
				}
			}
			e.mu.Unlock()
			if sweep {
				updateDate(now)
			}
			e.checkBudget(now, sweep)
			for _, c := range wake {
				c.wakeLoop()
			}
		}
	}
}

// enroll registers a new connection. Event loop only.
func (e *Engine) enroll(c *conn) {
	e.mu.Lock()
	e.conns[c] = struct{}{}
	e.mu.Unlock()
}

// forget unregisters a closed connection. Event loop only, or the
// goroutine of a connection finishing off its loop.
func (e *Engine) forget(c *conn) {
	e.mu.Lock()
	delete(e.conns, c)
	delete(e.waiters, c)
	e.mu.Unlock()
	e.stats.open[c.tport].Add(-1)
	e.stats.closed[c.closing].Add(1)
	e.nconns.Add(-1) // last: who sees the count drop sees the connection counted closed
}

// setWaiter adds c to, or removes it from, the connections the ticker
// wakes every 10 ms. Event loop only.
func (e *Engine) setWaiter(c *conn, on bool) {
	e.mu.Lock()
	if on {
		e.waiters[c] = struct{}{}
	} else {
		delete(e.waiters, c)
	}
	e.mu.Unlock()
}

// loopOf returns the scratch state of gnet's event loop el, made on
// first use. Event loop only.
func (e *Engine) loopOf(el gnet.EventLoop) *loopState {
	e.mu.Lock()
	defer e.mu.Unlock()
	ls := e.loops[el]
	if ls == nil {
		ls = newLoopState(&loopWaker{el: el})
		e.loops[el] = ls
	}
	return ls
}
