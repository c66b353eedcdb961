package main

// NOTE: jetrpc bench compare, a mode with its own flag set: two files of
// saved runs (jetrpc bench -json), compared by bench.Compare; its usage
// section is compareUsage.

import (
	"flag"
	"fmt"
	"io"

	"github.com/jetrpc/jetrpc/bench"
)

var compareUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench compare [-json] A.json B.json

Compares two sets of saved runs (the output of jetrpc bench -json; append
several runs to one file: jetrpc bench -json ... >> A.json) metric by
metric, as benchstat does: the median and spread of each side, and the
difference when a Mann-Whitney U test says they differ (p < 0.05),
else "~". It takes 4 runs a side or more for a difference to show.
`,
	groups: []flagGroup{{"output", []string{"json"}}},
}

// newCompareFlags defines the flags of jetrpc bench compare.
func newCompareFlags() (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	return fs, fs.Bool("json", false, "print the comparison as JSON")
}

// runCompare is `jetrpc bench compare [-json] A B`: two files of saved
// runs (jetrpc bench -json, appended), compared metric by metric.
func runCompare(args []string, stdout, stderr io.Writer) error {
	fs, asJSON := newCompareFlags()
	help, err := parseFlags(fs, &compareUsage, args, stdout, stderr)
	if help || err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError(fs, &compareUsage, stderr, fmt.Errorf("two files of runs, not %d", fs.NArg()))
	}
	a, err := bench.ReadResultsFile(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := bench.ReadResultsFile(fs.Arg(1))
	if err != nil {
		return err
	}
	c := bench.Compare(fs.Arg(0), a, fs.Arg(1), b)
	if *asJSON {
		return writeJSON(stdout, c)
	}
	c.WriteTable(stdout)
	return nil
}
