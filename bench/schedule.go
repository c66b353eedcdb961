package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// NOTE: a rate schedule is a list of stages, each a rate going linearly
// from From to To over its Duration (a step holds it, a ramp moves it).
// A connection's k-th request is due when the number of requests the
// schedule has offered it reaches k: the inverse of the integral of its
// share of the rate, solved per stage (a quadratic in a ramp) in the
// form that stays exact when the ramp is flat or starts at 0. The
// connections' requests are offset by a fraction of one request each,
// so that they take turns instead of coming together.

// Stage is one part of a rate schedule: the total rate goes linearly from
// From to To requests/s over Duration (From == To holds it).
type Stage struct {
	Duration time.Duration `json:"duration_ns"`
	From     float64       `json:"from"`
	To       float64       `json:"to"`
}

// ParseSchedule reads a rate schedule:
//
//   - "step:START:STEP:END:DURATION" — START requests/s for DURATION,
//     then START+STEP, and so on up to END (included): step:1000:1000:10000:5s;
//   - "ramp:FROM:TO:DURATION" — from FROM to TO requests/s linearly over
//     DURATION: ramp:0:20000:30s;
//   - stages joined by ",", each RATE:DURATION (held) or FROM-TO:DURATION
//     (a ramp): 1000:10s,1000-5000:20s,5000:10s.
func ParseSchedule(s string) ([]Stage, error) {
	bad := func(why string) error {
		return fmt.Errorf("schedule %q: %s (step:START:STEP:END:DURATION, ramp:FROM:TO:DURATION, or RATE:DURATION and FROM-TO:DURATION stages joined by commas)", s, why)
	}
	kind, rest, _ := strings.Cut(s, ":")
	var stages []Stage
	switch kind {
	case "step":
		f := strings.Split(rest, ":")
		if len(f) != 4 {
			return nil, bad("a step schedule has four fields")
		}
		start, err1 := parseRate(f[0])
		step, err2 := parseRate(f[1])
		end, err3 := parseRate(f[2])
		d, err4 := time.ParseDuration(f[3])
		if err := errors.Join(err1, err2, err3, err4); err != nil || d <= 0 || step <= 0 || end < start {
			return nil, bad("want rates with 0 ≤ START ≤ END, STEP > 0 and a positive DURATION")
		}
		steps := math.Floor((end-start)/step*(1+1e-9)) + 1 // the rates START, START+STEP, … up to END
		if steps > 1000 || math.IsNaN(steps) {
			return nil, bad("more than 1000 steps")
		}
		for i := range int(steps) {
			r := start + float64(i)*step
			stages = append(stages, Stage{Duration: d, From: r, To: r})
		}
	case "ramp":
		f := strings.Split(rest, ":")
		if len(f) != 3 {
			return nil, bad("a ramp has three fields")
		}
		from, err1 := parseRate(f[0])
		to, err2 := parseRate(f[1])
		d, err3 := time.ParseDuration(f[2])
		if err := errors.Join(err1, err2, err3); err != nil || d <= 0 {
			return nil, bad("want two rates and a positive DURATION")
		}
		stages = []Stage{{Duration: d, From: from, To: to}}
	default:
		if len(s) > 0 && strings.Count(s, ",") >= 1000 {
			return nil, bad("more than 1000 stages")
		}
		for _, part := range strings.Split(s, ",") {
			rates, dur, ok := strings.Cut(strings.TrimSpace(part), ":")
			d, err := time.ParseDuration(dur)
			if !ok || err != nil || d <= 0 {
				return nil, bad("each stage is RATE:DURATION or FROM-TO:DURATION with a positive DURATION")
			}
			lo, hi, ramp := strings.Cut(rates, "-")
			from, err1 := parseRate(lo)
			to := from
			var err2 error
			if ramp {
				to, err2 = parseRate(hi)
			}
			if err := errors.Join(err1, err2); err != nil {
				return nil, bad(err.Error())
			}
			stages = append(stages, Stage{Duration: d, From: from, To: to})
		}
	}
	return stages, nil
}

// parseRate reads a rate: a finite number of requests/s, 0 or more.
func parseRate(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a rate (requests/s, 0 or more)", s)
	}
	return v, nil
}

// scheduleDuration is the length of stages.
func scheduleDuration(stages []Stage) time.Duration {
	var d time.Duration
	for _, s := range stages {
		d += s.Duration
	}
	return d
}

// describeSchedule says a schedule in a few words: "ramp 0 → 20,000
// requests/s over 30s", "10 steps from 1,000 to 10,000 requests/s, 5s
// each", or its stages.
func describeSchedule(stages []Stage) string {
	switch {
	case len(stages) == 1 && stages[0].From != stages[0].To:
		s := stages[0]
		return "ramp " + group(s.From) + " → " + group(s.To) + " requests/s over " + s.Duration.String()
	case len(stages) > 1 && isSteps(stages):
		return strconv.Itoa(len(stages)) + " steps from " + group(stages[0].From) + " to " + group(stages[len(stages)-1].From) +
			" requests/s, " + stages[0].Duration.String() + " each"
	}
	parts := make([]string, len(stages))
	for i, s := range stages {
		if s.From == s.To {
			parts[i] = group(s.From) + "/s for " + s.Duration.String()
		} else {
			parts[i] = group(s.From) + " → " + group(s.To) + "/s over " + s.Duration.String()
		}
	}
	return "stages " + strings.Join(parts, ", ")
}

// isSteps reports whether stages are held rates of one duration rising
// by one step.
func isSteps(stages []Stage) bool {
	step := stages[1].From - stages[0].From
	for i, s := range stages {
		if s.From != s.To || s.Duration != stages[0].Duration || step <= 0 ||
			math.Abs(s.From-(stages[0].From+float64(i)*step)) > 1e-9*math.Max(1, s.From) {
			return false
		}
	}
	return true
}

// plan is one connection's schedule: its share of each stage's rate, and
// where each stage begins in time (since the start) and in requests.
type plan struct {
	segs []planSeg
	last float64 // the rate after the last stage (the last one's To, held), per second
	end  float64 // seconds: where the stages end
	n    float64 // requests offered by then
}

type planSeg struct {
	at, dur float64 // seconds
	r0, r1  float64 // the connection's rate at the start and the end, per second
	n0      float64 // requests offered before it
}

// newPlan is the schedule of one of conns connections: warmup at the
// first stage's rate, then the stages.
func newPlan(stages []Stage, conns int, warmup time.Duration) *plan {
	p := &plan{}
	share := 1 / float64(conns)
	add := func(dur, r0, r1 float64) {
		p.segs = append(p.segs, planSeg{at: p.end, dur: dur, r0: r0 * share, r1: r1 * share, n0: p.n})
		p.end += dur
		p.n += (r0 + r1) / 2 * share * dur
	}
	if warmup > 0 && len(stages) > 0 {
		add(warmup.Seconds(), stages[0].From, stages[0].From)
	}
	for _, s := range stages {
		add(s.Duration.Seconds(), s.From, s.To)
	}
	if len(stages) > 0 {
		p.last = stages[len(stages)-1].To * share
	}
	return p
}

// at returns when, in seconds since the start, the connection's request
// number m (a real: a connection's requests are offset by a fraction) is
// due; +Inf when the schedule never offers it.
func (p *plan) at(m float64) float64 {
	if m >= p.n {
		if p.last <= 0 {
			return math.Inf(1)
		}
		return p.end + (m-p.n)/p.last
	}
	// The last segment that begins at or before m.
	lo, hi := 0, len(p.segs)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if p.segs[mid].n0 <= m {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for i := lo; i < len(p.segs); i++ { // past segments that offer nothing
		s := &p.segs[i]
		left := m - s.n0
		if got := (s.r0 + s.r1) / 2 * s.dur; left < got || i == len(p.segs)-1 {
			// Solve r0·t + (r1-r0)/(2·dur)·t² = left for t in [0, dur],
			// as 2·left / (r0 + √(r0² + 4·a·left)): exact for a flat
			// stage, and for one that starts at 0.
			a := (s.r1 - s.r0) / (2 * s.dur)
			disc := math.Max(s.r0*s.r0+4*a*left, 0)
			den := s.r0 + math.Sqrt(disc)
			if den <= 0 {
				return s.at // left is 0 at a stage of rate 0
			}
			return s.at + 2*left/den
		}
	}
	return math.Inf(1)
}
