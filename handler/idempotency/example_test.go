package idempotency_test

import (
	"context"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/idempotency"
)

func Example() {
	t := handler.NewTable()
	charges := 0
	handler.Register(t, "charge", func(_ context.Context, p struct {
		Amount int    `json:"amount"`
		Key    string `json:"idempotency_key"`
	}) (string, error) {
		charges++
		return fmt.Sprintf("ch_%d", charges), nil
	})
	// Keys come from the Idempotency-Key header over HTTP, else from a
	// param (WebSocket, streams, in process).
	store := idempotency.New(idempotency.Options{
		Key: idempotency.HeaderOrParamKey(idempotency.DefaultHeader, "idempotency_key"),
	})
	t.Use(store.Intercept)
	ctx := context.Background()
	call := func(msg string) { fmt.Printf("%s\n", t.Dispatch(ctx, nil, []byte(msg))) }
	call(`{"jsonrpc":"2.0","method":"charge","params":{"amount":500,"idempotency_key":"k-1"},"id":1}`)
	// The client lost the reply and retries: same key, same request.
	call(`{"jsonrpc":"2.0","method":"charge","params":{"amount":500,"idempotency_key":"k-1"},"id":2}`)
	// The same key for another request is refused.
	call(`{"jsonrpc":"2.0","method":"charge","params":{"amount":900,"idempotency_key":"k-1"},"id":3}`)
	fmt.Println("charges:", charges)
	// Output:
	// {"jsonrpc":"2.0","result":"ch_1","id":1}
	// {"jsonrpc":"2.0","result":"ch_1","id":2}
	// {"jsonrpc":"2.0","error":{"code":-31001,"message":"Idempotency key reused with a different request"},"id":3}
	// charges: 1
}
