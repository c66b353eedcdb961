//go:build unix

package fdlimit

import (
	"syscall"
	"testing"
)

// Raise leaves the soft limit at the hard limit, and says so.
func TestRaise_softLimitUpToHard(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max > 1024 {
		lower := lim
		lower.Cur = 1024
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lower); err != nil {
			t.Fatal(err)
		}
	}
	got := Raise()
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != lim.Max || got != lim.Cur {
		t.Fatalf("Raise: %d; soft limit %d, hard %d", got, lim.Cur, lim.Max)
	}
}
