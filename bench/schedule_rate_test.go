//go:build !race

// The race detector slows the load generator until it sends late, and
// what it sends after the window does not count: the achieved counts
// would measure the detector.

package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Runs on a schedule against the demo server: the requests offered are
// the schedule's, within 2 %. (Counting the answers in time failed on a
// loaded machine: requests sent late do not count.)
func TestRun_scheduleAchievesItsRate(t *testing.T) {
	tcp, _ := StartDemoServer(t)
	for spec, want := range map[string]float64{
		"ramp:0:4000:1s":           2000,
		"step:500:500:1500:400ms":  1200,
		"200:300ms,200-1000:500ms": 360,
	} {
		stages, err := ParseSchedule(spec)
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, Config{Target: "tcp://" + tcp, Schedule: stages, Conns: 4, Warmup: -1, Pipeline: 4})
		// The schedule's offer within 2 %; the answers in time a little
		// below it on a loaded machine (a request sent late does not count).
		if res.TotalErrors() != 0 || math.Abs(float64(res.Offered)-want) > 0.02*want || float64(res.Requests) < 0.9*want {
			t.Errorf("%s: %d requests offered, %d answered in time; want %g ± 2 %% offered (errors %v)", spec, res.Offered, res.Requests, want, res.Errors)
		}
		if !strings.Contains(res.LoadShape(), "open loop, ") {
			t.Errorf("%s: shape %q", spec, res.LoadShape())
		}
	}
	// The constant rate of -rate keeps its count too.
	res := mustRun(t, Config{Target: "tcp://" + tcp, Rate: 2000, Duration: time.Second, Conns: 4, Warmup: -1, Pipeline: 4})
	if res.TotalErrors() != 0 || math.Abs(float64(res.Offered)-2000) > 0.02*2000 || res.Requests < 1800 {
		t.Errorf("rate 2,000/s for 1 s: %d requests offered, %d answered in time (errors %v)", res.Offered, res.Requests, res.Errors)
	}
	for _, c := range []Config{
		{Rate: 10, Schedule: []Stage{{time.Second, 1, 1}}},
		{Duration: time.Second, Schedule: []Stage{{time.Second, 1, 1}}},
		{Schedule: []Stage{{0, 1, 1}}},
		{Schedule: []Stage{{time.Second, math.NaN(), 1}}},
	} {
		if err := c.fill(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}
