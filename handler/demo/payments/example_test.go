package payments_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/payments"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// The service's methods on a table, called in process: a balance is open
// to anyone; a transfer needs the "write" grant.
func ExampleService_Register() {
	quiet := slog.New(slog.DiscardHandler)
	t := handler.NewTable(handler.WithLogger(quiet))
	payments.New(map[string]int64{"ann": 100, "bob": 0}, topics.New(nil, quiet), quiet).Register(t)
	ctx := context.Background()
	fmt.Println(string(t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"balance_get","params":{"account":"ann"},"id":1}`))))
	fmt.Println(string(t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"transfer","params":{"from":"ann","to":"bob","amount":30},"id":2}`))))
	ctx = handler.WithGrants(ctx, handler.Grants{"write"})
	fmt.Println(string(t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"transfer","params":{"from":"ann","to":"bob","amount":30},"id":3}`))))
	// Output:
	// {"jsonrpc":"2.0","result":100,"id":1}
	// {"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission write"},"id":2}
	// {"jsonrpc":"2.0","result":{"id":1,"from":"ann","to":"bob","amount":30},"id":3}
}
