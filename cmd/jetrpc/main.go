// Command jetrpc runs the bundled JSON-RPC 2.0 server and load-tests
// JSON-RPC servers.
//
//	jetrpc serve [--listen ADDR]... [flags]
//	jetrpc bench [flags] [http://host:port/ | ws://host:port/ | tcp://host:port | unix:///path]
//	jetrpc openrpc [--compact]
//	jetrpc help [serve | bench | openrpc]
//
// serve answers the methods of the JSON-RPC 2.0 specification's examples
// (subtract, sum, update, notify_hello, notify_sum, get_data) and the
// benchmark methods (echo, add, sleep, fail) of package handler/demo, and
// the demo subscription clock_subscribe/clock_unsubscribe (WebSocket,
// streams, and HTTP event streams, by POST or a browser's EventSource),
// from gnet event loops. Every listener serves HTTP/1.1,
// WebSocket (GET --ws-path with Upgrade) and raw JSON streams, sniffed
// from a connection's first byte. --listen ADDR (repeatable) takes
// host:port, tcp://host:port or unix:///path; --http, --tcp and --ws are
// its aliases and --unix PATH is --listen unix://PATH. With no address it
// listens on 127.0.0.1:8080. It prints the URLs it serves and stops
// gracefully on SIGINT or SIGTERM.
//
// serve answers rpc.discover with its OpenRPC document (--discover),
// which openrpc prints; --metrics serves Prometheus metrics and
// --access-log and --slow-call log calls.
//
// bench is a JSON-RPC-aware load generator (package bench): closed or
// open loop, pipelining, batches, notifications, every reply checked,
// latency percentiles, --json and --plot. Without a target it measures an
// in-process server.
//
// -h prints a command's usage to stdout (exit status 0); a flag error
// prints the error and the usage to stderr (exit status 2).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the first signal stops gracefully; a second one exits at once
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.As(err, new(errUsage)) { // an errUsage is printed already
			fmt.Fprintln(os.Stderr, errorLine(err))
		}
		os.Exit(2)
	}
}

// errorLine is the line main prints for err. A command's error
// (commandErr: bench's) says what went wrong without a prefix, and gets
// "jetrpc <command>: " here, once. Another error gets "jetrpc: ", unless
// its text starts with it already (the root package's sentinels do).
func errorLine(err error) string {
	var ce commandErr
	if errors.As(err, &ce) {
		return "jetrpc " + ce.cmd + ": " + err.Error()
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "jetrpc:") {
		return msg
	}
	return "jetrpc: " + msg
}

// commandErr is an error of the command cmd, whose text carries no
// prefix: errorLine adds "jetrpc cmd: " when main prints it.
type commandErr struct {
	cmd string
	err error
}

func (e commandErr) Error() string { return e.err.Error() }
func (e commandErr) Unwrap() error { return e.err }

// run is main without the process: testable. -h and help print to
// stdout and return nil; a usage error is printed, error first, with the
// usage to stderr, and returned as an errUsage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return commandError(stderr, errors.New("no command"))
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "openrpc":
		return runOpenRPC(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		switch {
		case len(args) == 1:
			fmt.Fprint(stdout, usage)
			return nil
		case len(args) == 2 && (args[1] == "serve" || args[1] == "bench" || args[1] == "openrpc"):
			return run(ctx, []string{args[1], "-h"}, stdout, stderr) // jetrpc help serve
		}
		return commandError(stderr, fmt.Errorf("help: unknown command %q", strings.Join(args[1:], " ")))
	}
	return commandError(stderr, fmt.Errorf("unknown command %q", args[0]))
}

// commandError prints err and jetrpc's usage to stderr, and returns err
// marked as printed.
func commandError(stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "jetrpc: %v\n\n%s", err, usage)
	return errUsage{err}
}
