package handler_test

import (
	"context"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// printCanceller is a connection that prints the ids it is asked to
// cancel; the engine's connections cancel their call with that id.
type printCanceller struct{ cancelConn }

func (printCanceller) CancelCall(id []byte) bool {
	fmt.Printf("cancel the call with id %s\n", id)
	return true
}

// A table with LSP's and MCP's cancel notifications hands the id each
// names to the connection it came on.
func ExampleWithCancel() {
	t := handler.NewTable(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel, handler.MCPCancel))
	ctx := handler.ContextWithConn(context.Background(), &printCanceller{})
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`))
	t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"user"}}`))
	fmt.Printf("%s\n", t.AppendCancelled(nil, []byte(`7`), parser.Version2))
	// Output:
	// cancel the call with id 7
	// cancel the call with id "a"
	// {"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":7}
}
