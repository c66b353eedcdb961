package engine

// NOTE: the measurements of WebSocket permessage-deflate: a 100 KB JSON
// reply over a WebSocket raw and compressed, server CPU and bytes on the
// wire per message side by side in one run, and a 100 KB compressed
// request inflated.

import (
	"bytes"
	"context"
	"testing"

	"github.com/gobwas/ws"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// benchWSDeflate serves, over a fake WebSocket connection of an engine
// with WSCompression on, a request for a 100 KB reply: negotiated or
// not, the request compressed or not (compressedIn: a 100 KB echo,
// inflated, instead); it reports the bytes written per message
// (wire-B/op).
func benchWSDeflate(negotiated, compressedIn bool) func(*testing.B) {
	return func(b *testing.B) {
		tab := handler.NewTable(handler.WithMaxResponseSize(32<<20, 0))
		demo.Register(tab)
		big := handler.Raw(benchJSON(100_000))
		handler.RegisterNoParams(tab, "big", func(context.Context) (handler.Raw, error) { return big, nil }, handler.Inline())
		offer := ""
		if negotiated {
			offer = "permessage-deflate"
		}
		cs, fc := wsDeflateFakeConnOf(b, tab, offer)
		in := clientFrame(true, ws.OpText, []byte(`{"jsonrpc":"2.0","method":"big","id":1}`))
		if compressedIn {
			in = compressedFrame(b, []byte(`{"jsonrpc":"2.0","method":"echo","params":`+string(big)+`,"id":1}`), 0)
		}
		buf := make([]byte, len(in))
		step := func() {
			copy(buf, in)
			fc.in, fc.out = buf, fc.out[:0]
			cs.traffic()
		}
		benchWire(b, step, fc, len(big), func() bool {
			ps, _ := deflateFrames(b, fc.out)
			return len(ps) == 1 && bytes.Contains(ps[0], big[:100])
		})
	}
}

// BenchmarkWSDeflate: a 100 KB JSON reply over a WebSocket with
// WSCompression on but not negotiated (raw) and negotiated (deflate),
// and a 100 KB compressed request echoed compressed (deflate-in-out),
// in one run: the server's CPU (ns/op) and the bytes on the wire
// (wire-B/op) per message.
func BenchmarkWSDeflate(b *testing.B) {
	b.Run("raw", benchWSDeflate(false, false))
	b.Run("deflate", benchWSDeflate(true, false))
	b.Run("deflate-in-out", benchWSDeflate(true, true))
}

// TestBenchmarkWSDeflate runs BenchmarkWSDeflate briefly, as a test.
func TestBenchmarkWSDeflate(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	benchBriefly(t, benchWSDeflate(false, false), benchWSDeflate(true, false), benchWSDeflate(true, true))
}
