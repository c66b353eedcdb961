package main

// NOTE: jetrpc bench find-max (--find-max without a subcommand), a
// capacity search: its own flags (--find-max, --slo), its usage section,
// and runFindMax (bench.FindMax), open-loop probes judged by the --slo
// conditions, against one target as a single run has it.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/jetrpc/jetrpc/bench"
)

// findMaxMode is jetrpc bench find-max.
var findMaxMode = &benchMode{
	name:   "find-max",
	title:  "a capacity search",
	legacy: "--find-max",
	usage:  &findMaxUsage,
	run:    runFindMax,
}

var findMaxUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench find-max [--slo CONDITION]... [flags] [target]
       jetrpc bench --find-max [--slo CONDITION]... [flags] [target]

A capacity search: open-loop probes of -d each, doubling from -rate until
one fails an --slo condition or gets an error, then halving the gap; it
prints each probe and the highest rate that held, and exits with status
2 when none did. It sets each probe's rate itself: no -n, -schedule or
-threshold.
`,
	groups: []flagGroup{
		{"load", []string{"c", "d", "warmup", "rate", "pipeline"}},
		{"requests", []string{"method", "params", "batch", "notify", "bodies", "workload", "from-discover"}},
		{"replies", []string{"expect-error", "no-check", "timeout"}},
		{"capacity search", []string{"find-max", "slo"}},
		{"compression", []string{"compression", "ws-compression"}},
		{"authentication (http:// and ws:// targets)", []string{"header", "jwt-secret"}},
		{"tracing (http:// and ws:// targets)", []string{"trace-sample"}},
		{"TLS (https:// and wss:// targets)", []string{"ca", "insecure"}},
		{"output", []string{"json", "plot", "q", "metrics"}},
	},
	examples: `  jetrpc bench find-max --slo 'p99<10ms' -d 1s http://127.0.0.1:8080/
  jetrpc bench find-max --slo 'p99<10ms' -workload mix.json -plot capacity.svg http://127.0.0.1:8080/
`,
}

// newFindMaxFlags defines the flags of a capacity search alone on fs.
func newFindMaxFlags(fs *flag.FlagSet, b *benchFlags) {
	fs.BoolVar(&b.findMax, "find-max", false, "search for the highest rate that holds every --slo with no error: open-loop probes of -d each (default "+
		bench.DefaultProbeWindow.String()+"), doubling from -rate (default 1000) until one fails, then halving the gap to 5 %; "+
		"prints each probe and the capacity, and with -plot the latency by rate")
	fs.Var(thresholdFlag{&b.slo}, "slo", "with --find-max, a `condition` a rate must meet to hold, as -threshold takes them (repeatable): 'p99<10ms'")
}

// runFindMax is `jetrpc bench find-max`: a capacity search; the exit
// status is 2 when no rate held.
func runFindMax(ctx context.Context, a *benchArgs, stdout, stderr io.Writer) error {
	if a.fs.NArg() > 1 {
		return a.usageError(stderr, fmt.Errorf("one target at most, not %q", a.fs.Args()))
	}
	if err := prepareRequests(ctx, a, stderr); err != nil {
		return err
	}
	stop, err := singleTarget(a, stdout)
	if err != nil {
		return err
	}
	if stop != nil {
		defer stop()
	}
	cfg := a.cfg
	f := bench.FindMaxConfig{SLO: a.slo, Start: cfg.Rate}
	cfg.Rate = 0
	if cfg.Duration == 0 {
		cfg.Duration = bench.DefaultProbeWindow
	}
	if !a.asJSON {
		f.Progress = stdout
		fmt.Fprintf(stdout, "%12s %12s %10s %10s %10s  %s\n", "offered/s", "answered/s", "p50", "p99", "max", "verdict")
	}
	c, err := bench.FindMax(ctx, cfg, f)
	if err != nil {
		return err
	}
	if a.asJSON {
		if err := writeJSON(stdout, c); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout)
		c.WriteTable(stdout)
	}
	if a.plot != "" {
		if err := createWith(a.plot, c.WritePlotSVG); err != nil {
			return err
		}
	}
	if c.Max == 0 {
		return errors.New("no rate tried held: the capacity is below the lowest, " + strconv.FormatFloat(c.Probes[len(c.Probes)-1].Rate, 'f', 0, 64) + " requests/s")
	}
	return nil
}
