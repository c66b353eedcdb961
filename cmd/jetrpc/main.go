// Command jetrpc runs the bundled JSON-RPC 2.0 server.
//
//	jetrpc serve [--http ADDR] [limits]
//
// serve answers the methods of the JSON-RPC 2.0 specification's examples
// (subtract, sum, update, notify_hello, notify_sum, get_data) and the
// benchmark methods (echo, add, sleep, fail) of package handler/demo, over
// HTTP POST. It prints the address it listens on and stops gracefully on
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "jetrpc:", err)
		os.Exit(2)
	}
}

const usage = `usage: jetrpc <command> [flags]

commands:
  serve   run the bundled JSON-RPC server (jetrpc serve -h for flags)
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
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("http", "127.0.0.1:8080", "`address` to serve HTTP on (port 0 picks a free port)")
	maxBody := fs.Int64("max-body", handler.DefaultMaxBodySize, "largest request body in `bytes`")
	maxBatch := fs.Int("max-batch", handler.DefaultMaxBatch, "most requests in one batch")
	maxDepth := fs.Int("max-depth", parser.DefaultMaxDepth, "deepest nesting of a message")
	workers := fs.Int("workers", pool.DefaultWorkers, "goroutines for blocking methods and parallel batches")
	queue := fs.Int("queue", pool.DefaultQueue, "work waiting for a worker before requests are answered \"server busy\"")
	noV1 := fs.Bool("reject-v1", false, "answer JSON-RPC 1.0 requests with -32600")
	if err := fs.Parse(args); err != nil {
		return err
	}
	w := pool.NewWorkers(*workers, *queue)
	defer w.Close()
	tab := handler.NewTable(
		handler.WithMaxBatch(*maxBatch),
		handler.WithMaxDepth(*maxDepth),
		handler.WithRejectV1(*noV1),
		handler.WithWorkers(w),
		handler.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))),
	)
	demo.Register(tab)
	h := handler.NewHTTPHandler(tab)
	h.MaxBodySize = *maxBody

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(stdout, "jetrpc: serving JSON-RPC on http://%s/\n", ln.Addr())

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "jetrpc: stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
