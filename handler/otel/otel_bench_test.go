package otel_test

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	jotel "github.com/jetrpc/jetrpc/handler/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkTracing is an inline call over HTTP (a Dispatch with the
// request's head) with tracing off, configured at ratio 0 and 0.01
// (root calls: no traceparent), and every call sampled: the cost of
// the feature beside the feature off, in one run.
func BenchmarkTracing(b *testing.B) {
	tp := sdktrace.NewTracerProvider() // no processor: spans are made and dropped at End
	defer tp.Shutdown(context.Background())
	for _, c := range []struct {
		name  string
		ratio float64
		on    bool
	}{{"off", 0, false}, {"ratio0", 0, true}, {"ratio0.01", 0.01, true}, {"ratio1", 1, true}} {
		b.Run(c.name, func(b *testing.B) {
			tab := handler.NewTable()
			if c.on {
				tab.Use(jotel.New(jotel.Options{TracerProvider: tp, Ratio: c.ratio}).Intercept)
			}
			handler.Register(tab, "add", func(ctx context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
			msg := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
			cc := &handler.CallContext{Parent: context.Background()}
			cc.Meta.SetHTTPHead([]byte("POST / HTTP/1.1\r\nHost: x\r\n\r\n"))
			cc.Meta.Transport = handler.TransportHTTP
			dst := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				dst = tab.Dispatch(cc, dst[:0], msg)
			}
		})
	}
}
