package engine_test

// NOTE: tests of the per-call limits of the handler layer over real
// sockets: call deadlines (handler.WithCallTimeout, handler.Timeout),
// per-method concurrency (handler.MaxConcurrent), the response caps
// (handler.WithMaxResponseSize) and the rate limits
// (handler.WithRateLimit, handler.Cost). Each test runs over HTTP
// (keep-alive POSTs on one connection), WebSocket and a newline-delimited
// stream through fairClient, a limitClient (subscribe_limit_test.go) with
// an HTTP dialer beside it. Waits are bounded (the clients' 10 s read
// deadlines, waitFair); no test asserts how fast anything is.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// fairTransports are the transports every test runs over.
var fairTransports = []string{"http", "ws", "stream"}

// fairClient is one connection of a fair-use test.
type fairClient struct {
	*limitClient
	http bool // every message gets a response (204 for a notification)
}

// countServer serves count ([n] → n, counting its runs in ran) with a
// burst of 10 cost units and a rate that refills nothing during a test,
// and dials it over transport.
func countServer(t *testing.T, transport string) (c *fairClient, ran *atomic.Int32) {
	t.Helper()
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithRateLimit(ratelimit.Limits{Rate: 0.001, Burst: 10}))
	ran = new(atomic.Int32)
	handler.Register(tab, "count", func(_ context.Context, p [1]int) (int, error) { ran.Add(1); return p[0], nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	return dialFair(t, transport, tcp), ran
}

// dialFair opens a connection to addr over transport.
func dialFair(t *testing.T, transport, addr string) *fairClient {
	t.Helper()
	switch transport {
	case "http":
		return &fairClient{limitClient: dialLimitHTTP(t, addr), http: true}
	case "ws":
		return &fairClient{limitClient: dialLimitWS(t, addr)}
	default:
		return &fairClient{limitClient: dialLimitStream(t, addr)}
	}
}

// dialLimitHTTP is a limitClient over one keep-alive HTTP connection:
// send POSTs a message, read returns the body of the next response (empty
// for a 204).
func dialLimitHTTP(t *testing.T, addr string) *limitClient {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	return &limitClient{
		send: func(m string) {
			if _, err := io.WriteString(c, post(m, "")); err != nil {
				t.Fatal(err)
			}
		},
		read: func() []byte {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("reading a response: %v", err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 && resp.StatusCode != 204 || resp.StatusCode == 204 && len(b) > 0 {
				t.Fatalf("response %s, body %q (%v)", resp.Status, b, err)
			}
			return b
		},
		close: func() { c.Close() },
	}
}

// roundTrip sends msg and returns the next message from the server.
func (c *fairClient) roundTrip(msg string) string {
	c.send(msg)
	return string(c.read())
}

// notify sends a notification; over HTTP it reads the empty response.
func (c *fairClient) notify(t *testing.T, msg string) {
	t.Helper()
	c.send(msg)
	if c.http {
		if got := c.read(); len(got) != 0 {
			t.Fatalf("a notification got %q", got)
		}
	}
}

// fairReq is a request to method with params (none when "") and id (a
// notification when id < 0).
func fairReq(method, params string, id int) string {
	s := `{"jsonrpc":"2.0","method":"` + method + `"`
	if params != "" {
		s += `,"params":` + params
	}
	if id >= 0 {
		s += `,"id":` + strconv.Itoa(id)
	}
	return s + "}"
}

// fairErr is the golden error reply with code, message and id.
func fairErr(code int, msg string, id int) string {
	return `{"jsonrpc":"2.0","error":{"code":` + strconv.Itoa(code) + `,"message":"` + msg + `"},"id":` + strconv.Itoa(id) + `}`
}

// fairReply is a reply decoded.
type fairReply struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
	ID json.RawMessage
}

// fairBatch decodes a batch reply by id.
func fairBatch(t *testing.T, s string) map[string]fairReply {
	t.Helper()
	var rs []fairReply
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		t.Fatalf("batch reply %q: %v", s, err)
	}
	out := map[string]fairReply{}
	for _, r := range rs {
		if _, dup := out[string(r.ID)]; dup {
			t.Fatalf("two replies to id %s: %s", r.ID, s)
		}
		out[string(r.ID)] = r
	}
	return out
}

// fairBatchOf joins messages into a batch.
func fairBatchOf(msgs ...string) string { return "[" + strings.Join(msgs, ",") + "]" }

// waitFair polls cond for up to 10 s.
func waitFair(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// fairMethods observes the methods of fairTable.
type fairMethods struct {
	ended    atomic.Int32
	release  chan struct{}
	returned chan struct{}
}

// fairTable returns a table built with opts and: fast (inline, returns
// its param), add (inline), slow (blocking, with slowOpts: waits until
// its context is done, counts it in ended, then until release is closed;
// it signals returned as it returns "late"), big (inline: a string of its
// param's length) and bigSlow (the same, blocking).
func fairTable(t *testing.T, slowOpts []handler.MethodOption, opts ...handler.Option) (*handler.Table, *fairMethods) {
	t.Helper()
	f := &fairMethods{release: make(chan struct{}), returned: make(chan struct{}, 16)}
	t.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
	})
	tab := handler.NewTable(append([]handler.Option{handler.WithLogger(quiet())}, opts...)...)
	handler.Register(tab, "fast", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.Inline())
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.Register(tab, "slow", func(ctx context.Context, _ struct{}) (string, error) {
		defer func() { f.returned <- struct{}{} }()
		select {
		case <-ctx.Done():
			f.ended.Add(1)
		case <-time.After(10 * time.Second):
			return "no deadline", nil
		}
		select {
		case <-f.release:
		case <-time.After(10 * time.Second):
		}
		return "late", nil
	}, slowOpts...)
	handler.Register(tab, "big", func(_ context.Context, p [1]int) (string, error) { return strings.Repeat("x", p[0]), nil }, handler.Inline())
	handler.Register(tab, "bigSlow", func(_ context.Context, p [1]int) (string, error) { return strings.Repeat("x", p[0]), nil })
	return tab, f
}

// TestFairUse_deadlineInsideABatch: a blocking call past the table's
// call timeout inside a batch is answered -32002 beside its siblings'
// results, in one reply; its context was done; the connection goes on.
func TestFairUse_deadlineInsideABatch(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, f := fairTable(t, nil, handler.WithCallTimeout(50*time.Millisecond))
			_, tcp, _ := startEngine(t, tab)
			c := dialFair(t, tr, tcp)
			got := c.roundTrip(fairBatchOf(fairReq("slow", "", 1), fairReq("fast", "[2]", 2), fairReq("add", "[1,2]", 3)))
			rs := fairBatch(t, got)
			if len(rs) != 3 {
				t.Fatalf("%d replies, want 3: %s", len(rs), got)
			}
			if e := rs["1"].Error; e == nil || e.Code != -32002 || e.Message != "Deadline exceeded: the call ran past its timeout of 50ms" {
				t.Errorf("the slow call: %s", got)
			}
			if string(rs["2"].Result) != "2" || string(rs["3"].Result) != "3" {
				t.Errorf("the siblings: %s", got)
			}
			waitFair(t, "the slow call's context done", func() bool { return f.ended.Load() == 1 })
			close(f.release)
			if got := c.roundTrip(fairReq("add", "[20,22]", 4)); got != `{"jsonrpc":"2.0","result":42,"id":4}` {
				t.Fatalf("the next call: %s", got)
			}
		})
	}
}

// TestFairUse_deadlineSingleDropsTheLateResult: a blocking call past its
// method's Timeout is answered -32002; its late result, returned after,
// is never sent: the next message on the connection is the next call's
// reply.
func TestFairUse_deadlineSingleDropsTheLateResult(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, f := fairTable(t, []handler.MethodOption{handler.Timeout(50 * time.Millisecond)})
			_, tcp, _ := startEngine(t, tab)
			c := dialFair(t, tr, tcp)
			want := fairErr(-32002, "Deadline exceeded: the call ran past its timeout of 50ms", 1)
			if got := c.roundTrip(fairReq("slow", "", 1)); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			waitFair(t, "the method's context done", func() bool { return f.ended.Load() == 1 })
			close(f.release)
			select {
			case <-f.returned:
			case <-time.After(10 * time.Second):
				t.Fatal("the timed-out method never returned")
			}
			// The late result would come now, before these replies.
			if got := c.roundTrip(fairReq("add", "[1,2]", 2)); got != `{"jsonrpc":"2.0","result":3,"id":2}` {
				t.Fatalf("after the late result, the next message: %s", got)
			}
			if got := c.roundTrip(fairReq("bigSlow", "[1]", 3)); got != `{"jsonrpc":"2.0","result":"x","id":3}` {
				t.Fatalf("a blocking call after it: %s", got)
			}
		})
	}
}

// TestFairUse_rateLimitByABatch: with a burst of 10 and a rate that
// refills nothing during the test, a batch of 15 gets 10 results and 5
// -32005; a single call then gets -32005; notifications over the limit
// are dropped without a reply and without running.
func TestFairUse_rateLimitByABatch(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			c, ran := countServer(t, tr)
			var msgs []string
			for i := range 15 {
				msgs = append(msgs, fairReq("count", "["+strconv.Itoa(i)+"]", i))
			}
			got := c.roundTrip(fairBatchOf(msgs...))
			rs := fairBatch(t, got)
			results, limited := 0, 0
			for id, r := range rs {
				switch {
				case r.Error == nil && string(r.Result) == id:
					results++
				case r.Error != nil && r.Error.Code == -32005 && r.Error.Message == "Limit exceeded: rate limit":
					limited++
				default:
					t.Errorf("id %s: %+v", id, r)
				}
			}
			if len(rs) != 15 || results != 10 || limited != 5 {
				t.Fatalf("%d replies: %d results, %d -32005; want 15: 10 and 5\n%s", len(rs), results, limited, got)
			}
			want := fairErr(-32005, "Limit exceeded: rate limit", 20)
			if got := c.roundTrip(fairReq("count", "[20]", 20)); got != want {
				t.Fatalf("a call past the limit:\n got %s\nwant %s", got, want)
			}
			for range 3 {
				c.notify(t, fairReq("count", "[0]", -1))
			}
			if got := c.roundTrip(fairReq("count", "[21]", 21)); got != fairErr(-32005, "Limit exceeded: rate limit", 21) {
				t.Fatalf("the call after the notifications: %s", got)
			}
			if n := ran.Load(); n != 10 {
				t.Fatalf("the method ran %d times, want 10 (notifications over the limit must not run)", n)
			}
		})
	}
}

// TestFairUse_rateLimitNotificationsSpend: notifications spend from the
// bucket too: after 10 of them, with a burst of 10, a call gets -32005.
func TestFairUse_rateLimitNotificationsSpend(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			c, ran := countServer(t, tr)
			for range 12 {
				c.notify(t, fairReq("count", "[0]", -1))
			}
			if got := c.roundTrip(fairReq("count", "[1]", 1)); got != fairErr(-32005, "Limit exceeded: rate limit", 1) {
				t.Fatalf("a call after 12 notifications (burst 10): %s", got)
			}
			if n := ran.Load(); n != 10 {
				t.Fatalf("the method ran %d times, want 10", n)
			}
		})
	}
}

// TestFairUse_rateLimitPerConnection: ConnBurst bounds each connection
// alone, for inline and blocking (worker) calls alike; a second
// connection from the same address has its own bucket.
func TestFairUse_rateLimitPerConnection(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, _ := fairTable(t, nil, handler.WithRateLimit(ratelimit.Limits{ConnRate: 0.001, ConnBurst: 3}))
			_, tcp, _ := startEngine(t, tab)
			a, b := dialFair(t, tr, tcp), dialFair(t, tr, tcp)
			for k, c := range []*fairClient{a, b} {
				for i, m := range []string{"fast", "bigSlow", "fast"} {
					want := `{"jsonrpc":"2.0","result":1,"id":` + strconv.Itoa(i) + `}`
					if m == "bigSlow" {
						want = `{"jsonrpc":"2.0","result":"x","id":` + strconv.Itoa(i) + `}`
					}
					if got := c.roundTrip(fairReq(m, "[1]", i)); got != want {
						t.Fatalf("connection %d, call %d (%s) within the connection's burst of 3: %s", k, i, m, got)
					}
				}
				for i, m := range []string{"fast", "bigSlow"} {
					if got := c.roundTrip(fairReq(m, "[1]", 3+i)); got != fairErr(-32005, "Limit exceeded: rate limit", 3+i) {
						t.Fatalf("connection %d, a %s call past its burst of 3: %s", k, m, got)
					}
				}
			}
		})
	}
}

// TestFairUse_rateLimitPerIdentity: two connections from 127.0.0.1
// share the identity's bucket.
func TestFairUse_rateLimitPerIdentity(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, _ := fairTable(t, nil, handler.WithRateLimit(ratelimit.Limits{Rate: 0.001, Burst: 10}))
			_, tcp, _ := startEngine(t, tab)
			a, b := dialFair(t, tr, tcp), dialFair(t, tr, tcp)
			for i := range 10 {
				c := a
				if i >= 6 {
					c = b
				}
				if got := c.roundTrip(fairReq("fast", "[1]", i)); got != `{"jsonrpc":"2.0","result":1,"id":`+strconv.Itoa(i)+`}` {
					t.Fatalf("call %d within the identity's burst: %s", i, got)
				}
			}
			for i, c := range []*fairClient{b, a} {
				if got := c.roundTrip(fairReq("fast", "[1]", 10+i)); got != fairErr(-32005, "Limit exceeded: rate limit", 10+i) {
					t.Fatalf("connection %d past the shared burst of 10: %s", 1-i, got)
				}
			}
		})
	}
}

// TestFairUse_costSpendsItsUnits: a method of Cost(4) under a burst of
// 10 is answered twice, then -32005; a method of cost 1 may still spend
// the 2 units left.
func TestFairUse_costSpendsItsUnits(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithRateLimit(ratelimit.Limits{Rate: 0.001, Burst: 10}))
			handler.Register(tab, "dear", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.Inline(), handler.Cost(4))
			handler.Register(tab, "cheap", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.Inline())
			_, tcp, _ := startEngine(t, tab)
			c := dialFair(t, tr, tcp)
			for i := range 2 {
				if got := c.roundTrip(fairReq("dear", "[7]", i)); got != `{"jsonrpc":"2.0","result":7,"id":`+strconv.Itoa(i)+`}` {
					t.Fatalf("call %d of cost 4 (burst 10): %s", i, got)
				}
			}
			if got := c.roundTrip(fairReq("dear", "[7]", 2)); got != fairErr(-32005, "Limit exceeded: rate limit", 2) {
				t.Fatalf("the third call of cost 4 (burst 10): %s", got)
			}
			for i := 3; i < 5; i++ {
				if got := c.roundTrip(fairReq("cheap", "[1]", i)); got != `{"jsonrpc":"2.0","result":1,"id":`+strconv.Itoa(i)+`}` {
					t.Fatalf("a call of cost 1 with %d units left: %s", 5-i, got)
				}
			}
			if got := c.roundTrip(fairReq("cheap", "[1]", 5)); got != fairErr(-32005, "Limit exceeded: rate limit", 5) {
				t.Fatalf("a call of cost 1 with the bucket empty: %s", got)
			}
		})
	}
}

// TestFairUse_maxConcurrentAnswersBusy: with MaxConcurrent(2), while two
// calls hold the method (from two connections), a third — alone, or in
// a batch beside an inline call — is answered -32000 at once; once they
// are released the slots come back.
func TestFairUse_maxConcurrentAnswersBusy(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab := handler.NewTable(handler.WithLogger(quiet()))
			var inside atomic.Int32
			release := make(chan struct{})
			handler.Register(tab, "hold", func(context.Context, struct{}) (bool, error) {
				inside.Add(1)
				defer inside.Add(-1)
				select {
				case <-release:
				case <-time.After(10 * time.Second):
					return false, nil
				}
				return true, nil
			}, handler.MaxConcurrent(2))
			handler.Register(tab, "fast", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.Inline())
			_, tcp, _ := startEngine(t, tab)
			a, b, c := dialFair(t, tr, tcp), dialFair(t, tr, tcp), dialFair(t, tr, tcp)
			a.send(fairReq("hold", "", 1))
			b.send(fairReq("hold", "", 2))
			waitFair(t, "two calls inside", func() bool { return inside.Load() == 2 })
			busy := "Server busy: hold runs 2 calls at most at once"
			if got := c.roundTrip(fairReq("hold", "", 3)); got != fairErr(-32000, busy, 3) {
				t.Fatalf("a third call:\n got %s\nwant %s", got, fairErr(-32000, busy, 3))
			}
			got := c.roundTrip(fairBatchOf(fairReq("hold", "", 4), fairReq("fast", "[5]", 5)))
			if rs := fairBatch(t, got); len(rs) != 2 || rs["4"].Error == nil || rs["4"].Error.Code != -32000 || rs["4"].Error.Message != busy || string(rs["5"].Result) != "5" {
				t.Fatalf("a third call in a batch: %s", got)
			}
			close(release)
			for i, cl := range []*fairClient{a, b} {
				if got := string(cl.read()); got != `{"jsonrpc":"2.0","result":true,"id":`+strconv.Itoa(i+1)+`}` {
					t.Fatalf("held call %d: %s", i+1, got)
				}
			}
			// The slots came back: two calls at once, in a batch.
			waitFair(t, "the held calls gone", func() bool { return inside.Load() == 0 })
			got = c.roundTrip(fairBatchOf(fairReq("hold", "", 6), fairReq("hold", "", 7)))
			if rs := fairBatch(t, got); len(rs) != 2 || string(rs["6"].Result) != "true" || string(rs["7"].Result) != "true" {
				t.Fatalf("after the release: %s", got)
			}
		})
	}
}

// TestFairUse_responseCap: a reply over the single cap is replaced by
// -32008 naming both sizes, from an inline and from a blocking method;
// in a batch, once the replies (error replies counted) pass the batch
// cap, every remaining element is answered -32008.
func TestFairUse_responseCap(t *testing.T) {
	for _, tr := range fairTransports {
		t.Run(tr, func(t *testing.T) {
			tab, _ := fairTable(t, nil, handler.WithMaxResponseSize(1000, 300))
			_, tcp, _ := startEngine(t, tab)
			c := dialFair(t, tr, tcp)
			if got := c.roundTrip(fairReq("big", "[900]", 1)); got != `{"jsonrpc":"2.0","result":"`+strings.Repeat("x", 900)+`","id":1}` {
				t.Fatalf("a reply under the cap: %.80s", got)
			}
			for i, m := range []string{"big", "bigSlow"} {
				id := 2 + i
				n := len(`{"jsonrpc":"2.0","result":"","id":2}`) + 2000
				want := fairErr(-32008, "Response too large: "+strconv.Itoa(n)+" bytes exceed the limit of 1000 bytes", id)
				if got := c.roundTrip(fairReq(m, "[2000]", id)); got != want {
					t.Fatalf("%s over the cap:\n got %.200s\nwant %s", m, got, want)
				}
			}
			// Each reply to an unknown method is some 90 bytes: the fourth
			// passes 300, so the fifth and sixth elements get -32008.
			var msgs []string
			for i := 1; i <= 4; i++ {
				msgs = append(msgs, fairReq("nope", "", i))
			}
			msgs = append(msgs, fairReq("fast", "[5]", 5), fairReq("bigSlow", "[6]", 6))
			got := c.roundTrip(fairBatchOf(msgs...))
			rs := fairBatch(t, got)
			if len(rs) != 6 {
				t.Fatalf("%d replies, want 6: %s", len(rs), got)
			}
			for _, id := range []string{"1", "2", "3", "4"} {
				if e := rs[id].Error; e == nil || e.Code != -32601 {
					t.Errorf("id %s: want -32601: %s", id, got)
				}
			}
			for _, id := range []string{"5", "6"} {
				if e := rs[id].Error; e == nil || e.Code != -32008 || e.Message != "Response too large: the batch's replies exceed the limit of 300 bytes" {
					t.Errorf("id %s: want -32008: %s", id, got)
				}
			}
			if got := c.roundTrip(fairReq("add", "[1,2]", 7)); got != `{"jsonrpc":"2.0","result":3,"id":7}` {
				t.Fatalf("the next call: %s", got)
			}
		})
	}
}
