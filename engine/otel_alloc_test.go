//go:build !race

package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/otel"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/panjf2000/gnet/v2"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// unsampledParent is a W3C traceparent whose sampled flag is clear.
const unsampledParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"

// tracedTable is demo's table, and a blocking method that allocates
// nothing itself, with handler/otel's Tracer as interceptor and batch
// hook (Instrument), sampling no root call, a force header named.
func tracedTable() *handler.Table {
	tab := handler.NewTable()
	otel.New(otel.Options{TracerProvider: sdktrace.NewTracerProvider(), ForceHeader: "X-Force-Trace"}).Instrument(tab)
	demo.Register(tab)
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	return tab
}

// TestConn_zeroAllocsTracedNotSampled: with handler/otel's tracer on the
// table (interceptor and batch hook), a call or a batch it does not
// sample — a traceparent not sampled, or a root call under ratio 0 —
// allocates nothing on any transport: HTTP, a stream and WebSocket (its
// upgrade's traceparent not sampled), inline, in a batch, and on a
// worker (issue 25).
func TestConn_zeroAllocsTracedNotSampled(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	batch := "[" + add + "," + strings.Replace(add, `"id":1`, `"id":2`, 1) + "]"
	post := func(body, field string) string {
		return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + field +
			"Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	}
	parent := "traceparent: " + unsampledParent + "\r\n"
	for _, c := range []struct{ name, in string }{
		{"http, parent not sampled", post(add, parent)},
		{"http, root", post(add, "x-other: 1\r\n")},
		{"http batch, parent not sampled", post(batch, parent)},
		{"http batch, root", post(batch, "")},
		{"stream, root", add + "\n"},
		{"stream batch, root", batch + "\n"},
	} {
		cs, fc := newFakeConnOf(t, tracedTable())
		in := []byte(c.in)
		step := func() {
			fc.in = in
			fc.out = fc.out[:0]
			if cs.traffic() != gnet.None {
				t.Fatalf("%s: connection closed", c.name)
			}
		}
		step()
		if !bytes.Contains(fc.out, []byte(`"result":42`)) {
			t.Fatalf("%s: out %q", c.name, fc.out)
		}
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("%s: %v allocs per message, want 0", c.name, got)
		}
	}

	// WebSocket: the upgrade's traceparent, not sampled, is every call's.
	for _, msg := range []string{add, batch} {
		cs, fc := newFakeConnOf(t, tracedTable())
		fc.in = []byte(strings.Replace(wsHandshake, "\r\n\r\n", "\r\n"+parent+"\r\n", 1))
		cs.traffic()
		if !bytes.HasPrefix(fc.out, []byte("HTTP/1.1 101 ")) {
			t.Fatalf("handshake: %q", fc.out)
		}
		frame := clientFrame(true, ws.OpText, []byte(msg))
		buf := make([]byte, len(frame))
		step := func() {
			copy(buf, frame) // the server unmasks in place
			fc.in, fc.out = buf, fc.out[:0]
			if cs.traffic() != gnet.None {
				t.Fatal("websocket: connection closed")
			}
		}
		step()
		if !bytes.Contains(fc.out, []byte(`"result":42`)) {
			t.Fatalf("websocket %.10s: out %q", msg, fc.out)
		}
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("websocket %.10s: %v allocs per message, want 0", msg, got)
		}
	}

	// A blocking method, run on a worker.
	slow := `{"jsonrpc":"2.0","method":"slowadd","params":[0,0],"id":1}`
	for _, in := range []string{slow + "\n", post(slow, parent)} {
		cs, fc := newFakeConnOf(t, tracedTable())
		cs.e.workers = pool.NewWorkers(1, 16)
		step := offloaded(t, cs, fc, []byte(in), `"result":0,"id":1}`)
		step()
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("worker %.20q: %v allocs per message, want 0", in, got)
		}
		cs.e.workers.Close()
	}
}
