package natsbroker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"

	"github.com/jetrpc/jetrpc/handler/topics"
)

// NOTE: broker.go holds the Broker (Connect, Subscribe, Publish, the
// accessors), its options, and subscription, the guard around one NATS
// subscription that keeps deliver from being called after stop.

// Defaults of the options.
const (
	// DefaultPrefix is the subject prefix: topic T is published on the
	// subject "jetrpc.topic.T".
	DefaultPrefix = "jetrpc.topic"
	// DefaultName is the connection name the NATS server reports
	// (monitoring, logs).
	DefaultName = "jetrpc"
	// DefaultReconnectWait is the pause between two reconnect attempts
	// (plus the NATS client's jitter, 100 ms without TLS, 1 s with).
	DefaultReconnectWait = time.Second
	// DefaultPingInterval is the interval of the client's pings; a server
	// that answers none of two in a row (nats.MaxPingsOutstanding) is
	// taken as gone and the client reconnects. NATS's own default, 2
	// minutes, leaves a node cut off for minutes after a silent network
	// failure.
	DefaultPingInterval = 20 * time.Second
	// DefaultFlushTimeout bounds Subscribe's wait for the server to
	// acknowledge a subscription.
	DefaultFlushTimeout = 2 * time.Second
	// DefaultPendingMsgs is the number of messages a subscription queues
	// before it drops (nats.DefaultSubPendingMsgsLimit is 500,000).
	DefaultPendingMsgs = 1 << 20
	// DefaultPendingBytes is the number of payload bytes a subscription
	// queues before it drops (nats.DefaultSubPendingBytesLimit is 64 MiB).
	DefaultPendingBytes = 128 << 20
)

// Option configures Connect.
type Option func(*config)

// config is what the options set; Connect reads it once.
type config struct {
	log          *slog.Logger
	prefix       string
	name         string
	natsOpts     []nats.Option
	flushTimeout time.Duration
	pendingMsgs  int
	pendingBytes int
}

// WithLogger sets the logger of the connection's events (disconnect,
// reconnect, close, slow consumer) and of the broker's errors. nil, the
// default, means the process's default logger, slog.Default(), as it is
// when each record is made: a program that sets its default
// (slog.SetDefault) after Connect still gets the broker's records in its
// format.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// processLogger is the logger of a broker given none: its records go to
// slog.Default() of the time they are made (processHandler).
var processLogger = slog.New(processHandler{})

// processHandler is a slog.Handler that hands each record to the handler
// of slog.Default() as it is at the time. WithAttrs and WithGroup return
// handlers derived from the default of their own time.
type processHandler struct{}

// Enabled asks the handler of slog.Default().
func (processHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return slog.Default().Handler().Enabled(ctx, l)
}

// Handle hands r to the handler of slog.Default().
func (processHandler) Handle(ctx context.Context, r slog.Record) error {
	return slog.Default().Handler().Handle(ctx, r)
}

// WithAttrs returns the handler of slog.Default() with attrs.
func (processHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return slog.Default().Handler().WithAttrs(attrs)
}

// WithGroup returns the handler of slog.Default() with the group name.
func (processHandler) WithGroup(name string) slog.Handler {
	return slog.Default().Handler().WithGroup(name)
}

// WithPrefix sets the subject prefix, DefaultPrefix by default: topic T
// is published on prefix+"."+T. Every node of a service must use the
// same one. The prefix is one or more non-empty tokens separated by dots,
// without spaces or wildcards ("*", ">"); an empty prefix makes the
// subject the topic name itself. Connect refuses others.
func WithPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithName sets the connection name, DefaultName by default, that the
// NATS server shows in its monitoring (connz) and logs. Give each node
// its own.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithNATSOptions adds options of the NATS client, for anything else:
// TLS (nats.Secure, nats.RootCAs), credentials (nats.UserCredentials,
// nats.Token), timeouts, nats.ReconnectWait, nats.RetryOnFailedConnect.
// They are applied in order after the broker's defaults and WithName, and
// before what the broker forces: nats.NoEcho, reconnecting forever, and
// its disconnect, reconnect, close and error handlers (those given here
// are still called, after the broker's). Several calls add up.
func WithNATSOptions(opts ...nats.Option) Option {
	return func(c *config) { c.natsOpts = append(c.natsOpts, opts...) }
}

// WithFlushTimeout sets how long Subscribe waits, when connected, for
// the server to acknowledge a new subscription: DefaultFlushTimeout by
// default. d ≤ 0 does not wait; a message published on another node just
// after Subscribe returns may then be missed.
func WithFlushTimeout(d time.Duration) Option { return func(c *config) { c.flushTimeout = d } }

// WithPendingLimits sets how many messages and payload bytes each
// subscription queues before the NATS client drops the ones that arrive
// (see Limits in the package doc). 0 keeps the default (DefaultPendingMsgs,
// DefaultPendingBytes); a negative value means no limit.
func WithPendingLimits(msgs, bytes int) Option {
	return func(c *config) { c.pendingMsgs, c.pendingBytes = msgs, bytes }
}

// Broker is a topics.Broker over one NATS connection. Make it with
// Connect; its methods are safe from any goroutine.
type Broker struct {
	nc           *nats.Conn   // immutable; never nil
	log          *slog.Logger // immutable; never nil
	prefix       string       // immutable; DefaultPrefix or WithPrefix, without the dot
	servers      string       // immutable; Connect's url with credentials redacted, for messages
	flushTimeout time.Duration
	pendingMsgs  int
	pendingBytes int

	subs    atomic.Int64 // NATS subscriptions made and not yet stopped
	closing atomic.Bool  // Close was called: a disconnect is expected
}

var _ topics.Broker = (*Broker)(nil)

// errNilDeliver is Subscribe's error for a nil deliver.
var errNilDeliver = errors.New("natsbroker: nil deliver")

// Connect dials the NATS server(s) at url, one URL or several separated
// by commas ("nats://a:4222,nats://b:4222"), and returns the broker of
// one node. The connection is made with nats.NoEcho and reconnects
// forever; see the package doc for what happens while it is down.
//
// When no server of url answers (nothing listening, refused, timed out
// after nats.Timeout, 2 s by default), Connect returns an error naming
// url, with any user or password in it replaced by "xxxxx", and wrapping
// the NATS client's error (errors.Is nats.ErrNoServers). An invalid
// prefix is an error too. With nats.RetryOnFailedConnect(true) given to
// WithNATSOptions, Connect returns at once and the broker connects in
// the background.
func Connect(url string, opts ...Option) (*Broker, error) {
	c := config{
		prefix:       DefaultPrefix,
		name:         DefaultName,
		flushTimeout: DefaultFlushTimeout,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.log == nil {
		c.log = processLogger
	}
	if !validPrefix(c.prefix) {
		return nil, fmt.Errorf("natsbroker: invalid subject prefix %q: want dot-separated tokens without spaces or wildcards", c.prefix)
	}
	c.pendingMsgs = limitOrDefault(c.pendingMsgs, DefaultPendingMsgs)
	c.pendingBytes = limitOrDefault(c.pendingBytes, DefaultPendingBytes)
	b := &Broker{
		log:          c.log,
		prefix:       c.prefix,
		servers:      redactURLs(url),
		flushTimeout: c.flushTimeout,
		pendingMsgs:  c.pendingMsgs,
		pendingBytes: c.pendingBytes,
	}

	no := nats.GetDefaultOptions()
	no.Servers = splitURLs(url)
	no.Name = c.name
	no.ReconnectWait = DefaultReconnectWait
	no.PingInterval = DefaultPingInterval
	for _, o := range c.natsOpts {
		if o == nil {
			continue
		}
		if err := o(&no); err != nil {
			return nil, fmt.Errorf("natsbroker: option: %w", err)
		}
	}
	no.NoEcho = true // Topics delivers the node's own publications itself
	no.AllowReconnect = true
	no.MaxReconnect = -1
	b.chainHandlers(&no)

	nc, err := no.Connect()
	if err != nil {
		return nil, fmt.Errorf("natsbroker: connecting to %s: %w", b.servers, err)
	}
	b.nc = nc
	b.log.Info("natsbroker: connected", "url", nc.ConnectedUrlRedacted(), "name", no.Name)
	return b, nil
}

// chainHandlers sets the connection's event handlers to the broker's
// logging, followed by those already in o.
func (b *Broker) chainHandlers(o *nats.Options) {
	disconnected := o.DisconnectedErrCB
	o.DisconnectedErrCB = func(nc *nats.Conn, err error) {
		if b.closing.Load() {
			b.log.Debug("natsbroker: disconnected by Close", "servers", b.servers)
		} else {
			b.log.Warn("natsbroker: disconnected from NATS; reconnecting, messages between nodes are lost meanwhile", "servers", b.servers, "err", err)
		}
		if disconnected != nil {
			disconnected(nc, err)
		}
	}
	reconnected := o.ReconnectedCB
	o.ReconnectedCB = func(nc *nats.Conn) {
		b.log.Info("natsbroker: reconnected to NATS", "url", nc.ConnectedUrlRedacted(), "subscriptions", b.Subscriptions())
		if reconnected != nil {
			reconnected(nc)
		}
	}
	reconnectErr := o.ReconnectErrCB
	o.ReconnectErrCB = func(nc *nats.Conn, err error) {
		b.log.Debug("natsbroker: reconnect attempt failed", "servers", b.servers, "err", err)
		if reconnectErr != nil {
			reconnectErr(nc, err)
		}
	}
	closed := o.ClosedCB
	o.ClosedCB = func(nc *nats.Conn) {
		if b.closing.Load() {
			b.log.Info("natsbroker: connection closed", "servers", b.servers)
		} else {
			b.log.Error("natsbroker: connection closed by the NATS client; no more messages between nodes", "servers", b.servers, "err", nc.LastError())
		}
		if closed != nil {
			closed(nc)
		}
	}
	asyncErr := o.AsyncErrorCB
	o.AsyncErrorCB = func(nc *nats.Conn, sub *nats.Subscription, err error) {
		switch {
		case errors.Is(err, nats.ErrSlowConsumer) && sub != nil:
			dropped, _ := sub.Dropped()
			b.log.Warn("natsbroker: slow consumer: messages dropped", "subject", sub.Subject, "dropped", dropped)
		case sub != nil:
			b.log.Error("natsbroker: subscription error", "subject", sub.Subject, "err", err)
		default:
			b.log.Error("natsbroker: NATS error", "err", err)
		}
		if asyncErr != nil {
			asyncErr(nc, sub, err)
		}
	}
}

// Subject returns the NATS subject of topic: the prefix, a dot, and
// topic (topic alone when the prefix is empty). It does not check topic.
func (b *Broker) Subject(topic string) string {
	if b.prefix == "" {
		return topic
	}
	return b.prefix + "." + topic
}

// subjectBufLen fits the subject of any topic under a prefix of up to
// 256 bytes without allocating (see Publish).
const subjectBufLen = 256 + 1 + topics.MaxLen

// Subscribe implements topics.Broker: it makes one NATS subscription
// to the subject of topic, whose messages are passed to deliver, one at a
// time and in order, from the subscription's own goroutine; the payload
// is valid only during the call. deliver should not block: the messages
// of the topic queue behind it, up to the pending limits.
//
// When the connection is up, Subscribe waits (at most the flush timeout)
// until the server has the subscription, so that a message published on
// another node after Subscribe returns reaches it; a timeout is logged,
// not returned, as the subscription stands. When the connection is down,
// it returns at once: the NATS client sends the subscription when it
// reconnects. So Subscribe blocks for a round trip to the server: call it
// from a goroutine that may block, not from an event loop.
//
// stop unsubscribes; it may be called more than once and from any
// goroutine, but not from within deliver (it waits for a delivery in
// progress). After stop returns, deliver is not called again. stop after
// Close only releases the subscription's bookkeeping.
//
// Subscribe returns topics.ErrInvalidTopic for a name that
// topics.Valid refuses, and the NATS client's error otherwise
// (nats.ErrConnectionClosed once Close has been called, also while it
// waits).
func (b *Broker) Subscribe(topic string, deliver func(payload []byte)) (stop func(), err error) {
	if !topics.Valid(topic) {
		return nil, topics.ErrInvalidTopic
	}
	if deliver == nil {
		return nil, errNilDeliver
	}
	s := &subscription{b: b, deliver: deliver}
	ns, err := b.nc.Subscribe(b.Subject(topic), s.handle)
	if err != nil {
		return nil, fmt.Errorf("natsbroker: subscribing to %s: %w", b.Subject(topic), err)
	}
	if err := ns.SetPendingLimits(b.pendingMsgs, b.pendingBytes); err != nil {
		_ = ns.Unsubscribe()
		return nil, fmt.Errorf("natsbroker: subscribing to %s: %w", ns.Subject, err)
	}
	s.ns = ns
	b.subs.Add(1)
	if b.flushTimeout > 0 && b.nc.IsConnected() {
		if err := b.nc.FlushTimeout(b.flushTimeout); errors.Is(err, nats.ErrConnectionClosed) && b.nc.IsClosed() {
			s.stop()
			return nil, fmt.Errorf("natsbroker: subscribing to %s: %w", ns.Subject, err)
		} else if err != nil {
			b.log.Warn("natsbroker: the server did not confirm a subscription in time; it stands, messages published meanwhile may be missed",
				"subject", ns.Subject, "timeout", b.flushTimeout, "err", err)
		}
	}
	return s.stop, nil
}

// Publish implements topics.Broker: it publishes payload on the subject
// of topic. The server does not send it back to this connection
// (nats.NoEcho). It does not wait for the server: while connected the
// message is written by the NATS client's flusher (or at once when its
// write buffer is full); while disconnected it is kept in the reconnect
// buffer and sent on reconnect. It returns topics.ErrInvalidTopic for a
// name topics.Valid refuses, nats.ErrReconnectBufExceeded when that
// buffer is full, nats.ErrMaxPayload past the server's limit, and
// nats.ErrConnectionClosed after Close. The NATS client copies payload
// before Publish returns.
//
// Publish may block briefly: it takes the connection's lock, which the
// NATS client's flusher holds while it writes to the socket, and it
// writes itself when the client's write buffer (32 KiB) is full. Against
// a server that stops reading, that lasts up to nats.FlusherTimeout (1
// minute by default; set it with WithNATSOptions). A publication does
// not allocate.
func (b *Broker) Publish(topic string, payload []byte) error {
	if !topics.Valid(topic) {
		return topics.ErrInvalidTopic
	}
	// The subject is built in a local array: nats.Conn.Publish copies it
	// and keeps nothing (escape analysis keeps buf on the stack, so a
	// publication does not allocate).
	var buf [subjectBufLen]byte
	var subj string
	if len(b.prefix)+1+len(topic) <= len(buf) {
		p := buf[:0]
		if b.prefix != "" {
			p = append(append(p, b.prefix...), '.')
		}
		p = append(p, topic...)
		subj = unsafe.String(unsafe.SliceData(p), len(p))
	} else {
		subj = b.Subject(topic)
	}
	return b.nc.Publish(subj, payload)
}

// Conn returns the broker's NATS connection, for tests and metrics
// (Conn().Stats()). Closing it is closing the broker.
func (b *Broker) Conn() *nats.Conn { return b.nc }

// Connected reports whether the connection is up now.
func (b *Broker) Connected() bool { return b.nc.IsConnected() }

// Subscriptions returns the number of NATS subscriptions the broker
// holds: made by Subscribe and not yet stopped. With topics.Topics it is
// the number of topics with local subscribers. Close does not change it.
func (b *Broker) Subscriptions() int { return int(b.subs.Load()) }

// Close closes the connection: the server drops the node's
// subscriptions, and Subscribe and Publish fail with
// nats.ErrConnectionClosed afterwards. Publications still in the
// client's buffers are flushed first when the connection is up; those
// kept for a reconnect are lost. Calls after the first do nothing.
func (b *Broker) Close() {
	b.closing.Store(true)
	b.nc.Close()
}

// subscription is one NATS subscription made by Subscribe.
type subscription struct {
	b       *Broker            // immutable
	deliver func([]byte)       // immutable
	ns      *nats.Subscription // set before Subscribe returns; immutable after

	// nats.go may call the handler once more after Unsubscribe returns (a
	// message taken off the queue just before): a delivery holds mu and
	// checks stopped, and stop sets stopped under mu, so that no delivery
	// follows it.
	mu      sync.Mutex
	stopped bool // guarded by mu
}

// handle is the nats.MsgHandler of s: the subscription's goroutine only.
func (s *subscription) handle(m *nats.Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	defer func() {
		if r := recover(); r != nil { // a panic here would end the process
			s.b.log.Error("natsbroker: deliver panicked; message dropped", "subject", m.Subject, "panic", r)
		}
	}()
	s.deliver(m.Data)
}

// stop ends s: safe from any goroutine but s's deliver; idempotent.
func (s *subscription) stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.mu.Unlock()
	s.b.subs.Add(-1)
	err := s.ns.Unsubscribe()
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		s.b.log.Warn("natsbroker: unsubscribing", "subject", s.ns.Subject, "err", err)
	}
}

// validPrefix reports whether p is empty or dot-separated non-empty
// tokens without whitespace or wildcards.
func validPrefix(p string) bool {
	if p == "" {
		return true
	}
	for tok := range strings.SplitSeq(p, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return false
		}
	}
	return true
}

// limitOrDefault returns n, or def when n is 0 (negative: no limit).
func limitOrDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// splitURLs splits a comma-separated URL list as nats.Connect does.
func splitURLs(s string) []string {
	var urls []string
	for u := range strings.SplitSeq(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// redactURLs returns s, a comma-separated URL list, with the user
// information (user, password, token) of each URL replaced by "xxxxx".
func redactURLs(s string) string {
	urls := splitURLs(s)
	for i, u := range urls {
		at := strings.LastIndexByte(u, '@')
		if at < 0 {
			continue
		}
		if p, err := url.Parse(u); err == nil && p.User != nil && p.Host != "" {
			p.User = url.User("xxxxx")
			urls[i] = p.String()
			continue
		}
		start := strings.Index(u, "://")
		if start < 0 || start > at {
			start = 0
		} else {
			start += len("://")
		}
		urls[i] = u[:start] + "xxxxx" + u[at:]
	}
	return strings.Join(urls, ",")
}
