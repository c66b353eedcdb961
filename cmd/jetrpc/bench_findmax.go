package main

// NOTE: the --find-max mode of jetrpc bench: a capacity search
// (bench.FindMax), open-loop probes judged by the --slo conditions.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jetrpc/jetrpc/bench"
)

// runFindMax is `jetrpc bench --find-max`: a capacity search; the exit
// status is 2 when no rate held.
func runFindMax(ctx context.Context, cfg bench.Config, b *benchFlags, stdout, stderr io.Writer) error {
	if len(cfg.Schedule) > 0 || cfg.Requests != 0 || len(b.thresholds) > 0 {
		return errors.New("--find-max sets each probe's rate and judges it by --slo: no -schedule, -n or -threshold")
	}
	f := bench.FindMaxConfig{SLO: b.slo, Start: cfg.Rate}
	cfg.Rate = 0
	if cfg.Duration == 0 {
		cfg.Duration = bench.DefaultProbeWindow
	}
	if !b.asJSON {
		f.Progress = stdout
		fmt.Fprintf(stdout, "%12s %12s %10s %10s %10s  %s\n", "offered/s", "answered/s", "p50", "p99", "max", "verdict")
	}
	c, err := bench.FindMax(ctx, cfg, f)
	if err != nil {
		return err
	}
	if b.asJSON {
		if err := writeJSON(stdout, c); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout)
		c.WriteTable(stdout)
	}
	if b.plot != "" {
		if err := createWith(b.plot, c.WritePlotSVG); err != nil {
			return err
		}
	}
	if c.Max == 0 {
		return errors.New("no rate tried held: the capacity is below the lowest, " + strconv.FormatFloat(c.Probes[len(c.Probes)-1].Rate, 'f', 0, 64) + " requests/s")
	}
	return nil
}
