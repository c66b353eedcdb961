package clock

// White-box tests of the coarse clock (coarse.go): its goroutine's
// starts and stops.

import (
	"testing"
	"time"
)

// TestCoarse_advances: the coarse clock only grows, trails Now by about
// a tick, and runs while read.
func TestCoarse_advances(t *testing.T) {
	last := Coarse()
	deadline := time.Now().Add(50 * time.Millisecond)
	advanced := false
	for time.Now().Before(deadline) {
		now := Coarse()
		if now < last {
			t.Fatalf("coarse clock went back: %d after %d", now, last)
		}
		advanced = advanced || now > last
		last = now
		if lag := Now() - Coarse(); lag < 0 || lag > int64(200*time.Millisecond) {
			t.Fatalf("coarse clock %v behind", time.Duration(lag))
		}
		time.Sleep(100 * time.Microsecond)
	}
	if !advanced || coarse.state.Load()&coarseRunning == 0 {
		t.Errorf("coarse clock: advanced %v, state %b", advanced, coarse.state.Load())
	}
}

// TestCoarse_restartsAfterALostStop: the coarse clock's goroutine
// starts again when a read raced its stop (the state left at coarseUsed
// alone).
//
// It never started again: every read took the slow path (found in a review).
func TestCoarse_restartsAfterALostStop(t *testing.T) {
	// Wait for the clock's goroutine to stop (1 s without readers).
	deadline := time.Now().Add(10 * time.Second)
	for coarse.state.Load() != 0 {
		if time.Now().After(deadline) {
			t.Skip("the coarse clock keeps running (something reads it)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	coarse.state.Store(coarseUsed) // what the lost race leaves
	t.Cleanup(func() { coarse.state.CompareAndSwap(coarseUsed, 0) })
	for range 10 {
		Coarse()
	}
	time.Sleep(5 * coarseTick)
	if coarse.state.Load()&coarseRunning == 0 {
		t.Errorf("coarse clock state %b after reads: no goroutine runs it, and none will ever start", coarse.state.Load())
	}
}
