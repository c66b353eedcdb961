package clock

// NOTE: the coarse clock. Coarse reads a reading of Now that a goroutine
// stores every coarseTick, so that a hot path that needs the time only
// roughly (a call's deadline, its rate limits, the slow-call log) pays a
// load instead of a clock reading. The goroutine starts on the first
// read and stops after coarseIdle ticks without one; a read that finds
// it stopped starts it again and reads Now.
//
// coarse.state's bits say whether the goroutine runs (coarseRunning) and
// whether the clock was read since the goroutine's last idle check
// (coarseUsed). Coarse's fast path wants both set, so that the state's
// cache line is written once per idle check, not once per read.

import (
	"sync/atomic"
	"time"
)

// The coarse clock's steps.
const (
	coarseTick = 10 * time.Millisecond // how often the coarse clock advances: each tick costs a wakeup (about 40 µs of CPU on a VM)
	coarseIdle = 100                   // ticks without a reader after which its goroutine stops
)

// coarse is the coarse clock.
var coarse struct {
	now   atomic.Int64  // a reading of Now; behind the time by about coarseTick at most while running; only grows
	state atomic.Uint32 // coarseRunning, coarseUsed
}

// Bits of coarse.state.
const (
	coarseRunning = 1 << iota // a goroutine advances coarse.now
	coarseUsed                // read since the goroutine's last idle check
)

// Coarse returns a reading of Now that is behind the time by at most
// about 10 ms (one tick of the goroutine that advances it). It only
// grows, costs an atomic load and allocates nothing. Kept inlinable.
func Coarse() int64 {
	if coarse.state.Load() == coarseRunning|coarseUsed {
		return coarse.now.Load()
	}
	return coarseSlow()
}

// coarseSlow is Coarse when the clock has not been read since its
// goroutine's last idle check (it marks it read: once a check, so that
// the state's cache line stays shared), or when the goroutine is not
// running (it starts it and reads Now).
func coarseSlow() int64 {
	for {
		st := coarse.state.Load()
		if st&coarseRunning != 0 {
			// The goroutine may stop between the Load and the Or: the state
			// is then coarseUsed alone, which the next read restarts below.
			coarse.state.Or(coarseUsed)
			return coarse.now.Load()
		}
		if coarse.state.CompareAndSwap(st, coarseRunning|coarseUsed) {
			now := advance()
			go runCoarse()
			return now
		}
	}
}

// runCoarse advances the coarse clock every coarseTick until it has not
// been read for coarseIdle ticks.
func runCoarse() {
	t := time.NewTicker(coarseTick)
	defer t.Stop()
	for idle := 0; ; {
		<-t.C
		advance()
		if idle++; idle < coarseIdle {
			continue
		}
		idle = 0
		if coarse.state.CompareAndSwap(coarseRunning, 0) {
			return // unused: the next read starts it again
		}
		coarse.state.Store(coarseRunning) // clears coarseUsed
	}
}

// advance reads Now, moves the coarse clock forward to it (never back)
// and returns it.
func advance() int64 {
	now := nanotime()
	for {
		old := coarse.now.Load()
		if now <= old || coarse.now.CompareAndSwap(old, now) {
			return now
		}
	}
}
