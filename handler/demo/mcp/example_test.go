package mcp_test

import (
	"context"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
)

// An MCP server is a table with the MCP methods registered; served by
// package engine, POST /mcp speaks Streamable HTTP.
func ExampleRegister() {
	t := handler.NewTable()
	mcp.Register(t)
	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"subtract"}}`,
	} {
		fmt.Printf("%.160s\n", t.Dispatch(ctx, nil, []byte(msg)))
	}
	// Output:
	// {"jsonrpc":"2.0","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false}},"se
	//
	// {"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"3"}]},"id":2}
	// {"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"add takes {\"a\":number,\"b\":number}"}],"isError":true},"id":3}
	// {"jsonrpc":"2.0","error":{"code":-32602,"message":"Unknown tool","data":{"tool":"subtract"}},"id":4}
}
