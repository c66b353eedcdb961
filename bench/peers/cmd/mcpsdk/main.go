// Command mcpsdk serves the MCP tool add ({"a":number,"b":number} → the
// sum as text) with the official Go SDK's own Streamable HTTP server,
// stateless, answering application/json: the peer that jetrpc serve
// --mcp is measured against (bench/scripts/mcpcost.sh).
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addArgs are the arguments of add.
type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func main() {
	addr := flag.String("http", "127.0.0.1:8090", "HTTP address")
	flag.Parse()
	server := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-peer", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "a + b"}, func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(in.A+in.B, 'f', -1, 64)}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	log.Fatal(http.ListenAndServe(*addr, h))
}
