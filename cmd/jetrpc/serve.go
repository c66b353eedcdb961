package main

// NOTE: jetrpc serve: its usage text (its flags come from the table of
// serve_flags.go, which binds them to the fields of the engine's and the
// table's Options), the flag.Value types of --listen and the repeatable
// lists, and serve, which builds the table and the engine from those
// Options and serves until ctx is done (main's SIGINT or SIGTERM), then
// drains and stops (Engine.Wait).

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

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
	"github.com/jetrpc/jetrpc/handler/textlog"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/prometheus/client_golang/prometheus"
)

// filterDiscover reports whether rpc.discover answers each caller the
// methods its grants let it call: under --discover-by-grant, when
// callers have grants at all (--api-keys, --jwt-secret). Without
// authentication no caller holds a grant, and the document lists every
// method, as jetrpc openrpc prints it.
func (c *serveFlags) filterDiscover() bool {
	return c.discoverGrant && (c.apiKeys != "" || c.jwtSecret != "")
}

var serveUsage = commandUsage{
	dash: "--",
	head: `usage: jetrpc serve [--listen ADDR]... [flags]

jetrpc serve runs the bundled JSON-RPC 2.0 server on gnet event loops.
It answers the methods of the specification's examples (subtract, sum,
update, notify_hello, notify_sum, get_data), the benchmark methods echo,
add, sleep (a blocking method, run on a worker) and fail, range
({"n":N}: the array [0,…,N-1], a streamed result sent as it is made),
countdown ({"from":N,"interval_ms":M}: a countdown_progress notification
a step, over an HTTP event stream too, then "done"), the
subscription clock_subscribe/clock_unsubscribe (over an HTTP event stream
too, by POST or by a browser's EventSource), the topics
topic_subscribe/topic_unsubscribe/topic_publish, shared with other nodes
with --broker (package handler/demo), and admin_stats, which needs the "admin" grant (--api-keys, --jwt-secret).
With --mcp it is also an MCP server (package handler/demo/mcp) at /mcp.
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
	groups: serveGroups(), // the table of serve_flags.go
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
	err := serveCommand(ctx, args, stdout, stderr)
	if err == nil || errors.As(err, new(errUsage)) {
		return err
	}
	return commandErr{"serve", err}
}

// serveCommand is serve before its errors are marked as serve's: they
// say what went wrong without a prefix, and main prints them after
// "jetrpc serve: ".
func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newServeFlags()
	help, err := parseFlags(fs, &serveUsage, args, stdout, stderr)
	if help || err != nil {
		return err
	}
	if fs.NArg() == 1 && fs.Arg(0) == "help" { // jetrpc serve help
		serveUsage.write(stdout, fs)
		return nil
	}
	if fs.NArg() > 0 {
		return usageError(fs, &serveUsage, stderr,
			fmt.Errorf("unexpected argument %q (an address goes after --listen)", fs.Arg(0)))
	}
	if err := c.check(fs); err != nil {
		return err
	}
	setResp := false
	fs.Visit(func(f *flag.Flag) { setResp = setResp || f.Name == "max-response" })
	if !setResp && c.engine.MaxMessageSize > c.table.MaxResponseSize {
		c.table.MaxResponseSize = c.engine.MaxMessageSize // a reply may be as large as a message
	}
	metricsAddr, metricsPath, err := metricsFlag(c.metrics)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	if err := c.access(); err != nil {
		return err
	}
	if len(c.engine.Addrs) == 0 {
		c.engine.Addrs = []string{engine.DefaultAddr}
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
	c.table.Workers, c.table.Logger = elements, logger
	c.table.Metrics = c.metrics != ""
	c.table.AccessLog = c.accessLogOf(logger)
	tab := handler.NewTable(handler.WithOptions(c.table))
	tracer, stopTracing, err := c.tracing(logger)
	if err != nil {
		return err
	}
	defer stopTracing() // after the engine has stopped: the last spans are flushed
	if tracer != nil {
		tracer.Instrument(tab) // each call's span, and each batch's
	}
	var e *engine.Engine
	topics, brokerUp, closeBroker, err := topicsOf(c.broker, logger)
	if err != nil {
		return err
	}
	defer closeBroker()
	if err := registerServed(tab, func() int { return e.Conns() }, topics, c.discover, c.filterDiscover()); err != nil {
		return err
	}
	if c.mcp {
		mcp.Register(tab) // its names hold a slash: none is the bundled server's
		// An unsupported MCP-Protocol-Version is refused 400, before the
		// API keys or JWT are asked.
		c.engine.Authorize = mcp.CheckProtocolVersion(c.engine.Authorize)
	}
	reg := prometheus.NewRegistry()
	if metricsPath != "" {
		c.engine.Pages = append(c.engine.Pages, metrics.Page(metricsPath, reg))
	}
	c.engine.Workers, c.engine.Logger = messages, logger
	e = engine.New(tab, engine.WithOptions(c.engine))
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
			return fmt.Errorf("--metrics: %w", err)
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
			fmt.Fprintf(stdout, "jetrpc: serving JSON-RPC on http://%s/, ws://%s%s and tcp://%s\n", a, a, c.engine.WSPath, a)
			if c.mcp {
				fmt.Fprintf(stdout, "jetrpc: serving MCP (Streamable HTTP) on http://%s%s\n", a, mcp.Path)
			}
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
