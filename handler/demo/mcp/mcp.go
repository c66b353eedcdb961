package mcp

// NOTE: the MCP methods whose answers never change — initialize, ping,
// tools/list, resources/list, resources/read — answer JSON built once,
// at Register, as a fixed: a call copies those bytes into its reply and
// encodes nothing (a handler.Raw would be checked and compacted on every
// call). tools/call is tools.go; the resource, resources.go.

import (
	"context"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// Path is where `jetrpc serve --mcp` tells clients to find the server:
// the MCP endpoint of the Streamable HTTP transport.
const Path = "/mcp"

// The revisions of the MCP specification served.
const (
	// TargetVersion is the revision whose shapes the methods follow.
	TargetVersion = "2025-06-18"
	// LatestVersion is the newest revision initialize accepts, the one it
	// answers a client that asks for a revision not in Versions.
	LatestVersion = "2025-11-25"
)

// Versions are the revisions initialize accepts, newest first.
var Versions = []string{LatestVersion, TargetVersion, "2025-03-26"}

// ServerName is the serverInfo name initialize answers.
const ServerName = "jetrpc-mcp-example"

// serverVersion is the serverInfo version initialize answers.
const serverVersion = "1.0.0"

// InitializeParams are the params of initialize that the server reads;
// it ignores the client's capabilities and clientInfo. ProtocolVersion
// is the JSON value as sent (a string, quoted), valid until the method
// returns.
type InitializeParams struct {
	ProtocolVersion handler.Raw `json:"protocolVersion"`
}

// fixed is a result built once, at Register, and written as it is: valid
// JSON, an object, trusted (handler.JSONAppender).
type fixed []byte

// AppendJSON appends f to dst.
func (f fixed) AppendJSON(dst []byte) ([]byte, error) { return append(dst, f...), nil }

// JSONSchemaText declares the schema of the results (for rpc.discover):
// an object, as MCP defines it.
func (fixed) JSONSchemaText() string { return `{"type":"object"}` }

var _ handler.JSONAppender = fixed(nil)

// capabilities are the server's: tools and resources, whose lists never
// change and whose resources cannot be subscribed to.
const capabilities = `{"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false}}`

// instructions is initialize's hint for the model.
const instructions = "A jetrpc example: add two numbers, count down with progress, or read a large text resource."

// initializeResult returns initialize's result for revision v.
func initializeResult(v string) fixed {
	b := []byte(`{"protocolVersion":`)
	b = parser.AppendQuote(b, v)
	b = append(b, `,"capabilities":`+capabilities+`,"serverInfo":{"name":"`+ServerName+`","title":"jetrpc MCP example","version":"`+serverVersion+`"},"instructions":`...)
	b = parser.AppendQuote(b, instructions)
	return append(b, '}')
}

// Errors, built once.
var (
	// errUnknownTool answers a tools/call of a tool not listed.
	errUnknownTool = handler.NewError(parser.CodeInvalidParams, "Unknown tool")
	// errNoResource answers a resources/read of a URI not listed: -32002,
	// as the revisions say.
	errNoResource = handler.NewError(CodeResourceNotFound, "Resource not found")
)

// CodeResourceNotFound is the error code of resources/read for a URI
// the server does not have.
const CodeResourceNotFound parser.Code = -32002

// Register adds the MCP methods to t: initialize, ping, tools/list,
// tools/call, resources/list, resources/read, and the notifications
// notifications/initialized and notifications/cancelled (see the package
// doc). It builds the resource (LargeResourceSize bytes) now. Like
// handler.Register, it panics if a name is taken or t has begun
// dispatching.
func Register(t *handler.Table) {
	inline := handler.Inline()
	results := make(map[string]fixed, len(Versions)) // by revision, quoted as in the params
	for _, v := range Versions {
		results[`"`+v+`"`] = initializeResult(v)
	}
	latest := results[`"`+LatestVersion+`"`]
	handler.Register(t, "initialize", func(_ context.Context, p InitializeParams) (fixed, error) {
		if r, ok := results[string(p.ProtocolVersion)]; ok {
			return r, nil
		}
		return latest, nil
	}, inline, handler.Description("MCP: agree on a revision and tell the capabilities"))
	for _, name := range []string{"notifications/initialized", "notifications/cancelled"} {
		// notifications/cancelled arrives on a request of its own; a
		// call a client gives up on ends by its own request's end,
		// where the transport cancels the calls of a client that went.
		handler.RegisterNoResult(t, name, func(context.Context, handler.Raw) error { return nil },
			inline, handler.Description("MCP: a notification; ignored"))
	}
	empty := fixed(`{}`)
	handler.Register(t, "ping", func(context.Context, handler.Raw) (fixed, error) { return empty, nil },
		inline, handler.Description("MCP: answers {}"))
	handler.Register(t, "tools/list", func(context.Context, listParams) (fixed, error) { return toolList, nil },
		inline, handler.Description("MCP: the tools add and countdown"))
	handler.Register(t, "tools/call", callTool, handler.Description("MCP: run a tool"))
	registerResources(t)
}

// listParams are the params of the list methods: a cursor, never needed,
// as every list fits one page.
type listParams struct {
	Cursor *string `json:"cursor"`
}
