package main

// NOTE: jetrpc bench targets (--target without a subcommand), several
// targets: its own flags (--target, -rounds, -diff), its usage section,
// and runTargets, which first checks the targets against one another call
// by call (-diff, bench.Diff), then runs them in interleaved rounds
// (bench.RunTargets) and reports them side by side.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/jetrpc/jetrpc/bench"
)

// targetsMode is jetrpc bench targets.
var targetsMode = &benchMode{
	name:      "targets",
	title:     "several targets",
	legacy:    "--target",
	legacyArg: " NAME=URL",
	usage:     &targetsUsage,
	run:       runTargets,
}

var targetsUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench targets --target NAME=URL --target NAME=URL... [flags]
       jetrpc bench --target NAME=URL --target NAME=URL... [flags]

Several targets, two at least, named: with -diff N, first N calls of the
mix sent to every target, one at a time, and those answered differently
reported (exit status 2); then -rounds rounds, each running every target
in turn (the order reversed every other round), reported side by side
with each target's ratio to the first. The targets are the --target
flags: no target argument.
`,
	groups: []flagGroup{
		{"load", []string{"c", "d", "n", "warmup", "rate", "schedule", "pipeline"}},
		{"requests", []string{"method", "params", "batch", "notify", "bodies", "workload", "from-discover"}},
		{"replies", []string{"expect-error", "no-check", "timeout"}},
		{"several targets", []string{"target", "rounds", "diff"}},
		{"compression", []string{"compression", "ws-compression"}},
		{"authentication (http:// and ws:// targets)", []string{"header", "jwt-secret"}},
		{"tracing (http:// and ws:// targets)", []string{"trace-sample"}},
		{"TLS (https:// and wss:// targets)", []string{"ca", "insecure"}},
		{"output", []string{"json", "q", "metrics"}},
	},
	examples: `  jetrpc bench targets --target old=http://10.0.0.1:8080/ --target new=http://10.0.0.2:8080/ -diff 500 -workload mix.json
`,
}

// newTargetsFlags defines the flags of a run over several targets alone
// on fs.
func newTargetsFlags(fs *flag.FlagSet, b *benchFlags) {
	fs.Var(targetFlag{&b.targets}, "target", "a target of a run over several, `name=URL` (repeatable): each is run -rounds times, interleaved, "+
		"and reported side by side with its ratio to the first")
	fs.IntVar(&b.rounds, "rounds", 3, "with --target, the rounds (each runs every target; the order reverses every other round)")
	fs.IntVar(&b.diff, "diff", 0, "with --target, first send `N` calls of the mix to every target, one at a time, and report those answered differently "+
		"(result or error code; workload calls marked free are not compared); a difference sets exit status 2")
}

// runTargets is `jetrpc bench targets --target a=URL --target b=URL`:
// the differential check (-diff), then the interleaved rounds.
func runTargets(ctx context.Context, a *benchArgs, stdout, stderr io.Writer) error {
	switch {
	case a.fs.NArg() > 0:
		return a.usageError(stderr, errors.New("--target names the targets: no target argument with it"))
	case len(a.targets) < 2:
		return a.usageError(stderr, errors.New("--target: two targets at least"))
	}
	if err := prepareRequests(ctx, a, stderr); err != nil {
		return err
	}
	cfg, b := a.cfg, a.benchFlags
	var progress io.Writer
	if !b.asJSON && !b.quiet {
		progress = stdout
	}
	out := struct {
		Diff *bench.DiffResult    `json:"diff,omitempty"`
		Runs *bench.TargetsResult `json:"runs"`
	}{}
	if b.diff > 0 {
		d, err := bench.Diff(ctx, cfg, b.targets, b.diff)
		if err != nil {
			return err
		}
		out.Diff = d
		if !b.asJSON {
			d.WriteTable(stdout)
			fmt.Fprintln(stdout)
		}
	}
	res, err := bench.RunTargets(ctx, cfg, b.targets, b.rounds, progress)
	if err != nil {
		return err
	}
	out.Runs = res
	if b.asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		if progress != nil {
			fmt.Fprintln(stdout)
		}
		res.WriteTable(stdout)
	}
	if out.Diff != nil && out.Diff.Differ > 0 {
		return fmt.Errorf("%d of %d calls compared were answered differently by the targets", out.Diff.Differ, out.Diff.Compared)
	}
	for _, t := range res.Targets {
		for _, r := range t.Runs {
			if err := r.Failure(); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
	}
	return nil
}
