package bench

// Tests of rate schedules (schedule.go): parsing, the plan's inverse of
// the offered count, and runs whose achieved count matches the
// schedule's within 2 %.

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	for in, want := range map[string][]Stage{
		"step:1000:1000:3000:5s": {{5 * time.Second, 1000, 1000}, {5 * time.Second, 2000, 2000}, {5 * time.Second, 3000, 3000}},
		"ramp:0:20000:30s":       {{30 * time.Second, 0, 20000}},
		"1000:10s,1000-5000:20s": {{10 * time.Second, 1000, 1000}, {20 * time.Second, 1000, 5000}},
		"step:0.5:0.25:1:1s":     {{time.Second, 0.5, 0.5}, {time.Second, 0.75, 0.75}, {time.Second, 1, 1}},
	} {
		got, err := ParseSchedule(in)
		if err != nil || len(got) != len(want) {
			t.Errorf("%q: %v %v", in, got, err)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q stage %d: %+v, want %+v", in, i, got[i], want[i])
			}
		}
	}
	for _, in := range []string{"", "step:1:1:10", "step:10:1:1:1s", "step:1:0:10:1s", "step:0:1:5000:1s", "ramp:0:10", "ramp:0:10:-1s",
		"ramp:a:10:1s", "100", "100:0s", "-5:1s", "1-x:1s", "NaN:1s", "Inf:1s"} {
		if _, err := ParseSchedule(in); err == nil || !strings.Contains(err.Error(), "schedule") {
			t.Errorf("%q: %v", in, err)
		}
	}
	if got := describeSchedule([]Stage{{5 * time.Second, 1000, 1000}, {5 * time.Second, 2000, 2000}, {5 * time.Second, 3000, 3000}}); got != "3 steps from 1,000 to 3,000 requests/s, 5s each" {
		t.Errorf("steps: %q", got)
	}
	if got := describeSchedule([]Stage{{30 * time.Second, 0, 20000}}); got != "ramp 0 → 20,000 requests/s over 30s" {
		t.Errorf("ramp: %q", got)
	}
}

// The plan gives each connection's k-th request the time at which the
// schedule has offered it k requests: counting the requests due by any
// time gives the integral of its share of the rate, within one.
func TestPlan_inverseOfTheOfferedCount(t *testing.T) {
	for _, stages := range [][]Stage{
		{{time.Second, 0, 4000}},
		{{time.Second, 4000, 0}},
		{{500 * time.Millisecond, 1000, 1000}, {500 * time.Millisecond, 0, 0}, {time.Second, 300, 3000}},
		{{time.Second, 7, 7}},
	} {
		const conns = 4
		p := newPlan(stages, conns, 200*time.Millisecond)
		offered := func(t float64) float64 { // the connection's requests offered by t, warm-up included
			n, at := 0.0, 0.0
			for _, s := range p.segs {
				d := math.Min(math.Max(t-at, 0), s.dur)
				n += s.r0*d + (s.r1-s.r0)/(2*s.dur)*d*d
				at += s.dur
			}
			return n
		}
		prev := 0.0
		for k := 0; ; k++ {
			at := p.at(float64(k) + 0.25)
			if at < prev {
				t.Fatalf("%v: request %d due at %g, before request %d at %g", stages, k, at, k-1, prev)
			}
			prev = at
			if at > p.end {
				break
			}
			if n := offered(at); math.Abs(n-(float64(k)+0.25)) > 1e-6*math.Max(1, n) {
				t.Fatalf("%v: request %d due at %gs, when %g are offered", stages, k, at, n)
			}
		}
	}
	p := newPlan([]Stage{{time.Second, 100, 0}}, 1, 0)
	if at := p.at(1000); !math.IsInf(at, 1) {
		t.Fatalf("a schedule that ends at rate 0 offers no request past its count: %g", at)
	}
}
