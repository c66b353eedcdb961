package main

// NOTE: the flags of jetrpc serve, in one table (serveFlags.rows): a
// row per usage entry — its names (a flag and its aliases), its usage
// group, the field it sets, bound with its default, its rule and its
// help. The FlagSet (newServeFlags), the checks after parsing
// (serveFlags.check) and the groups of the usage text (serveUsage) are
// all built from it. Most rows set a field of the engine's or the
// table's Options directly, with the library's default constant, so
// that a new engine limit costs its field (engine/options.go), its use,
// one row here and its row in the README's limits table.

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// serveFlags is what the flags of jetrpc serve set: the engine's and the
// table's options, field by field, and what serve itself uses.
type serveFlags struct {
	engine engine.Options  // its Addrs: --listen and its aliases, tcp:// or unix:// each, in order
	table  handler.Options // its AccessLog.Slow: --slow-call

	jwtSecret      string
	apiKeys        string
	allowIP        []string
	denyIP         []string
	trustedProxies []string
	accessLog      bool
	logSample      float64
	metrics        string // --metrics: an address, or a path on the listeners
	discover       bool
	discoverGrant  bool   // --discover-by-grant
	mcp            bool   // --mcp: the MCP example (package handler/demo/mcp) too
	broker         string // --broker: a NATS URL, "" for one node
	workers        int
	queue          int
	verbose        bool
	cpuProfile     string
	otlpEndpoint   string             // --otlp-endpoint: "" for the environment's (OTEL_EXPORTER_OTLP_*), else no tracing
	otlpProtocol   string             // --otlp-protocol: otlpGRPC, otlpHTTP, or "" for the environment's, else otlpHTTP
	traceSample    float64            // --trace-sample
	traceMethods   map[string]float64 // --trace-method, by method (or prefix*)
	traceForce     string             // --trace-force-header
	traceParams    bool               // --trace-params-meta
}

// defaultCallTimeout is jetrpc serve's --call-timeout: geth's
// (its HTTP write timeout).
const defaultCallTimeout = 30 * time.Second

// Groups of the usage text, in the order printed.
const (
	groupListeners = "listeners"
	groupWebSocket = "WebSocket"
	groupAccess    = "access (see cmd/jetrpc/README.md: Putting it on the internet)"
	groupJSONRPC   = "JSON-RPC"
	groupFairUse   = "fair use (see cmd/jetrpc/README.md: Limits)"
	groupConnLimit = "connection limits"
	groupCompress  = "HTTP and WebSocket compression (see cmd/jetrpc/README.md: Compression)"
	groupTimeouts  = "timeouts"
	groupNodes     = "many nodes (see cmd/jetrpc/README.md: Running many nodes)"
	groupLoops     = "event loops and workers"
	groupOperate   = "operating it (see cmd/jetrpc/README.md: Operating it)"
	groupTracing   = "tracing (see cmd/jetrpc/README.md: Tracing)"
	groupLogging   = "logging and profiling"
)

// serveFlag is a row of the table of serve's flags: one entry of the
// usage text.
type serveFlag struct {
	group string // its group in the usage text
	names string // the flag's name, then its aliases, comma-separated: they set the same field
	bind  binder // defines each name on a FlagSet, bound to its field, with its default
	rule  rule   // what a value must be, checked after parsing
	usage string // the help text; a back-quoted word names the argument
}

// rows returns the rows of serve's flags, bound to the fields of c, in
// the order of the usage text. Defaults are the library's constants.
func (c *serveFlags) rows() []serveFlag {
	e, t := &c.engine, &c.table
	return []serveFlag{
		{groupListeners, "listen", value(listenFlag{addrs: &e.Addrs}), anyValue, "listen on `addr`: host:port or tcp://host:port (tcp4:// and tcp6:// too; " +
			"port 0 picks a free port, printed at start-up; :8080 is every interface), or unix:///path for a Unix socket. " +
			"Repeatable: each listener serves HTTP/1.1, WebSocket and JSON streams. " +
			"Default: " + strings.TrimPrefix(engine.DefaultAddr, "tcp://") + ", when no listener flag is given"},
		{groupListeners, "http,tcp,ws", value(listenFlag{addrs: &e.Addrs}), anyValue, "aliases of --listen: the same `addr` forms, the same listener. " +
			"The names are kept for older scripts; none of them limits the protocols served"},
		{groupListeners, "unix", value(listenFlag{addrs: &e.Addrs, unix: true}), anyValue, "the same as --listen unix://`path`: a Unix socket (repeatable; " +
			"a stale socket file left by an earlier run is replaced)"},
		{groupListeners, "reuseport", bind(&e.ReusePort, false), anyValue, "set SO_REUSEPORT so that several processes can share a TCP port"},

		{groupWebSocket, "ws-path", bind(&e.WSPath, engine.DefaultWSPath), urlPath, "the URL `path` where a GET with Upgrade: websocket opens a WebSocket"},
		{groupWebSocket, "ws-origin", value(stringsFlag{&e.CORS.Origins}), anyValue, "an alias of --cors, kept for older scripts"},
		{groupWebSocket, "ping-interval", bind(&e.PingInterval, engine.DefaultPingInterval), anyValue, "ping a WebSocket client silent this long"},

		{groupAccess, "cors", value(stringsFlag{&e.CORS.Origins}), anyValue, "browser `origin` whose pages may call (CORS: preflights answered, replies marked) and " +
			"open a WebSocket, such as https://app.example.com, or \"*\" for any (repeatable, or comma-separated). " +
			"None given: no cross-origin calls, WebSockets from any origin"},
		{groupAccess, "cors-header,cors-headers", value(stringsFlag{&e.CORS.Headers}), anyValue, "a request `header` a cross-origin page may send (Access-Control-Allow-Headers; " +
			"repeatable, or comma-separated; both names add to one list). Default: Content-Type, Authorization"},
		{groupAccess, "cors-max-age", bind(&e.CORS.MaxAge, httprules.DefaultCORSMaxAge), anyValue, "how long a browser may keep a preflight's answer (negative: no Access-Control-Max-Age)"},
		{groupAccess, "vhosts", value(stringsFlag{&e.Hosts}), anyValue, "`host` names a request's Host may carry (repeatable, or comma-separated; \"*\" for any); " +
			"other names get 403, which defeats DNS rebinding. IP addresses and a missing Host pass (no rebinding without a name; browsers send a Host) unless --vhosts-strict. Default: localhost"},
		{groupAccess, "vhosts-strict", bind(&e.StrictHosts, false), anyValue, "make --vhosts strict: an IP address passes only when listed, a request without a Host gets 403"},
		{groupAccess, "health-path", bind(&e.HealthPath, httprules.DefaultHealthPath), anyValue, "`path` where GET answers 200 {\"status\":\"ok\"} (503 while draining); \"-\" for none"},
		{groupAccess, "method-header", bind(&e.MethodHeader, ""), headerName, "route POSTs by the HTTP `header` that names their method (such as Mcp-Method): " +
			"grants, rate limits and the method's existence are checked before the body is parsed (404, 403, 429 with a JSON-RPC error), " +
			"and a body whose method differs is refused 400 -32600 (see cmd/jetrpc/README.md: Routing by header). Default: off"},
		{groupAccess, "jwt-secret", bind(&c.jwtSecret, ""), anyValue, "require a JWT (HS256, iat within 60 s, as geth's engine API) signed with the 32-byte hex secret in `file`; " +
			"its holders hold every permission"},
		{groupAccess, "api-keys", bind(&c.apiKeys, ""), anyValue, "require an API key from `file` (one per line: KEY [grant,grant...]) as a bearer token: " +
			"Authorization: Bearer KEY, or on a WebSocket upgrade only (browsers) the subprotocol bearer.KEY or ?access_token=KEY; a key in another request's URL gets 401"},
		{groupAccess, "auth-optional", bind(&e.AuthOptional, false), anyValue, "with --api-keys or --jwt-secret, serve callers that present no credentials at all, anonymous: " +
			"they hold no grant (admin_stats answers them -32003), and every stream connection is one; credentials presented are still checked " +
			"(a wrong key gets 401). Open reads, keyed writes"},
		{groupAccess, "allow-ip", value(stringsFlag{&c.allowIP}), anyValue, "accept connections only from `cidr` (an address or a prefix; repeatable, or comma-separated)"},
		{groupAccess, "deny-ip", value(stringsFlag{&c.denyIP}), anyValue, "refuse connections from `cidr` (repeatable, or comma-separated; wins over --allow-ip)"},
		{groupAccess, "trusted-proxy", value(stringsFlag{&c.trustedProxies}), anyValue, "trust the proxies at `cidr` (an address or a prefix; repeatable, or comma-separated) " +
			"to name their client in X-Forwarded-For or X-Real-IP: the rate limits and the access log then count calls by that client, " +
			"not the proxy (--allow-ip and --deny-ip still see the proxy)"},

		{groupJSONRPC, "max-batch", bind(&t.MaxBatch, handler.DefaultMaxBatch), nonNegative, "most requests in one batch"},
		{groupJSONRPC, "max-depth", bind(&t.MaxDepth, parser.DefaultMaxDepth), nonNegative, "deepest nesting of arrays and objects in a message"},
		{groupJSONRPC, "sse", bind(&e.SSE, true), anyValue, "answer a POST whose Accept takes text/event-stream with an event stream when its call " +
			"sends messages while it runs (progress: countdown), before its reply (see cmd/jetrpc/README.md: Server messages over HTTP)"},
		{groupJSONRPC, "sse-keepalive", bind(&e.SSEKeepAlive, engine.DefaultSSEKeepAlive), anyValue, "send a comment on an event stream held open for a " +
			"subscription's notifications after this long (negative: none)"},
		{groupJSONRPC, "reject-v1", bind(&t.RejectV1, false), anyValue, "answer JSON-RPC 1.0 requests (no \"jsonrpc\":\"2.0\") with -32600"},
		{groupJSONRPC, "mcp", bind(&c.mcp, false), anyValue, "serve the MCP example too (package handler/demo/mcp: the tools add and countdown, a large resource), " +
			"for MCP clients at http://ADDR/mcp over Streamable HTTP, stateless (no Mcp-Session-Id); " +
			"its methods (initialize, tools/call, ...) are on the one table, answered on every POST path (see cmd/jetrpc/README.md: An MCP server on jetrpc)"},
		{groupJSONRPC, "cancel-method", value(cancelMethodFlag{&t.Cancel}), anyValue, "serve the notification `method` that cancels the call in flight on the same connection whose id its params hold: " +
			"lsp ($/cancelRequest, params {\"id\":…}), mcp (notifications/cancelled, params {\"requestId\":…}), or name:member " +
			"(repeatable, or comma-separated; see cmd/jetrpc/README.md: Cancellation). Default: none"},
		{groupJSONRPC, "cancel-reply", value(cancelReplyFlag{&t.CancelReply}), anyValue, "what a call cancelled by a --cancel-method notification answers: " +
			"error (-32800 \"Request cancelled\", as LSP asks) or none (no reply, as MCP asks)"},

		{groupFairUse, "call-timeout", bind(&t.CallTimeout, defaultCallTimeout), nonNegative, "answer a call still running after this `duration` -32002 at once, " +
			"and end its method's context (0: no timeout)"},
		{groupFairUse, "rate", bind(&t.RateLimit.Rate, 0), nonNegative, "cost `units` per second each client (its API key or JWT subject, else its IP address) may spend; " +
			"a call spends 1 (admin_stats 10), each batch element alone; calls over it get -32005, notifications are dropped (0: no limit)"},
		{groupFairUse, "burst", bind(&t.RateLimit.Burst, 0), nonNegative, "cost `units` a client may spend at once, beyond --rate (0: one second's worth of --rate)"},
		{groupFairUse, "conn-rate", bind(&t.RateLimit.ConnRate, 0), nonNegative, "the same as --rate for each connection alone (0: no limit)"},
		{groupFairUse, "conn-burst", bind(&t.RateLimit.ConnBurst, 0), nonNegative, "the same as --burst for each connection alone (0: one second's worth of --conn-rate)"},
		{groupFairUse, "max-response", bind(&t.MaxResponseSize, parser.DefaultMaxSize), nonNegative, "largest reply in `bytes`; a larger one is replaced by -32008 " +
			"(default: --max-message, when that is larger)"},
		{groupFairUse, "max-batch-response", bind(&t.MaxBatchResponseSize, handler.DefaultMaxBatchResponseSize), nonNegative, "`bytes` of one batch's replies, errors included, " +
			"past which its remaining elements are answered -32008"},
		{groupFairUse, "max-streamed-response", bind(&t.MaxStreamedResponseSize, handler.DefaultMaxStreamedResponseSize), anyValue, "largest streamed result (range) in `bytes`, " +
			"sent as it is made; past it the result ends flagged \"_streamStatus\":\"failed\" (-1: no limit)"},
		{groupFairUse, "max-subscriptions-per-conn", bind(&t.MaxSubscriptionsPerConn, handler.DefaultMaxSubscriptionsPerConn), nonNegative, "live subscriptions of one connection; " +
			"a subscribe past it gets -32006"},
		{groupFairUse, "max-subscriptions", bind(&t.MaxSubscriptions, handler.DefaultMaxSubscriptions), nonNegative, "live subscriptions of the server, all connections together"},

		{groupConnLimit, "max-message", bind(&e.MaxMessageSize, parser.DefaultMaxSize), nonNegative, "largest message (HTTP body, stream value or WebSocket message) in `bytes`"},
		{groupConnLimit, "max-header", bind(&e.MaxHeaderSize, engine.DefaultMaxHeaderSize), nonNegative, "largest HTTP request head in `bytes`"},
		{groupConnLimit, "max-conns", bind(&e.MaxConns, engine.DefaultMaxConns), nonNegative, "most open connections, lowered to the file descriptor limit"},
		{groupConnLimit, "max-inflight", bind(&e.MaxInFlight, engine.DefaultMaxInFlight), nonNegative, "most messages of one connection on workers at once"},
		{groupConnLimit, "max-pending", bind(&e.MaxPendingOutput, engine.DefaultMaxPendingOutput), nonNegative, "unsent output `bytes` per connection before it is no longer read " +
			"(its server messages then wait in its queue, bounded by --max-push-queue)"},
		{groupConnLimit, "max-push-queue", bind(&e.MaxPushQueue, engine.DefaultMaxPushQueue), nonNegative, "`bytes` a client that gets server messages may leave unread, " +
			"its unsent output and queued server messages together; a server message past it disconnects the client " +
			"(keep it above the largest reply such a client gets)"},
		{groupConnLimit, "stream-window", bind(&e.StreamWindow, engine.DefaultStreamWindow), nonNegative, "`bytes` of one streamed result the server holds for its client: " +
			"the method pauses beyond it until the client reads (a streamed call holds a worker meanwhile: see --workers)"},
		{groupConnLimit, "max-output-budget", bind(&e.MaxOutputBudget, 0), anyValue, "unsent reply and server-message `bytes` of all connections together: past 3/4 of it " +
			"the clients holding most are not read, past it they are disconnected, largest first (0: a quarter of the memory, at most 64 MiB; -1: none)"},

		{groupCompress, "compression", value(codingsFlag{&e.Compression}), anyValue, "compress HTTP replies with the `codings` a client accepts (Accept-Encoding), " +
			"comma-separated in the server's order of preference: gzip, zstd (e.g. gzip,zstd), and take request bodies sent with them " +
			"(Content-Encoding; the inflated body bounded by --max-message). Default: off"},
		{groupCompress, "compression-min", bind(&e.CompressionMinSize, engine.DefaultCompressionMinSize), nonNegative, "smallest reply body in `bytes` that --compression compresses " +
			"(and smallest WebSocket message that --ws-compression compresses)"},
		{groupCompress, "ws-compression", bind(&e.WSCompression, false), anyValue, "negotiate WebSocket permessage-deflate (RFC 7692, without context takeover) " +
			"with clients that offer it; inflated messages bounded by --max-message. Default: off"},

		{groupTimeouts, "idle-timeout", bind(&e.IdleTimeout, engine.DefaultIdleTimeout), anyValue, "close connections idle this long"},
		{groupTimeouts, "first-byte-timeout", bind(&e.FirstByteTimeout, engine.DefaultFirstByteTimeout), anyValue, "close connections that send nothing this long " +
			"after they are accepted (negative: only the idle timeout)"},
		{groupTimeouts, "read-timeout", bind(&e.ReadTimeout, engine.DefaultReadTimeout), anyValue, "close connections whose message is incomplete this long"},
		{groupTimeouts, "write-timeout", bind(&e.WriteTimeout, engine.DefaultWriteTimeout), anyValue, "close connections whose replies wait this long"},
		{groupTimeouts, "stop-timeout", bind(&e.StopTimeout, engine.DefaultStopTimeout), positive, "on SIGINT or SIGTERM, how long requests in flight may take " +
			"before their contexts are cancelled and the server exits"},

		{groupNodes, "broker", bind(&c.broker, ""), anyValue, "share topics (topic_subscribe, topic_publish) with the other nodes connected to the NATS server at `url` " +
			"(nats://host:port); without it, topics reach this node's clients only"},
		{groupNodes, "drain-grace", bind(&e.DrainGrace, 0), nonNegative, "on SIGINT or SIGTERM, go on answering calls this long with GET /health answering 503, " +
			"so that a load balancer takes the node out before it stops (0: stop at once; a second signal exits at once)"},
		{groupNodes, "close-notice", bind(&e.CloseNotice, ""), anyValue, "when stopping, send WebSocket and stream clients the notification `method` " +
			"(e.g. " + engine.DefaultCloseNotice + `, params {"reason":"server stopping"}) before closing, so that they reconnect and resubscribe`},

		{groupLoops, "loops", bind(&e.Loops, 0), nonNegative, "event loops (0: GOMAXPROCS)"},
		{groupLoops, "workers", bind(&c.workers, pool.DefaultWorkers), nonNegative, "worker goroutines for blocking methods, per pool: one pool runs messages, one batch elements"},
		{groupLoops, "queue", bind(&c.queue, pool.DefaultQueue), nonNegative, "messages waiting for a worker before requests are answered \"Server busy\""},

		{groupOperate, "metrics", bind(&c.metrics, ""), anyValue, "serve Prometheus metrics on `addr|path`: host:port for a listener of their own (at /metrics), " +
			"or a path such as /metrics on the JSON-RPC listeners (off by default)"},
		{groupOperate, "access-log", bind(&c.accessLog, false), anyValue, "log calls to stderr: one record per message (method, id, code, duration_ms, transport, remote, client behind a --trusted-proxy, " +
			"principal; a batch with its element and error counts), and one per request or connection refused before JSON-RPC (status, reason; see cmd/jetrpc/README.md: Access log)"},
		{groupOperate, "access-log-sample", bind(&c.logSample, 1), share, "the `share` of messages and refusals --access-log logs, 0 to 1"},
		{groupOperate, "slow-call,log-slow", bind(&t.AccessLog.Slow, 0), nonNegative, "log every message that takes longer than this `duration` at WARN, with or without --access-log (0: off)"},
		{groupOperate, "discover", bind(&c.discover, true), anyValue, "answer rpc.discover with the server's OpenRPC document"},
		{groupOperate, "discover-by-grant", bind(&c.discoverGrant, true), anyValue, "with --api-keys or --jwt-secret, list in rpc.discover's document only the methods " +
			"the caller's grants let it call (admin_stats only for a key with the admin grant); false lists every method to every caller. " +
			"Without authentication every caller is listed every method"},

		{groupTracing, "otlp-endpoint", bind(&c.otlpEndpoint, ""), anyValue, "trace calls with OpenTelemetry, exporting spans by OTLP to `url`: " +
			"http://host:4318 for http/protobuf (its path defaults to /v1/traces), http://host:4317 for grpc (no path; https:// for TLS). " +
			"Empty: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as is), else OTEL_EXPORTER_OTLP_ENDPOINT (/v1/traces appended for http/protobuf), " +
			"unless OTEL_TRACES_EXPORTER=none; none of them: no tracing. OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, the TLS variables " +
			"and OTEL_SERVICE_NAME are honoured; OTEL_TRACES_SAMPLER is not (the --trace-* flags sample, and every call they pick is exported)"},
		{groupTracing, "otlp-protocol", bind(&c.otlpProtocol, ""), anyValue, "the OTLP `protocol` of --otlp-endpoint: grpc or http/protobuf " +
			"(default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)"},
		{groupTracing, "trace-sample", bind(&c.traceSample, defaultTraceSample), share, "the `share` of root calls traced (those without a traceparent), 0 to 1; " +
			"a call with a traceparent is traced when its sampled flag is set"},
		{groupTracing, "trace-method", value(methodRatios{&c.traceMethods}), anyValue, "`METHOD=RATIO`: trace this share of the root calls of METHOD " +
			"(a name ending in * is a prefix: admin_*=1) in place of --trace-sample (repeatable)"},
		{groupTracing, "trace-force-header", bind(&c.traceForce, ""), anyValue, "trace every request carrying the header `name` (with any value), whatever the sampling"},
		{groupTracing, "trace-params-meta", bind(&c.traceParams, true), anyValue, "read the trace context of a call without a traceparent header from its params._meta (traceparent, tracestate), as MCP clients send it"},

		{groupLogging, "v", bind(&c.verbose, false), anyValue, "log debug messages"},
		{groupLogging, "cpuprofile", bind(&c.cpuProfile, ""), anyValue, "write a CPU profile (go tool pprof) to `file` until the server stops"},
	}
}

// newServeFlags defines the flags of jetrpc serve on a new FlagSet, from
// the rows of serveFlags.rows.
func newServeFlags() (*flag.FlagSet, *serveFlags) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c := &serveFlags{}
	for _, r := range c.rows() {
		for name := range strings.SplitSeq(r.names, ",") {
			r.bind(fs, name, r.usage)
		}
	}
	return fs, c
}

// serveGroups returns the groups of the usage text: the names of the
// table's rows, group by group, in the table's order.
func serveGroups() []flagGroup {
	var groups []flagGroup
	for _, r := range new(serveFlags).rows() {
		if n := len(groups); n == 0 || groups[n-1].title != r.group {
			groups = append(groups, flagGroup{title: r.group})
		}
		g := &groups[len(groups)-1]
		g.names = append(g.names, r.names)
	}
	return groups
}

// check checks the parsed flags of fs, defined by newServeFlags for c,
// against their rows' rules, and returns the first value refused.
func (c *serveFlags) check(fs *flag.FlagSet) error {
	for _, r := range c.rows() {
		name, _, _ := strings.Cut(r.names, ",")
		if err := r.rule.check(fs.Lookup(name)); err != nil {
			return err
		}
	}
	return nil
}

// codingsFlag is --compression: a comma-separated list of content
// codings the engine knows (gzip, zstd), or off (none).
type codingsFlag struct{ list *[]string }

func (s codingsFlag) String() string {
	if s.list == nil { // the flag package's zero Value
		return ""
	}
	return strings.Join(*s.list, ",")
}

func (s codingsFlag) Set(v string) error {
	*s.list = (*s.list)[:0]
	if v == "off" || v == "none" {
		return nil
	}
	for e := range strings.SplitSeq(v, ",") {
		switch e = strings.ToLower(strings.TrimSpace(e)); e {
		case engine.CodingGzip, engine.CodingZstd:
			*s.list = append(*s.list, e)
		default:
			return fmt.Errorf("%q: not a coding jetrpc compresses with (gzip, zstd, or off)", e)
		}
	}
	return nil
}

// binder defines a flag named name on fs, bound to a field.
type binder func(fs *flag.FlagSet, name, usage string)

// bind returns the binder of the field at p, with default def: the flag
// package's own Value of T, so that the usage names its argument (N,
// DURATION) as it would.
func bind[T bool | int | float64 | string | time.Duration](p *T, def T) binder {
	return func(fs *flag.FlagSet, name, usage string) {
		switch p := any(p).(type) {
		case *bool:
			fs.BoolVar(p, name, any(def).(bool), usage)
		case *int:
			fs.IntVar(p, name, any(def).(int), usage)
		case *float64:
			fs.Float64Var(p, name, any(def).(float64), usage)
		case *string:
			fs.StringVar(p, name, any(def).(string), usage)
		case *time.Duration:
			fs.DurationVar(p, name, any(def).(time.Duration), usage)
		}
	}
}

// value returns the binder of a flag.Value of serve's own (a repeatable
// list); its default is its value now.
func value(v flag.Value) binder {
	return func(fs *flag.FlagSet, name, usage string) { fs.Var(v, name, usage) }
}

// rule is what a flag's value must be, beyond its type.
type rule uint8

const (
	anyValue    rule = iota
	nonNegative      // ≥ 0 (for a count, 0 means the default)
	positive         // > 0
	share            // from 0 to 1
	urlPath          // starts with /
	headerName       // empty, or an HTTP header field name (a token)
)

// check reports whether f's value keeps r, as an error naming the flag.
func (r rule) check(f *flag.Flag) error {
	if r == anyValue {
		return nil
	}
	v := f.Value.(flag.Getter).Get()
	var x float64 // v as a number
	switch v := v.(type) {
	case int:
		x = float64(v)
	case float64:
		x = v
	case time.Duration:
		x = float64(v)
	}
	switch {
	case r == nonNegative && !(x >= 0): // NaN too
		if _, count := v.(int); count {
			return fmt.Errorf("--%s %v: must not be negative (0 means the default)", f.Name, v)
		}
		return fmt.Errorf("--%s %v: must not be negative", f.Name, v)
	case r == positive && !(x > 0):
		return fmt.Errorf("--%s %v: must be positive", f.Name, v)
	case r == share && !(x >= 0 && x <= 1): // NaN too
		return fmt.Errorf("--%s %v: must be between 0 and 1", f.Name, v)
	case r == urlPath && !strings.HasPrefix(fmt.Sprint(v), "/"):
		return fmt.Errorf("--%s %q: must start with /", f.Name, v)
	case r == headerName && fmt.Sprint(v) != "" && !http1.IsToken([]byte(fmt.Sprint(v))):
		return fmt.Errorf("--%s %q: must be a header field name", f.Name, v)
	}
	return nil
}

// cancelMethodFlag is --cancel-method: lsp, mcp, or method:member, each
// a handler.CancelMethod.
type cancelMethodFlag struct{ list *[]handler.CancelMethod }

func (f cancelMethodFlag) String() string {
	if f.list == nil { // the flag package's zero Value
		return ""
	}
	names := make([]string, len(*f.list))
	for i, m := range *f.list {
		names[i] = m.Method + ":" + m.IDMember
	}
	return strings.Join(names, ",")
}

func (f cancelMethodFlag) Set(v string) error {
	for e := range strings.SplitSeq(v, ",") {
		switch e = strings.TrimSpace(e); e {
		case "lsp", handler.LSPCancel.Method:
			*f.list = append(*f.list, handler.LSPCancel)
		case "mcp", handler.MCPCancel.Method:
			*f.list = append(*f.list, handler.MCPCancel)
		default:
			i := strings.LastIndexByte(e, ':')
			if i <= 0 || i == len(e)-1 {
				return fmt.Errorf("%q: want lsp, mcp, or method:member", e)
			}
			*f.list = append(*f.list, handler.CancelMethod{Method: e[:i], IDMember: e[i+1:]})
		}
	}
	return nil
}

// cancelReplyFlag is --cancel-reply: error or none.
type cancelReplyFlag struct{ r *handler.CancelReply }

func (f cancelReplyFlag) String() string {
	if f.r != nil && *f.r == handler.CancelReplyNone {
		return "none"
	}
	return "error"
}

func (f cancelReplyFlag) Set(v string) error {
	switch v {
	case "error":
		*f.r = handler.CancelReplyError
	case "none":
		*f.r = handler.CancelReplyNone
	default:
		return fmt.Errorf("%q: want error or none", v)
	}
	return nil
}
