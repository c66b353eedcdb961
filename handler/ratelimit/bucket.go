package ratelimit

// NOTE: the token bucket of the limiter (limiter.go) and the time it
// reads.
//
// A bucket is the GCRA ("virtual scheduling") form of a token bucket: a
// single int64, tat, the time at which the bucket will be full again. A
// call of cost n spends n·unit nanoseconds (unit = 1/Rate): it may run
// when max(tat, now) - now ≤ depth - n·unit (the bucket holds n tokens;
// depth = Burst·unit), and then moves tat to max(tat, now) + n·unit —
// one compare-and-swap, no lock and no float. A bucket is full when
// tat ≤ now; a new one (tat 0) is full.
//
// The time is package clock's: its coarse clock (clock.Coarse), a load,
// as reading the system clock costs more than the rest of a check
// (time.Since is 20 to 40 ns; all of allow, 15 to 20). A stale clock
// only refuses more, so a bucket about to refuse reads the precise clock
// first (clock.Now): refusals are exact, and a bucket lets through at
// most 10 ms' worth (one tick of the coarse clock) of units more than an
// exact one. A new bucket (tat 0) is full, as readings are positive.

import (
	"math"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/pool/clock"
)

// bucket is a token bucket in GCRA form (see the NOTE).
type bucket struct {
	tat atomic.Int64 // the reading of package clock at which the bucket is full again; evictedTAT once evicted
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

// limitTime is a time read for a call: a reading of package clock.
type limitTime struct {
	now     int64
	precise bool // read from the system clock, not the coarse one
}

// preciseClock returns the precise time (the test clock, if set).
func (l *Limiter) preciseClock() limitTime {
	if l.testNow != nil {
		return limitTime{now: l.testNow(), precise: true}
	}
	return limitTime{now: clock.Now(), precise: true}
}
