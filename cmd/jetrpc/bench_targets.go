package main

// NOTE: the --target mode of jetrpc bench: several targets, first
// checked against one another call by call (-diff, bench.Diff), then run
// in interleaved rounds (bench.RunTargets) and reported side by side.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/jetrpc/jetrpc/bench"
)

// runTargets is `jetrpc bench --target a=URL --target b=URL`: the
// differential check (-diff), then the interleaved rounds.
func runTargets(ctx context.Context, fs *flag.FlagSet, cfg bench.Config, b *benchFlags, stdout, stderr io.Writer) error {
	switch {
	case fs.NArg() > 0:
		return usageError(fs, &benchUsage, stderr, errors.New("--target names the targets: no target argument with it"))
	case len(b.targets) < 2:
		return usageError(fs, &benchUsage, stderr, errors.New("--target: two targets at least"))
	case len(b.thresholds) > 0 || b.plot != "" || b.report != "":
		return usageError(fs, &benchUsage, stderr, errors.New("--target runs several targets: -threshold, -plot and -report are for one"))
	}
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
