package bench

import (
	"time"
)

// Sample is one interval of a run's time series: what was answered and
// failed in it, and the latencies recorded in it.
type Sample struct {
	At         float64 `json:"at_s"` // the interval's end, in seconds since the measured window opened
	RequestsPS float64 `json:"requests_per_sec"`
	ErrorsPS   float64 `json:"errors_per_sec"`
	MeanUS     float64 `json:"latency_mean_us"` // 0 when none was recorded
	MaxUS      int64   `json:"latency_max_us"`
}

// seriesInterval is the sampling interval of a run of d: a tenth of it,
// between 100 ms and 1 s.
func seriesInterval(d time.Duration) time.Duration {
	return min(max(d/10, 100*time.Millisecond), time.Second)
}

// sampleSeries samples the workers' counters every interval from the
// opening of the measured window until done is closed, and returns the
// samples.
func (r *runner) sampleSeries(workers []*worker, interval time.Duration, done <-chan struct{}) []Sample {
	select {
	case <-time.After(time.Until(r.start)):
	case <-done:
		return nil
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	type totals struct{ done, errs, sum, n int64 }
	read := func() (t totals, maxUS int64) {
		for _, w := range workers {
			t.done += w.done.Load()
			t.errs += w.errors.Load()
			t.sum += w.latSum.Load()
			t.n += w.latN.Load()
			maxUS = max(maxUS, w.latMax.Swap(0))
		}
		return t, maxUS
	}
	last, _ := read()
	lastAt := time.Now()
	var out []Sample
	for {
		var now time.Time
		select {
		case now = <-tick.C:
		case <-done:
			now = time.Now()
		}
		cur, maxUS := read()
		dt := now.Sub(lastAt).Seconds()
		if dt >= interval.Seconds()/2 { // a last stub of an interval says little: left out
			s := Sample{At: now.Sub(r.start).Seconds(), RequestsPS: float64(cur.done-last.done) / dt,
				ErrorsPS: float64(cur.errs-last.errs) / dt, MaxUS: maxUS}
			if n := cur.n - last.n; n > 0 {
				s.MeanUS = float64(cur.sum-last.sum) / float64(n)
			}
			out = append(out, s)
		}
		last, lastAt = cur, now
		select {
		case <-done:
			return out
		default:
		}
	}
}
