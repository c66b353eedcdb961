package main

// NOTE: jetrpc serve: its flags (newServeFlags, one table, their values
// in serveFlags), its usage text, the flag.Value types of --listen and
// the repeatable lists, and serve, which builds the table and the engine
// from them and serves until ctx is done (main's SIGINT or SIGTERM),
// then drains and stops (Engine.Wait).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/handler/textlog"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/prometheus/client_golang/prometheus"
)

// serveFlags are the flags of jetrpc serve.
type serveFlags struct {
	addrs          []string // --listen and its aliases, in order; tcp:// or unix:// each
	origins        []string // --cors and --ws-origin
	corsHeaders    []string
	corsMaxAge     time.Duration
	healthPath     string
	vhosts         []string
	vhostsStrict   bool
	jwtSecret      string
	apiKeys        string
	allowIP        []string
	denyIP         []string
	trustedProxies []string
	slowCall       time.Duration // --slow-call, and its alias --log-slow
	accessLog      bool
	logSample      float64
	metrics        string // --metrics: an address, or a path on the listeners
	discover       bool
	discoverGrant  bool          // --discover-by-grant
	broker         string        // --broker: a NATS URL, "" for one node
	drainGrace     time.Duration // --drain-grace
	closeNotice    string        // --close-notice: a method name, "" for none
	callTimeout    time.Duration
	rate           float64
	burst          int
	connRate       float64
	connBurst      int
	maxResp        int
	maxBatchOut    int
	maxSubsConn    int
	maxSubs        int
	budget         int
	wsPath         string
	ping           time.Duration
	maxPush        int
	loops          int
	workers        int
	queue          int
	maxMsg         int
	maxHeader      int
	maxBatch       int
	maxDepth       int
	maxConns       int
	maxInFlight    int
	maxPending     int
	idle           time.Duration
	readTO         time.Duration
	writeTO        time.Duration
	stopTimeout    time.Duration
	reusePort      bool
	rejectV1       bool
	verbose        bool
	cpuProfile     string
}

// defaultCallTimeout is jetrpc serve's --call-timeout: geth's
// (its HTTP write timeout).
const defaultCallTimeout = 30 * time.Second

// rateLimit returns the rate limits of --rate, --burst, --conn-rate
// and --conn-burst; a burst of 0 is the table's default, one second's
// worth of its rate.
func (c *serveFlags) rateLimit() handler.RateLimit {
	return handler.RateLimit{Rate: c.rate, Burst: c.burst, ConnRate: c.connRate, ConnBurst: c.connBurst}
}

// filterDiscover reports whether rpc.discover answers each caller the
// methods its grants let it call: under --discover-by-grant, when
// callers have grants at all (--api-keys, --jwt-secret). Without
// authentication no caller holds a grant, and the document lists every
// method, as jetrpc openrpc prints it.
func (c *serveFlags) filterDiscover() bool {
	return c.discoverGrant && (c.apiKeys != "" || c.jwtSecret != "")
}

// newServeFlags defines the flags of jetrpc serve on a new FlagSet; the
// groups of serveUsage list them.
func newServeFlags() (*flag.FlagSet, *serveFlags) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c := &serveFlags{}
	fs.Var(listenFlag{addrs: &c.addrs}, "listen", "listen on `addr`: host:port or tcp://host:port (tcp4:// and tcp6:// too; "+
		"port 0 picks a free port, printed at start-up; :8080 is every interface), or unix:///path for a Unix socket. "+
		"Repeatable: each listener serves HTTP/1.1, WebSocket and JSON streams. "+
		"Default: "+strings.TrimPrefix(engine.DefaultAddr, "tcp://")+", when no listener flag is given")
	for _, alias := range []string{"http", "tcp", "ws"} {
		fs.Var(listenFlag{addrs: &c.addrs}, alias, "aliases of --listen: the same `addr` forms, the same listener. "+
			"The names are kept for older scripts; none of them limits the protocols served")
	}
	fs.Var(listenFlag{addrs: &c.addrs, unix: true}, "unix", "the same as --listen unix://`path`: a Unix socket (repeatable; "+
		"a stale socket file left by an earlier run is replaced)")
	fs.BoolVar(&c.reusePort, "reuseport", false, "set SO_REUSEPORT so that several processes can share a TCP port")
	fs.Var(stringsFlag{&c.origins}, "cors", "browser `origin` whose pages may call (CORS: preflights answered, replies marked) and "+
		"open a WebSocket, such as https://app.example.com, or \"*\" for any (repeatable, or comma-separated). "+
		"None given: no cross-origin calls, WebSockets from any origin")
	fs.Var(stringsFlag{&c.origins}, "ws-origin", "an alias of --cors, kept for older scripts")
	fs.Var(stringsFlag{&c.corsHeaders}, "cors-headers", "`header` names a cross-origin page may send (repeatable, or comma-separated). "+
		"Default: Content-Type, Authorization")
	fs.DurationVar(&c.corsMaxAge, "cors-max-age", httprules.DefaultCORSMaxAge, "how long a browser may keep a preflight's answer (negative: no Access-Control-Max-Age)")
	fs.StringVar(&c.healthPath, "health-path", httprules.DefaultHealthPath, "`path` where GET answers 200 {\"status\":\"ok\"} (503 while draining); \"-\" for none")
	fs.Var(stringsFlag{&c.vhosts}, "vhosts", "`host` names a request's Host may carry (repeatable, or comma-separated; \"*\" for any); "+
		"other names get 403, which defeats DNS rebinding. IP addresses and a missing Host pass (no rebinding without a name; browsers send a Host) unless --vhosts-strict. Default: localhost")
	fs.BoolVar(&c.vhostsStrict, "vhosts-strict", false, "make --vhosts strict: an IP address passes only when listed, a request without a Host gets 403")
	fs.StringVar(&c.jwtSecret, "jwt-secret", "", "require a JWT (HS256, iat within 60 s, as geth's engine API) signed with the 32-byte hex secret in `file`; "+
		"its holders hold every permission")
	fs.StringVar(&c.apiKeys, "api-keys", "", "require an API key from `file` (one per line: KEY [grant,grant...]) as a bearer token: "+
		"Authorization: Bearer KEY, or on a WebSocket upgrade only (browsers) the subprotocol bearer.KEY or ?access_token=KEY; a key in another request's URL gets 401")
	fs.Var(stringsFlag{&c.allowIP}, "allow-ip", "accept connections only from `cidr` (an address or a prefix; repeatable, or comma-separated)")
	fs.Var(stringsFlag{&c.denyIP}, "deny-ip", "refuse connections from `cidr` (repeatable, or comma-separated; wins over --allow-ip)")
	fs.Var(stringsFlag{&c.trustedProxies}, "trusted-proxy", "trust the proxies at `cidr` (an address or a prefix; repeatable, or comma-separated) "+
		"to name their client in X-Forwarded-For or X-Real-IP: the rate limits and the access log then count calls by that client, "+
		"not the proxy (--allow-ip and --deny-ip still see the proxy)")
	fs.StringVar(&c.wsPath, "ws-path", engine.DefaultWSPath, "the URL `path` where a GET with Upgrade: websocket opens a WebSocket")
	fs.DurationVar(&c.ping, "ping-interval", engine.DefaultPingInterval, "ping a WebSocket client silent this long")
	fs.IntVar(&c.maxBatch, "max-batch", handler.DefaultMaxBatch, "most requests in one batch")
	fs.DurationVar(&c.callTimeout, "call-timeout", defaultCallTimeout, "answer a call still running after this `duration` -32002 at once, "+
		"and end its method's context (0: no timeout)")
	fs.Float64Var(&c.rate, "rate", 0, "cost `units` per second each client (its API key or JWT subject, else its IP address) may spend; "+
		"a call spends 1 (admin_stats 10), each batch element alone; calls over it get -32005, notifications are dropped (0: no limit)")
	fs.IntVar(&c.burst, "burst", 0, "cost `units` a client may spend at once, beyond --rate (0: one second's worth of --rate)")
	fs.Float64Var(&c.connRate, "conn-rate", 0, "the same as --rate for each connection alone (0: no limit)")
	fs.IntVar(&c.connBurst, "conn-burst", 0, "the same as --burst for each connection alone (0: one second's worth of --conn-rate)")
	fs.IntVar(&c.maxResp, "max-response", parser.DefaultMaxSize, "largest reply in `bytes`; a larger one is replaced by -32008 "+
		"(default: --max-message, when that is larger)")
	fs.IntVar(&c.maxBatchOut, "max-batch-response", handler.DefaultMaxBatchResponseSize, "`bytes` of one batch's replies, errors included, "+
		"past which its remaining elements are answered -32008")
	fs.IntVar(&c.maxSubsConn, "max-subscriptions-per-conn", handler.DefaultMaxSubscriptionsPerConn, "live subscriptions of one connection; "+
		"a subscribe past it gets -32006")
	fs.IntVar(&c.maxSubs, "max-subscriptions", handler.DefaultMaxSubscriptions, "live subscriptions of the server, all connections together")
	fs.IntVar(&c.maxDepth, "max-depth", parser.DefaultMaxDepth, "deepest nesting of arrays and objects in a message")
	fs.BoolVar(&c.rejectV1, "reject-v1", false, "answer JSON-RPC 1.0 requests (no \"jsonrpc\":\"2.0\") with -32600")
	fs.IntVar(&c.maxMsg, "max-message", engine.DefaultMaxMessageSize, "largest message (HTTP body, stream value or WebSocket message) in `bytes`")
	fs.IntVar(&c.maxHeader, "max-header", engine.DefaultMaxHeaderSize, "largest HTTP request head in `bytes`")
	fs.IntVar(&c.maxConns, "max-conns", engine.DefaultMaxConns, "most open connections, lowered to the file descriptor limit")
	fs.IntVar(&c.maxInFlight, "max-inflight", engine.DefaultMaxInFlight, "most messages of one connection on workers at once")
	fs.IntVar(&c.maxPending, "max-pending", engine.DefaultMaxPendingOutput, "unsent output `bytes` per connection before it is no longer read "+
		"(its server messages then wait in its queue, bounded by --max-push-queue)")
	fs.IntVar(&c.budget, "max-output-budget", 0, "unsent reply and server-message `bytes` of all connections together: past 3/4 of it "+
		"the clients holding most are not read, past it they are disconnected, largest first (0: a quarter of the memory, at most 64 MiB; -1: none)")
	fs.IntVar(&c.maxPush, "max-push-queue", engine.DefaultMaxPushQueue, "`bytes` a client that gets server messages may leave unread, "+
		"its unsent output and queued server messages together; a server message past it disconnects the client "+
		"(keep it above the largest reply such a client gets)")
	fs.DurationVar(&c.idle, "idle-timeout", engine.DefaultIdleTimeout, "close connections idle this long")
	fs.DurationVar(&c.readTO, "read-timeout", engine.DefaultReadTimeout, "close connections whose message is incomplete this long")
	fs.DurationVar(&c.writeTO, "write-timeout", engine.DefaultWriteTimeout, "close connections whose replies wait this long")
	fs.StringVar(&c.broker, "broker", "", "share topics (topic_subscribe, topic_publish) with the other nodes connected to the NATS server at `url` "+
		"(nats://host:port); without it, topics reach this node's clients only")
	fs.DurationVar(&c.drainGrace, "drain-grace", 0, "on SIGINT or SIGTERM, go on answering calls this long with GET /health answering 503, "+
		"so that a load balancer takes the node out before it stops (0: stop at once; a second signal exits at once)")
	fs.StringVar(&c.closeNotice, "close-notice", "", "when stopping, send WebSocket and stream clients the notification `method` "+
		"(e.g. "+engine.DefaultCloseNotice+`, params {"reason":"server stopping"}) before closing, so that they reconnect and resubscribe`)
	fs.DurationVar(&c.stopTimeout, "stop-timeout", 10*time.Second, "on SIGINT or SIGTERM, how long requests in flight may take "+
		"before their contexts are cancelled and the server exits")
	fs.IntVar(&c.loops, "loops", 0, "event loops (0: GOMAXPROCS)")
	fs.IntVar(&c.workers, "workers", pool.DefaultWorkers, "worker goroutines for blocking methods, per pool: one pool runs messages, one batch elements")
	fs.IntVar(&c.queue, "queue", pool.DefaultQueue, "messages waiting for a worker before requests are answered \"Server busy\"")
	fs.BoolVar(&c.verbose, "v", false, "log debug messages")
	fs.BoolVar(&c.accessLog, "access-log", false, "log calls to stderr: one record per message (method, id, code, duration_ms, transport, remote, client behind a --trusted-proxy, "+
		"principal; a batch with its element and error counts), and one per request or connection refused before JSON-RPC (status, reason; see cmd/jetrpc/README.md: Access log)")
	fs.Float64Var(&c.logSample, "access-log-sample", 1, "the `share` of messages and refusals --access-log logs, 0 to 1")
	fs.DurationVar(&c.slowCall, "slow-call", 0, "log every message that takes longer than this `duration` at WARN, with or without --access-log (0: off)")
	fs.DurationVar(&c.slowCall, "log-slow", 0, "an alias of --slow-call, kept for older scripts")
	fs.StringVar(&c.metrics, "metrics", "", "serve Prometheus metrics on `addr|path`: host:port for a listener of their own (at /metrics), "+
		"or a path such as /metrics on the JSON-RPC listeners (off by default)")
	fs.BoolVar(&c.discover, "discover", true, "answer rpc.discover with the server's OpenRPC document")
	fs.BoolVar(&c.discoverGrant, "discover-by-grant", true, "with --api-keys or --jwt-secret, list in rpc.discover's document only the methods "+
		"the caller's grants let it call (admin_stats only for a key with the admin grant); false lists every method to every caller. "+
		"Without authentication every caller is listed every method")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) to `file` until the server stops")
	return fs, c
}

var serveUsage = commandUsage{
	dash: "--",
	head: `usage: jetrpc serve [--listen ADDR]... [flags]

jetrpc serve runs the bundled JSON-RPC 2.0 server on gnet event loops.
It answers the methods of the specification's examples (subtract, sum,
update, notify_hello, notify_sum, get_data), the benchmark methods echo,
add, sleep (a blocking method, run on a worker) and fail, the
subscription clock_subscribe/clock_unsubscribe, the topics
topic_subscribe/topic_unsubscribe/topic_publish, shared with other nodes
with --broker (package handler/demo), and admin_stats, which needs the "admin" grant (--api-keys, --jwt-secret).
Every listener serves every protocol on one port, told apart by a
connection's first byte: HTTP/1.1 (a POST to any path; GET /health answers
200), WebSocket (a GET of --ws-path with Upgrade: websocket) and raw JSON
streams (newline-delimited JSON over TCP or a Unix socket). It prints the
URLs it serves, and stops gracefully on SIGINT or SIGTERM; a second signal
exits at once.

With no --listen it listens on 127.0.0.1:8080, loopback only; use
--listen :8080 for every interface. --http, --tcp and --ws are aliases of
--listen: they do exactly what --listen does.
`,
	groups: []flagGroup{
		{"listeners", []string{"listen", "http,tcp,ws", "unix", "reuseport"}},
		{"WebSocket", []string{"ws-path", "ws-origin", "ping-interval"}},
		{"access (see cmd/jetrpc/README.md: Putting it on the internet)", []string{"cors", "cors-headers", "cors-max-age", "vhosts", "vhosts-strict", "health-path", "jwt-secret", "api-keys", "allow-ip", "deny-ip", "trusted-proxy"}},
		{"JSON-RPC", []string{"max-batch", "max-depth", "reject-v1"}},
		{"fair use (see cmd/jetrpc/README.md: Limits)", []string{"call-timeout", "rate", "burst", "conn-rate", "conn-burst", "max-response", "max-batch-response",
			"max-subscriptions-per-conn", "max-subscriptions"}},
		{"connection limits", []string{"max-message", "max-header", "max-conns", "max-inflight", "max-pending", "max-push-queue", "max-output-budget"}},
		{"timeouts", []string{"idle-timeout", "read-timeout", "write-timeout", "stop-timeout"}},
		{"many nodes (see cmd/jetrpc/README.md: Running many nodes)", []string{"broker", "drain-grace", "close-notice"}},
		{"event loops and workers", []string{"loops", "workers", "queue"}},
		{"operating it (see cmd/jetrpc/README.md: Operating it)", []string{"metrics", "access-log", "access-log-sample", "slow-call,log-slow", "discover", "discover-by-grant"}},
		{"logging and profiling", []string{"v", "cpuprofile"}},
	},
	examples: `  jetrpc serve                                      # http://, ws:// and tcp://127.0.0.1:8080
  curl -s localhost:8080 -H 'Content-Type: application/json' \
    -d '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}'
  printf '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}\n' | socat - TCP:127.0.0.1:8080
  jetrpc bench -c 64 -d 10s ws://127.0.0.1:8080/    # load-test it from another shell
  jetrpc serve --listen 127.0.0.1:0                 # a free port: the printed URLs say which
  jetrpc serve --listen unix:///tmp/jetrpc.sock     # a Unix socket, then:
  printf '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}\n' | socat - UNIX-CONNECT:/tmp/jetrpc.sock
  jetrpc serve --listen :8080 --listen unix:///run/rpc.sock  # every interface, and a socket
  taskset -c 0 jetrpc serve --loops 1 &  taskset -c 1 jetrpc bench http://127.0.0.1:8080/
  echo "$(openssl rand -hex 16) admin" > keys      # API keys: KEY [grant,...] per line
  jetrpc serve --api-keys keys --cors https://app.example.com --vhosts rpc.example.com,localhost
  curl -s localhost:8080 -H "Authorization: Bearer $(cut -d' ' -f1 keys)" -H 'Content-Type: application/json' \
    -d '{"jsonrpc":"2.0","method":"admin_stats","id":1}'
`,
}

// listenFlag is a repeatable address flag: --listen and its aliases add
// tcp:// or unix:// addresses to one list (see listenAddr).
type listenFlag struct {
	addrs *[]string // never nil but in the flag package's zero Value
	unix  bool      // --unix: the value is a socket path
}

func (l listenFlag) String() string {
	if l.addrs == nil { // the flag package's zero Value
		return ""
	}
	return strings.Join(*l.addrs, ",")
}

func (l listenFlag) Set(v string) error {
	a, err := listenAddr(v, l.unix)
	if err != nil {
		return err
	}
	*l.addrs = append(*l.addrs, a)
	return nil
}

// stringsFlag is a repeatable flag of non-empty strings.
type stringsFlag struct{ list *[]string }

func (s stringsFlag) String() string {
	if s.list == nil { // the flag package's zero Value
		return ""
	}
	return strings.Join(*s.list, ",")
}

func (s stringsFlag) Set(v string) error {
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e == "" {
			return errors.New("empty value")
		}
		*s.list = append(*s.list, e)
	}
	return nil
}

// listenAddr turns a listener flag's value into an engine address:
// host:port → tcp://host:port; tcp://, tcp4://, tcp6:// and unix:// as
// they are. For --unix (unixPath) the value is a path, unix:// optional.
// Errors name what is wrong before anything listens.
func listenAddr(v string, unixPath bool) (string, error) {
	if unixPath {
		path := strings.TrimPrefix(v, "unix://")
		switch {
		case path == "":
			return "", errors.New("empty path")
		case strings.Contains(path, "://"):
			return "", errors.New("--unix takes a socket path; use --listen for other addresses")
		}
		return "unix://" + path, nil
	}
	scheme, rest, hasScheme := strings.Cut(v, "://")
	if !hasScheme {
		scheme, rest = "tcp", v
	}
	switch {
	case v == "":
		return "", errors.New("empty address")
	case scheme == "unix":
		if rest == "" {
			return "", errors.New("empty path (unix:///path)")
		}
		return v, nil
	case scheme != "tcp" && scheme != "tcp4" && scheme != "tcp6":
		return "", errors.New("unsupported address: use host:port, tcp://host:port or unix:///path")
	case strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "."):
		return "", errors.New("a Unix socket is written unix://" + rest)
	}
	if _, _, err := net.SplitHostPort(rest); err != nil {
		return "", errors.New("want host:port (127.0.0.1:0 for a free port, :8080 for every interface)")
	}
	return scheme + "://" + rest, nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newServeFlags()
	help, err := parseFlags(fs, &serveUsage, args, stdout, stderr)
	if help || err != nil {
		return err
	}
	setResp := false
	fs.Visit(func(f *flag.Flag) { setResp = setResp || f.Name == "max-response" })
	if !setResp && c.maxMsg > c.maxResp {
		c.maxResp = c.maxMsg // a reply may be as large as a message
	}
	if fs.NArg() == 1 && fs.Arg(0) == "help" { // jetrpc serve help
		serveUsage.write(stdout, fs)
		return nil
	}
	if fs.NArg() > 0 {
		return usageError(fs, &serveUsage, stderr,
			fmt.Errorf("unexpected argument %q (an address goes after --listen)", fs.Arg(0)))
	}
	if !strings.HasPrefix(c.wsPath, "/") {
		return fmt.Errorf("serve: --ws-path %q must start with /", c.wsPath)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"loops", c.loops}, {"workers", c.workers}, {"queue", c.queue}, {"max-message", c.maxMsg},
		{"max-header", c.maxHeader}, {"max-batch", c.maxBatch}, {"max-depth", c.maxDepth},
		{"max-conns", c.maxConns}, {"max-inflight", c.maxInFlight}, {"max-pending", c.maxPending},
		{"max-push-queue", c.maxPush}, {"burst", c.burst}, {"conn-burst", c.connBurst}, {"max-response", c.maxResp},
		{"max-batch-response", c.maxBatchOut}, {"max-subscriptions-per-conn", c.maxSubsConn}, {"max-subscriptions", c.maxSubs},
	} {
		if f.v < 0 {
			return fmt.Errorf("serve: --%s %d: must not be negative (0 means the default)", f.name, f.v)
		}
	}
	if c.stopTimeout <= 0 {
		return fmt.Errorf("serve: --stop-timeout %v must be positive", c.stopTimeout)
	}
	if c.drainGrace < 0 {
		return fmt.Errorf("serve: --drain-grace %v must not be negative (0: stop at once)", c.drainGrace)
	}
	if c.callTimeout < 0 {
		return fmt.Errorf("serve: --call-timeout %v must not be negative (0: no timeout)", c.callTimeout)
	}
	if c.rate < 0 || c.connRate < 0 {
		return fmt.Errorf("serve: --rate and --conn-rate must not be negative (0: no limit)")
	}
	if c.slowCall < 0 {
		return fmt.Errorf("serve: --slow-call %v must not be negative", c.slowCall)
	}
	if !(c.logSample >= 0 && c.logSample <= 1) { // NaN too
		return fmt.Errorf("serve: --access-log-sample %v must be between 0 and 1", c.logSample)
	}
	metricsAddr, metricsPath, err := metricsFlag(c.metrics)
	if err != nil {
		return fmt.Errorf("serve: --metrics: %w", err)
	}
	access, err := c.access()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	addrs := c.addrs
	if len(addrs) == 0 {
		addrs = []string{engine.DefaultAddr}
	}
	var profile *os.File
	if c.cpuProfile != "" {
		// Opened before listening, so that a bad path fails before serving.
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		profile = f
	}
	level := slog.LevelInfo
	if c.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(textlog.New(stderr, &slog.HandlerOptions{Level: level}))

	elements := pool.NewWorkers(c.workers, c.queue)
	defer elements.Close()
	messages := pool.NewWorkers(c.workers, c.queue)
	defer messages.Close()
	tab := handler.NewTable(
		handler.WithMaxBatch(c.maxBatch),
		handler.WithMaxDepth(c.maxDepth),
		handler.WithRejectV1(c.rejectV1),
		handler.WithWorkers(elements),
		handler.WithLogger(logger),
		handler.WithCallTimeout(c.callTimeout),
		handler.WithRateLimit(c.rateLimit()),
		handler.WithMaxResponseSize(c.maxResp, c.maxBatchOut),
		handler.WithMaxSubscriptions(c.maxSubsConn, c.maxSubs),
		handler.WithMetrics(c.metrics != ""),
		handler.WithAccessLog(c.accessLogOf(logger)),
	)
	var e *engine.Engine
	topics, brokerUp, closeBroker, err := topicsOf(c.broker, logger)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer closeBroker()
	if err := registerServed(tab, func() int { return e.Conns() }, topics, c.discover, c.filterDiscover()); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	reg := prometheus.NewRegistry()
	if metricsPath != "" {
		access = append(access, engine.WithPage(metrics.Page(metricsPath, reg)))
	}
	e = engine.New(tab, append([]engine.Option{
		engine.WithAddrs(addrs...),
		engine.WithLoops(c.loops),
		engine.WithWorkers(messages),
		engine.WithReusePort(c.reusePort),
		engine.WithMaxMessageSize(c.maxMsg),
		engine.WithMaxHeaderSize(c.maxHeader),
		engine.WithMaxConns(c.maxConns),
		engine.WithMaxInFlight(c.maxInFlight),
		engine.WithMaxPendingOutput(c.maxPending),
		engine.WithTimeouts(c.idle, c.readTO, c.writeTO),
		engine.WithWSPath(c.wsPath),
		engine.WithPingInterval(c.ping),
		engine.WithMaxPushQueue(c.maxPush),
		engine.WithMaxOutputBudget(c.budget),
		engine.WithCloseNotice(c.closeNotice),
		engine.WithDrainGrace(c.drainGrace),
		engine.WithStopTimeout(c.stopTimeout),
		engine.WithLogger(logger),
	}, access...)...)
	if c.metrics != "" {
		if err := metrics.Register(reg, tab, e); err != nil {
			return err
		}
		if err := metrics.RegisterTopics(reg, topics, brokerUp); err != nil {
			return err
		}
	}
	var metricsSrv *metricsServer
	if metricsAddr != "" {
		// Listening before the engine starts, so that a taken port fails
		// before serving.
		if metricsSrv, err = startMetricsServer(metricsAddr, reg, logger); err != nil {
			return fmt.Errorf("serve: --metrics: %w", err)
		}
		defer metricsSrv.stop()
	}
	if err := e.Start(); err != nil {
		return err
	}
	for _, a := range e.Addrs() {
		switch a.Network() {
		case "unix":
			fmt.Fprintf(stdout, "jetrpc: serving JSON-RPC on unix://%s (HTTP, WebSocket and streams)\n", a)
		default:
			fmt.Fprintf(stdout, "jetrpc: serving JSON-RPC on http://%s/, ws://%s%s and tcp://%s\n", a, a, c.wsPath, a)
			if metricsPath != "" {
				fmt.Fprintf(stdout, "jetrpc: metrics on http://%s%s\n", a, metricsPath)
			}
		}
	}
	if metricsSrv != nil {
		fmt.Fprintf(stdout, "jetrpc: metrics on http://%s/metrics\n", metricsSrv.addr)
	}
	if c.broker != "" {
		fmt.Fprintf(stdout, "jetrpc: topics shared through the NATS server at %s\n", c.broker)
	}
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			_ = e.Stop(context.Background())
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return e.Wait(ctx) // drains for --drain-grace, stops within --stop-timeout
}
