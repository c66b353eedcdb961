package main

// NOTE: jetrpc bench run, the single run (the mode without a mode flag):
// its own flags (-threshold, -report, -json-schema, --print-workload),
// its usage section, and runSingle, which measures one target — the one
// given, the --from-discover URL, or the bundled server in-process — with
// bench.Run, or prints the workload --from-discover builds.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/invopop/jsonschema"
	"github.com/jetrpc/jetrpc/bench"
)

// runMode is jetrpc bench run.
var runMode = &benchMode{
	name:  "run",
	title: "a single run",
	usage: &runUsage,
	run:   runSingle,
}

var runUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench run [flags] [target]
       jetrpc bench [flags] [target]

A single run: -c connections call -method with -params (or a -workload,
-bodies, or the workload --from-discover builds) for -d, in a closed loop
or at a -rate, against the target, or the bundled server in-process when
none is given. It prints requests/s, errors by kind and latency
percentiles, and exits with status 2 when a reply was wrong or missing,
or, with -threshold conditions, when one fails.
`,
	groups: []flagGroup{
		{"load", []string{"c", "d", "n", "warmup", "rate", "schedule", "pipeline"}},
		{"requests", []string{"method", "params", "batch", "notify", "bodies", "workload", "from-discover", "print-workload"}},
		{"replies", []string{"expect-error", "no-check", "timeout"}},
		{"pass or fail", []string{"threshold"}},
		{"compression", []string{"compression", "ws-compression"}},
		{"authentication (http:// and ws:// targets)", []string{"header", "jwt-secret"}},
		{"tracing (http:// and ws:// targets)", []string{"trace-sample"}},
		{"TLS (https:// and wss:// targets)", []string{"ca", "insecure"}},
		{"output", []string{"json", "json-schema", "plot", "report", "q", "metrics"}},
	},
	examples: `  jetrpc bench run                                  # the in-process server, 5s
  jetrpc bench run -c 64 -d 10s http://127.0.0.1:8080/
  jetrpc bench run -rate 20000 -threshold 'p99<5ms' http://127.0.0.1:8080/  # a CI gate
  jetrpc bench run --from-discover http://127.0.0.1:8080/ --print-workload > mix.json
`,
}

// newRunFlags defines the flags of a single run alone on fs.
func newRunFlags(fs *flag.FlagSet, b *benchFlags) {
	fs.BoolVar(&b.printWL, "print-workload", false, "with --from-discover, print the workload file it builds (to edit and give to -workload) instead of running it")
	fs.BoolVar(&b.jsonSchema, "json-schema", false, "print the JSON Schema of what -json prints (a run's result), and exit")
	fs.StringVar(&b.report, "report", "", "write a self-contained HTML report to `file`: the load, latency by percentile, throughput, latency and errors over time, errors, replies by method, thresholds, the configuration")
	fs.Var(thresholdFlag{&b.thresholds}, "threshold", "check `condition` at the end, such as 'p99<5ms', 'errors==0', 'rps>50000' or 'error_rate<0.1%' "+
		"(repeatable; metrics p50 p90 p99 p99.9 max mean rps cps requests errors error_rate wire_in wire_out): the exit status is 2 when one fails. "+
		"With thresholds, they alone decide: errors fail the run only through one")
}

// runSingle is `jetrpc bench run`: one target measured once.
func runSingle(ctx context.Context, a *benchArgs, stdout, stderr io.Writer) error {
	if a.jsonSchema {
		return writeResultSchema(stdout)
	}
	if a.fs.NArg() > 1 {
		return a.usageError(stderr, fmt.Errorf("one target at most, not %q", a.fs.Args()))
	}
	if a.printWL && a.discover == "" {
		return a.usageError(stderr, errors.New("--print-workload prints what --from-discover builds: it needs --from-discover"))
	}
	if err := prepareRequests(ctx, a, stderr); err != nil {
		return err
	}
	if a.printWL {
		fmt.Fprint(stdout, a.cfg.Workload.String())
		return nil
	}
	stop, err := singleTarget(a, stdout)
	if err != nil {
		return err
	}
	if stop != nil {
		defer stop()
	}
	res, err := bench.Run(ctx, a.cfg)
	if err != nil {
		return err
	}
	failed := res.CheckThresholds(a.thresholds)
	if a.asJSON {
		if res.Server != nil && res.Server.Error != "" { // the table says it itself
			fmt.Fprintf(stderr, "jetrpc bench: %s; the server's view is missing\n", res.Server.Error)
		}
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		res.WriteTable(stdout)
	}
	if a.plot != "" {
		if err := createWith(a.plot, res.WritePlotSVG); err != nil {
			return err
		}
	}
	if a.report != "" {
		if err := createWith(a.report, res.WriteHTML); err != nil {
			return err
		}
	}
	if len(a.thresholds) > 0 {
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
