package otel_test

import (
	"context"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
	jotel "github.com/jetrpc/jetrpc/handler/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A table traced into an in-memory exporter: every root call sampled.
// A real server gives the TracerProvider an OTLP exporter (see
// cmd/jetrpc serve --otlp-endpoint).
func ExampleNew() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	t := handler.NewTable()
	t.Use(jotel.New(jotel.Options{TracerProvider: tp, Ratio: 1}).Intercept)
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())

	fmt.Println(string(t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))))
	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name, s.SpanKind)
		for _, kv := range s.Attributes {
			fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
		}
	}
	// Output:
	// {"jsonrpc":"2.0","result":3,"id":1}
	// add server
	//   rpc.system.name=jsonrpc
	//   rpc.method=add
	//   jsonrpc.request.id=1
	//   jsonrpc.protocol.version=2.0
	//   jetrpc.transport=in-process
}

// ExampleTracer_Instrument: a batch traced as a whole, its elements'
// spans the children of its own.
func ExampleTracer_Instrument() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	t := handler.NewTable()
	jotel.New(jotel.Options{TracerProvider: tp, Ratio: 1}).Instrument(t)
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())

	fmt.Println(string(t.Dispatch(context.Background(), nil,
		[]byte(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"nope","id":2}]`))))
	spans := exp.GetSpans()
	batch := spans[len(spans)-1] // it ends last
	fmt.Println(batch.Name)
	for _, s := range spans[:len(spans)-1] {
		fmt.Println(" ", s.Name, s.Parent.SpanID() == batch.SpanContext.SpanID())
	}
	// Output:
	// [{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":2}]
	// jsonrpc.batch
	//   add true
	//   jsonrpc true
}
