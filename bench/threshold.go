package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// NOTE: thresholds are k6's: conditions on a run's result, checked at the
// end, each passing or failing, so that a CI job can gate on them.

// Threshold is a condition on a Result: Metric Op Value, such as
// p99<5ms, errors==0 or rps>50000. ParseThreshold reads one.
type Threshold struct {
	Expr   string  `json:"threshold"` // as written
	Metric string  `json:"-"`         // see ThresholdMetrics
	Op     string  `json:"-"`         // <, <=, >, >=, ==, !=
	Value  float64 `json:"-"`         // microseconds for a latency, else the plain number
}

// ThresholdMetrics names what a threshold may test, with what it reads.
var ThresholdMetrics = map[string]string{
	"p50":        "latency percentile 50 (a duration: 800us, 5ms, 1.5s)",
	"p90":        "latency percentile 90",
	"p99":        "latency percentile 99",
	"p99.9":      "latency percentile 99.9",
	"max":        "the largest latency",
	"mean":       "the mean latency",
	"rps":        "requests answered per second",
	"cps":        "calls answered (and notifications sent) per second",
	"requests":   "requests answered",
	"errors":     "errors of every kind",
	"error_rate": "errors per call made (calls answered, plus requests that got none), 0 to 1 (or a percentage: 0.1%)",
	"wire_in":    "bytes read from the wire per request answered (compressed replies compressed)",
	"wire_out":   "bytes written to the wire per request sent",
}

// latencyMetric reports whether metric is a latency, whose value is a
// duration.
func latencyMetric(metric string) bool {
	switch metric {
	case "p50", "p90", "p99", "p99.9", "max", "mean":
		return true
	}
	return false
}

// ParseThreshold reads a threshold: a metric of ThresholdMetrics, an
// operator (<, <=, >, >=, ==, !=) and a value, spaces allowed between;
// a latency's value is a duration with its unit (ns, us or µs, ms, s).
func ParseThreshold(s string) (Threshold, error) {
	t := Threshold{Expr: strings.TrimSpace(s)}
	i := strings.IndexAny(t.Expr, "<>=!")
	if i <= 0 {
		return t, fmt.Errorf("threshold %q: want METRIC OP VALUE, such as p99<5ms, errors==0 or rps>50000", s)
	}
	t.Metric = strings.TrimSpace(t.Expr[:i])
	rest := t.Expr[i:]
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">"} {
		if strings.HasPrefix(rest, op) {
			t.Op, rest = op, strings.TrimSpace(rest[len(op):])
			break
		}
	}
	if t.Op == "" {
		return t, fmt.Errorf("threshold %q: the operator is one of < <= > >= == !=", s)
	}
	if _, ok := ThresholdMetrics[t.Metric]; !ok {
		return t, fmt.Errorf("threshold %q: no metric %q (%s)", s, t.Metric, metricNames())
	}
	var err error
	switch {
	case latencyMetric(t.Metric):
		var d time.Duration
		if d, err = time.ParseDuration(strings.Replace(rest, "µs", "us", 1)); err != nil || d < 0 {
			return t, fmt.Errorf("threshold %q: %s is a latency: its value is a duration with a unit (800us, 5ms, 1.5s)", s, t.Metric)
		}
		t.Value = float64(d) / float64(time.Microsecond)
	case t.Metric == "error_rate" && strings.HasSuffix(rest, "%"):
		t.Value, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(rest, "%")), 64)
		t.Value /= 100
	default:
		t.Value, err = strconv.ParseFloat(rest, 64)
	}
	if err != nil || math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
		return t, fmt.Errorf("threshold %q: the value %q is not a number", s, rest)
	}
	return t, nil
}

// metricNames lists the metrics, sorted as ThresholdMetrics reads.
func metricNames() string {
	return "p50 p90 p99 p99.9 max mean rps cps requests errors error_rate wire_in wire_out"
}

// Actual returns what the threshold's metric measured in r: a latency in
// microseconds, the others as they are.
func (t Threshold) Actual(r *Result) float64 {
	switch t.Metric {
	case "p50":
		return float64(r.Latency.P50)
	case "p90":
		return float64(r.Latency.P90)
	case "p99":
		return float64(r.Latency.P99)
	case "p99.9":
		return float64(r.Latency.P999)
	case "max":
		return float64(r.Latency.Max)
	case "mean":
		return r.Latency.Mean
	case "rps":
		return r.RequestsPerSec
	case "cps":
		return r.CallsPerSec
	case "requests":
		return float64(r.Requests)
	case "errors":
		return float64(r.TotalErrors())
	case "wire_in":
		return r.WireInPerRequest
	case "wire_out":
		return r.WireOutPerRequest
	case "error_rate":
		// Errors per call made: the calls answered (a wrong reply is one
		// of them) plus the requests that got no answer at all.
		made := float64(r.Calls)
		for _, k := range unanswered {
			made += float64(r.Errors[k])
		}
		if made > 0 {
			return math.Min(float64(r.TotalErrors())/made, 1)
		}
		return 0
	}
	return math.NaN()
}

// Holds reports whether the threshold holds for the measured value.
func (t Threshold) Holds(actual float64) bool {
	switch t.Op {
	case "<":
		return actual < t.Value
	case "<=":
		return actual <= t.Value
	case ">":
		return actual > t.Value
	case ">=":
		return actual >= t.Value
	case "==":
		return actual == t.Value
	case "!=":
		return actual != t.Value
	}
	return false
}

// format writes a value of the threshold's metric as a person reads it.
func (t Threshold) format(v float64) string {
	switch {
	case latencyMetric(t.Metric):
		return us(int64(math.Round(v)))
	case t.Metric == "error_rate":
		return strconv.FormatFloat(v*100, 'g', 4, 64) + "%"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// ThresholdResult is a threshold checked against a run.
type ThresholdResult struct {
	Threshold
	Actual float64 `json:"actual"` // microseconds for a latency
	OK     bool    `json:"ok"`
}

// String says the threshold, what was measured and whether it held:
// "p99<5ms: ok (1.20ms)", "rps>50000: FAILED (41230)".
func (c ThresholdResult) String() string {
	verdict := "ok"
	if !c.OK {
		verdict = "FAILED"
	}
	return c.Expr + ": " + verdict + " (" + c.format(c.Actual) + ")"
}

// CheckThresholds checks ts against r, records the outcome in
// r.Thresholds and returns an error naming the thresholds that failed,
// nil when all held (or there are none).
func (r *Result) CheckThresholds(ts []Threshold) error {
	r.Thresholds = r.Thresholds[:0]
	var failed []string
	for _, t := range ts {
		c := ThresholdResult{Threshold: t, Actual: t.Actual(r)}
		c.OK = t.Holds(c.Actual)
		r.Thresholds = append(r.Thresholds, c)
		if !c.OK {
			failed = append(failed, c.String())
		}
	}
	if len(failed) > 0 {
		return errors.New("thresholds failed: " + strings.Join(failed, "; "))
	}
	return nil
}
