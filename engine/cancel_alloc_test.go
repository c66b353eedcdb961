//go:build !race

package engine

import (
	"testing"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// TestCancel_zeroAllocs: a call on a worker allocates nothing in steady
// state with cancel notifications off and on — on, its own context
// included, even when its method asks for Done and Err — over a stream,
// HTTP and a WebSocket; nor does a cancel notification for an id not in
// flight.
func TestCancel_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	call := `{"jsonrpc":"2.0","method":"look","params":[0,0],"id":1}`
	for _, on := range []bool{false, true} {
		var opts []handler.Option
		if on {
			opts = append(opts, handler.WithCancel(handler.CancelReplyError, handler.LSPCancel, handler.MCPCancel))
		}
		tab := handler.NewTable(opts...)
		demo.Register(tab)
		handler.Register(tab, "look", look)
		for _, tc := range []struct{ name, in string }{
			{"stream", call + "\n"},
			{"http", postOf(call)},
			{"websocket", string(clientFrame(true, ws.OpText, []byte(call)))},
		} {
			cs, fc := newFakeConnOf(t, tab)
			if tc.name == "websocket" {
				fc.in = []byte(wsHandshake)
				cs.traffic()
				fc.out = fc.out[:0]
			}
			cs.e.workers = pool.NewWorkers(1, 16)
			in := []byte(tc.in)
			buf := make([]byte, len(in))
			step := func() {
				copy(buf, in) // the server unmasks WebSocket input in place
				offloaded(t, cs, fc, buf, `"result":0,"id":1}`)()
			}
			step()
			if listed := cs.work.cancel.Load() != nil; listed != on {
				t.Fatalf("cancel on %v, %s: the call was listed: %v", on, tc.name, listed)
			}
			if got := testing.AllocsPerRun(200, step); got != 0 {
				t.Errorf("cancel on %v, %s: %v allocs per call, want 0", on, tc.name, got)
			}
			if on {
				// A cancel notification of the same connection, for an id
				// no longer in flight, with its list made.
				note := []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
				if tc.name == "websocket" {
					note = clientFrame(true, ws.OpText, note)
				} else if tc.name == "stream" {
					note = append(note, '\n')
				} else {
					note = []byte(postOf(string(note)))
				}
				nb := make([]byte, len(note))
				cancelStep := func() {
					copy(nb, note)
					fc.in, fc.out = nb, fc.out[:0]
					cs.traffic()
				}
				cancelStep()
				if got := testing.AllocsPerRun(200, cancelStep); got != 0 {
					t.Errorf("%s: %v allocs per cancel notification, want 0", tc.name, got)
				}
			}
			cs.e.workers.Close()
		}
	}
	tab := handler.NewTable(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel, handler.MCPCancel))
	demo.Register(tab)
	cs, fc := newFakeConnOf(t, tab)
	assertRequestNoAllocs(t, cs, fc, "cancel of an id not in flight", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`+"\n", false)
	assertRequestNoAllocs(t, cs, fc, "MCP cancel of an id not in flight", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"r"}}`+"\n", false)
}
