//go:build !race

package engine

// NOTE: the allocation guards of streamed replies: parts in pooled
// buffers, jobs pooled, compression on the loop's coders: a streamed
// call allocates nothing in the steady state, on every transport, raw
// and compressed.

import (
	"bytes"
	"context"
	"iter"
	"runtime"
	"testing"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// numbers yields 30,000 numbers, about 150 KB of JSON: several parts.
// A package-level iterator: the method allocates nothing itself.
func numbers(yield func(int, error) bool) {
	for i := range 30_000 {
		if !yield(10_000+i, nil) {
			return
		}
	}
}

// lines yields 10,000 pieces of text, a UTF-8 sequence cut between
// every two: about 150 KB of one JSON string, several parts.
func lines(yield func(string, error) bool) {
	for range 5_000 {
		if !yield("line \"é\xe2\x82", nil) || !yield("\xac\" \\ 👍\n", nil) {
			return
		}
	}
}

// TestStreamed_zeroAllocs: a streamed reply of several parts allocates
// nothing per call in the steady state over HTTP (raw, gzip, zstd), a
// stream and WebSocket (raw, permessage-deflate).
func TestStreamed_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	handler.RegisterStream(tab, "numbers", func(context.Context, struct{}) iter.Seq2[int, error] { return numbers })
	handler.RegisterTextStream(tab, "lines", func(context.Context, struct{}) iter.Seq2[string, error] { return lines })
	call := `{"jsonrpc":"2.0","method":"numbers","id":1}`
	text := `{"jsonrpc":"2.0","method":"lines","id":2}`
	for _, c := range []struct {
		name, in, want string
		ws, deflate    bool
	}{
		{"http", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 43\r\n\r\n" + call, "0\r\n\r\n", false, false},
		{"http gzip", "POST / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nContent-Length: 43\r\n\r\n" + call, "0\r\n\r\n", false, false},
		{"http zstd", "POST / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: zstd\r\nContent-Length: 43\r\n\r\n" + call, "0\r\n\r\n", false, false},
		{"stream", call + "\n", `39999],"id":1}` + "\n", false, false},
		{"http text", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 41\r\n\r\n" + text, "0\r\n\r\n", false, false},
		{"stream text", text + "\n", `👍\n","id":2}` + "\n", false, false},
		{"websocket", string(clientFrame(true, ws.OpText, []byte(call))), "", true, false},
		{"websocket deflate", string(clientFrame(true, ws.OpText, []byte(call))), "", true, true},
	} {
		var cs *conn
		var fc *fakeConn
		switch {
		case c.deflate:
			cs, fc = wsDeflateFakeConnOf(t, tab, "permessage-deflate", WithCompression("gzip", "zstd"))
		case c.ws:
			cs, fc = wsDeflateFakeConnOf(t, tab, "", WithCompression("gzip", "zstd"))
		default:
			cs, fc = newFakeConnOf(t, tab, WithCompression("gzip", "zstd"))
		}
		cs.e.workers = pool.NewWorkers(1, 16)
		in := []byte(c.in)
		buf := make([]byte, len(in))
		step := func() {
			copy(buf, in) // a WebSocket's frame is unmasked in place
			fc.in, fc.out = buf, fc.out[:0]
			cs.traffic() // queues it on the worker
			fc.in = nil
			for cs.work.inflight > 0 {
				for !cs.mail.waking.Load() && cs.work.inflight > 0 && cs.mail.queued.Load() == 0 {
					runtime.Gosched()
				}
				cs.traffic() // writes the parts, then the last
			}
		}
		step()
		if c.ws && (len(fc.out) < 2 || fc.out[len(fc.out)-1] == 0) || !c.ws && !bytes.HasSuffix(fc.out, []byte(c.want)) {
			t.Fatalf("%s: out ends %q", c.name, fc.out[max(len(fc.out)-40, 0):])
		}
		if got := testing.AllocsPerRun(100, step); got != 0 {
			t.Errorf("%s: %v allocs per streamed call, want 0", c.name, got)
		}
		cs.e.workers.Close()
	}
}
