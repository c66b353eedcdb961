package handler_test

import (
	"context"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
)

func ExampleCallFrom() {
	t := handler.NewTable()
	// A method reads the call it runs for from its context: here, to
	// tag what it logs with the request's id.
	handler.Register(t, "transfer", func(ctx context.Context, p struct {
		To     string `json:"to"`
		Amount int    `json:"amount"`
	}) (bool, error) {
		c := handler.CallFrom(ctx)
		if c.Notification {
			fmt.Printf("%s: fire and forget %d to %s\n", c.Method, p.Amount, p.To)
		} else {
			fmt.Printf("%s id=%s: %d to %s\n", c.Method, c.ID, p.Amount, p.To)
		}
		return true, nil
	})
	batch := `[{"jsonrpc":"2.0","method":"transfer","params":{"to":"ann","amount":5},"id":"t-1"},
	           {"jsonrpc":"2.0","method":"transfer","params":{"to":"bob","amount":7}}]`
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(batch)))
	// Unordered output:
	// transfer id="t-1": 5 to ann
	// transfer: fire and forget 7 to bob
	// [{"jsonrpc":"2.0","result":true,"id":"t-1"}]
}
