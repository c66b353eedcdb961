package engine

import (
	"log/slog"
	"net"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// Defaults of Options.
const (
	// DefaultAddr is where an engine listens when given no address.
	DefaultAddr = "tcp://127.0.0.1:8080"
	// DefaultMaxHeaderSize bounds the head of an HTTP request.
	DefaultMaxHeaderSize = 8 << 10
	// DefaultMaxConns bounds open connections (and is lowered to what the
	// process's file descriptor limit allows).
	DefaultMaxConns = 100_000
	// DefaultMaxInFlight bounds the messages of one connection running on
	// workers at once, and the HTTP replies one connection holds for
	// request order; more are left unread until some finish: on Linux
	// the socket is not polled meanwhile, so TCP holds the client back in
	// the kernel. Elsewhere a client that meanwhile sends more than
	// MaxMessageSize+MaxHeaderSize is closed, so that unread input stays
	// bounded.
	DefaultMaxInFlight = 128
	// DefaultMaxPendingOutput bounds the reply bytes a connection may
	// leave unsent; past it the connection is not read until the client
	// reads (on Linux TCP holds the client's writes back), and the write
	// timeout closes a client that reads nothing.
	DefaultMaxPendingOutput = 4 << 20
	// DefaultIdleTimeout closes connections idle that long.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultFirstByteTimeout closes a connection that has sent nothing
	// that long after it was accepted: one that holds a MaxConns slot
	// without a word is gone well before the idle timeout.
	DefaultFirstByteTimeout = 10 * time.Second
	// DefaultReadTimeout closes a connection whose message has been
	// incomplete that long (slowloris).
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout closes a connection whose unsent replies have
	// not shrunk for that long: the client stopped reading. A client that
	// reads slowly but steadily is not cut off.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultWSPath is the path where HTTP GET with Upgrade: websocket
	// switches a connection to WebSocket.
	DefaultWSPath = "/"
	// DefaultPingInterval: a WebSocket client silent that long is pinged
	// (the idle timeout then closes one that does not answer).
	DefaultPingInterval = 30 * time.Second
	// DefaultMaxPushQueue bounds the bytes one connection that gets
	// server messages may hold unsent — its unsent output (replies and
	// server messages) and its queued server messages together; a server
	// message that would pass it disconnects the client.
	DefaultMaxPushQueue = 4 << 20
	// DefaultStreamWindow is the default of Options.StreamWindow: 32 KiB,
	// one part: 1,000 clients that stop reading their streamed results
	// hold about 64 MiB, the default budget, without being disconnected.
	DefaultStreamWindow = 32 << 10
	// DefaultSSEKeepAlive is the default of Options.SSEKeepAlive.
	DefaultSSEKeepAlive = 15 * time.Second
	// DefaultMaxOutputBudget caps the default of Options.MaxOutputBudget,
	// the bytes of unsent replies and queued server messages of all
	// connections together: the default is this or a quarter of the
	// memory available to the process (physical memory, or a lower
	// cgroup limit), whichever is smaller. 64 MiB keeps what clients
	// that never read add to the RSS well under 512 MiB on any machine
	// (on 2 cores, 300 to 2,000 subscribers that never read: 132-392 MiB;
	// 1.7-2.7 GiB with the 1 GiB cap of before), while 10,000
	// subscribers that read hold a few KiB at once, far below it. A
	// server whose clients hold more at once in normal work — large
	// replies to many clients on slow links — needs a larger budget.
	DefaultMaxOutputBudget = 64 << 20
	// DefaultStopTimeout is how long Run waits, once its context is done,
	// for the requests in flight before it stops anyway.
	DefaultStopTimeout = 10 * time.Second
	// DefaultCloseNotice is the method name of the notification jetrpc
	// serve --close-notice sends before closing a connection when
	// stopping (Options.CloseNotice).
	DefaultCloseNotice = "server_closing"
)

// Options configures an Engine. The zero value means the defaults; each
// field's scope is the whole engine.
type Options struct {
	// Addrs are the listen addresses, "tcp://host:port" or
	// "unix:///path" (a bare "host:port" means tcp). Every listener serves
	// both HTTP/1.1 and raw JSON streams: the protocol is sniffed from a
	// connection's first byte. Port 0 picks a free port (see Addrs).
	// Default: DefaultAddr.
	Addrs []string
	// Loops is the number of event loops; 0 means GOMAXPROCS.
	Loops int
	// ReusePort sets SO_REUSEPORT on TCP listeners, so that several
	// processes can serve one port.
	ReusePort bool
	// Workers runs messages that need a worker (blocking methods,
	// batches with them, long batches). nil means a pool owned by the
	// engine, with pool.DefaultWorkers goroutines and pool.DefaultQueue
	// queued messages. It must not be the table's own pool (see
	// handler.Table.Workers): New panics if it is. When it is full,
	// messages are answered -32000 "Server busy" at once.
	Workers *pool.Workers
	// MaxMessageSize bounds one message: an HTTP body, a WebSocket message
	// or a value on a stream; 0 means parser.DefaultMaxSize (5 MiB).
	// HTTP: 413. Streams: a -32600 reply, then the connection is closed.
	MaxMessageSize int
	// Compression lists the content codings of HTTP replies and request
	// bodies, in the engine's order of preference: CodingGzip and
	// CodingZstd; none (nil, the default) turns compression off, and a
	// request then costs nothing more. A reply body of at least
	// CompressionMinSize bytes is compressed with the coding the
	// request's Accept-Encoding accepts with the highest q (the order
	// here breaking ties; "gzip;q=0" refuses gzip, a client that sends no
	// Accept-Encoding gets the body raw), and every 200 reply then says
	// Vary: Accept-Encoding; 204, the health check, pages and refusals
	// are never compressed. A request body whose Content-Encoding is a
	// coding listed here is inflated, its inflated size bounded by
	// MaxMessageSize (413 as soon as it passes it); any other
	// Content-Encoding but identity is refused 415. New panics on a name
	// it does not know.
	Compression []string
	// CompressionMinSize is the size, in bytes, of the smallest reply body
	// compressed, and of the smallest WebSocket reply or server message
	// compressed; 0 means DefaultCompressionMinSize. Only with
	// Compression or WSCompression.
	CompressionMinSize int
	// WSCompression, when set, negotiates WebSocket permessage-deflate
	// (RFC 7692) with clients that offer it, always without context
	// takeover either way (the answer says server_no_context_takeover
	// and client_no_context_takeover): each message is compressed on
	// its own, on the event loop, and a connection keeps no compression
	// memory between messages. A reply or server message of at least
	// CompressionMinSize bytes is then sent compressed when that makes it
	// smaller; a compressed message from the client is inflated, its
	// inflated size bounded by MaxMessageSize (close 1009 as soon as it
	// passes it). Off by default: no offer is answered, and a frame with
	// RSV1 set closes the connection (1002).
	WSCompression bool
	// MaxHeaderSize bounds an HTTP request head; 0 means
	// DefaultMaxHeaderSize. Past it: 431 and close.
	MaxHeaderSize int
	// MaxConns bounds open connections; 0 means DefaultMaxConns. Excess
	// connections are closed as soon as they are accepted.
	MaxConns int
	// MaxInFlight bounds one connection's messages on workers; 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// MaxPendingOutput bounds one connection's unsent output, in bytes;
	// 0 means DefaultMaxPendingOutput. Past it the connection is not read
	// (the replies of one read may take it over), and its server messages
	// wait in its queue. A connection that gets server messages is, in
	// addition, disconnected once its unsent output and queued server
	// messages would pass MaxPushQueue.
	MaxPendingOutput int
	// IdleTimeout, ReadTimeout and WriteTimeout: see the defaults; 0 means
	// the default, a negative value disables the timeout.
	IdleTimeout, ReadTimeout, WriteTimeout time.Duration
	// FirstByteTimeout closes a connection that has sent no byte that
	// long after it was accepted (checked once a second, counted in
	// Stats.Closed.Idle); 0 means DefaultFirstByteTimeout, negative
	// leaves such a connection to IdleTimeout.
	FirstByteTimeout time.Duration
	// Pages are documents served on HTTP GET of their paths, beside
	// JSON-RPC (see Page); none by default.
	Pages []Page
	// HTTPPolicy is the policy of HTTP requests' heads, the same as
	// handler.HTTPHandler's: HealthPath ("" means httprules.DefaultHealthPath, "-"
	// none), Ready (the readiness check the health check consults, on
	// the event loop: fast, never blocking; see also
	// Engine.SetNotReady), CORS (its Origins also bound WebSocket handshakes), Hosts
	// and StrictHosts, Authorize (asked, besides, about each stream
	// connection from its address alone), AuthOptional (callers without
	// credentials go on anonymous — every stream connection, then — but
	// Pages still need credentials), TrustedProxies.
	handler.HTTPPolicy
	// MethodHeader names an HTTP header field that carries the method of
	// a POST's call (such as "Mcp-Method"), for routing before the body:
	// a request that has it is checked by the method's name — it exists,
	// the caller holds its grants, its rate limits allow it — before its
	// body is parsed, and refused at once (404, 403 or 429, with a
	// JSON-RPC error and id null) without parsing it; once read, a body
	// that is not one request of that method (another method, a batch) is
	// refused 400 with a -32600 reply. A malformed value (empty, given
	// twice, over MaxMethodHeaderLen bytes, not visible ASCII) is refused
	// 400. A request without the field is served as before. "" (the
	// default) turns it off; a name that is not a header field name
	// panics in New. See methodheader.go's NOTE.
	MethodHeader string
	// WSPath is where an HTTP GET with Upgrade: websocket becomes a
	// WebSocket (RFC 6455); "" means DefaultWSPath. Each text or binary
	// message is one JSON-RPC message or batch; every reply and every
	// server message is a text message (JSON is UTF-8, and browsers hand
	// binary messages over as Blobs).
	WSPath string
	// AcceptConn, when set, is asked about each new connection as it is
	// accepted, before any byte of it is read; false closes it at once
	// (IP allow and deny lists: handler/auth.IPFilter). It runs on the
	// listener's accept goroutine, and a slow one slows accepting.
	AcceptConn func(remote net.Addr) bool
	// PingInterval: a WebSocket client that has sent nothing that long is
	// pinged; 0 means DefaultPingInterval, negative disables pings. The
	// idle timeout of a WebSocket counts from the client's last frame,
	// pongs included.
	PingInterval time.Duration
	// MaxPushQueue bounds, in bytes, what a connection that gets server
	// messages (handler.Conn.Send) may hold unsent: its unsent output —
	// replies and server messages written but not yet taken by the
	// kernel — and its queued server messages, together; 0 means
	// DefaultMaxPushQueue. A server message that would take it past the
	// bound is refused with handler.ErrSlowConsumer and the client is
	// disconnected: a client that stops reading costs the server at most
	// this (plus what the kernel's socket buffers take), not this on top
	// of MaxPendingOutput. A client that reads steadily holds little; one
	// that also gets replies about as large as the bound (see
	// handler.WithMaxResponseSize) needs a bound above them, since a
	// server message that arrives while such a reply waits would pass it.
	MaxPushQueue int
	// StreamWindow bounds, in bytes, what the engine holds of one
	// streamed reply (handler.RegisterStream): the method's parts queued
	// for the connection wait beyond it (the method is paused until the
	// client reads), and a part is written only when it fits the
	// connection's unsent output within it (or nothing is unsent). A
	// streamed reply thus holds at most about twice the window — or two
	// parts when a part is larger (32 KiB, or one element when larger) —
	// counted in MaxOutputBudget, whatever its size. 0 means
	// DefaultStreamWindow.
	StreamWindow int
	// SSE answers a POST whose Accept takes text/event-stream with an
	// event stream (Server-Sent Events) when its call sends messages
	// while it runs: handler.ConnFrom gives the call a Conn of its own,
	// and each message it sends (handler.Notify: progress, logs) is an
	// event before the reply's; with Accept taking only
	// text/event-stream every reply is one. Off by default: ConnFrom then
	// gives an HTTP call the connection, which cannot push.
	SSE bool
	// SSEKeepAlive is how often an event stream held open past its reply
	// (a subscription's, waiting for its notifications) gets a comment
	// line, so that proxies and clients do not take it for dead. 0 means
	// DefaultSSEKeepAlive; negative, none.
	SSEKeepAlive time.Duration
	// MaxOutputBudget bounds, in bytes, what the server holds for all its
	// connections together: their unsent replies (gnet's output buffers)
	// and their queued server messages. 0 means the smaller of
	// DefaultMaxOutputBudget and a quarter of the memory available to the
	// process (physical, or a lower cgroup limit); negative disables it.
	// Past 3/4 of it, a connection holding more than its share (3/4 of
	// the budget over the connections holding any) is not read until it
	// is back under; over the budget for half a second, or 1/8 over it at
	// once, the connections holding the most are disconnected, largest
	// first, until the rest hold under 3/4 of it (a warning log each).
	// Clients that read their replies are not affected. The process's RSS
	// grows by more than the budget counts: about twice it, plus about
	// 0.1 MiB for each connection holding bytes (see the package doc,
	// Memory budget).
	MaxOutputBudget int
	// StopTimeout is how long Run (and Wait) waits for the requests in
	// flight once its context is done (see Stop); 0 means
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// DrainGrace is how long Run (and Wait) keeps serving once its
	// context is done, with the health check answering 503 (Drain),
	// before it stops: the time a load balancer's health check needs to
	// take the node out of its pool, for rolling deploys. 0 (the default)
	// stops at once.
	DrainGrace time.Duration
	// CloseNotice, when not empty, is the method of a notification sent
	// to every WebSocket and stream client just before the engine closes
	// its connection when stopping (after the replies in flight):
	// {"jsonrpc":"2.0","method":CloseNotice,"params":{"reason":"server stopping"}}.
	// A client that gets it can reconnect, to another node behind the
	// load balancer, and subscribe again. A WebSocket then gets the close
	// code 1001 (going away), with or without it. DefaultCloseNotice is
	// the name jetrpc serve uses.
	CloseNotice string
	// Logger receives the engine's logs (and gnet's warnings and errors);
	// nil means slog.Default().
	Logger *slog.Logger
}

// Option sets fields of Options; New applies its options in order, then
// the defaults (fill). The With setters below are thin conveniences: a
// field without one is set with WithOptions, or with an Option of one's
// own — any func(*Options).
type Option func(*Options)

// WithOptions sets every field of Options to o's: the whole
// configuration in one value, as jetrpc serve builds it from its flags.
// Options after it change single fields of it.
func WithOptions(o Options) Option { return func(p *Options) { *p = o } }

// WithAddrs sets Options.Addrs.
func WithAddrs(addrs ...string) Option {
	return func(o *Options) { o.Addrs = append([]string(nil), addrs...) }
}

// WithLoops sets Options.Loops.
func WithLoops(n int) Option { return func(o *Options) { o.Loops = n } }

// WithReusePort sets Options.ReusePort.
func WithReusePort(on bool) Option { return func(o *Options) { o.ReusePort = on } }

// WithWorkers sets Options.Workers.
func WithWorkers(w *pool.Workers) Option { return func(o *Options) { o.Workers = w } }

// WithMaxMessageSize sets Options.MaxMessageSize.
func WithMaxMessageSize(n int) Option { return func(o *Options) { o.MaxMessageSize = n } }

// WithCompression sets Options.Compression, the content codings in
// preference order (CodingGzip, CodingZstd).
func WithCompression(codings ...string) Option {
	return func(o *Options) { o.Compression = codings }
}

// WithWSCompression sets Options.WSCompression.
func WithWSCompression(on bool) Option { return func(o *Options) { o.WSCompression = on } }

// WithCompressionMinSize sets Options.CompressionMinSize.
func WithCompressionMinSize(n int) Option { return func(o *Options) { o.CompressionMinSize = n } }

// WithMaxHeaderSize sets Options.MaxHeaderSize.
func WithMaxHeaderSize(n int) Option { return func(o *Options) { o.MaxHeaderSize = n } }

// WithMaxConns sets Options.MaxConns.
func WithMaxConns(n int) Option { return func(o *Options) { o.MaxConns = n } }

// WithMaxInFlight sets Options.MaxInFlight.
func WithMaxInFlight(n int) Option { return func(o *Options) { o.MaxInFlight = n } }

// WithMaxPendingOutput sets Options.MaxPendingOutput.
func WithMaxPendingOutput(n int) Option { return func(o *Options) { o.MaxPendingOutput = n } }

// WithTimeouts sets Options.IdleTimeout, ReadTimeout and WriteTimeout.
func WithTimeouts(idle, read, write time.Duration) Option {
	return func(o *Options) { o.IdleTimeout, o.ReadTimeout, o.WriteTimeout = idle, read, write }
}

// WithHealthPath sets Options.HealthPath.
func WithHealthPath(p string) Option { return func(o *Options) { o.HealthPath = p } }

// WithReady sets Options.Ready, the readiness check the health check
// consults: it must be fast and must not block (it runs on the event
// loop, on every health check).
func WithReady(f func() error) Option { return func(o *Options) { o.Ready = f } }

// WithMethodHeader sets Options.MethodHeader.
func WithMethodHeader(name string) Option { return func(o *Options) { o.MethodHeader = name } }

// WithWSPath sets Options.WSPath.
func WithWSPath(p string) Option { return func(o *Options) { o.WSPath = p } }

// WithCORS sets Options.CORS.Origins (and keeps its other fields).
func WithCORS(origins ...string) Option {
	return func(o *Options) { o.CORS.Origins = append([]string(nil), origins...) }
}

// WithCORSHeaders sets Options.CORS.Headers: the request headers a
// cross-origin page may send (a preflight's Access-Control-Allow-Headers);
// with none, httprules.DefaultCORSHeaders. It keeps CORS's other fields.
func WithCORSHeaders(headers ...string) Option {
	return func(o *Options) { o.CORS.Headers = append([]string(nil), headers...) }
}

// WithCORSMaxAge sets Options.CORS.MaxAge: how long a browser may cache
// a preflight's answer (0: httprules.DefaultCORSMaxAge; negative: no
// Access-Control-Max-Age). It keeps CORS's other fields.
func WithCORSMaxAge(d time.Duration) Option { return func(o *Options) { o.CORS.MaxAge = d } }

// WithHTTPPolicy sets Options.HTTPPolicy, every field of it.
func WithHTTPPolicy(p handler.HTTPPolicy) Option { return func(o *Options) { o.HTTPPolicy = p } }

// WithHosts sets Options.Hosts.
func WithHosts(hosts ...string) Option {
	return func(o *Options) { o.Hosts = append([]string(nil), hosts...) }
}

// WithStrictHosts sets Options.StrictHosts.
func WithStrictHosts(on bool) Option { return func(o *Options) { o.StrictHosts = on } }

// WithAcceptConn sets Options.AcceptConn.
func WithAcceptConn(f func(remote net.Addr) bool) Option {
	return func(o *Options) { o.AcceptConn = f }
}

// WithAuthorize sets Options.Authorize.
func WithAuthorize(a handler.Authorizer) Option { return func(o *Options) { o.Authorize = a } }

// WithAuthOptional sets Options.AuthOptional: callers without
// credentials go on anonymous, with no grants.
func WithAuthOptional(on bool) Option { return func(o *Options) { o.AuthOptional = on } }

// WithPingInterval sets Options.PingInterval.
func WithPingInterval(d time.Duration) Option { return func(o *Options) { o.PingInterval = d } }

// WithSSEKeepAlive sets Options.SSEKeepAlive.
func WithSSEKeepAlive(d time.Duration) Option { return func(o *Options) { o.SSEKeepAlive = d } }

// WithSSE sets Options.SSE.
func WithSSE(on bool) Option { return func(o *Options) { o.SSE = on } }

// WithStreamWindow sets Options.StreamWindow.
func WithStreamWindow(n int) Option { return func(o *Options) { o.StreamWindow = n } }

// WithMaxPushQueue sets Options.MaxPushQueue.
func WithMaxPushQueue(n int) Option { return func(o *Options) { o.MaxPushQueue = n } }

// WithMaxOutputBudget sets Options.MaxOutputBudget.
func WithMaxOutputBudget(n int) Option { return func(o *Options) { o.MaxOutputBudget = n } }

// WithStopTimeout sets Options.StopTimeout.
func WithStopTimeout(d time.Duration) Option { return func(o *Options) { o.StopTimeout = d } }

// WithDrainGrace sets Options.DrainGrace.
func WithDrainGrace(d time.Duration) Option { return func(o *Options) { o.DrainGrace = d } }

// WithCloseNotice sets Options.CloseNotice.
func WithCloseNotice(method string) Option { return func(o *Options) { o.CloseNotice = method } }

// WithTrustedProxies sets Options.TrustedProxies.
func WithTrustedProxies(p httprules.Proxies) Option { return func(o *Options) { o.TrustedProxies = p } }

// WithLogger sets Options.Logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// fill applies the defaults: the one place where a zero (or, where a
// field's doc says so, negative) value becomes its field's default, and
// out-of-range values are normalised. New calls it after the options;
// nothing else reads an unfilled Options.
func (o *Options) fill() {
	if len(o.Addrs) == 0 {
		o.Addrs = []string{DefaultAddr}
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = parser.DefaultMaxSize
	}
	if o.CompressionMinSize <= 0 {
		o.CompressionMinSize = DefaultCompressionMinSize
	}
	if o.MaxHeaderSize <= 0 {
		o.MaxHeaderSize = DefaultMaxHeaderSize
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxPendingOutput <= 0 {
		o.MaxPendingOutput = DefaultMaxPendingOutput
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.FirstByteTimeout, DefaultFirstByteTimeout)
	if o.HealthPath == "" {
		o.HealthPath = httprules.DefaultHealthPath
	}
	if o.WSPath == "" {
		o.WSPath = DefaultWSPath
	}
	def(&o.PingInterval, DefaultPingInterval)
	if o.SSEKeepAlive == 0 {
		o.SSEKeepAlive = DefaultSSEKeepAlive
	}
	if o.StreamWindow <= 0 {
		o.StreamWindow = DefaultStreamWindow
	}
	if o.MaxPushQueue <= 0 {
		o.MaxPushQueue = DefaultMaxPushQueue
	}
	if o.MaxOutputBudget == 0 {
		o.MaxOutputBudget = defaultOutputBudget(availableMemory())
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.DrainGrace < 0 {
		o.DrainGrace = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
