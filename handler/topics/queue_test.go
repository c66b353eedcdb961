package topics

// White-box tests of Enqueue (topic_queue.go): one order per topic for
// every subscriber, each publisher's messages in its order, two nodes on
// a MemoryBus, refused messages, and the allocations of a queued
// publication.

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
)

// tpWaitDrained waits until h's queues are empty.
func tpWaitDrained(t testing.TB, h *Topics) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.backlog.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the publish queues hold %d bytes after 10 s", h.backlog.Load())
		}
		runtime.Gosched()
	}
}

// Concurrent publishers on two topics: every subscriber of a topic gets
// all of its messages, in one order shared by all of them, in which each
// publisher's messages keep the order it enqueued them in.
func TestEnqueue_oneOrderPerTopic(t *testing.T) {
	tab, h := tpNode(t, nil)
	topics := []string{"a", "b.c"}
	subs := make(map[string][]*tpConn)
	for _, name := range topics {
		for i := range 3 {
			c := newTPConn()
			defer c.cancel()
			if got := c.call(tab, "topic_subscribe", `["`+name+`"]`, i); !strings.Contains(got, `"result":"0x`) {
				t.Fatal(got)
			}
			subs[name] = append(subs[name], c)
		}
	}
	const publishers, each = 4, 300
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := topics[(p+i)%2]
				msg := []byte(`{"p":` + strconv.Itoa(p) + `,"i":` + strconv.Itoa(i) + `}`)
				if n, err := h.Enqueue(name, msg); n != 3 || err != nil {
					t.Errorf("Enqueue: %d %v", n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tpWaitDrained(t, h)
	for _, name := range topics {
		var first []string
		for k, c := range subs[name] {
			var order []string
			last := map[int]int{}
			for _, m := range c.messages() {
				var n struct {
					Params struct{ Result struct{ P, I int } }
				}
				if err := json.Unmarshal([]byte(m), &n); err != nil {
					t.Fatal(err)
				}
				r := n.Params.Result
				if prev, ok := last[r.P]; ok && r.I <= prev {
					t.Fatalf("topic %s subscriber %d: publisher %d's message %d after %d", name, k, r.P, r.I, prev)
				}
				last[r.P] = r.I
				order = append(order, strconv.Itoa(r.P)+"/"+strconv.Itoa(r.I))
			}
			if len(order) != publishers*each/2 {
				t.Fatalf("topic %s subscriber %d: %d messages, want %d", name, k, len(order), publishers*each/2)
			}
			if k == 0 {
				first = order
			} else if strings.Join(order, " ") != strings.Join(first, " ") {
				t.Fatalf("topic %s: subscribers %d and 0 got the messages in two orders", name, k)
			}
		}
	}
	if s := h.Stats(); s.Published != publishers*each || s.Delivered != 3*publishers*each || s.Backlog != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// An enqueued message reaches the other node through the broker, once,
// and the local subscribers of the publishing node once.
func TestEnqueue_twoNodes(t *testing.T) {
	bus := NewMemoryBus()
	tabA, hA := tpNode(t, bus.Node())
	tabB, _ := tpNode(t, bus.Node())
	a, b := newTPConn(), newTPConn()
	defer a.cancel()
	defer b.cancel()
	for _, x := range []struct {
		tab *handler.Table
		c   *tpConn
	}{{tabA, a}, {tabB, b}} {
		if got := x.c.call(x.tab, "topic_subscribe", `["news"]`, 1); !strings.Contains(got, `"result":"0x`) {
			t.Fatal(got)
		}
	}
	for i := range 20 {
		if _, err := hA.Enqueue("news", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	tpWaitDrained(t, hA)
	// MemoryBus delivers in the publisher's goroutine: B has it all once A's queue is empty.
	for _, c := range []*tpConn{a, b} {
		got := c.messages()
		if len(got) != 20 {
			t.Fatalf("%d messages, want 20: %q", len(got), got)
		}
		for i, m := range got {
			if !strings.HasSuffix(m, `"result":`+strconv.Itoa(i)+`}}`) {
				t.Fatalf("message %d: %s", i, m)
			}
		}
	}
}

// Enqueue refuses, queuing nothing, an invalid name or payload (an
// empty one is null, as for handler.Raw).
func TestEnqueue_refuses(t *testing.T) {
	h := New(nil, rvLogger())
	if _, err := h.Enqueue("a..b", []byte(`1`)); err != ErrInvalidTopic {
		t.Fatalf("invalid name: %v", err)
	}
	for _, p := range []string{`{`, `1 2`, `[1,]`, `nul`} {
		if _, err := h.Enqueue("a", []byte(p)); err != errInvalidPayload {
			t.Fatalf("payload %q: %v", p, err)
		}
	}
	if s := h.Stats(); s.Published != 0 || s.Backlog != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// A queued publication allocates nothing: Enqueue, and its fan-out to
// 10 local subscribers on the queue's goroutine.
func TestEnqueue_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	if mxRaceEnabled() {
		t.Skip("the race detector makes sync.Pool drop objects")
	}
	tab, h := tpNode(t, nil)
	c := &tpBufConn{ctx: t.Context(), buf: make([]byte, 0, 4096)}
	ctx := handler.ContextWithConn(t.Context(), c)
	for range 10 {
		if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`))); !strings.Contains(got, `"result":"0x`) {
			t.Fatal(got)
		}
	}
	raw := []byte(`{"price":101.25,"sym":"ABC"}`)
	publish := func() {
		if n, err := h.Enqueue("t", raw); n != 10 || err != nil {
			t.Fatalf("Enqueue: %d %v", n, err)
		}
		tpWaitDrained(t, h)
	}
	publish()
	before := c.n
	if a := testing.AllocsPerRun(100, publish); a != 0 {
		t.Errorf("Enqueue to 10 local subscribers: %v allocations per message, want 0", a)
	}
	if c.n-before != 101*10 {
		t.Fatalf("%d notifications sent during AllocsPerRun, want %d", c.n-before, 101*10)
	}
}

// BenchmarkTopics_publish measures one message to 10 local subscribers:
// sent before returning (PublishRaw), and queued to the topic's
// goroutine, waited for here (Enqueue).
func BenchmarkTopics_publish(b *testing.B) {
	for _, queued := range []bool{false, true} {
		name := map[bool]string{false: "PublishRaw", true: "Enqueue"}[queued]
		b.Run(name, func(b *testing.B) {
			tab, h := tpNode(b, nil)
			c := &tpBufConn{ctx: b.Context(), buf: make([]byte, 0, 4096)}
			ctx := handler.ContextWithConn(b.Context(), c)
			for range 10 {
				tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`))
			}
			raw := []byte(`{"price":101.25,"sym":"ABC"}`)
			b.ReportAllocs()
			for range b.N {
				if queued {
					_, _ = h.Enqueue("t", raw)
					for h.backlog.Load() != 0 {
						runtime.Gosched()
					}
				} else {
					_, _ = h.PublishRaw("t", raw)
				}
			}
		})
	}
}
