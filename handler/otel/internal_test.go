package otel

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestParseParent_agreesWithTraceContext: parseParent accepts what
// OpenTelemetry's propagation.TraceContext accepts, with its sampled
// flag, and refuses the rest.
func TestParseParent_agreesWithTraceContext(t *testing.T) {
	const tr, sp = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tp := range []string{
		"00-" + tr + "-" + sp + "-01",
		"00-" + tr + "-" + sp + "-00",
		"00-" + tr + "-" + sp + "-03",
		"00-" + tr + "-" + sp + "-04",
		"00-" + tr + "-" + sp + "-01-x",
		"01-" + tr + "-" + sp + "-09-anything",
		"01-" + tr + "-" + sp + "-09x",
		"01-" + tr + "-" + sp + "-08",
		"fe-" + tr + "-" + sp + "-01",
		"ff-" + tr + "-" + sp + "-01",
		"00-00000000000000000000000000000000-" + sp + "-01",
		"00-" + tr + "-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-" + sp + "-01",
		"00-" + tr + "-" + sp + "-0g",
		"00-" + tr + "-" + sp,
		"00_" + tr + "-" + sp + "-01",
		"",
		"garbage",
	} {
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp}))
		sampled, ok := parseParent(tp)
		if ok != sc.IsValid() || sampled != sc.IsSampled() {
			t.Errorf("%q: parseParent = (%v, %v), TraceContext valid %v sampled %v", tp, sampled, ok, sc.IsValid(), sc.IsSampled())
		}
	}
}

// TestThresholdOf_edges: 0, negative and NaN sample nothing; 1 and more
// everything.
func TestThresholdOf_edges(t *testing.T) {
	nan := 0.0
	nan /= nan
	for r, want := range map[float64]threshold{0: never, -1: never, 1: always, 2: always} {
		if got := thresholdOf(r); got != want {
			t.Errorf("thresholdOf(%v) = %v, want %v", r, got, want)
		}
	}
	if thresholdOf(nan) != never {
		t.Error("thresholdOf(NaN) samples")
	}
	if th := thresholdOf(0.5); th != 1<<63 {
		t.Errorf("thresholdOf(0.5) = %d", th)
	}
}

func TestParamsMeta_findsTheTraceContext(t *testing.T) {
	for _, c := range []struct{ params, tp, ts string }{
		{`{"_meta":{"traceparent":"a","tracestate":"b"}}`, "a", "b"},
		{` {"x":{"_meta":{"traceparent":"no"}}, "_meta" : {"traceparent" : "a"} }`, "a", ""},
		{`{"_meta":{"traceparent":"a\u0062"}}`, "", ""}, // an escape: not read
		{`{"_meta":{"trace\u0070arent":"a"}}`, "", ""},  // an escaped key
		{`{"_meta":{"traceparent":1,"tracestate":null}}`, "", ""},
		{`{"_meta":"traceparent"}`, "", ""},
		{`[{"_meta":{"traceparent":"a"}}]`, "", ""},
		{`{"meta":{"traceparent":"a"}}`, "", ""},
		{``, "", ""},
	} {
		if tp, ts := paramsMeta([]byte(c.params)); tp != c.tp || ts != c.ts {
			t.Errorf("%s: %q %q, want %q %q", c.params, tp, ts, c.tp, c.ts)
		}
	}
	params := []byte(`{"_meta":{"traceparent":"a","tracestate":"b"}}`)
	if got := testing.AllocsPerRun(100, func() { paramsMeta(params) }); got != 0 {
		t.Errorf("%v allocs", got)
	}
}
