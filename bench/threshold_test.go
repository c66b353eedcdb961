package bench

// Tests of thresholds (threshold.go): parsing, what each metric reads,
// the operators, and the outcome recorded in the result.

import (
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in, metric, op string
		value          float64
	}{
		{"p99<5ms", "p99", "<", 5000},
		{" p99.9 <= 1.5s ", "p99.9", "<=", 1.5e6},
		{"p50<800us", "p50", "<", 800},
		{"max<800µs", "max", "<", 800},
		{"mean>=250ns", "mean", ">=", 0.25},
		{"errors==0", "errors", "==", 0},
		{"rps>50000", "rps", ">", 50000},
		{"cps > 1e6", "cps", ">", 1e6},
		{"requests!=0", "requests", "!=", 0},
		{"error_rate<0.1%", "error_rate", "<", 0.001},
		{"error_rate<=0.02", "error_rate", "<=", 0.02},
	} {
		th, err := ParseThreshold(tc.in)
		if err != nil || th.Metric != tc.metric || th.Op != tc.op || th.Value != tc.value {
			t.Errorf("%q: %+v %v, want %s %s %g", tc.in, th, err, tc.metric, tc.op, tc.value)
		}
	}
	for in, why := range map[string]string{
		"p99":        "want METRIC OP VALUE",
		"<5ms":       "want METRIC OP VALUE",
		"p99=5ms":    "the operator is one of",
		"lat<5ms":    `no metric "lat"`,
		"p99<5":      "its value is a duration",
		"p99<-5ms":   "its value is a duration",
		"rps>lots":   "is not a number",
		"rps>NaN":    "is not a number",
		"errors<Inf": "is not a number",
	} {
		if _, err := ParseThreshold(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error saying %q", in, err, why)
		}
	}
}

// Each metric reads its figure of the result; the verdicts and the
// error name the thresholds that failed, with what was measured.
func TestResult_CheckThresholds(t *testing.T) {
	r := &Result{
		Requests: 990, Calls: 1980, RequestsPerSec: 49_500, CallsPerSec: 99_000,
		Latency:          Latency{P50: 300, P90: 900, P99: 4200, P999: 7000, Max: 12_000, Mean: 410.5},
		Errors:           map[string]int64{ErrTimeout: 6, ErrHTTPStatus: 4},
		WireInPerRequest: 320.5, WireOutPerRequest: 100_200,
	}
	var ts []Threshold
	for _, s := range []string{"p50<1ms", "p90<=900us", "p99<4ms", "p99.9<8ms", "max<10ms", "mean<0.5ms", "rps>50000",
		"cps>=99000", "requests==990", "errors==10", "error_rate<0.5%", "error_rate<=0.01", "wire_in<1000", "wire_out<100000"} {
		th, err := ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	err := r.CheckThresholds(ts)
	want := map[string]bool{"p50<1ms": true, "p90<=900us": true, "p99<4ms": false, "p99.9<8ms": true, "max<10ms": false,
		"mean<0.5ms": true, "rps>50000": false, "cps>=99000": true, "requests==990": true, "errors==10": true,
		"error_rate<0.5%": false, "error_rate<=0.01": true, "wire_in<1000": true, "wire_out<100000": false} // 10 errors of 1,990 calls made (1,980 answered, 10 requests without one): 0.503 %
	if len(r.Thresholds) != len(ts) {
		t.Fatalf("%d results for %d thresholds", len(r.Thresholds), len(ts))
	}
	for _, c := range r.Thresholds {
		if c.OK != want[c.Expr] {
			t.Errorf("%s: ok %v (actual %g), want %v", c.Expr, c.OK, c.Actual, want[c.Expr])
		}
	}
	if err == nil || err.Error() != "thresholds failed: p99<4ms: FAILED (4.20ms); max<10ms: FAILED (12.00ms); rps>50000: FAILED (49500); error_rate<0.5%: FAILED (0.5025%); wire_out<100000: FAILED (100200)" {
		t.Errorf("error: %v", err)
	}
	var b strings.Builder
	r.WriteTable(&b)
	if !strings.Contains(b.String(), "thresholds  p50<1ms: ok (300µs)\n            p90<=900us: ok (900µs)\n") {
		t.Errorf("table:\n%s", b.String())
	}
	if err := r.CheckThresholds(ts[:1]); err != nil || len(r.Thresholds) != 1 {
		t.Errorf("checked again with one: %v, %d results", err, len(r.Thresholds))
	}
}

// The live line names the errors by kind, in errKinds' order.
func TestKindsText(t *testing.T) {
	var kinds [len(errKinds)]int64
	if got := kindsText(kinds[:]); got != "" {
		t.Errorf("no errors: %q", got)
	}
	kinds[errKind(ErrTimeout)], kinds[errKind(ErrConnect)] = 2, 3
	if got := kindsText(kinds[:]); got != " (connect 3, timeout 2)" {
		t.Errorf("%q", got)
	}
}
