// Package clock is the monotonic clock that the engine and the method
// table share, so that one reading can serve a message's deadline, its
// rate limits, its metrics and its log record.
//
// # Overview
//
// Now reads the runtime's monotonic clock in nanoseconds. Its origin is
// arbitrary: only differences and comparisons of readings mean anything,
// and Time turns a reading into a time.Time for APIs that want one (a
// context's deadline). A reading costs one vDSO call and no allocation;
// time.Now costs about twice as much (it reads the wall clock too).
// Readings are positive: the runtime's clock counts from the system's
// boot, so that a zero reading is older than any other.
//
// Coarse is a reading of Now that lags behind by at most about 10 ms,
// for the hot paths that read the time for every call but need it only
// roughly: a call's deadline (handler.Timeout), its rate limits
// (handler/ratelimit), the slow-call log. It costs an atomic load, not a
// clock reading, and allocates nothing; a goroutine advances it every
// 10 ms while it is read, and stops a second after the last read (the
// next read starts it again). Its readings are on Now's scale: a
// deadline may be set from Coarse and compared with Now, and
// Since(Coarse()) is the time since the last tick, at most about 10 ms.
// A coarse deadline comes at most 10 ms early; a token bucket read with
// it refuses at most as if 10 ms had not passed (handler/ratelimit reads
// Now before refusing).
//
// # Concurrency
//
// Every function is safe from any goroutine.
package clock

import (
	"time"
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock, which the runtime keeps
// linkable for the packages that read it so (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the monotonic time in nanoseconds, from an arbitrary
// origin. Kept inlinable.
func Now() int64 { return nanotime() }

// epochTime is a time.Time and epochMono the reading of Now taken at
// the same instant (within a few ns).
var epochTime, epochMono = epoch()

// epoch reads time.Now between two readings of Now and pairs it with
// their middle.
func epoch() (time.Time, int64) {
	before := nanotime()
	t := time.Now()
	return t, before + (nanotime()-before)/2
}

// Time returns the time of the reading ns, a value of Now, to within a
// few nanoseconds: comparisons with time.Now and the deadlines of
// contexts work on its monotonic part; its wall-clock part is as right
// as the wall clock was when the process started.
func Time(ns int64) time.Time { return epochTime.Add(time.Duration(ns - epochMono)) }

// Since returns the time elapsed since the reading ns.
func Since(ns int64) time.Duration { return time.Duration(nanotime() - ns) }
