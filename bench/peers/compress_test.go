package peers

// Compression with a real client: go-ethereum's rpc.Client over HTTP,
// whose net/http transport asks for gzip by itself, against an engine
// with Options.Compression: calls, a batch and a large result round-trip,
// the large replies arriving compressed (the transport reports it
// inflated them) and equal to what was sent.

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// inflatedCounter is an http.RoundTripper that counts the responses the
// default transport inflated (a compressed body it asked for).
type inflatedCounter struct{ n atomic.Int64 }

func (c *inflatedCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.Uncompressed {
		c.n.Add(1)
	}
	return resp, err
}

func TestGeth_HTTPCompressed(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	_, addr := enginetest.Start(t, tab, engine.WithCompression("gzip", "zstd"))
	var inflated inflatedCounter
	c, err := rpc.DialOptions(ctx(t), "http://"+addr, rpc.WithHTTPClient(&http.Client{Transport: &inflated}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gethClientChecks(t, c) // small replies: under the minimum size, raw
	if n := inflated.n.Load(); n != 0 {
		t.Errorf("%d small replies compressed, want none", n)
	}
	big := strings.Repeat(`jetrpc "compressed" \ reply `, 4000) // ~112 KB, with escapes
	var got []string
	if err := c.CallContext(ctx(t), &got, "echo", big, "tail"); err != nil || len(got) != 2 || got[0] != big || got[1] != "tail" {
		t.Fatalf("echo of %d bytes: %d strings, equal %v, %v", len(big), len(got), len(got) > 0 && got[0] == big, err)
	}
	var a, b []string
	batch := []rpc.BatchElem{
		{Method: "echo", Args: []any{big}, Result: &a},
		{Method: "echo", Args: []any{"x"}, Result: &b},
	}
	if err := c.BatchCallContext(ctx(t), batch); err != nil || batch[0].Error != nil || len(a) != 1 || a[0] != big || len(b) != 1 || b[0] != "x" {
		t.Fatalf("batch: %v %v", err, batch[0].Error)
	}
	if n := inflated.n.Load(); n != 2 {
		t.Errorf("%d large replies arrived compressed, want 2", n)
	}
}
