package engine_test

// Tests of the order and the count of a streamed reply's parts as the
// loop takes them from the head of their queue (streamed.go pushLocked,
// writeParts, endedNow, reset).

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// TestStreamed_manyEventsKeepTheirOrderThroughCompaction: an event
// stream's events pile up on the job's parts while the loop takes them
// from the head (the queue compacts when it is full and half taken):
// every event comes once, in order, then the reply, round after round
// on pooled jobs, under -race too.
func TestStreamed_manyEventsKeepTheirOrderThroughCompaction(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "burst", func(ctx context.Context, p [1]int) (string, error) {
		c := handler.ConnFrom(ctx)
		for i := range p[0] {
			if err := handler.Notify(c, "e", map[string]int{"i": i}); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	_, addr, _ := startEngine(t, tab, engine.WithSSE(true))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 5 {
				n := 3000 + 517*round + w
				resp := postAccept(t, addr, "text/event-stream", fmt.Sprintf(`{"jsonrpc":"2.0","method":"burst","params":[%d],"id":1}`, n))
				events := sseEvents(t, resp.Body)
				if len(events) != n+1 {
					t.Errorf("round %d: %d events, want %d", round, len(events), n+1)
					return
				}
				for i, e := range events[:n] {
					if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"e","params":{"i":%d}}`, i); e != want {
						t.Errorf("round %d: event %d: %s, want %s", round, i, e, want)
						return
					}
				}
				if events[n] != `{"jsonrpc":"2.0","result":"done","id":1}` {
					t.Errorf("round %d: the reply: %s", round, events[n])
				}
			}
		}()
	}
	wg.Wait()
}

// TestStreamed_smallWindowSlowReaderGetsEveryPartOnce: a streamed reply
// taken part by part under a small window, by a reader that reads a
// little at a time, arrives byte for byte, round after round on the
// same connection (the job's parts reset between uses).
func TestStreamed_smallWindowSlowReaderGetsEveryPartOnce(t *testing.T) {
	_, addr, _ := startEngine(t, nil, engine.WithStreamWindow(40<<10))
	s := dialStream(t, "tcp", addr)
	for round := range 6 {
		n := 60_000 + 7_001*round
		s.send(t, []byte(rangeCall(n)))
		got := make([]byte, 0, len(rangeReply(n))+1)
		buf := make([]byte, 777)
		for len(got) < cap(got) {
			k, err := s.r.Read(buf[:min(len(buf), cap(got)-len(got))])
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:k]...)
		}
		if string(got) != rangeReply(n)+"\n" {
			t.Fatalf("round %d: %d bytes, not the reply", round, len(got))
		}
	}
}
