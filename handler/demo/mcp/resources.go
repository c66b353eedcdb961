package mcp

// NOTE: the one resource, a large text, and the two methods that serve
// it. resources/read streams it (handler.RegisterTextStream): the text
// goes in pieces of readPiece bytes, escaped as they go, inside MCP's
// result object ({"contents":[{"uri":…,"mimeType":…,"text":…}]}, the
// object around the text being handler.StreamEnvelope's), so that a
// read holds about a part of the reply in memory, not the megabyte, and
// a client that reads slowly pauses it. It runs on a worker, as every
// streamed method does.

import (
	"bytes"
	"context"
	"iter"
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
	handler.Register(t, "resources/list", func(context.Context, listParams) (fixed, error) { return list, nil },
		handler.Inline(), handler.Description("MCP: the one resource, "+LargeResourceURI))
	handler.RegisterTextStream(t, "resources/read", func(_ context.Context, p ReadResourceParams) iter.Seq2[string, error] {
		if len(p.URI) < 2 || p.URI[0] != '"' {
			return failed(errURINotString)
		}
		uri := p.URI[1 : len(p.URI)-1] // a string, as its schema says; or -32602 below
		if bytes.IndexByte(uri, '\\') >= 0 {
			uri = parser.AppendUnquote(nil, uri)
		}
		if string(uri) != LargeResourceURI {
			return failed(errNoResource.WithData(map[string]string{"uri": string(uri)}))
		}
		return readLarge
	}, handler.StreamEnvelope(`{"contents":[{"uri":"`+LargeResourceURI+`","mimeType":"`+largeMIME+`","text":`, `}]}`),
		handler.Description("MCP: the text of "+LargeResourceURI))
}

// largeText is the resource's text, made once.
var largeText = LargeResourceText()

// readPiece is the size of the pieces resources/read yields.
const readPiece = 16 << 10

// readLarge yields the resource's text in pieces. A package-level
// iterator: a read allocates nothing for it.
func readLarge(yield func(string, error) bool) {
	for s := largeText; len(s) > 0; {
		n := min(len(s), readPiece)
		if !yield(s[:n], nil) {
			return
		}
		s = s[n:]
	}
}

// failed is an iterator that fails with err before any text.
func failed(err error) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) { yield("", err) }
}
