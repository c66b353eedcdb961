package handler

// White-box tests of the subscription limits (subscribe.go): the caps
// per connection and for the table, every way a slot is given back, and
// the bookkeeping left behind (none). White-box to see the per-connection
// map; the fake connection stands in for the engine's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/parser"
)

// limConn is a Conn that can push and discards what it is sent.
type limConn struct{ ctx context.Context }

func (c *limConn) Send([]byte) error        { return nil }
func (c *limConn) CanPush() bool            { return true }
func (c *limConn) Context() context.Context { return c.ctx }

// limClient is one connection calling a table directly.
type limClient struct {
	tab   *Table
	ctx   context.Context // the request context: carries the Conn
	close context.CancelFunc
}

func newLimClient(tab *Table) *limClient {
	cctx, cancel := context.WithCancel(context.Background())
	return &limClient{tab: tab, ctx: ContextWithConn(cctx, &limConn{ctx: cctx}), close: cancel}
}

func (c *limClient) call(method, params string, id int) string {
	msg := `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":` + strconv.Itoa(id) + `}`
	return string(c.tab.Dispatch(c.ctx, nil, []byte(msg)))
}

// subscribe calls <ns>_subscribe and returns the id, or "" and the reply.
func (c *limClient) subscribe(ns string, id int) (subID, reply string) {
	reply = c.call(ns+"_subscribe", "[0]", id)
	var r struct{ Result string }
	if json.Unmarshal([]byte(reply), &r) != nil || r.Result == "" {
		return "", reply
	}
	return r.Result, reply
}

// limTable registers namespaces "a" and "b"; start fails for params 1,
// panics for 2, and counts its calls.
func limTable(perConn, total int) (*Table, *atomic.Int64) {
	tab := NewTable(WithMaxSubscriptions(perConn, total), WithLogger(slog.New(slog.DiscardHandler)))
	var starts atomic.Int64
	start := func(_ context.Context, p [1]int, _ *Subscription) error {
		starts.Add(1)
		switch p[0] {
		case 1:
			return NewError(parser.CodeInvalidParams, "refused")
		case 2:
			panic("boom")
		}
		return nil
	}
	RegisterSubscription(tab, "a", start, Inline())
	RegisterSubscription(tab, "b", start, Inline())
	return tab, &starts
}

// checkSlots checks the table's counts: n live, and conns connections in
// the per-connection map.
func checkSlots(t *testing.T, tab *Table, n, conns int) {
	t.Helper()
	l := tab.subs["a"].lim
	l.mu.Lock()
	got, gotConns, live := l.n, len(l.byConn), 0
	for _, reg := range tab.subs {
		live += len(reg.live)
	}
	l.mu.Unlock()
	if got != n || gotConns != conns || live != n || tab.SubscriptionCount() != n {
		t.Fatalf("%d live (%d in the maps, SubscriptionCount %d) on %d connections, want %d on %d", got, live, tab.SubscriptionCount(), gotConns, n, conns)
	}
}

// waitSlots waits (bounded) until the table holds n subscriptions on
// conns connections: a closed connection's slots are given back by
// context.AfterFunc, on a goroutine of its own.
func waitSlots(t *testing.T, tab *Table, n, conns int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		l := tab.subs["a"].lim
		l.mu.Lock()
		done := l.n == n && len(l.byConn) == conns
		l.mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
	}
	checkSlots(t, tab, n, conns)
}

func TestSubscription_limitPerConn(t *testing.T) {
	tab, starts := limTable(3, 100)
	a, b := newLimClient(tab), newLimClient(tab)
	for i, ns := range []string{"a", "b", "a"} { // namespaces count together
		if id, reply := a.subscribe(ns, i); id == "" {
			t.Fatalf("subscribe %d: %s", i, reply)
		}
	}
	for i, ns := range []string{"a", "b"} {
		want := `{"jsonrpc":"2.0","error":{"code":-32006,"message":"Too many subscriptions: 3 per connection"},"id":` + strconv.Itoa(10+i) + `}`
		if _, reply := a.subscribe(ns, 10+i); reply != want {
			t.Fatalf("past the cap:\n got %s\nwant %s", reply, want)
		}
	}
	if n := starts.Load(); n != 3 {
		t.Fatalf("start called %d times, want 3 (not for refused subscribes)", n)
	}
	checkSlots(t, tab, 3, 1)
	if n := tab.Subscriptions("a"); n != 2 {
		t.Fatalf("Subscriptions(a) = %d, want 2", n)
	}
	// Another connection has its own cap.
	if id, reply := b.subscribe("a", 20); id == "" {
		t.Fatal(reply)
	}
	checkSlots(t, tab, 4, 2)
}

func TestSubscription_limitTotal(t *testing.T) {
	tab, starts := limTable(3, 4)
	a, b := newLimClient(tab), newLimClient(tab)
	for i := range 3 {
		if id, reply := a.subscribe("a", i); id == "" {
			t.Fatal(reply)
		}
	}
	if id, reply := b.subscribe("b", 3); id == "" {
		t.Fatal(reply)
	}
	want := `{"jsonrpc":"2.0","error":{"code":-32006,"message":"Too many subscriptions: the server holds 4"},"id":4}`
	if _, reply := b.subscribe("a", 4); reply != want {
		t.Fatalf("past the server cap:\n got %s\nwant %s", reply, want)
	}
	// Both over: the connection's limit is named.
	if _, reply := a.subscribe("a", 5); reply != `{"jsonrpc":"2.0","error":{"code":-32006,"message":"Too many subscriptions: 3 per connection"},"id":5}` {
		t.Fatal(reply)
	}
	if n := starts.Load(); n != 4 {
		t.Fatalf("start called %d times, want 4", n)
	}
	checkSlots(t, tab, 4, 2)
	l := tab.subs["a"].lim
	if !errors.Is(l.errPerConn, ErrTooManySubscriptions) || !errors.Is(l.errTotal, ErrTooManySubscriptions) {
		t.Fatal("the limit errors are not ErrTooManySubscriptions")
	}
}

// TestSubscription_limitDefaults: no option means the documented
// defaults; negative means no limit.
func TestSubscription_limitDefaults(t *testing.T) {
	tab, _ := limTable(0, 0)
	l := tab.subs["a"].lim
	if l.perConn != DefaultMaxSubscriptionsPerConn || l.total != DefaultMaxSubscriptions ||
		l.errPerConn.Message != "Too many subscriptions: 1024 per connection" ||
		l.errTotal.Message != "Too many subscriptions: the server holds 100000" {
		t.Fatalf("%d %d %q %q", l.perConn, l.total, l.errPerConn.Message, l.errTotal.Message)
	}
	tab, _ = limTable(-1, -1)
	c := newLimClient(tab)
	for i := range 2000 {
		if id, reply := c.subscribe("a", i); id == "" {
			t.Fatalf("subscribe %d without limits: %s", i, reply)
		}
	}
	if tab.SubscriptionCount() != 2000 || (&Table{}).SubscriptionCount() != 0 {
		t.Fatal("SubscriptionCount")
	}
}

// TestSubscription_limitReleased: each way a subscription ends gives its
// slot back, once.
func TestSubscription_limitReleased(t *testing.T) {
	t.Run("unsubscribe", func(t *testing.T) {
		tab, _ := limTable(1, 1)
		c := newLimClient(tab)
		id, _ := c.subscribe("a", 1)
		if _, reply := c.subscribe("b", 2); reply == "" || id == "" {
			t.Fatal("setup")
		}
		if got := c.call("a_unsubscribe", `["`+id+`"]`, 3); got != `{"jsonrpc":"2.0","result":true,"id":3}` {
			t.Fatal(got)
		}
		checkSlots(t, tab, 0, 0) // at once: the unsubscribe reply means the slot is free
		if got := c.call("a_unsubscribe", `["`+id+`"]`, 4); got != `{"jsonrpc":"2.0","error":{"code":-32000,"message":"subscription not found"},"id":4}` {
			t.Fatal(got)
		}
		if id2, reply := c.subscribe("b", 5); id2 == "" {
			t.Fatal(reply)
		}
		checkSlots(t, tab, 1, 1)
	})
	t.Run("serverUnsubscribe", func(t *testing.T) {
		tab := NewTable(WithMaxSubscriptions(1, 1))
		subs := make(chan *Subscription, 2)
		RegisterSubscription(tab, "a", func(_ context.Context, _ [1]int, s *Subscription) error { subs <- s; return nil }, Inline())
		c := newLimClient(tab)
		id, reply := c.subscribe("a", 1)
		if id == "" {
			t.Fatal(reply)
		}
		s := <-subs
		s.Unsubscribe()
		s.Unsubscribe() // twice: released once
		checkSlots(t, tab, 0, 0)
		if got := c.call("a_unsubscribe", `["`+id+`"]`, 2); got != `{"jsonrpc":"2.0","error":{"code":-32000,"message":"subscription not found"},"id":2}` {
			t.Fatal(got)
		}
		if id, reply := c.subscribe("a", 3); id == "" {
			t.Fatal(reply)
		}
		checkSlots(t, tab, 1, 1)
		// The connection closing after a server Unsubscribe does not give
		// the slot back again.
		(<-subs).Unsubscribe()
		c.close()
		waitSlots(t, tab, 0, 0)
	})
	for _, tc := range []struct {
		name, params string
		code         string
	}{{"startError", "[1]", "-32602"}, {"startPanic", "[2]", "-32603"}} {
		t.Run(tc.name, func(t *testing.T) {
			tab, _ := limTable(1, 1)
			c := newLimClient(tab)
			for i := range 3 {
				if got := c.call("a_subscribe", tc.params, i); !json.Valid([]byte(got)) || !strings.Contains(got, `"code":`+tc.code) {
					t.Fatalf("try %d: %s", i, got)
				}
				checkSlots(t, tab, 0, 0)
			}
			if id, reply := c.subscribe("a", 9); id == "" {
				t.Fatal(reply)
			}
			checkSlots(t, tab, 1, 1)
		})
	}
	t.Run("connClose", func(t *testing.T) {
		tab, _ := limTable(3, 4)
		a, b := newLimClient(tab), newLimClient(tab)
		for i := range 3 {
			a.subscribe("a", i)
		}
		b.subscribe("b", 3)
		if _, reply := b.subscribe("b", 4); !strings.Contains(reply, "the server holds 4") {
			t.Fatal(reply)
		}
		a.close()
		waitSlots(t, tab, 1, 1)
		for i := range 2 {
			if id, reply := b.subscribe("a", 5+i); id == "" {
				t.Fatal(reply)
			}
		}
		b.close()
		waitSlots(t, tab, 0, 0)
	})
	t.Run("closedConn", func(t *testing.T) {
		// A subscribe on a connection already closed: its slot is given
		// back at once by the AfterFunc.
		tab, _ := limTable(1, 1)
		c := newLimClient(tab)
		c.close()
		c.subscribe("a", 1)
		waitSlots(t, tab, 0, 0)
	})
}

// TestSubscription_limitNoLeak: connections that come and go leave no
// entry in the per-connection map.
func TestSubscription_limitNoLeak(t *testing.T) {
	tab, _ := limTable(4, 1000)
	for round := range 50 {
		c := newLimClient(tab)
		var ids []string
		for i := range 3 {
			id, reply := c.subscribe([]string{"a", "b"}[i%2], i)
			if id == "" {
				t.Fatal(reply)
			}
			ids = append(ids, id)
		}
		if round%2 == 0 { // ended by the client, then the connection's close finds nothing
			for i, id := range ids {
				c.call([]string{"a", "b"}[i%2]+"_unsubscribe", `["`+id+`"]`, 10+i)
			}
			waitSlots(t, tab, 0, 0) // the last round's closed connection too

		}
		c.close()
	}
	waitSlots(t, tab, 0, 0)
}

// TestSubscription_limitConcurrent: many goroutines on many connections
// subscribe, unsubscribe and close at once; the caps hold at every
// moment, and everything is given back in the end. Run with -race.
func TestSubscription_limitConcurrent(t *testing.T) {
	const perConn, total, conns, goroutinesPerConn, tries = 5, 17, 8, 4, 40
	tab := NewTable(WithMaxSubscriptions(perConn, total), WithLogger(slog.New(slog.DiscardHandler)))
	var over atomic.Value // first violation seen by start
	start := func(_ context.Context, p [1]int, s *Subscription) error {
		l := s.reg.lim
		l.mu.Lock()
		n, k := l.n, l.byConn[s.conn]
		l.mu.Unlock()
		if n > total || k > perConn {
			over.CompareAndSwap(nil, fmt.Sprintf("%d live, %d on one connection", n, k))
		}
		if p[0] == 1 {
			return errors.New("refused")
		}
		return nil
	}
	RegisterSubscription(tab, "a", start, Inline())
	RegisterSubscription(tab, "b", start)

	// Phase 1: everyone subscribes; exactly total succeed, at most
	// perConn on each connection.
	clients := make([]*limClient, conns)
	for i := range clients {
		clients[i] = newLimClient(tab)
	}
	var ok [conns]atomic.Int64
	var wg sync.WaitGroup
	for ci, c := range clients {
		for g := range goroutinesPerConn {
			wg.Go(func() {
				for i := range tries {
					if id, _ := c.subscribe([]string{"a", "b"}[(g+i)%2], i); id != "" {
						ok[ci].Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	sum := int64(0)
	for i := range ok {
		if ok[i].Load() > perConn {
			t.Fatalf("connection %d holds %d subscriptions, cap %d", i, ok[i].Load(), perConn)
		}
		sum += ok[i].Load()
	}
	if sum != total || tab.SubscriptionCount() != total {
		t.Fatalf("%d subscribes succeeded, %d live, want %d", sum, tab.SubscriptionCount(), total)
	}

	// Phase 2: churn — subscribe, fail, unsubscribe, close and reopen —
	// while a watcher reads the count.
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := tab.SubscriptionCount(); n > total {
				over.CompareAndSwap(nil, fmt.Sprintf("SubscriptionCount %d", n))
			}
			runtime.Gosched()
		}
	}()
	var mu sync.Mutex // guards clients[i] replacement
	for ci := range clients {
		for g := range goroutinesPerConn {
			wg.Go(func() {
				for i := range tries {
					mu.Lock()
					c := clients[ci]
					mu.Unlock()
					ns := []string{"a", "b"}[(g+i)%2]
					switch i % 7 {
					case 3:
						c.call(ns+"_subscribe", "[1]", i) // start fails
					case 6:
						if g == 0 { // one goroutine per connection closes it and dials again
							mu.Lock()
							clients[ci] = newLimClient(tab)
							mu.Unlock()
							c.close()
						}
					default:
						if id, _ := c.subscribe(ns, i); id != "" && i%2 == 0 {
							c.call(ns+"_unsubscribe", `["`+id+`"]`, i)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(stop)
	<-watched
	if v := over.Load(); v != nil {
		t.Fatalf("a cap was passed: %v", v)
	}
	for _, c := range clients {
		c.close()
	}
	waitSlots(t, tab, 0, 0)
}
