package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// NOTE: comparing two sets of saved runs as benchstat compares
// benchmarks: each metric's median and its spread (the largest distance
// of a run from the median, relative to it) on each side, and the
// difference of the medians when a Mann-Whitney U test says the two sets
// differ (two-sided, exact for small sets, α = 0.05); otherwise "~", the
// difference being within the noise. Few runs can never differ (3 a
// side: p ≥ 0.1): the tool says so.

// ReadResults reads saved runs: the output of `jetrpc bench -json`, one
// result or several one after another (each run appended to one file).
func ReadResults(r io.Reader) ([]*Result, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var out []*Result
	for {
		var res Result
		err := dec.Decode(&res)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if res.Target == "" && res.Requests == 0 && res.Duration == 0 {
			return nil, errors.New("not a jetrpc bench result")
		}
		out = append(out, &res)
	}
	if len(out) == 0 {
		return nil, errors.New("no result")
	}
	return out, nil
}

// ReadResultsFile is ReadResults of a file.
func ReadResultsFile(path string) ([]*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	res, err := ReadResults(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// Comparison is the comparison of two sets of runs, metric by metric.
type Comparison struct {
	A       string        `json:"a"` // the sets' names
	B       string        `json:"b"`
	NA      int           `json:"runs_a"`
	NB      int           `json:"runs_b"`
	Metrics []MetricDelta `json:"metrics"`
}

// MetricDelta is one metric of a Comparison.
type MetricDelta struct {
	Name    string  `json:"metric"`
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	SpreadA float64 `json:"spread_a"` // the largest distance of a run from the median, relative to it
	SpreadB float64 `json:"spread_b"`
	P       float64 `json:"p"` // the U test's p-value; 1 when it cannot tell
	// Delta is (MedianB - MedianA) / MedianA when the sets differ
	// (P < 0.05), else 0.
	Delta     float64 `json:"delta"`
	Differ    bool    `json:"differ"`
	latency   bool
	lowerBest bool
}

// compared are the metrics a comparison reads.
var compared = []struct {
	name      string
	of        func(*Result) float64
	latency   bool
	lowerBest bool
}{
	{"requests/s", func(r *Result) float64 { return r.RequestsPerSec }, false, false},
	{"calls/s", func(r *Result) float64 { return r.CallsPerSec }, false, false},
	{"p50", func(r *Result) float64 { return float64(r.Latency.P50) }, true, true},
	{"p90", func(r *Result) float64 { return float64(r.Latency.P90) }, true, true},
	{"p99", func(r *Result) float64 { return float64(r.Latency.P99) }, true, true},
	{"p99.9", func(r *Result) float64 { return float64(r.Latency.P999) }, true, true},
	{"max", func(r *Result) float64 { return float64(r.Latency.Max) }, true, true},
	{"errors", func(r *Result) float64 { return float64(r.TotalErrors()) }, false, true},
}

// Compare compares the runs a with the runs b.
func Compare(nameA string, a []*Result, nameB string, b []*Result) *Comparison {
	c := &Comparison{A: nameA, B: nameB, NA: len(a), NB: len(b)}
	for _, m := range compared {
		xa, xb := make([]float64, len(a)), make([]float64, len(b))
		for i, r := range a {
			xa[i] = m.of(r)
		}
		for i, r := range b {
			xb[i] = m.of(r)
		}
		d := MetricDelta{Name: m.name, latency: m.latency, lowerBest: m.lowerBest}
		d.MedianA, d.SpreadA = medianSpread(xa)
		d.MedianB, d.SpreadB = medianSpread(xb)
		d.P = mannWhitneyP(xa, xb)
		if d.P < 0.05 && d.MedianA != d.MedianB {
			d.Differ = true
			if d.MedianA != 0 {
				d.Delta = (d.MedianB - d.MedianA) / d.MedianA
			}
		}
		c.Metrics = append(c.Metrics, d)
	}
	return c
}

// medianSpread returns the median of xs and the largest distance of one
// of them from it, relative to it (0 for a median of 0).
func medianSpread(xs []float64) (median, spread float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0, 0
	}
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	if median != 0 {
		spread = math.Max(median-s[0], s[n-1]-median) / math.Abs(median)
	}
	return median, spread
}

// mannWhitneyP is the two-sided p-value of the Mann-Whitney U test of a
// against b: exact (by counting the arrangements of the ranks) when both
// have at most 20 values, else the normal approximation with the tie
// correction; 1 when either is empty or all values are equal.
func mannWhitneyP(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type v struct {
		x    float64
		side int
	}
	all := make([]v, 0, n1+n2)
	for _, x := range a {
		all = append(all, v{x, 0})
	}
	for _, x := range b {
		all = append(all, v{x, 1})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].x < all[j].x })
	ranks := make([]float64, len(all))
	tie := 0.0 // Σ(t³ - t) over groups of ties
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].x == all[i].x {
			j++
		}
		for k := i; k < j; k++ {
			ranks[k] = float64(i+j+1) / 2 // the mid-rank, from 1
		}
		t := float64(j - i)
		tie += t*t*t - t
		i = j
	}
	n := float64(n1 + n2)
	if tie == n*n*n-n {
		return 1 // all equal
	}
	r1 := 0.0
	for i, x := range all {
		if x.side == 0 {
			r1 += ranks[i]
		}
	}
	u := r1 - float64(n1*(n1+1))/2
	mean := float64(n1*n2) / 2
	if n1 <= 20 && n2 <= 20 && tie == 0 {
		// counts[k] = arrangements of n1 of n values whose U is k.
		counts := uCounts(n1, n2)
		total := 0.0
		for _, c := range counts {
			total += c
		}
		lo := math.Min(u, float64(n1*n2)-u)
		tail := 0.0
		for k := 0; k <= int(lo); k++ {
			tail += counts[k]
		}
		return math.Min(1, 2*tail/total)
	}
	sd := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - tie/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (math.Abs(u-mean) - 0.5) / sd // continuity correction
	return math.Min(1, math.Erfc(math.Max(z, 0)/math.Sqrt2))
}

// minP is the smallest two-sided p-value the exact U test can give for
// sets of m and n values: 2 / C(m+n, m).
func minP(m, n int) float64 {
	c := 1.0
	for i := 1; i <= m; i++ {
		c = c * float64(n+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// uCounts returns how many arrangements of m values of one set and n of
// the other give each U, from 0 to m·n.
func uCounts(m, n int) []float64 {
	// f[i][j][u]: arrangements of i and j values with U = u.
	f := make([][][]float64, m+1)
	for i := range f {
		f[i] = make([][]float64, n+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			switch {
			case i == 0 || j == 0:
				f[i][j][0] = 1
			default:
				for u := range f[i][j] {
					if u-j >= 0 && u-j < len(f[i-1][j]) {
						f[i][j][u] += f[i-1][j][u-j] // the largest value is of the first set: it beats j
					}
					if u < len(f[i][j-1]) {
						f[i][j][u] += f[i][j-1][u]
					}
				}
			}
		}
	}
	return f[m][n]
}

// WriteTable writes the comparison as benchstat does.
func (c *Comparison) WriteTable(w io.Writer) {
	ha := fmt.Sprintf("%s (%d runs)", c.A, c.NA)
	hb := fmt.Sprintf("%s (%d runs)", c.B, c.NB)
	fmt.Fprintf(w, "%-12s %-26s %-26s %s\n", "", ha, hb, "delta")
	for _, d := range c.Metrics {
		format := func(v, spread float64) string {
			s := group(v)
			if d.latency {
				s = us(int64(math.Round(v)))
			}
			if spread > 0 {
				s += fmt.Sprintf(" ±%.0f%%", 100*spread)
			}
			return s
		}
		delta := fmt.Sprintf("~ (p=%.3f)", d.P)
		if d.Differ {
			better := (d.Delta < 0) == d.lowerBest
			word := "worse"
			if better {
				word = "better"
			}
			delta = fmt.Sprintf("%+.2f%% (p=%.3f, %s)", 100*d.Delta, d.P, word)
		}
		fmt.Fprintf(w, "%-12s %-26s %-26s %s\n", d.Name, format(d.MedianA, d.SpreadA), format(d.MedianB, d.SpreadB), delta)
	}
	if minP(c.NA, c.NB) >= 0.05 {
		fmt.Fprintf(w, "(with %d and %d runs no difference can reach p < 0.05: append more runs, jetrpc bench -json ... >> FILE)\n", c.NA, c.NB)
	}
}
