package bench

// Tests of comparisons (compare.go): the U test's p-values, medians and
// spreads, reading appended runs, and the verdicts.

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestMannWhitneyP(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		p    float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2.0 / 70},         // the most extreme of C(8,4) arrangements, both tails
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 2.0 / 20},               // 3 a side cannot go under 0.1
		{[]float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 48.0 / 70},        // interleaved: U = 6 of 16, 24 of 70 arrangements as low, doubled
		{[]float64{5, 5, 5}, []float64{5, 5, 5}, 1},                      // all equal
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252}, // C(10,5)
	} {
		if got := mannWhitneyP(tc.a, tc.b); math.Abs(got-tc.p) > 1e-9 {
			t.Errorf("%v vs %v: p %g, want %g", tc.a, tc.b, got, tc.p)
		}
	}
	// Large sets: the normal approximation; a clear shift is significant.
	var a, b []float64
	for i := range 30 {
		a, b = append(a, float64(i)), append(b, float64(i)+20)
	}
	if p := mannWhitneyP(a, b); p > 1e-4 {
		t.Errorf("30 vs 30 shifted by 20: p %g", p)
	}
	if m, s := medianSpread([]float64{10, 12, 9, 11}); m != 10.5 || math.Abs(s-1.5/10.5) > 1e-12 {
		t.Errorf("median %g spread %g", m, s)
	}
}

func TestCompare_verdicts(t *testing.T) {
	run := func(rps float64, p99 int64) *Result {
		return &Result{Target: "x", Duration: 1, RequestsPerSec: rps, Latency: Latency{P50: 100, P99: p99, Max: 2 * p99}}
	}
	var lines []string
	for _, rps := range []float64{100_000, 101_000, 99_000, 100_500, 100_200} {
		b, _ := json.Marshal(run(rps, 900))
		lines = append(lines, string(b))
	}
	a, err := ReadResults(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil || len(a) != 5 {
		t.Fatalf("%d runs, %v", len(a), err)
	}
	b := []*Result{run(120_000, 1000), run(121_000, 1000), run(119_000, 1000), run(120_500, 1000), run(122_000, 1000)}
	c := Compare("old.json", a, "new.json", b)
	got := map[string]MetricDelta{}
	for _, d := range c.Metrics {
		got[d.Name] = d
	}
	if d := got["requests/s"]; !d.Differ || math.Abs(d.Delta-(120_500.0-100_200)/100_200) > 1e-9 || d.P >= 0.05 {
		t.Errorf("requests/s: %+v", d)
	}
	if d := got["p50"]; d.Differ || d.P != 1 {
		t.Errorf("p50, equal everywhere: %+v", d)
	}
	var tb strings.Builder
	c.WriteTable(&tb)
	for _, want := range []string{"old.json (5 runs)", "new.json (5 runs)", "requests/s   100,200 ±1%", "+20.26% (p=0.008, better)", "p99          900µs", "+11.11% (p=0.004, worse)", "p50          100µs                      100µs                      ~ (p=1.000)"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("no %q in:\n%s", want, tb.String())
		}
	}
	c = Compare("a", a[:2], "b", b[:2])
	tb.Reset()
	c.WriteTable(&tb)
	if !strings.Contains(tb.String(), "with 2 and 2 runs no difference can reach p < 0.05") {
		t.Errorf("two runs a side:\n%s", tb.String())
	}
	if _, err := ReadResults(strings.NewReader(`{"foo": 1}`)); err == nil {
		t.Error("not a result: accepted")
	}
}
