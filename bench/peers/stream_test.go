//go:build unix

package peers

// NOTE: streamed results through real clients: go-ethereum's rpc.Client
// calls `jetrpc serve`'s range method, whose result [0,1,…,n-1] the
// server writes as it goes (HTTP chunked transfer, WebSocket fragments),
// over HTTP (gzip, which geth's transport asks for by itself) and over
// WebSocket, with and without permessage-deflate. Where serve has no
// range method (-32601), the range tests skip and say so. Unix only, as
// browser_test.go's buildJetrpc and startJetrpc that it uses.

import (
	"net/http"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine/enginetest"
)

// TestGeth_rangeStreamed: geth's rpc.Client calls range [1000000]
// (positional params) on jetrpc serve --compression gzip,zstd
// --ws-compression and gets [0,…,999999], value for value: over HTTP,
// the reply arriving gzipped (the transport reports it inflated it),
// and over WebSocket, raw and with permessage-deflate.
func TestGeth_rangeStreamed(t *testing.T) {
	bin := buildJetrpc(t)
	// --max-response over the reply's 6.9 MB (the default is 5 MiB): the
	// test holds whether or not a streamed result is bounded by it.
	httpURL, wsURL := startJetrpc(t, bin, "--compression", "gzip,zstd", "--ws-compression") // a streamed result is not bounded by --max-response
	const n = 1_000_000
	call := func(t *testing.T, c *rpc.Client, what string) {
		t.Helper()
		var got []int64
		if err := c.CallContext(ctx(t), &got, "range", n); err != nil {
			t.Fatalf("%s: range %d: %v", what, n, err)
		}
		enginetest.CheckRange(t, what, got, n)
	}

	t.Run("http", func(t *testing.T) {
		enginetest.NeedRange(t, httpURL)
		var inflated inflatedCounter
		c, err := rpc.DialOptions(ctx(t), httpURL, rpc.WithHTTPClient(&http.Client{Transport: &inflated}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		call(t, c, "http")
		if got := inflated.n.Load(); got != 1 {
			t.Errorf("%d replies arrived compressed, want 1", got)
		}
	})

	for _, deflate := range []bool{false, true} {
		name := "ws"
		if deflate {
			name = "ws-deflate"
		}
		t.Run(name, func(t *testing.T) {
			enginetest.NeedRange(t, httpURL)
			c, err := rpc.DialOptions(ctx(t), wsURL, rpc.WithWebsocketDialer(websocket.Dialer{EnableCompression: deflate}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			call(t, c, name)
		})
	}
}
