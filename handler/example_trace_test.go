package handler_test

import (
	"context"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
)

// ExampleTable_UseWhen: an interceptor for the calls its filter wants —
// here those of admin_ methods — which the others pass by.
func ExampleTable_UseWhen() {
	t := handler.NewTable()
	admin := func(_ context.Context, c *handler.Call) uint8 {
		if len(c.Method()) > 6 && c.Method()[:6] == "admin_" {
			return 1
		}
		return 0
	}
	t.UseWhen(admin, func(ctx context.Context, c *handler.Call) error {
		fmt.Println("audit:", c.Method(), c.Filtered())
		return nil
	})
	handler.RegisterNoParams(t, "admin_stats", func(context.Context) (int, error) { return 1, nil }, handler.Inline())
	handler.RegisterNoParams(t, "ping", func(context.Context) (string, error) { return "pong", nil }, handler.Inline())
	for _, m := range []string{"ping", "admin_stats"} {
		fmt.Println(string(t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"`+m+`","id":1}`))))
	}
	// Output:
	// {"jsonrpc":"2.0","result":"pong","id":1}
	// audit: admin_stats 1
	// {"jsonrpc":"2.0","result":1,"id":1}
}

// batchCounter is a BatchHook that tells the elements of a batch its
// length.
type batchCounter struct{}

type lenKey struct{}

func (batchCounter) BeginBatch(_ context.Context, b *handler.Batch) { b.Set(lenKey{}, b.Len()) }

func (batchCounter) EndBatch(_ context.Context, b *handler.Batch) {
	fmt.Println("batch of", b.Len(), "ended,", b.Errors(), "error(s)")
}

// ExampleTable_UseBatch: a batch hook around each batch, and what its
// elements' interceptors read of it.
func ExampleTable_UseBatch() {
	t := handler.NewTable()
	t.UseBatch(batchCounter{})
	t.Use(func(_ context.Context, c *handler.Call) error {
		if b := c.Batch(); b != nil {
			fmt.Println(c.Method(), "in a batch of", b.Get(lenKey{}))
		}
		return nil
	})
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	t.Dispatch(context.Background(), nil, []byte(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"nope","id":2}]`))
	// Output:
	// add in a batch of 2
	// nope in a batch of 2
	// batch of 2 ended, 1 error(s)
}
