package handler

// NOTE: the token bucket of the rate limits (ratelimit.go) and the clock
// it reads.
//
// A bucket is the GCRA ("virtual scheduling") form of a token bucket: a
// single int64, tat, the time at which the bucket will be full again. A
// call of cost n spends n·unit nanoseconds (unit = 1/Rate): it may run
// when max(tat, now) - now ≤ depth - n·unit (the bucket holds n tokens;
// depth = Burst·unit), and then moves tat to max(tat, now) + n·unit —
// one compare-and-swap, no lock and no float. A bucket is full when
// tat ≤ now; a new one (tat 0) is full.
//
// The time is a coarse monotonic clock (coarse.now), advanced every
// clockTick by a goroutine that runs while limiters are used and stops
// when they are not: reading the system clock costs more than the rest
// of a check (time.Since is 20 to 40 ns; all of allow, 15 to 20). A
// stale clock only refuses more, so a bucket about to refuse reads the
// precise clock first (preciseNow): refusals are exact, and a bucket
// lets through at most clockTick·Rate units more than an exact one.

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/pool/clock"
)

// bucket is a token bucket in GCRA form (see the NOTE).
type bucket struct {
	tat atomic.Int64 // ns after limitEpoch at which the bucket is full again; evictedTAT once evicted
}

// evictedTAT marks the bucket of an evicted identity.
const evictedTAT = math.MaxInt64

// takeResult is the outcome of bucket.take.
type takeResult uint8

const (
	takeOK      takeResult = iota // spent
	takeRefused                   // too few tokens; nothing spent
	takeEvicted                   // the bucket's identity was evicted; nothing spent
)

// take spends e nanoseconds' worth of tokens at now from a bucket depth
// deep, if it holds them (or, for e > depth, if it is full).
func (b *bucket) take(now, e, depth int64) takeResult {
	for {
		tat := b.tat.Load()
		if tat == evictedTAT {
			return takeEvicted
		}
		base := max(tat, now)
		if base-now > depth-min(e, depth) {
			return takeRefused
		}
		if b.tat.CompareAndSwap(tat, base+e) {
			return takeOK
		}
	}
}

// give gives back e nanoseconds' worth of tokens that take spent. For
// buckets that are never evicted.
func (b *bucket) give(e int64) { b.tat.Add(-e) }

// limitTime is a time read for a call: nanoseconds after limitEpoch.
type limitTime struct {
	now     int64
	precise bool // read from the system clock, not the coarse one
}

// preciseClock returns the precise time (the test clock, if set).
func (l *limiter) preciseClock() limitTime {
	if l.testNow != nil {
		return limitTime{now: l.testNow(), precise: true}
	}
	return limitTime{now: preciseNow(), precise: true}
}

// The coarse clock.
const (
	clockTick = 10 * time.Millisecond // how often the coarse clock advances: each tick costs a wakeup (about 40 µs of CPU on a VM)
	clockIdle = 100                   // ticks without a reader after which its goroutine stops
)

// limitEpoch is the origin of the limiters' times (a bucket's 0), and
// limitMono the reading of package clock taken with it: a limiter's time
// t is the reading t+limitMono.
var limitEpoch, limitMono = time.Now(), clock.Now()

// coarse is the limiters' coarse clock.
var coarse struct {
	now   atomic.Int64  // ns after limitEpoch; behind the time by about clockTick at most while running; only grows
	state atomic.Uint32 // clockRunning, clockUsed
}

// Bits of coarse.state.
const (
	clockRunning = 1 << iota // a goroutine advances coarse.now
	clockUsed                // read since the goroutine's last idle check
)

// preciseNow returns the time, in ns after limitEpoch, from the
// monotonic clock (one read of package clock; time.Now makes two), and
// advances the coarse clock to it.
func preciseNow() int64 {
	now := clock.Now() - limitMono
	advanceClock(now)
	return now
}

// coarseNow returns the coarse time, in ns after limitEpoch. Kept
// inlinable.
func coarseNow() int64 {
	if coarse.state.Load() == clockRunning|clockUsed {
		return coarse.now.Load()
	}
	return coarseNowSlow()
}

// coarseNowSlow is coarseNow when the clock has not been read since its
// goroutine's last idle check (it marks it read: once a check, so that
// the state's cache line stays shared), or when the goroutine is not
// running (it starts it and reads the precise clock).
func coarseNowSlow() int64 {
	for {
		st := coarse.state.Load()
		if st&clockRunning != 0 {
			// The goroutine may stop between the Load and the Or: the state
			// is then clockUsed alone, which the next read restarts below.
			coarse.state.Or(clockUsed)
			return coarse.now.Load()
		}
		if coarse.state.CompareAndSwap(st, clockRunning|clockUsed) {
			now := preciseNow()
			go runClock()
			return now
		}
	}
}

// runClock advances the coarse clock every clockTick until it has not
// been read for clockIdle ticks.
func runClock() {
	t := time.NewTicker(clockTick)
	defer t.Stop()
	for idle := 0; ; {
		<-t.C
		preciseNow()
		if idle++; idle < clockIdle {
			continue
		}
		idle = 0
		if coarse.state.CompareAndSwap(clockRunning, 0) {
			return // unused: the next read starts it again
		}
		coarse.state.Store(clockRunning) // clears clockUsed
	}
}

// advanceClock moves the coarse clock forward to now (never back).
func advanceClock(now int64) {
	for {
		old := coarse.now.Load()
		if now <= old || coarse.now.CompareAndSwap(old, now) {
			return
		}
	}
}
