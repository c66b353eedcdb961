package main

// NOTE: jetrpc bench compare, a mode of its own with its own flags: two
// files of saved runs (jetrpc bench -json), compared by bench.Compare.

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/jetrpc/jetrpc/bench"
)

// runCompare is `jetrpc bench compare [-json] A B`: two files of saved
// runs (jetrpc bench -json, appended), compared metric by metric.
func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: jetrpc bench compare [-json] A.json B.json

Compares two sets of saved runs (the output of jetrpc bench -json; append
several runs to one file: jetrpc bench -json ... >> A.json) metric by
metric, as benchstat does: the median and spread of each side, and the
difference when a Mann-Whitney U test says they differ (p < 0.05),
else "~". It takes 4 runs a side or more for a difference to show.
`)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage{err}
	}
	if fs.NArg() != 2 {
		fmt.Fprintf(stderr, "jetrpc bench compare: two files of runs, not %d\n\n", fs.NArg())
		fs.Usage()
		return errUsage{errors.New("compare wants two files")}
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
