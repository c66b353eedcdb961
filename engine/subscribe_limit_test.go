package engine_test

// Tests of the subscription limits (handler.WithMaxSubscriptions) over
// real sockets: WebSocket and a newline-delimited TCP stream.

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/handler"
)

// limitClient is one connection of a limits test, over some transport.
type limitClient struct {
	send  func(string)
	read  func() []byte
	close func()
}

// dialLimitWS and dialLimitStream open a limitClient.
func dialLimitWS(t *testing.T, addr string) *limitClient {
	c := dialWS(t, addr, nil)
	return &limitClient{
		send: func(m string) {
			if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
				t.Fatal(err)
			}
		},
		read:  func() []byte { return wsRead(t, c) },
		close: func() { c.Close() },
	}
}

func dialLimitStream(t *testing.T, addr string) *limitClient {
	s := dialStream(t, "tcp", addr)
	return &limitClient{
		send:  func(m string) { s.send(t, []byte(m)) },
		read:  func() []byte { return bytes.TrimSuffix(s.line(t), []byte("\n")) },
		close: func() { s.c.Close() },
	}
}

// call sends one request and returns its reply (the subscriptions of
// these tests send no notifications).
func (c *limitClient) call(method, params string, id int) string {
	c.send(`{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":` + strconv.Itoa(id) + `}`)
	return string(c.read())
}

// subscribe subscribes and returns the id, failing the test if refused.
func (c *limitClient) subscribe(t *testing.T, id int) string {
	t.Helper()
	reply := c.call("s_subscribe", "[]", id)
	var r struct{ Result string }
	if err := json.Unmarshal([]byte(reply), &r); err != nil || len(r.Result) != 34 {
		t.Fatalf("subscribe %d: %s", id, reply)
	}
	return r.Result
}

// refused checks that a subscribe is answered -32006 with msg.
func (c *limitClient) refused(t *testing.T, id int, msg string) {
	t.Helper()
	want := `{"jsonrpc":"2.0","error":{"code":-32006,"message":"` + msg + `"},"id":` + strconv.Itoa(id) + `}`
	if got := c.call("s_subscribe", "[]", id); got != want {
		t.Fatalf("subscribe past a limit:\n got %s\nwant %s", got, want)
	}
}

// waitSubscriptions waits (bounded) until tab holds n subscriptions.
func waitSubscriptions(t *testing.T, tab *handler.Table, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tab.SubscriptionCount() != n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := tab.SubscriptionCount(); got != n {
		t.Fatalf("%d subscriptions live, want %d", got, n)
	}
}

// TestSubscription_limits: a connection subscribes up to its cap of 8,
// the next is refused; an unsubscribe frees a slot; a second connection
// fills the server's cap of 12; closing the first frees its slots for
// the second. Over WebSocket and over a stream, and the two mixed.
func TestSubscription_limits(t *testing.T) {
	const perConn, total = 8, 12
	const perConnMsg, totalMsg = "Too many subscriptions: 8 per connection", "Too many subscriptions: the server holds 12"
	dialers := map[string]func(*testing.T, string) *limitClient{"ws": dialLimitWS, "stream": dialLimitStream}
	for _, tc := range []struct{ name, a, b string }{{"ws", "ws", "ws"}, {"stream", "stream", "stream"}, {"mixed", "ws", "stream"}} {
		t.Run(tc.name, func(t *testing.T) {
			tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithMaxSubscriptions(perConn, total))
			var starts atomic.Int64
			handler.RegisterSubscription(tab, "s", func(context.Context, []int, *handler.Subscription) error {
				starts.Add(1)
				return nil
			}, handler.Inline())
			_, tcp, _ := startEngine(t, tab)
			a := dialers[tc.a](t, tcp)
			var ids []string
			for i := range perConn {
				ids = append(ids, a.subscribe(t, i))
			}
			a.refused(t, 100, perConnMsg)
			if starts.Load() != perConn || tab.SubscriptionCount() != perConn {
				t.Fatalf("start called %d times, %d live; want %d", starts.Load(), tab.SubscriptionCount(), perConn)
			}
			// An unsubscribe frees one slot, at once.
			if got := a.call("s_unsubscribe", `["`+ids[0]+`"]`, 101); got != `{"jsonrpc":"2.0","result":true,"id":101}` {
				t.Fatal(got)
			}
			a.subscribe(t, 102)
			a.refused(t, 103, perConnMsg)

			// The second connection fills the server's cap.
			b := dialers[tc.b](t, tcp)
			for i := range total - perConn {
				b.subscribe(t, 200+i)
			}
			b.refused(t, 300, totalMsg)
			if got := tab.SubscriptionCount(); got != total {
				t.Fatalf("%d live, want %d", got, total)
			}

			// Closing the first connection gives back all of its slots.
			a.close()
			waitSubscriptions(t, tab, total-perConn)
			for i := range 2*perConn - total {
				b.subscribe(t, 400+i)
			}
			b.refused(t, 500, perConnMsg)
			if got := tab.SubscriptionCount(); got != perConn {
				t.Fatalf("%d live, want %d", got, perConn)
			}
			b.close()
			waitSubscriptions(t, tab, 0)
		})
	}
}
