package clock_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/pool/clock"
)

func TestNow_advances(t *testing.T) {
	a := clock.Now()
	time.Sleep(2 * time.Millisecond)
	b := clock.Now()
	if d := b - a; d < int64(2*time.Millisecond) {
		t.Errorf("Now advanced %v over a 2 ms sleep", time.Duration(d))
	}
}

func TestTime_matchesTimeNow(t *testing.T) {
	const slack = time.Microsecond // the pairing of the epochs: a few ns
	before := time.Now().Add(-slack)
	at := clock.Time(clock.Now())
	after := time.Now().Add(slack)
	if at.Before(before) || at.After(after) {
		t.Errorf("Time(Now()) = %v, not between %v and %v", at, before, after)
	}
	// The monotonic part is kept: a deadline made from a reading compares
	// with time.Now exactly.
	dl := clock.Time(clock.Now() + int64(time.Hour))
	if d := time.Until(dl); d < 59*time.Minute || d > time.Hour {
		t.Errorf("time.Until(Time(Now()+1h)) = %v", d)
	}
}

func TestSince(t *testing.T) {
	a := clock.Now()
	time.Sleep(time.Millisecond)
	if d := clock.Since(a); d < time.Millisecond {
		t.Errorf("Since = %v after a 1 ms sleep", d)
	}
}

func TestNow_allocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = clock.Time(clock.Now()) }); n != 0 {
		t.Errorf("Now and Time allocate %v times", n)
	}
}

func TestNow_positive(t *testing.T) {
	if now := clock.Now(); now <= 0 {
		t.Errorf("Now = %d; want a positive reading (a new token bucket, at 0, must be full)", now)
	}
}

func TestCoarse_allocatesNothing(t *testing.T) {
	clock.Coarse() // starts the clock
	if n := testing.AllocsPerRun(100, func() { _ = clock.Coarse() }); n != 0 {
		t.Errorf("Coarse allocates %v times", n)
	}
}

func ExampleNow() {
	start := clock.Now()
	deadline := start + int64(30*time.Second) // a call's deadline, as the engine keeps it
	fmt.Println(clock.Now() < deadline, clock.Time(deadline).After(time.Now()))
	// Output: true true
}

// Coarse is for a deadline read per call: a load, not a clock reading,
// on Now's scale.
func ExampleCoarse() {
	deadline := clock.Coarse() + int64(30*time.Second) // up to 10 ms early
	fmt.Println(clock.Now() < deadline, clock.Since(clock.Coarse()) < time.Second)
	// Output: true true
}
