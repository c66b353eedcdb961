package handler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/stats"
)

// A table made WithMetrics counts every call by method and by the code
// of its reply; Metrics reads the counts.
func ExampleWithMetrics() {
	tab := handler.NewTable(handler.WithMetrics(true))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		`{"jsonrpc":"2.0","method":"add","params":[1,"x"],"id":2}`,
		`{"jsonrpc":"2.0","method":"add","params":[3,4]}`,
		`{"jsonrpc":"2.0","method":"mul","params":[3,4],"id":3}`,
		`[{"jsonrpc":"2.0","method":"add","params":[5,6],"id":4},{"jsonrpc":"2.0","method":`,
		`[{"jsonrpc":"2.0","method":"add","params":[5,6],"id":4},{"jsonrpc":"2.0","method":"div","id":5}]`,
	} {
		tab.Dispatch(ctx, nil, []byte(msg))
	}
	batches, _ := tab.Metrics(func(m *stats.Method) {
		fmt.Printf("%s: started %d, handled", m.Method, m.Started)
		for _, c := range m.Handled {
			fmt.Printf(" %d×%d", c.Count, c.Code)
		}
		fmt.Println()
	})
	fmt.Printf("batches: %d, %v elements\n", batches.Sizes.Count, batches.Sizes.Sum)
	// Output:
	// add: started 4, handled 3×0 1×-32602
	// (unknown): started 2, handled 2×-32601
	// (invalid): started 1, handled 1×-32700
	// batches: 1, 2 elements
}

// An access log writes one record per message — here every one (Sample
// 1), to a text handler that leaves out the time and the duration, which
// change from run to run.
func ExampleWithAccessLog() {
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration_ms" {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: drop}))
	tab := handler.NewTable(handler.WithAccessLog(handler.AccessLog{Logger: logger, Sample: 1}))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		`{"jsonrpc":"2.0","method":"add","params":[3,4]}`,
		`{"jsonrpc":"2.0","method":"mul","id":"x"}`,
		`[{"jsonrpc":"2.0","method":"add","params":[5,6],"id":2},{"jsonrpc":"2.0","method":"add","id":3}]`,
	} {
		tab.Dispatch(ctx, nil, []byte(msg))
	}
	// Output:
	// level=INFO msg="jetrpc: call" method=add id=1 code=0 transport=in-process
	// level=INFO msg="jetrpc: call" method=add notification=true code=0 transport=in-process
	// level=INFO msg="jetrpc: call" method=mul id=x code=-32601 transport=in-process
	// level=INFO msg="jetrpc: batch" elements=2 errors=1 transport=in-process
}

// A transport reports a request it refused before reading any JSON-RPC
// of it — here an HTTP request without credentials — and the access log
// records it with the caller's attributes.
func ExampleTable_Refused() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	tab := handler.NewTable(handler.WithAccessLog(handler.AccessLog{Logger: logger, Sample: 1}))
	cc := &handler.CallContext{Parent: context.Background(), Meta: handler.Meta{
		Transport: handler.TransportHTTP,
		Remote:    &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 50412},
	}}
	tab.Refused(cc, 401, "unauthorized")
	// Output:
	// {"level":"INFO","msg":"jetrpc: refused","status":401,"reason":"unauthorized","transport":"http","remote":"192.0.2.7:50412"}
}

// LimitRefusals counts what the table's limits refused: here a batch
// longer than MaxBatch.
func ExampleTable_LimitRefusals() {
	tab := handler.NewTable(handler.WithMetrics(true), handler.WithMaxBatch(2))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	req := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	fmt.Println(string(tab.Dispatch(context.Background(), nil, []byte("["+req+","+req+","+req+"]"))))
	fmt.Printf("%+v\n", tab.LimitRefusals())
	// Output:
	// {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch of 3 requests exceeds the limit of 2"},"id":null}
	// {Rate:0 RateDropped:0 Concurrency:0 Subscriptions:0 ResponseSize:0 BatchLength:1}
}
