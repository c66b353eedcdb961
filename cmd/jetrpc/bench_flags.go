package main

// NOTE: the flags of jetrpc bench: benchFlags (those that are not a
// bench.Config field) and newBenchFlags, the one table of the flags the
// modes share, which then adds each mode's own (newRunFlags in
// bench_run.go, newFindMaxFlags, newTargetsFlags, newFanoutFlags in their
// files). Every mode parses the whole set, so that a flag of another mode
// is refused by name (benchArgs.refuse) rather than unknown, and the form
// without a subcommand takes every flag it took before the modes.

import (
	"flag"
	"slices"

	"github.com/jetrpc/jetrpc/bench"
)

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

// newBenchFlags defines every flag of jetrpc bench on a new FlagSet: the
// shared ones here, then each mode's own; the groups of benchUsage list
// them all, and each mode's usage those it takes.
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
	fs.StringVar(&b.bodies, "bodies", "", "a `file` of request bodies, one JSON-RPC message per line, sent in turn (instead of -method and -params)")
	fs.BoolVar(&cfg.ExpectError, "expect-error", false, "the calls are expected to fail")
	fs.BoolVar(&cfg.NoCheck, "no-check", false, "frame replies without checking them (for fixed-reply ceiling servers)")
	fs.DurationVar(&cfg.Timeout, "timeout", bench.DefaultTimeout, "longest wait for a reply; also the most the run waits after the end for replies in flight "+
		"(with --subscribe: for a dial, an upgrade, the subscribe replies and a publish's write)")
	fs.Var(headerFlag{&cfg.Header}, "header", "send `header`, written 'Name: Value', with every HTTP request and the WebSocket upgrade; "+
		"repeatable (Host, Content-Length, Content-Type, Transfer-Encoding, Connection, Upgrade and Sec-WebSocket-* are the tool's own)")
	fs.Var(jwtSecretFlag{&cfg.JWTSecret, new(string)}, "jwt-secret", "send Authorization: Bearer with an HS256 JWT signed with the 32-byte hex secret in `file` "+
		"(geth's jwt.hex), its iat renewed every "+bench.DefaultJWTRefresh.String()+", as the Engine API wants")
	fs.Float64Var(&cfg.TraceSample, "trace-sample", 0, "send a W3C traceparent (fresh random ids, sampled flag set) with this `share` of requests, 0 to 1, "+
		"so that the load test shows up in the server's traces (jetrpc serve --otlp-endpoint); over ws:// once per connection, with its upgrade")
	fs.BoolVar(&b.asJSON, "json", false, "print the result as JSON")
	fs.StringVar(&b.plot, "plot", "", "write the latency distribution chart to this SVG `file`")
	fs.BoolVar(&b.quiet, "q", false, "no progress line (it is shown only on a terminal)")
	fs.BoolVar(&b.insecure, "insecure", false, "https:// and wss:// targets: do not verify the server's certificate (a test server's self-signed one)")
	fs.StringVar(&b.ca, "ca", "", "https:// and wss:// targets: trust the certificates in PEM `file` instead of the system's roots")
	fs.StringVar(&cfg.MetricsURL, "metrics", "", "read the server's Prometheus metrics at `URL` (jetrpc serve --metrics) when the measured window opens and closes, "+
		"and print its own view (calls handled, errors by code, rate, p50/p99 handling time) beside the client's")
	fs.Var(compressionFlag{&cfg.Compression}, "compression", "http:// and https:// targets: ask for compressed replies in these `codings`, "+
		"gzip, zstd or gzip,zstd (sent as Accept-Encoding, the first preferred), and decode them before their checks (jetrpc serve --compression)")
	fs.BoolVar(&cfg.WSCompression, "ws-compression", false, "ws:// and wss:// targets, and the fan-out's subscribers: offer permessage-deflate "+
		"(no context takeover either way) and inflate the compressed messages before their checks; requests are sent raw (jetrpc serve --ws-compression)")
	newRunFlags(fs, b)
	newFindMaxFlags(fs, b)
	newTargetsFlags(fs, b)
	newFanoutFlags(fs, b)
	return fs, b
}

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
