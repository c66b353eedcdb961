// Command jetrpc runs the bundled JSON-RPC 2.0 server and load-tests
// JSON-RPC servers.
//
//	jetrpc serve [--http ADDR] [--tcp ADDR]... [--ws ADDR]... [--unix PATH]... [flags]
//	jetrpc bench [flags] [http://host:port/ | ws://host:port/ | tcp://host:port | unix:///path]
//
// serve answers the methods of the JSON-RPC 2.0 specification's examples
// (subtract, sum, update, notify_hello, notify_sum, get_data) and the
// benchmark methods (echo, add, sleep, fail) of package handler/demo, and
// the demo subscription clock_subscribe/clock_unsubscribe (WebSocket and
// streams), from gnet event loops. Every listener serves HTTP/1.1,
// WebSocket (GET --ws-path with Upgrade) and raw JSON streams; --http,
// --tcp and --ws differ only for the reader. With no address
// it listens on 127.0.0.1:8080. It prints the bound addresses and stops
// gracefully on SIGINT or SIGTERM.
//
// bench is a JSON-RPC-aware load generator (package bench): closed or
// open loop, pipelining, batches, notifications, every reply checked,
// latency percentiles, --json and --plot. Without a target it measures an
// in-process server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the first signal stops gracefully; a second one exits at once
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "jetrpc:", err)
		os.Exit(2)
	}
}

const usage = `usage: jetrpc <command> [flags]

commands:
  serve   run the bundled JSON-RPC server (jetrpc serve -h for flags)
  bench   load-test a JSON-RPC server, or the bundled one (jetrpc bench -h)
`

// run is main without the process: testable.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// addrList is a repeatable address flag.
type addrList struct {
	scheme string
	addrs  *[]string
}

func (a addrList) String() string { return "" }

func (a addrList) Set(v string) error {
	if v == "" || strings.HasSuffix(v, "://") {
		return errors.New("empty address")
	}
	if !strings.Contains(v, "://") {
		v = a.scheme + v
	}
	*a.addrs = append(*a.addrs, v)
	return nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var addrs []string
	fs.Var(addrList{"tcp://", &addrs}, "http", "`address` to listen on (HTTP and streams; repeatable; port 0 picks a free port)")
	fs.Var(addrList{"tcp://", &addrs}, "tcp", "`address` to listen on (streams and HTTP; repeatable)")
	fs.Var(addrList{"tcp://", &addrs}, "ws", "`address` to listen on (WebSocket, HTTP and streams; repeatable)")
	fs.Var(addrList{"unix://", &addrs}, "unix", "Unix socket `path` to listen on (repeatable)")
	var origins []string
	fs.Var(addrList{"", &origins}, "ws-origin", "browser `origin` allowed to open a WebSocket (repeatable; \"*\" for any; default: any)")
	wsPath := fs.String("ws-path", engine.DefaultWSPath, "`path` where GET with Upgrade: websocket opens a WebSocket")
	ping := fs.Duration("ping-interval", engine.DefaultPingInterval, "ping a WebSocket client silent this long")
	maxPush := fs.Int("max-push-queue", engine.DefaultMaxPushQueue, "server-message `bytes` queued for a client that does not read, before it is disconnected")
	loops := fs.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	workers := fs.Int("workers", pool.DefaultWorkers, "worker goroutines for blocking methods, per pool (messages and batch elements)")
	queue := fs.Int("queue", pool.DefaultQueue, "messages waiting for a worker before requests are answered \"server busy\"")
	maxMsg := fs.Int("max-message", engine.DefaultMaxMessageSize, "largest message (HTTP body or stream value) in `bytes`")
	maxHeader := fs.Int("max-header", engine.DefaultMaxHeaderSize, "largest HTTP request head in `bytes`")
	maxBatch := fs.Int("max-batch", handler.DefaultMaxBatch, "most requests in one batch")
	maxDepth := fs.Int("max-depth", parser.DefaultMaxDepth, "deepest nesting of a message")
	maxConns := fs.Int("max-conns", engine.DefaultMaxConns, "most open connections")
	maxInFlight := fs.Int("max-inflight", engine.DefaultMaxInFlight, "most messages of one connection on workers")
	maxPending := fs.Int("max-pending", engine.DefaultMaxPendingOutput, "unsent reply `bytes` per connection before it is not read")
	idle := fs.Duration("idle-timeout", engine.DefaultIdleTimeout, "close connections idle this long")
	readTO := fs.Duration("read-timeout", engine.DefaultReadTimeout, "close connections whose message is incomplete this long")
	writeTO := fs.Duration("write-timeout", engine.DefaultWriteTimeout, "close connections whose replies wait this long")
	reusePort := fs.Bool("reuseport", false, "set SO_REUSEPORT so that several processes can share a port")
	noV1 := fs.Bool("reject-v1", false, "answer JSON-RPC 1.0 requests with -32600")
	verbose := fs.Bool("v", false, "log debug messages")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) to `file` until the server stops")
	stopTimeout := fs.Duration("stop-timeout", 10*time.Second, "on SIGINT or SIGTERM, how long requests in flight may take before their contexts are cancelled and the server exits (a second signal exits at once)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage was printed
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q (addresses go after --http, --tcp, --ws or --unix)", fs.Arg(0))
	}
	if !strings.HasPrefix(*wsPath, "/") {
		return fmt.Errorf("serve: --ws-path %q must start with /", *wsPath)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"loops", *loops}, {"workers", *workers}, {"queue", *queue}, {"max-message", *maxMsg},
		{"max-header", *maxHeader}, {"max-batch", *maxBatch}, {"max-depth", *maxDepth},
		{"max-conns", *maxConns}, {"max-inflight", *maxInFlight}, {"max-pending", *maxPending},
		{"max-push-queue", *maxPush},
	} {
		if f.v < 0 {
			return fmt.Errorf("serve: --%s %d: must not be negative (0 means the default)", f.name, f.v)
		}
	}
	if *stopTimeout <= 0 {
		return fmt.Errorf("serve: --stop-timeout %v must be positive", *stopTimeout)
	}
	if len(addrs) == 0 {
		addrs = []string{engine.DefaultAddr}
	}
	var profile *os.File
	if *cpuProfile != "" {
		// Opened before listening, so that a bad path fails before serving.
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		profile = f
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	elements := pool.NewWorkers(*workers, *queue)
	defer elements.Close()
	messages := pool.NewWorkers(*workers, *queue)
	defer messages.Close()
	tab := handler.NewTable(
		handler.WithMaxBatch(*maxBatch),
		handler.WithMaxDepth(*maxDepth),
		handler.WithRejectV1(*noV1),
		handler.WithWorkers(elements),
		handler.WithLogger(logger),
	)
	demo.Register(tab)
	e := engine.New(tab,
		engine.WithAddrs(addrs...),
		engine.WithLoops(*loops),
		engine.WithWorkers(messages),
		engine.WithReusePort(*reusePort),
		engine.WithMaxMessageSize(*maxMsg),
		engine.WithMaxHeaderSize(*maxHeader),
		engine.WithMaxConns(*maxConns),
		engine.WithMaxInFlight(*maxInFlight),
		engine.WithMaxPendingOutput(*maxPending),
		engine.WithTimeouts(*idle, *readTO, *writeTO),
		engine.WithWSPath(*wsPath),
		engine.WithWSOrigins(origins...),
		engine.WithPingInterval(*ping),
		engine.WithMaxPushQueue(*maxPush),
		engine.WithLogger(logger),
	)
	if err := e.Start(); err != nil {
		return err
	}
	for _, a := range e.Addrs() {
		switch a.Network() {
		case "unix":
			fmt.Fprintf(stdout, "jetrpc: serving JSON-RPC on unix://%s (HTTP, WebSocket and streams)\n", a)
		default:
			fmt.Fprintf(stdout, "jetrpc: serving JSON-RPC on http://%s/, ws://%s%s and tcp://%s\n", a, a, *wsPath, a)
		}
	}
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			_ = e.Stop(context.Background())
			return err
		}
		defer pprof.StopCPUProfile()
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "jetrpc: stopping")
	stopCtx, cancel := context.WithTimeout(context.Background(), *stopTimeout)
	defer cancel()
	return e.Stop(stopCtx)
}
