package textlog_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/textlog"
)

// fuzzZones are the locations FuzzHandler_matchesTextHandler picks from.
var fuzzZones = []*time.Location{time.UTC, time.Local, newYork, kolkata, lordHowe, oddZone}

// FuzzHandler_matchesTextHandler: a record of fuzzed keys, strings, ints,
// a float, a duration, a level and a time (a Unix nanosecond count in one
// of fuzzZones), with and without a WithAttrs prefix, is the same bytes
// from both handlers.
func FuzzHandler_matchesTextHandler(f *testing.F) {
	for i, s := range quotingStrings {
		f.Add(s, s, "k", int64(i), uint64(i), int64(i)*1_234_567, int(i)-4, t0.UnixNano()+int64(i)*999_999, uint8(i), float64(i)/3, i%2 == 0)
	}
	f.Add("", "", "", int64(math.MinInt64), uint64(math.MaxUint64), int64(math.MinInt64), math.MinInt, int64(math.MinInt64), uint8(1), math.NaN(), true)
	f.Add("a=b", "\xff", " ", int64(math.MaxInt64), uint64(0), int64(math.MaxInt64), math.MaxInt, int64(math.MaxInt64), uint8(2), math.Inf(-1), false)
	f.Fuzz(func(t *testing.T, key, val, key2 string, n int64, u uint64, d int64, level int, unixNano int64, zone uint8, fl float64, with bool) {
		tm := time.Unix(0, unixNano).In(fuzzZones[int(zone)%len(fuzzZones)])
		if zone >= 128 {
			tm = time.Time{}
		}
		r := slog.NewRecord(tm, slog.Level(level), val, 0)
		r.AddAttrs(slog.String(key, val), slog.Int64(key2, n), slog.Uint64("u", u), slog.Float64(key, fl),
			slog.Duration("duration", time.Duration(d)), slog.Bool(key2, with), slog.Time("t", tm.Add(time.Duration(d))))
		var got, want bytes.Buffer
		var th, sh slog.Handler = textlog.New(&got, nil), slog.NewTextHandler(&want, nil)
		if with {
			th = th.WithAttrs([]slog.Attr{slog.String(key2, val), slog.Duration(key, time.Duration(n))})
			sh = sh.WithAttrs([]slog.Attr{slog.String(key2, val), slog.Duration(key, time.Duration(n))})
		}
		// Twice: the second record formats its time from the cache.
		for range 2 {
			th.Handle(context.Background(), r)
			sh.Handle(context.Background(), r)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("\n got %q\nwant %q", got.Bytes(), want.Bytes())
		}
		if !textlog.FastPath(th, r) {
			t.Fatal("not on the fast path")
		}
	})
}
