package main

// NOTE: jetrpc bench: its usage (benchUsage, every flag and the modes),
// the modes (benchMode, one file each: bench_run.go, bench_findmax.go,
// bench_targets.go, bench_fanout.go, bench_compare.go) and runBench, the
// dispatcher: a subcommand names the mode; without one, legacyMode picks
// it by the flag that picked it before the subcommands (--subscribe,
// --target, --find-max), so that old scripts run unchanged. Every mode
// parses the one flag set of bench_flags.go and refuses, by name, the
// flags its usage does not list; the checks and setup the request modes
// share are in bench_request.go. Errors carry no prefix: main prints
// runBench's after "jetrpc bench: ".

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/jetrpc/jetrpc/bench"
)

var benchUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench [flags] [target]
       jetrpc bench --subscribe TOPIC [flags] [ws://node/ ...]
       jetrpc bench compare [-json] A.json B.json
       jetrpc bench run|find-max|targets|fanout [flags] [target ...]
       jetrpc bench help [mode]

modes:
  run       a single run (the default: jetrpc bench [flags] [target])
  find-max  a capacity search: the highest rate that holds every --slo
            (also: jetrpc bench --find-max)
  targets   several targets, side by side, in interleaved rounds
            (also: jetrpc bench --target NAME=URL --target NAME=URL)
  fanout    the fan-out of a topic to many WebSocket subscribers
            (also: jetrpc bench --subscribe TOPIC)
  compare   compare two files of saved runs (jetrpc bench -json)
Each mode takes the flags its usage lists (jetrpc bench help MODE); a flag
of another mode is an error that names the mode.

jetrpc bench is a JSON-RPC-aware load generator. It opens -c connections
to the target and calls -method with -params over them for -d (after a
-warmup that is not measured): in a closed loop, each connection keeping
-pipeline requests in flight, or in an open loop at a fixed -rate, with
latency from each request's intended send time. Every reply is checked
(valid JSON-RPC, the id of a request in flight, a batch answered with an
array, an error or not as expected); it prints requests/s, errors by kind
and latency percentiles, and exits with status 2 when any reply was wrong
or missing — or, with -threshold conditions (p99<5ms, errors==0,
rps>50000...), when one of them fails: a CI job can gate on them.

The target is http://host:port/path (HTTP/1.1 POST), ws://host:port/path
(WebSocket), https:// or wss:// (the same over TLS: the system's roots, or
-ca, or -insecure), tcp://host:port or unix:///path (newline-delimited JSON
over a stream). With no target it starts the bundled server in-process on a free
loopback port and measures it for 5s; that server shares the CPU with the
load generator, so for a fairer figure run jetrpc serve in its own process
on its own core (see the examples).

A server that wants authentication gets -header lines and, with
-jwt-secret, an Engine API JWT (geth's authrpc port) with every HTTP
request and with the WebSocket upgrade; a tcp:// or unix:// stream has no
headers to carry them.

-compression gzip|zstd|gzip,zstd asks an http:// target for compressed
replies (Accept-Encoding) and decodes them before checking them;
-ws-compression offers a ws:// target (and the fan-out's subscribers)
permessage-deflate and inflates what comes compressed. Every run prints
the bytes on the wire per request, in and out.

With --subscribe TOPIC it measures the fan-out of a topic instead:
-subscribers WebSocket connections, spread round-robin over the ws://
URLs given (the nodes of one service), each subscribe to TOPIC with
topic_subscribe; then one publisher, on its own connection, sends
topic_publish at -publish-rate for -d (or -publishes times), an open loop
whose payloads carry their sequence number and intended send time. It
prints the deliveries expected (publishes × subscribers), made, lost,
duplicated and out of order, and the delivery latency percentiles (read
time minus intended send time), and exits with status 2 when more than
-max-lost deliveries were lost, a subscriber failed or dropped, or the
publisher got an error. Of the other flags, -d, -timeout, -header,
-jwt-secret, -json and -q apply. With no URL it measures the bundled
server in-process.
`,
	groups: []flagGroup{
		{"load", []string{"c", "d", "n", "warmup", "rate", "schedule", "pipeline"}},
		{"requests", []string{"method", "params", "batch", "notify", "bodies", "workload", "from-discover", "print-workload"}},
		{"replies", []string{"expect-error", "no-check", "timeout"}},
		{"pass or fail", []string{"threshold"}},
		{"capacity search", []string{"find-max", "slo"}},
		{"several targets", []string{"target", "rounds", "diff"}},
		{"compression", []string{"compression", "ws-compression"}},
		{"authentication (http:// and ws:// targets)", []string{"header", "jwt-secret"}},
		{"tracing (http:// and ws:// targets)", []string{"trace-sample"}},
		{"TLS (https:// and wss:// targets)", []string{"ca", "insecure"}},
		{"output", []string{"json", "json-schema", "plot", "report", "q", "metrics"}},
		{"fan-out (--subscribe; ws:// targets)", []string{"subscribe", "subscribers", "publish-rate", "publishes", "publish-url",
			"payload-size", "drain", "max-lost", "connect-concurrency"}},
	},
	examples: `  jetrpc bench                                      # the in-process server, 5s
  taskset -c 0 jetrpc serve --loops 1 &             # fairer: the server on its own core,
  taskset -c 1 jetrpc bench -c 64 -d 10s http://127.0.0.1:8080/  # the load on another
  jetrpc bench -batch 10 -pipeline 4 tcp://127.0.0.1:8080
  jetrpc bench -method subtract -params '{"minuend":5,"subtrahend":3}' ws://127.0.0.1:8080/
  jetrpc bench -rate 20000 -d 30s -plot lat.svg http://127.0.0.1:8080/  # open loop
  jetrpc serve --listen unix:///tmp/jetrpc.sock &   # then, over the socket:
  jetrpc bench -notify 0.2 -rate 5000 unix:///tmp/jetrpc.sock
  jetrpc bench -json -q -d 5s http://127.0.0.1:8080/ > result.json
  jetrpc bench -rate 20000 -threshold 'p99<5ms' -threshold 'error_rate<0.1%' http://127.0.0.1:8080/  # a CI gate
  for i in 1 2 3 4 5; do jetrpc bench -json -q -d 5s http://127.0.0.1:8080/ >> old.json; done  # then again >> new.json,
  jetrpc bench compare old.json new.json            # and compare: medians, spread, significance
  jetrpc bench --target old=http://10.0.0.1:8080/ --target new=http://10.0.0.2:8080/ -diff 500 -workload mix.json
  jetrpc bench -schedule step:5000:5000:50000:5s -plot steps.svg http://127.0.0.1:8080/  # rising load
  jetrpc serve --metrics 127.0.0.1:9100 &           # then, the server's view beside the client's:
  jetrpc bench -metrics http://127.0.0.1:9100/metrics http://127.0.0.1:8080/
  jetrpc bench -header 'X-API-Key: s3cret' -header 'X-Tenant: a' ws://127.0.0.1:8080/
  jetrpc bench -compression zstd -method echo -params "$(cat big.json)" http://127.0.0.1:8080/  # vs serve --compression gzip,zstd
  jetrpc bench -jwt-secret jwt.hex -method eth_chainId -params '[]' http://127.0.0.1:8551/  # geth's auth port
  jetrpc bench --subscribe news -subscribers 10000 -publish-rate 100 -d 10s ws://127.0.0.1:8080/
  jetrpc bench --subscribe news -json -max-lost 10 ws://10.0.0.1:8080/ ws://10.0.0.2:8080/  # two nodes
`,
}

// benchMode is a mode of jetrpc bench.
type benchMode struct {
	name      string        // its subcommand
	title     string        // what it is, in an error: "a capacity search"
	legacy    string        // the flag that picks it without a subcommand ("--find-max"); "" for run
	legacyArg string        // that flag's argument in an error: " TOPIC"
	usage     *commandUsage // its usage section; its groups are the flags it takes
	run       func(ctx context.Context, a *benchArgs, stdout, stderr io.Writer) error
}

// benchModes are the modes that parse bench's flag set, in the order
// the usage lists them (compare, with its own flags, is not one).
var benchModes = []*benchMode{runMode, findMaxMode, targetsMode, fanoutMode}

// takes reports whether the mode takes the flag name: whether its usage
// lists it.
func (m *benchMode) takes(name string) bool {
	for _, g := range m.usage.groups {
		if slices.Contains(g.names, name) {
			return true
		}
	}
	return false
}

// legacyMode is the mode of jetrpc bench without a subcommand: the one
// its flags picked before there were subcommands.
func legacyMode(b *benchFlags) *benchMode {
	switch {
	case b.topic != "":
		return fanoutMode
	case len(b.targets) > 0:
		return targetsMode
	case b.findMax:
		return findMaxMode
	}
	return runMode
}

// benchArgs is a parsed jetrpc bench command line and its mode.
type benchArgs struct {
	*benchFlags
	fs    *flag.FlagSet
	cfg   bench.Config
	mode  *benchMode
	named bool          // the mode was a subcommand, not picked by legacyMode
	usage *commandUsage // printed after a usage error: the mode's, or benchUsage without a subcommand
}

// usageError prints err and a.usage to stderr, and returns err marked as
// printed.
func (a *benchArgs) usageError(stderr io.Writer, err error) error {
	return usageError(a.fs, a.usage, stderr, err)
}

// refuse is the error for the flag name set in a mode that does not take
// it. It names the mode as the command line chose it, and the mode the
// flag belongs to when there is one only.
func (a *benchArgs) refuse(name string) error {
	var owners []*benchMode
	for _, m := range benchModes {
		if m != a.mode && m.takes(name) {
			owners = append(owners, m)
		}
	}
	if !a.named && a.mode == runMode && len(owners) == 1 {
		o := owners[0]
		return fmt.Errorf("-%s applies to %s: it needs %s%s", name, o.title, o.legacy, o.legacyArg)
	}
	how := "bench " + a.mode.name
	if !a.named && a.mode.legacy != "" {
		how = a.mode.legacy
	}
	msg := fmt.Sprintf("-%s does not apply to %s (%s)", name, a.mode.title, how)
	if len(owners) == 1 {
		msg += "; it is a flag of bench " + owners[0].name
	}
	return errors.New(msg)
}

// runBench is `jetrpc bench`. Its errors, but for the usage errors it
// has printed, are marked as bench's: main prints them after "jetrpc
// bench: ".
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := benchCommand(ctx, args, stdout, stderr)
	if err == nil || errors.As(err, new(errUsage)) {
		return err
	}
	return commandErr{"bench", err}
}

// benchCommand is runBench before its errors are marked: the mode from
// the subcommand or the legacy flags, the flags checked against it, and
// the mode's run.
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := &benchArgs{usage: &benchUsage}
	if len(args) > 0 {
		switch args[0] {
		case "compare":
			return runCompare(args[1:], stdout, stderr)
		case "help":
			return benchHelp(args[1:], stdout, stderr)
		}
		if m := benchModeNamed(args[0]); m != nil {
			a.mode, a.named, a.usage, args = m, true, m.usage, args[1:]
		}
	}
	var help bool
	var err error
	a.fs, a.benchFlags = newBenchFlags(&a.cfg)
	if help, err = parseFlags(a.fs, a.usage, args, stdout, stderr); help || err != nil {
		return err
	}
	if a.mode == nil {
		if a.fs.NArg() == 1 && a.fs.Arg(0) == "help" { // jetrpc bench [flags] help
			benchUsage.write(stdout, a.fs)
			return nil
		}
		a.mode = legacyMode(a.benchFlags)
	}
	var refused error
	a.fs.Visit(func(f *flag.Flag) {
		if refused == nil && !a.mode.takes(f.Name) {
			refused = a.refuse(f.Name)
		}
	})
	if refused != nil {
		return a.usageError(stderr, refused)
	}
	return a.mode.run(ctx, a, stdout, stderr)
}

// benchModeNamed is the mode named name, or nil.
func benchModeNamed(name string) *benchMode {
	for _, m := range benchModes {
		if m.name == name {
			return m
		}
	}
	return nil
}

// benchHelp is `jetrpc bench help [mode]`: bench's usage, or a mode's.
func benchHelp(args []string, stdout, stderr io.Writer) error {
	fs, _ := newBenchFlags(new(bench.Config))
	switch {
	case len(args) == 0:
		benchUsage.write(stdout, fs)
		return nil
	case len(args) == 1 && args[0] == "compare":
		cfs, _ := newCompareFlags()
		compareUsage.write(stdout, cfs)
		return nil
	case len(args) == 1 && benchModeNamed(args[0]) != nil:
		benchModeNamed(args[0]).usage.write(stdout, fs)
		return nil
	}
	names := []string{}
	for _, m := range benchModes {
		names = append(names, m.name)
	}
	return usageError(fs, &benchUsage, stderr, fmt.Errorf("help: no mode %q (%s or compare)", strings.Join(args, " "), strings.Join(names, ", ")))
}

// writeJSON writes v to w as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// createWith creates the file path and writes it with write.
func createWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
