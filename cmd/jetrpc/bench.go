package main

// NOTE: jetrpc bench: its flags (newBenchFlags, one table; the fan-out
// ones in bench_fanout.go), its usage text, and runBench, which checks
// the flags and picks the mode: compare (bench_compare.go), a fan-out
// run (--subscribe, bench_fanout.go), several targets (--target,
// bench_targets.go), a capacity search (--find-max, bench_findmax.go), or
// a single run, which runBench does itself — against the target given,
// or the bundled server in-process (bench_inprocess.go). The flag.Value
// types of the flags that parse their value are in bench_flagvalues.go.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/jetrpc/jetrpc/bench"
)

var benchUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench [flags] [target]
       jetrpc bench --subscribe TOPIC [flags] [ws://node/ ...]
       jetrpc bench compare [-json] A.json B.json

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
		{"authentication (http:// and ws:// targets)", []string{"header", "jwt-secret"}},
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
  jetrpc bench -jwt-secret jwt.hex -method eth_chainId -params '[]' http://127.0.0.1:8551/  # geth's auth port
  jetrpc bench --subscribe news -subscribers 10000 -publish-rate 100 -d 10s ws://127.0.0.1:8080/
  jetrpc bench --subscribe news -json -max-lost 10 ws://10.0.0.1:8080/ ws://10.0.0.2:8080/  # two nodes
`,
}

// benchFlags are the flags of jetrpc bench that are not a bench.Config field.
type benchFlags struct {
	bodies     string
	asJSON     bool
	plot       string
	quiet      bool
	topic      string              // --subscribe: a fan-out run
	thresholds []bench.Threshold   // -threshold, in order
	findMax    bool                // --find-max
	workload   string              // -workload: a file
	discover   string              // --from-discover: a URL
	printWL    bool                // --print-workload
	report     string              // --report: an HTML file
	jsonSchema bool                // -json-schema
	targets    []bench.NamedTarget // --target, in order
	rounds     int                 // -rounds
	diff       int                 // -diff
	slo        []bench.Threshold   // --slo, in order
	insecure   bool                // -insecure
	ca         string              // -ca: a PEM file of the roots to trust
	fan        bench.FanoutConfig  // the fan-out flags; the shared ones are copied from bench.Config
}

// newBenchFlags defines the flags of jetrpc bench on a new FlagSet; the
// groups of benchUsage list them.
func newBenchFlags(cfg *bench.Config) (*flag.FlagSet, *benchFlags) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	b := &benchFlags{}
	fs.IntVar(&cfg.Conns, "c", bench.DefaultConns, "connections")
	fs.DurationVar(&cfg.Duration, "d", 0, "measured duration (default 10s; 5s against the in-process server); with --subscribe, how long to publish")
	fs.Int64Var(&cfg.Requests, "n", 0, "stop after this many requests instead of a duration")
	fs.DurationVar(&cfg.Warmup, "warmup", bench.DefaultWarmup, "unmeasured warm-up before measuring; 0 for none")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop at `rate` requests/s in all, latency from intended send times (0: closed loop)")
	fs.Var(scheduleFlag{&cfg.Schedule}, "schedule", "open loop on a rate `schedule` instead of -rate, which sets the duration: "+
		"step:START:STEP:END:DURATION (step:1000:1000:10000:5s), ramp:FROM:TO:DURATION (ramp:0:20000:30s), "+
		"or stages RATE:DURATION and FROM-TO:DURATION joined by commas")
	fs.IntVar(&cfg.Pipeline, "pipeline", 1, "requests in flight per connection")
	fs.IntVar(&cfg.Batch, "batch", 1, "calls per request; more than 1 sends batches")
	fs.Float64Var(&cfg.Notify, "notify", 0, "`share` of calls sent as notifications, 0 to 1 (over a stream they get no reply, so they need -rate)")
	fs.StringVar(&cfg.Method, "method", bench.DefaultMethod, "the `method` to call")
	fs.StringVar(&cfg.Params, "params", bench.DefaultParams, "params, as `JSON`")
	fs.StringVar(&b.workload, "workload", "", "a workload `file` (JSON): weighted calls with templated params and expected replies, instead of -method and -params "+
		"(see bench/README.md: Load-testing your own server)")
	fs.StringVar(&b.discover, "from-discover", "", "build the workload from the OpenRPC document the server at `URL` (http:// or https://) answers rpc.discover with: "+
		"each method once, weight 1, its first example's params or params made from their schemas; subscriptions and rpc.* left out. "+
		"The target is URL unless one is given")
	fs.BoolVar(&b.printWL, "print-workload", false, "with --from-discover, print the workload file it builds (to edit and give to -workload) instead of running it")
	fs.StringVar(&b.bodies, "bodies", "", "a `file` of request bodies, one JSON-RPC message per line, sent in turn (instead of -method and -params)")
	fs.BoolVar(&cfg.ExpectError, "expect-error", false, "the calls are expected to fail")
	fs.BoolVar(&cfg.NoCheck, "no-check", false, "frame replies without checking them (for fixed-reply ceiling servers)")
	fs.DurationVar(&cfg.Timeout, "timeout", bench.DefaultTimeout, "longest wait for a reply; also the most the run waits after the end for replies in flight "+
		"(with --subscribe: for a dial, an upgrade, the subscribe replies and a publish's write)")
	fs.Var(headerFlag{&cfg.Header}, "header", "send `header`, written 'Name: Value', with every HTTP request and the WebSocket upgrade; "+
		"repeatable (Host, Content-Length, Content-Type, Transfer-Encoding, Connection, Upgrade and Sec-WebSocket-* are the tool's own)")
	fs.Var(jwtSecretFlag{&cfg.JWTSecret, new(string)}, "jwt-secret", "send Authorization: Bearer with an HS256 JWT signed with the 32-byte hex secret in `file` "+
		"(geth's jwt.hex), its iat renewed every "+bench.DefaultJWTRefresh.String()+", as the Engine API wants")
	fs.BoolVar(&b.asJSON, "json", false, "print the result as JSON")
	fs.BoolVar(&b.jsonSchema, "json-schema", false, "print the JSON Schema of what -json prints (a run's result), and exit")
	fs.StringVar(&b.plot, "plot", "", "write the latency distribution chart to this SVG `file`")
	fs.StringVar(&b.report, "report", "", "write a self-contained HTML report to `file`: the load, latency by percentile, throughput, latency and errors over time, errors, replies by method, thresholds, the configuration")
	fs.BoolVar(&b.quiet, "q", false, "no progress line (it is shown only on a terminal)")
	fs.BoolVar(&b.insecure, "insecure", false, "https:// and wss:// targets: do not verify the server's certificate (a test server's self-signed one)")
	fs.StringVar(&b.ca, "ca", "", "https:// and wss:// targets: trust the certificates in PEM `file` instead of the system's roots")
	fs.Var(targetFlag{&b.targets}, "target", "a target of a run over several, `name=URL` (repeatable): each is run -rounds times, interleaved, "+
		"and reported side by side with its ratio to the first")
	fs.IntVar(&b.rounds, "rounds", 3, "with --target, the rounds (each runs every target; the order reverses every other round)")
	fs.IntVar(&b.diff, "diff", 0, "with --target, first send `N` calls of the mix to every target, one at a time, and report those answered differently "+
		"(result or error code; workload calls marked free are not compared); a difference sets exit status 2")
	fs.BoolVar(&b.findMax, "find-max", false, "search for the highest rate that holds every --slo with no error: open-loop probes of -d each (default "+
		bench.DefaultProbeWindow.String()+"), doubling from -rate (default 1000) until one fails, then halving the gap to 5 %; "+
		"prints each probe and the capacity, and with -plot the latency by rate")
	fs.Var(thresholdFlag{&b.slo}, "slo", "with --find-max, a `condition` a rate must meet to hold, as -threshold takes them (repeatable): 'p99<10ms'")
	fs.Var(thresholdFlag{&b.thresholds}, "threshold", "check `condition` at the end, such as 'p99<5ms', 'errors==0', 'rps>50000' or 'error_rate<0.1%' "+
		"(repeatable; metrics p50 p90 p99 p99.9 max mean rps cps requests errors error_rate): the exit status is 2 when one fails. "+
		"With thresholds, they alone decide: errors fail the run only through one")
	fs.StringVar(&cfg.MetricsURL, "metrics", "", "read the server's Prometheus metrics at `URL` (jetrpc serve --metrics) when the measured window opens and closes, "+
		"and print its own view (calls handled, errors by code, rate, p50/p99 handling time) beside the client's")
	newFanoutFlags(fs, b)
	return fs, b
}

// Flags of one mode of jetrpc bench, refused in the other.
var (
	requestOnlyFlags = []string{"c", "n", "warmup", "rate", "schedule", "pipeline", "method", "params", "batch", "notify", "bodies", "workload",
		"from-discover", "print-workload",
		"expect-error", "no-check", "plot", "report", "metrics", "threshold", "ca", "insecure", "find-max", "slo", "target", "rounds", "diff"}
	fanoutOnlyFlags = []string{"subscribers", "publish-rate", "publishes", "publish-url", "payload-size", "drain", "max-lost",
		"connect-concurrency"}
)

// setFlag returns the first of names set on the command line, or "".
func setFlag(fs *flag.FlagSet, names []string) string {
	found := ""
	fs.Visit(func(f *flag.Flag) {
		if found == "" && slices.Contains(names, f.Name) {
			found = f.Name
		}
	})
	return found
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

// benchCommand is runBench before its errors are marked.
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "compare" {
		return runCompare(args[1:], stdout, stderr)
	}
	var cfg bench.Config
	fs, b := newBenchFlags(&cfg)
	help, err := parseFlags(fs, &benchUsage, args, stdout, stderr)
	if help || err != nil {
		return err
	}
	if b.jsonSchema {
		return writeResultSchema(stdout)
	}
	if fs.NArg() == 1 && fs.Arg(0) == "help" { // jetrpc bench help
		benchUsage.write(stdout, fs)
		return nil
	}
	if b.topic != "" {
		return runFanout(ctx, fs, &cfg, b, stdout, stderr)
	}
	if name := setFlag(fs, fanoutOnlyFlags); name != "" {
		return usageError(fs, &benchUsage, stderr, fmt.Errorf("-%s applies to a fan-out run: it needs --subscribe TOPIC", name))
	}
	if fs.NArg() > 1 {
		return usageError(fs, &benchUsage, stderr, fmt.Errorf("one target at most, not %q", fs.Args()))
	}
	if err := checkBenchFlags(fs, &cfg); err != nil {
		return err
	}
	if err := checkAuthFlags(&cfg, fs.Arg(0)); err != nil {
		return usageError(fs, &benchUsage, stderr, err)
	}
	if b.insecure || b.ca != "" {
		tc, err := tlsConfig(b.insecure, b.ca)
		if err != nil {
			return usageError(fs, &benchUsage, stderr, err)
		}
		cfg.TLS = tc
	}
	if b.discover != "" {
		if b.workload != "" {
			return usageError(fs, &benchUsage, stderr, errors.New("--from-discover builds the workload: no -workload with it"))
		}
		if b.insecure || b.ca != "" {
			tc, err := tlsConfig(b.insecure, b.ca)
			if err != nil {
				return usageError(fs, &benchUsage, stderr, err)
			}
			cfg.TLS = tc
		}
		doc, err := bench.Discover(ctx, b.discover, cfg.Header, cfg.TLS)
		if err != nil {
			return err
		}
		wl, err := bench.WorkloadFromOpenRPC(doc)
		if err != nil {
			return err
		}
		if b.printWL {
			fmt.Fprint(stdout, wl.String())
			return nil
		}
		cfg.Workload = wl
		if fs.NArg() == 0 {
			cfg.Target = b.discover
		}
	} else if b.printWL {
		return usageError(fs, &benchUsage, stderr, errors.New("--print-workload prints what --from-discover builds: it needs --from-discover"))
	}
	if b.workload != "" {
		if b.bodies != "" || setFlag(fs, []string{"method", "params", "notify", "expect-error"}) != "" {
			return usageError(fs, &benchUsage, stderr, errors.New("-workload holds the calls: no -method, -params, -notify, -expect-error or -bodies with it"))
		}
		wl, err := bench.LoadWorkload(b.workload)
		if err != nil {
			return err
		}
		cfg.Workload = wl
	}
	if b.bodies != "" {
		b, err := readBodies(b.bodies)
		if err != nil {
			return err
		}
		cfg.Bodies = b
	}
	if !b.quiet && !b.asJSON {
		if f, ok := stderr.(*os.File); ok && bench.IsTerminal(f) {
			cfg.Progress = stderr
		}
	}
	if len(b.targets) > 0 {
		return runTargets(ctx, fs, cfg, b, stdout, stderr)
	}
	switch {
	case fs.NArg() == 1:
		cfg.Target = fs.Arg(0)
	case cfg.Target != "": // --from-discover's URL
	default:
		stop, target, err := inProcessServer()
		if err != nil {
			return err
		}
		defer stop()
		cfg.Target = target
		if cfg.Duration == 0 && cfg.Requests == 0 && len(cfg.Schedule) == 0 {
			cfg.Duration = 5 * time.Second
		}
		if !b.asJSON {
			fmt.Fprintf(stdout, "No target given: measuring an in-process jetrpc server at %s.\n"+
				"It shares the CPU with the load generator; for the fairer figure run the server in its own\n"+
				"process on its own core:  taskset -c 0 jetrpc serve --loops 1 &  taskset -c 1 jetrpc bench http://127.0.0.1:8080/\n\n", target)
		}
	}
	if b.findMax {
		return runFindMax(ctx, cfg, b, stdout, stderr)
	}

	if len(b.slo) > 0 {
		return usageError(fs, &benchUsage, stderr, errors.New("--slo applies to a capacity search: it needs --find-max (for a single run, -threshold)"))
	}
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	failed := res.CheckThresholds(b.thresholds)
	if b.asJSON {
		if res.Server != nil && res.Server.Error != "" { // the table says it itself
			fmt.Fprintf(stderr, "jetrpc bench: %s; the server's view is missing\n", res.Server.Error)
		}
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		res.WriteTable(stdout)
	}
	if b.plot != "" {
		if err := createWith(b.plot, res.WritePlotSVG); err != nil {
			return err
		}
	}
	if b.report != "" {
		if err := createWith(b.report, res.WriteHTML); err != nil {
			return err
		}
	}
	if len(b.thresholds) > 0 {
		return failed
	}
	return res.Failure()
}

// writeResultSchema prints the JSON Schema (draft 2020-12) of
// bench.Result, derived from the type and its JSON tags by
// invopop/jsonschema, so that it cannot drift from what -json prints.
func writeResultSchema(w io.Writer) error {
	r := &jsonschema.Reflector{DoNotReference: false, AllowAdditionalProperties: false, RequiredFromJSONSchemaTags: true}
	s := r.Reflect(&bench.Result{})
	s.Title = "jetrpc bench -json"
	s.Description = "The result of one jetrpc bench run (latencies in microseconds, durations in nanoseconds)."
	return writeJSON(w, s)
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

// tlsConfig is the TLS client config of -insecure and -ca.
func tlsConfig(insecure bool, ca string) (*tls.Config, error) {
	if insecure && ca != "" {
		return nil, errors.New("-insecure and -ca: -insecure verifies nothing, -ca verifies against the file")
	}
	tc := &tls.Config{InsecureSkipVerify: insecure} // #nosec G402 -- what -insecure asks for
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("-ca: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-ca %s: no PEM certificate in the file", ca)
		}
	}
	return tc, nil
}

// checkAuthFlags refuses -header and -jwt-secret where they cannot be
// sent: over a raw stream target, and an Authorization header next to
// the JWT that would replace it.
func checkAuthFlags(cfg *bench.Config, target string) error {
	if len(cfg.Header) == 0 && len(cfg.JWTSecret) == 0 {
		return nil
	}
	if strings.HasPrefix(target, "tcp://") || strings.HasPrefix(target, "unix://") {
		return fmt.Errorf("-header and -jwt-secret need an http:// or ws:// target; %s is a raw stream, which has no headers", target)
	}
	if len(cfg.JWTSecret) > 0 && len(cfg.Header.Values("Authorization")) > 0 {
		return errors.New("-header Authorization and -jwt-secret: the JWT is sent as the Authorization header")
	}
	return nil
}

// checkBenchFlags refuses flag values that bench.Config would take as
// "the default" (a zero count), and maps an explicit -warmup 0 to none.
func checkBenchFlags(fs *flag.FlagSet, cfg *bench.Config) error {
	switch {
	case cfg.Conns <= 0:
		return fmt.Errorf("-c %d: at least one connection", cfg.Conns)
	case cfg.Pipeline <= 0:
		return fmt.Errorf("-pipeline %d: at least one request in flight", cfg.Pipeline)
	case cfg.Batch < 0:
		return fmt.Errorf("-batch %d: a negative batch size", cfg.Batch)
	case !(cfg.Rate >= 0) || math.IsInf(cfg.Rate, 0):
		return fmt.Errorf("-rate %v: a finite number of requests/s, 0 or more", cfg.Rate)
	case !(cfg.Notify >= 0 && cfg.Notify <= 1):
		return fmt.Errorf("-notify %v: a share between 0 and 1", cfg.Notify)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "warmup" && cfg.Warmup == 0 {
			cfg.Warmup = -1 // none, where bench.Config's zero means the default
		}
	})
	return nil
}

// readBodies reads one JSON-RPC message per non-empty line.
func readBodies(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out, sc.Err()
}
