//go:build !race

package engine

// NOTE: the allocation guards of event-stream replies: a plain POST
// costs nothing more with SSE on, and the events of a call cost nothing
// (its Conn, one per call answered as a stream, is its one allocation).

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// TestSSE_zeroAllocs: with SSE on, plain POSTs — inline, on a worker,
// and asking for a stream from a method that sends nothing while JSON is
// taken too — allocate nothing; a call that sends 1 or 20 events
// allocates its Conn and nothing per event.
func TestSSE_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	demo.Register(tab)
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`)
	handler.Register(tab, "events", func(ctx context.Context, p [1]int) (int, error) {
		c := handler.ConnFrom(ctx)
		for range p[0] {
			if err := c.Send(msg); err != nil {
				return 0, err
			}
		}
		return p[0], nil
	})
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	cs, fc := newFakeConnOf(t, tab, WithSSE(true))
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	req := func(body, accept string) []byte {
		return []byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + accept + "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
	}
	run := func(in []byte, worker bool, wantText string) func() {
		want := []byte(wantText) // not in the step: a conversion of over 32 bytes allocates
		return func() {
			fc.in, fc.out = in, fc.out[:0]
			cs.traffic()
			fc.in = nil
			for worker && cs.work.inflight > 0 {
				for !cs.mail.waking.Load() && cs.work.inflight > 0 && cs.mail.queued.Load() == 0 {
					runtime.Gosched()
				}
				cs.traffic()
			}
			if !bytes.Contains(fc.out, want) {
				t.Fatalf("out %q, want %q in it", fc.out, want)
			}
		}
	}
	both := "Accept: application/json, text/event-stream\r\n"
	for _, c := range []struct {
		name   string
		step   func()
		allocs float64
	}{
		{"inline, no Accept", run(req(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, ""), false, `"result":3`), 0},
		{"worker, no Accept", run(req(`{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`, ""), true, `"result":3`), 0},
		{"inline, stream or JSON", run(req(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, both), false, `"result":3`), 0},
		{"inline, stream only", run(req(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "Accept: text/event-stream\r\n"), false, "data: {\"jsonrpc\":\"2.0\",\"result\":3"), 0},
		{"1 event", run(req(`{"jsonrpc":"2.0","method":"events","params":[1],"id":1}`, both), true, "\r\n0\r\n\r\n"), 1},
		{"20 events", run(req(`{"jsonrpc":"2.0","method":"events","params":[20],"id":1}`, both), true, "\r\n0\r\n\r\n"), 1},
	} {
		c.step()
		if got := testing.AllocsPerRun(200, c.step); got != c.allocs {
			t.Errorf("%s: %v allocs per call, want %v", c.name, got, c.allocs)
		}
	}
}
