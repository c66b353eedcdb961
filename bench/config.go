package bench

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultConns    = 64
	DefaultDuration = 10 * time.Second
	DefaultWarmup   = time.Second
	DefaultMethod   = "add"
	DefaultParams   = "[1,2]"
	// DefaultTimeout is how long a reply may take before the request
	// counts as lost and its connection is reopened.
	DefaultTimeout = 10 * time.Second
)

// Config describes one load test. The zero value of a field means its
// default.
type Config struct {
	// Target is the server: http://host:port/path, ws://host:port/path
	// (WebSocket), https:// and wss:// (TLS, see TLS), tcp://host:port or
	// unix:///path.
	Target string
	// Conns is the number of connections; 0 means DefaultConns, a
	// negative value is an error.
	Conns int
	// Duration is how long to measure, after Warmup; default
	// DefaultDuration. Ignored when Requests is set.
	Duration time.Duration
	// Requests, when positive, stops the test after that many requests.
	Requests int64
	// Warmup is run first and not measured; default DefaultWarmup; a
	// negative value means none.
	Warmup time.Duration
	// Rate is the total request rate of an open loop, in requests per
	// second, spread evenly over the connections; latency is then measured
	// from each request's intended send time, so that a server that
	// stalls cannot hide it (no coordinated omission). 0 means a closed
	// loop: each connection sends as fast as the server answers. Over a
	// stream (tcp, unix, ws), a closed loop needs a call among the
	// messages: the server never answers a notification.
	Rate float64
	// Schedule, when set, makes the open loop's rate change over the run
	// (ParseSchedule): its stages, each a rate held or ramped, set the
	// measured duration (Duration must be 0, and Rate too); the warm-up
	// runs at the first stage's rate.
	Schedule []Stage
	// Pipeline is how many requests a connection keeps in flight; 0 means
	// 1 (no pipelining), a negative value is an error.
	Pipeline int
	// Batch is the number of calls per request; 0 or 1 means single
	// requests, more means a batch array, a negative value is an error.
	Batch int
	// Notify is the share of calls sent as notifications (0 to 1).
	Notify float64
	// Method and Params make the calls; defaults DefaultMethod and
	// DefaultParams. Params is JSON text (an array or an object) or "".
	Method string
	Params string
	// Bodies, when set, replaces Method, Params, Batch and Notify: the
	// messages are sent in turn, their ids replaced by the tool's own
	// (a call without id is a notification).
	Bodies [][]byte
	// Workload, when set, replaces Method, Params, Notify and Bodies:
	// the calls of its mix (LoadWorkload), their params templated, each
	// reply checked against the call's Expect; Batch still groups them.
	Workload *Workload
	// ExpectError says the calls are expected to fail: a result is then
	// counted as an error, and an error reply is not.
	ExpectError bool
	// NoCheck only frames replies, without checking them: for servers
	// that answer with a fixed text, such as the ceilings of bench/peers.
	// Results of such a run say nothing about correctness.
	NoCheck bool
	// Timeout bounds the wait for a reply; default DefaultTimeout. After
	// the measured window, Run waits up to Timeout for the replies in
	// flight, then counts the measured requests still unanswered as
	// timeouts, with their latency until then.
	Timeout time.Duration
	// Progress, when set, receives a line each second.
	Progress io.Writer

	// Header holds extra headers sent with every HTTP request and with
	// the WebSocket upgrade request (not with the frames after it); nil
	// means none. Names are written as the map holds them (http.Header's
	// Add and Set make them canonical), in sorted order. A name must be
	// an HTTP token and a value must hold no control character but tab
	// (no CR or LF); the headers the tool writes itself (Host,
	// Content-Length, Content-Type, Transfer-Encoding, Connection,
	// Upgrade, Sec-WebSocket-*) are refused, and so is Authorization with
	// a JWTSecret. A tcp:// or unix:// target has no headers: Header or
	// JWTSecret with one is an error. ParseHeader reads "Name: Value".
	Header http.Header
	// JWTSecret, when set, is the key of the HS256 JWT sent as
	// "Authorization: Bearer <token>", whose only claim is iat, the
	// authentication of Ethereum's Engine API (geth's node.NewJWTAuth);
	// ParseJWTSecret reads geth's jwt.hex. nil or empty means none. The
	// token is minted before the first connection is opened and again
	// every JWTRefresh: HTTP requests carry the token current when they
	// are built, a WebSocket the one current at its (re)connection.
	JWTSecret []byte
	// JWTRefresh is how often the JWT is re-minted with a fresh iat;
	// default DefaultJWTRefresh, a negative value is an error. Servers
	// accept an iat within a window (geth: ±60 s), so it must stay
	// shorter than that window; an interval under a second only mints
	// the same iat again.
	JWTRefresh time.Duration
	// TraceSample is the share of requests (0 to 1) that carry a W3C
	// traceparent header, "00-<trace id>-<span id>-01": fresh random ids
	// each time, the sampled flag set, so that a server which traces
	// (jetrpc serve --otlp-endpoint) records those calls whatever its own
	// ratio. Over HTTP each request is drawn alone; a WebSocket has one
	// upgrade request per connection, so the draw is made at each
	// (re)connection and the traceparent covers all the connection's
	// calls. 0 means none; outside 0 to 1 is an error, and so is a share
	// above 0 with a tcp:// or unix:// target (a stream has no headers)
	// or with a traceparent in Header.
	TraceSample float64

	// TLS configures the client side of https:// and wss:// targets;
	// nil means the system's roots. Its ServerName, when empty, is the
	// target's host. The event loops read raw sockets, so a TLS target's
	// connections each run on a goroutine of their own, in the closed
	// loop too.
	TLS *tls.Config

	// MetricsURL, when set, is the server's Prometheus metrics
	// (http://host:port/metrics of a jetrpc server): Run reads them when
	// the measured window opens (after Warmup) and when it closes, and
	// puts the server's own view of the window in Result.Server. A failed
	// read is reported there, not as an error of Run. "" means none.
	MetricsURL string

	// Compression lists the content codings HTTP replies may come in,
	// CodingGzip and CodingZstd, in the order the Accept-Encoding header
	// of every request names them ("Accept-Encoding: gzip, zstd"): a
	// reply whose Content-Encoding is one of them is decoded before its
	// checks, and Result.CompressedReplies counts it. nil means none: no
	// Accept-Encoding is sent. Only with an http:// or https:// target;
	// an Accept-Encoding in Header then is an error. (An Accept-Encoding
	// in Header without Compression also has its gzip and zstd replies
	// decoded.) Any other Content-Encoding is an ErrEncoding error.
	Compression []string
	// WSCompression makes the WebSocket upgrade offer permessage-deflate
	// (RFC 7692) with server_no_context_takeover and
	// client_no_context_takeover; a message from a server that accepted
	// it with RSV1 set is inflated before its checks, and counted in
	// Result.CompressedReplies. The client's own messages are sent raw
	// (uncompressed), which RFC 7692 allows. A server that declines gets
	// raw frames as without it; one that accepts without
	// server_no_context_takeover fails the upgrade (ErrWebSocket). Only
	// with a ws:// or wss:// target.
	WSCompression bool
}

// target is a parsed Config.Target.
type target struct {
	http    bool
	ws      bool     // WebSocket: a handshake, then one message per frame
	wsURL   *url.URL // WebSocket: the target
	network string   // tcp or unix
	tls     bool     // https:// or wss://: TLS over the connection
	address string
	host    string // Host header
	path    string // request target
}

func parseTarget(s string) (target, error) {
	switch {
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "ws://"),
		strings.HasPrefix(s, "https://"), strings.HasPrefix(s, "wss://"):
		u, err := url.Parse(s)
		if err != nil {
			return target{}, err
		}
		if u.Hostname() == "" {
			return target{}, fmt.Errorf("target %q has no host", s)
		}
		path := u.RequestURI()
		if path == "" {
			path = "/"
		}
		secure := u.Scheme == "https" || u.Scheme == "wss"
		addr := u.Host
		if u.Port() == "" && secure {
			addr = net.JoinHostPort(u.Hostname(), "443")
		} else if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
		t := target{http: u.Scheme == "http" || u.Scheme == "https", tls: secure, network: "tcp", address: addr, host: u.Host, path: path}
		if u.Scheme == "ws" || u.Scheme == "wss" {
			t.ws, t.wsURL = true, u
		}
		return t, nil
	case strings.HasPrefix(s, "tcp://"), strings.HasPrefix(s, "unix://"):
		network, address, _ := strings.Cut(s, "://")
		if address == "" {
			return target{}, fmt.Errorf("target %q has no address", s)
		}
		return target{network: network, address: address}, nil
	}
	return target{}, fmt.Errorf("target %q must start with http://, https://, ws://, wss://, tcp:// or unix://", s)
}

// fill applies the defaults and checks the config.
func (c *Config) fill() error {
	switch {
	case c.Conns < 0:
		return errors.New("a negative number of connections")
	case c.Pipeline < 0:
		return errors.New("a negative pipeline depth")
	case c.Batch < 0:
		return errors.New("a negative batch size")
	case !(c.Notify >= 0 && c.Notify <= 1): // NaN too
		return errors.New("the notification share must be between 0 and 1")
	case !(c.Rate >= 0) || math.IsInf(c.Rate, 0): // NaN too
		return errors.New("the rate must be a finite number of requests/s, 0 or more")
	case c.Batch > 10000:
		return errors.New("batches of more than 10000 calls")
	case c.Pipeline > 4096:
		return errors.New("a pipeline deeper than 4096")
	case c.JWTRefresh < 0:
		return errors.New("a negative JWT refresh interval")
	}
	if len(c.Schedule) > 0 {
		switch {
		case c.Rate != 0:
			return errors.New("a rate and a schedule: the schedule sets the rate")
		case c.Duration != 0 || c.Requests != 0:
			return errors.New("a duration (or a request count) and a schedule: the schedule sets the duration")
		}
		for _, st := range c.Schedule {
			if st.Duration <= 0 || !(st.From >= 0) || !(st.To >= 0) || math.IsInf(st.From, 0) || math.IsInf(st.To, 0) {
				return errors.New("a schedule stage needs a positive duration and finite rates, 0 or more")
			}
		}
		c.Duration = scheduleDuration(c.Schedule)
	}
	if err := checkMetricsURL(c.MetricsURL); err != nil {
		return err
	}
	if c.Conns == 0 {
		c.Conns = DefaultConns
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
	}
	if c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.Pipeline == 0 {
		c.Pipeline = 1
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Method == "" {
		c.Method = DefaultMethod
	}
	if c.Params == "" && c.Bodies == nil {
		c.Params = DefaultParams
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.JWTRefresh == 0 {
		c.JWTRefresh = DefaultJWTRefresh
	}
	return nil
}
