package testkit

import (
	"strings"
	"testing"
)

// Here names the line that calls it; Quiet discards; Wait returns once
// its condition holds.
func TestHelpers(t *testing.T) {
	if at := Here(); !strings.HasPrefix(at, "testkit_test.go:") || at == "testkit_test.go:0" {
		t.Errorf("Here() = %q, want this file's line", at)
	}
	Quiet().Error("dropped")
	n := 0
	Wait(t, func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("Wait polled %d times, want 3", n)
	}
}
