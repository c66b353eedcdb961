package bench

// NOTE: the fan-out benchmark (`jetrpc bench --subscribe`): many
// WebSocket subscribers of one topic, spread over the nodes of a service,
// and one publisher at a fixed rate. RunFanout runs it in phases:
//
//   - connect: Subscribers connections are dialed (at most
//     ConnectConcurrency at a time, round-robin over Targets), upgraded
//     to WebSocket on the blocking net.Conn, then enrolled in a gnet
//     client (fanout_sub.go), whose OnOpen sends topic_subscribe; the
//     run waits for every reply, up to Timeout;
//   - publish: the publisher (fanout_pub.go), its own connection, sends
//     topic_publish at the intended times of an open loop, each payload
//     carrying its sequence number and its intended send time;
//   - drain: after the last publish the run waits, up to Drain, until
//     every subscriber has every message and every publish is answered;
//   - report (fanout_report.go): the connections are closed and the
//     counters merged into a FanoutResult.
//
// The subscribers run on GOMAXPROCS gnet event loops, not a goroutine
// each: a delivery costs one read into the loop's buffer, a scan of the
// notification in place and a bit in the subscriber's bitset of sequence
// numbers; nothing is allocated. Latencies go to one histogram per event
// loop and node, merged at the end.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/pool/fdlimit"
	"github.com/jetrpc/jetrpc/pool/gnetlog"
	"github.com/panjf2000/gnet/v2"
)

// Defaults of FanoutConfig.
const (
	DefaultSubscribers        = 1000
	DefaultPublishRate        = 100
	DefaultDrain              = 5 * time.Second
	DefaultConnectConcurrency = 256
	// MaxFanoutBits bounds the bitsets of sequence numbers: one bit per
	// planned publish per subscriber, 1 GiB in all.
	MaxFanoutBits = 8 << 30
)

// The methods of the topics of a jetrpc server (topics.Register
// under the namespace "topic", as jetrpc serve registers them).
const (
	fanoutSubscribe    = "topic_subscribe"
	fanoutNotification = "topic_subscription"
	fanoutPublish      = "topic_publish"
)

// FanoutConfig describes one fan-out test: Subscribers WebSocket
// connections subscribed to Topic, spread over Targets, and one
// publisher sending PublishRate messages a second on it. The zero value
// of a field means its default.
type FanoutConfig struct {
	// Targets are the nodes, ws://host:port/path each; subscriber i
	// connects to Targets[i % len(Targets)]. At least one.
	Targets []string
	// Topic is the topic subscribed to and published on; required. Other
	// publishers on it disturb the counts: the run expects its own
	// messages only.
	Topic string
	// Subscribers is the number of subscribers, one connection each;
	// 0 means DefaultSubscribers, a negative value is an error.
	Subscribers int
	// PublishURL is the publisher's node; "" means Targets[0].
	PublishURL string
	// PublishRate is the publishes per second, an open loop: publish k
	// is due at k/PublishRate after the start, sent then however late the
	// previous ones were, and its payload carries that intended time.
	// 0 means DefaultPublishRate.
	PublishRate float64
	// Duration is how long to publish; default DefaultDuration. Ignored
	// when Publishes is set.
	Duration time.Duration
	// Publishes, when positive, is the number of publishes, instead of a
	// Duration.
	Publishes int64
	// PayloadSize pads each payload, {"seq":N,"t":T}, with a "pad"
	// string to at least this many bytes; 0 means no padding.
	PayloadSize int
	// Drain is the longest wait, after the last publish, for the
	// deliveries and publish replies still due; the run goes on as soon
	// as all are in. 0 means DefaultDrain, a negative value none.
	Drain time.Duration
	// Timeout bounds a connection's dial and upgrade, the wait for the
	// subscribe replies (after the last dial) and a publish's write;
	// default DefaultTimeout.
	Timeout time.Duration
	// ConnectConcurrency is how many connections are dialed at once;
	// 0 means DefaultConnectConcurrency.
	ConnectConcurrency int
	// MaxLost is the number of lost deliveries the run tolerates before
	// FanoutResult.OK is false; negative means any.
	MaxLost int64
	// Header and JWTSecret are sent with every WebSocket upgrade request,
	// as Config's are (a JWT minted at each dial).
	Header    http.Header
	JWTSecret []byte
	// Progress, when set, receives a line each second.
	Progress io.Writer
	// WSCompression makes the subscribers' WebSocket upgrades offer
	// permessage-deflate, as Config.WSCompression does, so that a
	// fan-out to compressing subscribers is measured: their compressed
	// messages are inflated before they are read, and
	// FanoutResult.CompressedDeliveries counts them. The publisher's
	// connection does not offer it.
	WSCompression bool
}

// fill applies the defaults and checks the config; it returns the
// parsed targets and the publisher's.
func (c *FanoutConfig) fill() (nodes []target, pub target, err error) {
	switch {
	case c.Topic == "":
		return nil, pub, errors.New("no topic to subscribe to")
	case len(c.Targets) == 0:
		return nil, pub, errors.New("fan-out needs at least one ws:// target")
	case c.Subscribers < 0:
		return nil, pub, errors.New("a negative number of subscribers")
	case !(c.PublishRate >= 0) || math.IsInf(c.PublishRate, 0):
		return nil, pub, errors.New("the publish rate must be a finite number of publishes/s, 0 or more")
	case c.Publishes < 0:
		return nil, pub, errors.New("a negative number of publishes")
	case c.PayloadSize < 0 || c.PayloadSize > maxMessage/2:
		return nil, pub, fmt.Errorf("a payload size of %d bytes: 0 to %d", c.PayloadSize, maxMessage/2)
	case c.ConnectConcurrency < 0:
		return nil, pub, errors.New("a negative connect concurrency")
	}
	if c.Subscribers == 0 {
		c.Subscribers = DefaultSubscribers
	}
	if c.PublishRate == 0 {
		c.PublishRate = DefaultPublishRate
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.Drain == 0 {
		c.Drain = DefaultDrain
	}
	if c.Drain < 0 {
		c.Drain = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectConcurrency == 0 {
		c.ConnectConcurrency = DefaultConnectConcurrency
	}
	if c.PublishURL == "" {
		c.PublishURL = c.Targets[0]
	}
	for _, s := range append(append([]string(nil), c.Targets...), c.PublishURL) {
		t, err := parseTarget(s)
		if err != nil {
			return nil, pub, err
		}
		if !t.ws {
			return nil, pub, fmt.Errorf("fan-out target %q: subscriptions need a ws:// URL", s)
		}
		nodes = append(nodes, t)
	}
	nodes, pub = nodes[:len(nodes)-1], nodes[len(nodes)-1]
	// The headers are checked as Config's are, for a ws:// target.
	hc := Config{Target: c.Targets[0], Header: c.Header, JWTSecret: c.JWTSecret}
	if err := hc.checkHeaders(&nodes[0]); err != nil {
		return nil, pub, err
	}
	if bits := float64(c.planned()) * float64(c.Subscribers); bits > MaxFanoutBits {
		return nil, pub, fmt.Errorf("%d subscribers × %d publishes: the run keeps a bit per publish per subscriber, %.0f MiB; "+
			"at most %d MiB", c.Subscribers, c.planned(), bits/8/(1<<20), MaxFanoutBits/8/(1<<20))
	}
	return nodes, pub, nil
}

// planned returns the number of publishes of a filled config.
func (c *FanoutConfig) planned() int64 {
	if c.Publishes > 0 {
		return c.Publishes
	}
	return max(1, int64(math.Ceil(c.Duration.Seconds()*c.PublishRate)))
}

// intended returns when publish seq is due, from the start t0.
func (c *FanoutConfig) intended(t0 time.Time, seq int64) time.Time {
	return t0.Add(time.Duration(float64(seq) / c.PublishRate * float64(time.Second)))
}

// upgradeHeader returns the extra headers of a WebSocket upgrade: Header
// and a JWT minted now; nil for none.
func (c *FanoutConfig) upgradeHeader() (http.Header, error) {
	if len(c.Header) == 0 && len(c.JWTSecret) == 0 {
		return nil, nil
	}
	h := c.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if len(c.JWTSecret) > 0 {
		token, err := mintJWT(c.JWTSecret, time.Now())
		if err != nil {
			return nil, fmt.Errorf("minting the JWT: %w", err)
		}
		h.Set("Authorization", "Bearer "+token)
	}
	return h, nil
}

// dialWS opens a WebSocket to t, offering permessage-deflate when
// deflate is set; deflated says the server accepted it. kind says which
// step failed.
func (c *FanoutConfig) dialWS(ctx context.Context, t *target, deflate bool) (nc net.Conn, deflated bool, kind string, err error) {
	d := net.Dialer{Timeout: c.Timeout}
	nc, err = d.DialContext(ctx, t.network, t.address)
	if err != nil {
		return nil, false, SubConnect, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	h, err := c.upgradeHeader()
	if err == nil {
		deflated, err = handshakeWS(nc, t, h, deflate, c.Timeout)
	}
	if err != nil {
		_ = nc.Close()
		return nil, false, SubWebSocket, err
	}
	return nc, deflated, "", nil
}

// fanout is one fan-out test.
type fanout struct {
	cfg     FanoutConfig // filled
	nodes   []target     // immutable
	planned int64        // publishes planned; immutable
	subs    []*subscriber
	cli     *gnet.Client
	closing atomic.Bool // the run is ending: a close is not a drop

	mu    sync.Mutex
	stats map[statsKey]*loopStats // guarded by mu; each loopStats is its event loop's
}

// RunFanout runs the fan-out test described by cfg and returns its
// result; see FanoutConfig and FanoutResult. It stops early, with what it
// has measured, when ctx is done. It returns an error for a config it
// cannot run, or when it cannot start its event loops; a subscriber or a
// publisher that fails is reported in the result.
func RunFanout(ctx context.Context, cfg FanoutConfig) (*FanoutResult, error) {
	nodes, pubTarget, err := cfg.fill()
	if err != nil {
		return nil, err
	}
	if limit := fdlimit.Raise(); limit > 0 && uint64(cfg.Subscribers+cfg.ConnectConcurrency+64) > limit {
		return nil, fmt.Errorf("%d subscribers need as many file descriptors; the limit is %d (raise it with ulimit -n)",
			cfg.Subscribers, limit)
	}
	topicJSON, _ := json.Marshal(cfg.Topic)
	f := &fanout{cfg: cfg, nodes: nodes, planned: cfg.planned(), stats: map[statsKey]*loopStats{}}
	words := int((f.planned + 63) / 64)
	slab := make([]uint64, words*cfg.Subscribers)
	subReq := appendSubscribe(nil, topicJSON)
	f.subs = make([]*subscriber, cfg.Subscribers)
	for i := range f.subs {
		f.subs[i] = &subscriber{f: f, node: i % len(nodes), high: -1, seen: slab[i*words : (i+1)*words : (i+1)*words], req: subReq}
	}
	cli, err := gnet.NewClient(&fanoutClient{f: f},
		gnet.WithNumEventLoop(runtime.GOMAXPROCS(0)),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetlog.Logger{Level: slog.LevelError}),
	)
	if err != nil {
		return nil, err
	}
	if err := cli.Start(); err != nil {
		return nil, err
	}
	f.cli = cli
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			f.closing.Store(true)
			_ = cli.Stop()
		}
	}
	defer stop()

	res := &FanoutResult{Topic: cfg.Topic, PublishURL: cfg.PublishURL, Subscribers: cfg.Subscribers,
		Rate: cfg.PublishRate, Planned: f.planned, MaxLost: cfg.MaxLost}
	progress := newFanoutProgress(f, cfg.Progress)
	defer progress.stop()

	// Connect and subscribe.
	progress.phase("connecting")
	connectStart := time.Now()
	f.connect(ctx)
	deadline := time.Now().Add(cfg.Timeout)
	for f.pending() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	res.ConnectTime = time.Since(connectStart)
	for _, s := range f.subs {
		if s.state.CompareAndSwap(subSubscribing, subFailed) {
			s.fail = SubTimeout // no reply: it will not count as subscribed
		}
	}
	subscribed := int64(0)
	for _, s := range f.subs {
		if s.state.Load() >= subSubscribed { // subscribed, or dropped already
			subscribed++
		}
	}

	// Publish, then drain.
	var p *publisher
	if subscribed > 0 && ctx.Err() == nil {
		p = newPublisher(f, pubTarget, topicJSON)
		progress.phase("publishing")
		progress.setPublisher(p)
		p.run(ctx)
		progress.phase("draining")
		f.drain(ctx, p, p.sent.Load()*subscribed, res)
	} else if subscribed == 0 {
		res.PublishError = "no subscriber subscribed: nothing published"
	}
	res.Interrupted = ctx.Err() != nil
	progress.stop()
	stop() // the loops have ended: what they owned is ours
	if p != nil {
		p.close()
	}
	f.result(res, p)
	return res, nil
}

// connect dials every subscriber, at most ConnectConcurrency at a time,
// and enrolls its connection in the event loops, which subscribe it.
func (f *fanout) connect(ctx context.Context) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(f.cfg.ConnectConcurrency, len(f.subs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(f.subs)) {
					return
				}
				s := f.subs[i]
				if ctx.Err() != nil {
					s.setFailed(SubConnect, ctx.Err())
					continue
				}
				nc, deflated, kind, err := f.cfg.dialWS(ctx, &f.nodes[s.node], f.cfg.WSCompression)
				if err != nil {
					s.setFailed(kind, err)
					continue
				}
				s.deflate = deflated
				s.state.Store(subSubscribing)
				if _, err := f.cli.EnrollContext(nc, s); err != nil && s.state.CompareAndSwap(subSubscribing, subFailed) {
					s.fail, s.errText = SubConnect, err.Error()
				}
			}
		}()
	}
	wg.Wait()
}

// drain waits, up to Drain, until want deliveries are made and every
// publish is answered, and says in res how it ended: a drain cut short
// while deliveries were still arriving says that the missing ones may be
// late rather than lost.
func (f *fanout) drain(ctx context.Context, p *publisher, want int64, res *FanoutResult) {
	start := time.Now()
	end := start.Add(f.cfg.Drain)
	window := min(drainWindow, f.cfg.Drain/2) // the end of the drain, watched for arrivals
	seen, before := int64(0), int64(-1)
	for {
		now := time.Now()
		seen = f.delivered()
		if seen >= want && p.allAnswered() {
			res.DrainComplete = true
			break
		}
		if !now.Before(end) || ctx.Err() != nil {
			break
		}
		if before < 0 && !now.Before(end.Add(-window)) {
			before = seen
		}
		time.Sleep(2 * time.Millisecond)
	}
	res.Drain = time.Since(start)
	if !res.DrainComplete && before >= 0 {
		res.StillArriving, res.window = seen-before, window
	}
}

// drainWindow is the end of the drain watched for deliveries still
// arriving.
const drainWindow = 500 * time.Millisecond

// pending returns the subscribers still waiting for their subscribe
// reply. Safe from any goroutine.
func (f *fanout) pending() int {
	n := 0
	for _, s := range f.subs {
		if s.state.Load() == subSubscribing {
			n++
		}
	}
	return n
}

// statsFor returns the loopStats of event loop el for node, made on first
// use. Safe from any goroutine; the loopStats is then el's own.
func (f *fanout) statsFor(el gnet.EventLoop, node int) *loopStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := statsKey{el, node}
	st := f.stats[k]
	if st == nil {
		st = newLoopStats(node)
		f.stats[k] = st
	}
	return st
}

// delivered returns the deliveries so far, duplicates not counted. Safe
// from any goroutine.
func (f *fanout) delivered() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, st := range f.stats {
		n += st.delivered.Load()
	}
	return n
}

// fanoutProgress prints a progress line each second.
type fanoutProgress struct {
	f     *fanout
	w     io.Writer
	mu    sync.Mutex
	ph    string
	pub   *publisher
	t0    time.Time
	done  chan struct{}
	ended sync.WaitGroup
	once  sync.Once
}

func newFanoutProgress(f *fanout, w io.Writer) *fanoutProgress {
	p := &fanoutProgress{f: f, w: w, t0: time.Now(), done: make(chan struct{})}
	if w == nil {
		return p
	}
	p.ended.Add(1)
	go func() {
		defer p.ended.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last int64
		for {
			select {
			case <-p.done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
				p.mu.Lock()
				ph, pub := p.ph, p.pub
				p.mu.Unlock()
				d := f.delivered()
				var b strings.Builder
				fmt.Fprintf(&b, "\r\033[K%s %5.1fs", ph, time.Since(p.t0).Seconds())
				if pub == nil {
					fmt.Fprintf(&b, "  %d subscribers waiting for their reply", f.pending())
				} else {
					fmt.Fprintf(&b, "  %d published  %d delivered  %d deliveries/s", pub.sent.Load(), d, d-last)
				}
				last = d
				io.WriteString(w, b.String())
			}
		}
	}()
	return p
}

func (p *fanoutProgress) phase(s string) {
	p.mu.Lock()
	p.ph = s
	p.mu.Unlock()
}

func (p *fanoutProgress) setPublisher(pub *publisher) {
	p.mu.Lock()
	p.pub = pub
	p.mu.Unlock()
}

// stop ends the progress line; it may be called more than once.
func (p *fanoutProgress) stop() {
	p.once.Do(func() { close(p.done) })
	p.ended.Wait()
}
