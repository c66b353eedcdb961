package otel_test

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	jotel "github.com/jetrpc/jetrpc/handler/otel"
	"github.com/jetrpc/jetrpc/parser/http1"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// benchHead is the head of a POST as a browser's fetch sends it.
const benchHead = "POST /rpc HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0\r\n" +
	"Accept: */*\r\nAccept-Encoding: gzip, deflate, br\r\nAccept-Language: en-US,en;q=0.9\r\n" +
	"Content-Type: application/json\r\nContent-Length: 55\r\nOrigin: https://app.example.com\r\nConnection: keep-alive\r\n\r\n"

// BenchmarkTracing is an inline call over HTTP (a Dispatch with a
// browser's head) with tracing off, a do-nothing interceptor (what any
// chain costs), tracing configured at ratio 0 (and with a force header
// named, which the call does not carry: a pass over the head) and 0.01
// (root calls: no traceparent), and every call sampled: the cost of the
// feature beside the feature off, in one run.
func BenchmarkTracing(b *testing.B) {
	tp := sdktrace.NewTracerProvider() // no processor: spans are made and dropped at End
	defer tp.Shutdown(context.Background())
	for _, c := range []struct {
		name  string
		ratio float64
		on    bool
		noop  bool   // an interceptor that does nothing: the cost of a chain alone
		force string // Options.ForceHeader
	}{
		{"off", 0, false, false, ""}, {"noop-interceptor", 0, false, true, ""},
		{"ratio0", 0, true, false, ""}, {"ratio0-force-header", 0, true, false, "X-Force-Trace"},
		{"ratio0.01", 0.01, true, false, ""}, {"ratio1", 1, true, false, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			tab := handler.NewTable()
			if c.on {
				jotel.New(jotel.Options{TracerProvider: tp, Ratio: c.ratio, ForceHeader: c.force}).Instrument(tab)
			}
			if c.noop {
				tab.Use(func(context.Context, *handler.Call) error { return nil })
			}
			handler.Register(tab, "add", func(ctx context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
			msg := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
			cc := &handler.CallContext{Parent: context.Background()}
			head := []byte(benchHead)
			var req http1.Request
			var scan http1.HeadScan
			if http1.ParseHead(head, &scan, len(head), &req) != http1.StatusOK {
				b.Fatal("head")
			}
			cc.Meta.SetHTTPHeadParsed(head, &req) // as the engine does
			cc.Meta.Transport = handler.TransportHTTP
			dst := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				dst = tab.Dispatch(cc, dst[:0], msg)
			}
		})
	}
}
