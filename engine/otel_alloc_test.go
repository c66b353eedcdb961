//go:build !race

package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/otel"
	"github.com/panjf2000/gnet/v2"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestConn_zeroAllocsTracedNotSampled: with handler/otel's tracer in
// the chain, a call it does not sample — a traceparent not sampled, or
// a root call under ratio 0 — allocates nothing on the engine's inline
// path, HTTP and stream (issue 25).
func TestConn_zeroAllocsTracedNotSampled(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tp := sdktrace.NewTracerProvider()
	tab := handler.NewTable()
	tab.Use(otel.New(otel.Options{TracerProvider: tp, ForceHeader: "X-Force-Trace"}).Intercept)
	demo.Register(tab)
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	httpReq := "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\nContent-Length: " + itoa(len(add)) + "\r\n\r\n" + add
	for _, c := range []struct{ name, in string }{
		{"http, parent not sampled", httpReq},
		{"http, root", strings.Replace(httpReq, "traceparent:", "x-other:", 1)},
		{"stream, root", add + "\n"},
	} {
		cs, fc := newFakeConnOf(t, tab)
		in := []byte(c.in)
		step := func() {
			fc.in = in
			fc.out = fc.out[:0]
			if cs.traffic() != gnet.None {
				t.Fatalf("%s: connection closed", c.name)
			}
		}
		step()
		if !bytes.Contains(fc.out, []byte(`"result":42`)) {
			t.Fatalf("%s: out %q", c.name, fc.out)
		}
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("%s: %v allocs per call, want 0", c.name, got)
		}
	}
}
