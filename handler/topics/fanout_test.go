package topics

// White-box tests of the parallel fan-out (fanout.go): every subscriber
// of a large topic gets each message once and in order, the counts add
// up, and it allocates nothing.

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// seqConn is a Conn that checks the messages it is sent are
// notifications whose results are 0, 1, 2... and counts them; safe from
// any goroutine.
type seqConn struct {
	next atomic.Int64 // the result expected next
	bad  atomic.Int64 // messages out of sequence
}

func (c *seqConn) Send(msg []byte) error {
	want := `,"result":` + strconv.FormatInt(c.next.Load(), 10) + `}}`
	if len(msg) < len(want) || string(msg[len(msg)-len(want):]) != want {
		c.bad.Add(1)
	}
	c.next.Add(1)
	return nil
}
func (c *seqConn) CanPush() bool            { return true }
func (c *seqConn) Context() context.Context { return context.Background() }

// tpLargeTopic returns a topic with n subscriptions, each on its own
// seqConn.
func tpLargeTopic(t testing.TB, n int) (*topic, []*seqConn) {
	tp := &topic{name: "big", ready: make(chan struct{})}
	conns := make([]*seqConn, n)
	for i := range conns {
		conns[i] = new(seqConn)
	}
	subs := tpSubscriptions(t, n, func(i int) handler.Conn { return conns[i] })
	tp.subs.Store(&subs)
	return tp, conns
}

// A topic large enough for several goroutines: each subscriber gets
// every message once, in order, and fanOut counts them all.
func TestFanOut_parallelEachSubscriberInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{fanOutPart - 1, 2 * fanOutPart, 4*fanOutPart + 7, 9 * fanOutPart} {
		if parts := fanOutParts(n); n >= 2*fanOutPart && parts < 2 {
			t.Fatalf("%d subscribers: %d parts, want several", n, parts)
		}
		h := New(nil, rvLogger())
		tp, conns := tpLargeTopic(t, n)
		const messages = 20
		for i := range messages {
			if got := h.fanOut(tp, []byte(strconv.Itoa(i))); got != n {
				t.Fatalf("%d subscribers: message %d taken %d times", n, i, got)
			}
		}
		for i, c := range conns {
			if c.next.Load() != messages || c.bad.Load() != 0 {
				t.Fatalf("%d subscribers: subscriber %d got %d messages, %d out of sequence", n, i, c.next.Load(), c.bad.Load())
			}
		}
		if s := h.Stats(); s.Delivered != uint64(messages*n) {
			t.Fatalf("%d subscribers: %d delivered, want %d", n, s.Delivered, messages*n)
		}
	}
}

// A parallel fan-out allocates nothing in steady state.
func TestFanOut_parallelZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	if mxRaceEnabled() {
		t.Skip("the race detector makes sync.Pool drop objects")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	h := New(nil, rvLogger())
	tp, _ := tpLargeTopic(t, 4*fanOutPart)
	if fanOutParts(4*fanOutPart) != 4 {
		t.Fatalf("%d parts, want 4", fanOutParts(4*fanOutPart))
	}
	payload := []byte(`{"price":101.25}`)
	h.fanOut(tp, payload)
	if a := testing.AllocsPerRun(50, func() { h.fanOut(tp, payload) }); a != 0 {
		t.Errorf("fanOut to %d subscribers in 4 parts: %v allocations per message, want 0", 4*fanOutPart, a)
	}
}
