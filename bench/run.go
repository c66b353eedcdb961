package bench

// NOTE: Run and its runner, one load test. Run fills and checks the
// Config, builds the messages of the rotation (from a workload, from
// bodies, or from the method and params), dials every connection before
// the clock starts, and then drives the workers: an open loop (Rate or
// Schedule) and a TLS target's closed loop on a goroutine each
// (worker.go), any other closed loop from gnet event loops (loop.go).
// The runner is what the workers share: the config, the target, the
// messages, the measured window and the request budget, immutable once
// the run starts but for the fields marked atomic. A worker's in-flight
// ring is in inflight.go, its reply checks in check.go, the live line in
// progress.go, and the result it all adds up to in report.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Latencies are recorded in microseconds, from 1 µs to 60 s, with 3
// significant digits.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
)

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
	decode   bool        // HTTP replies may come compressed (decodes): their Content-Encoding is read; immutable
	tls      *tls.Config // a TLS target's client config, its ServerName set; nil otherwise
	// head is what every HTTP request starts with (header.go); never nil,
	// replaced whole when the JWT is re-minted: atomic only.
	head atomic.Pointer[httpHead]
}

// newRunner returns the runner of a load test; cfg is filled and checked.
func newRunner(cfg Config, t target, msgs []message) *runner {
	r := &runner{cfg: cfg, t: t, msgs: msgs, headers: appendHeaders(nil, cfg.Header), decode: decodes(&cfg)}
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
	if err := cfg.checkTrace(&t); err != nil {
		return nil, err
	}
	if err := cfg.checkCompression(&t); err != nil {
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
		return nil, errors.New("every message is a notification, and over a stream the server " +
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
