package bench

// NOTE: the live progress line, printed to Config.Progress once a second
// while a run goes on: the phase, the rate, the requests and errors so
// far, and the errors by kind. It reads only the workers' atomic
// counters. IsTerminal is how a command decides to show it.

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// progress prints a line a second.
func (r *runner) progress(workers []*worker, done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last int64
	for {
		select {
		case <-done:
			fmt.Fprint(r.cfg.Progress, "\r\033[K")
			return
		case now := <-tick.C:
			var reqs, errs int64
			var kinds [len(errKinds)]int64
			for _, w := range workers {
				reqs += w.done.Load()
				errs += w.errors.Load()
				for i := range kinds {
					kinds[i] += w.byKind[i].Load()
				}
			}
			phase := "measuring"
			switch {
			case now.Before(r.start):
				phase = "warming up"
			case r.timed() && !now.Before(r.end):
				phase = "waiting for replies"
			}
			fmt.Fprintf(r.cfg.Progress, "\r\033[K%s %5.1fs  %9d req/s  %d requests  %d errors%s",
				phase, time.Since(r.start).Seconds(), reqs-last, reqs, errs, kindsText(kinds[:]))
			last = reqs
		}
	}
}

// kindsText says the errors by kind, for the live line: " (connect 3,
// timeout 1)", or "" for none.
func kindsText(kinds []int64) string {
	var b strings.Builder
	for i, n := range kinds {
		if n == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", errKinds[i], n)
	}
	if b.Len() > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// IsTerminal reports whether f is a terminal (for the progress line).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
