// Package testkit holds the helpers that the tests of handler and of its
// packages share: where a table case was written, a logger that discards,
// waiting for a condition, and whether the race detector is on. It is
// imported by test files only.
package testkit

import (
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// Here returns the file:line of its caller: table cases call it in their
// literal to record where they are.
func Here() string { return CallerLine(2) }

// CallerLine returns the file:line skip frames up (1 is the caller of
// CallerLine), "?" when there is none.
func CallerLine(skip int) string {
	_, file, line, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	return filepath.Base(file) + ":" + strconv.Itoa(line)
}

// Quiet returns a logger that discards everything.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Wait waits up to 10 s for cond, polling every millisecond, and fails
// t when it is still false then.
func Wait(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// RaceEnabled reports whether the test binary was built with -race,
// under which sync.Pool drops objects at random: allocation counts mean
// nothing then.
func RaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
