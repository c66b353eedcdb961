package handler_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// A blocking method past its timeout is answered -32002 at once, beside
// its siblings' results; its context is done, and a late result would be
// dropped.
func ExampleTimeout() {
	tab := handler.NewTable()
	handler.Register(tab, "wait", func(ctx context.Context, _ [0]int) (string, error) {
		<-ctx.Done() // a slow database, say
		return "", ctx.Err()
	}, handler.Timeout(20*time.Millisecond))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	fmt.Println(string(tab.Dispatch(context.Background(), nil, []byte(
		`[{"jsonrpc":"2.0","method":"wait","id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]`))))
	// Output:
	// [{"jsonrpc":"2.0","error":{"code":-32002,"message":"Deadline exceeded: the call ran past its timeout of 20ms"},"id":1},{"jsonrpc":"2.0","result":3,"id":2}]
}

// Rate limits count cost units: every element of a batch spends its
// method's cost, and the calls past the bucket are answered -32005.
func ExampleWithRateLimit() {
	tab := handler.NewTable(handler.WithRateLimit(ratelimit.Limits{Rate: 1, Burst: 3}))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.Register(tab, "report", func(_ context.Context, _ [0]int) (string, error) { return "done", nil },
		handler.Inline(), handler.Cost(2))
	fmt.Println(string(tab.Dispatch(context.Background(), nil, []byte(
		`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"report","id":2},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":3}]`))))
	r := tab.LimitRefusals()
	fmt.Println("refused", r.Rate, "dropped", r.RateDropped)
	// Output:
	// [{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","result":"done","id":2},{"jsonrpc":"2.0","error":{"code":-32005,"message":"Limit exceeded: rate limit"},"id":3}]
	// refused 1 dropped 0
}

// A reply larger than MaxResponseSize is replaced by -32008.
func ExampleWithMaxResponseSize() {
	tab := handler.NewTable(handler.WithMaxResponseSize(64, 0))
	handler.Register(tab, "echo", func(_ context.Context, p [1]string) (string, error) { return p[0], nil }, handler.Inline())
	fmt.Println(string(tab.Dispatch(context.Background(), nil, []byte(
		`{"jsonrpc":"2.0","method":"echo","params":["a string long enough to pass the limit of 64 bytes"],"id":1}`))))
	// Output:
	// {"jsonrpc":"2.0","error":{"code":-32008,"message":"Response too large: 86 bytes exceed the limit of 64 bytes"},"id":1}
}
