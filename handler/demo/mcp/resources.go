package mcp

// NOTE: the one resource, a large text, and the two methods that serve
// it. Its resources/read result is built once, at Register: a call
// copies it. It is not a streamed result (handler.RegisterStream): a
// streamed result is a JSON array made element by element, and MCP's
// resources/read answers an object ({"contents":[…]}), so the whole
// reply is built in memory, as any result is. resources/read runs on a
// worker, so that copying a megabyte into the reply holds no event loop.

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// The resource.
const (
	// LargeResourceURI names the resource.
	LargeResourceURI = "jetrpc://example/large.txt"
	// LargeResourceSize is its length in bytes: 16,384 lines of 64.
	LargeResourceSize = 1 << 20
	// largeMIME is its media type.
	largeMIME = "text/plain"
)

// ReadResourceParams are the params of resources/read. URI is the JSON
// value as sent (a string, quoted), valid until the method returns.
type ReadResourceParams struct {
	URI handler.Raw `json:"uri"`
}

// LargeResourceText returns the resource's text: line i (from 0) is
// "line NNNNN " followed by dots up to 63 bytes, then "\n".
func LargeResourceText() string {
	var b strings.Builder
	b.Grow(LargeResourceSize)
	for i := 0; b.Len() < LargeResourceSize; i++ {
		head := "line " + strconv.Itoa(100000 + i)[1:] + " "
		b.WriteString(head)
		b.WriteString(strings.Repeat(".", 63-len(head)))
		b.WriteByte('\n')
	}
	return b.String()
}

// errURINotString answers a resources/read whose uri is not a string.
var errURINotString = handler.NewError(parser.CodeInvalidParams, "Invalid params: uri: want a string")

// registerResources adds resources/list and resources/read to t.
func registerResources(t *handler.Table) {
	list := fixed(`{"resources":[{"uri":"` + LargeResourceURI + `","name":"large.txt","title":"A large text",` +
		`"description":"` + strconv.Itoa(LargeResourceSize) + ` bytes of numbered lines, to measure large results",` +
		`"mimeType":"` + largeMIME + `","size":` + strconv.Itoa(LargeResourceSize) + `}]}`)
	b := []byte(`{"contents":[{"uri":"` + LargeResourceURI + `","mimeType":"` + largeMIME + `","text":`)
	b = parser.AppendQuote(b, LargeResourceText())
	read := fixed(append(b, `}]}`...))
	handler.Register(t, "resources/list", func(context.Context, listParams) (fixed, error) { return list, nil },
		handler.Inline(), handler.Description("MCP: the one resource, "+LargeResourceURI))
	handler.Register(t, "resources/read", func(_ context.Context, p ReadResourceParams) (fixed, error) {
		if len(p.URI) < 2 || p.URI[0] != '"' {
			return nil, errURINotString
		}
		uri := p.URI[1 : len(p.URI)-1] // a string, as its schema says; or -32602 below
		if bytes.IndexByte(uri, '\\') >= 0 {
			uri = parser.AppendUnquote(nil, uri)
		}
		if string(uri) != LargeResourceURI {
			return nil, errNoResource.WithData(map[string]string{"uri": string(uri)})
		}
		return read, nil
	}, handler.Description("MCP: the text of "+LargeResourceURI))
}
