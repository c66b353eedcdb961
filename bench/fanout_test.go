package bench

// Tests of the fan-out benchmark: against real jetrpc engines on
// loopback (one node, two nodes joined by a topics.MemoryBus, a node
// that drops every 10th message, one that refuses subscriptions), and
// against a raw WebSocket fake node that duplicates, reorders, invents
// and drops, to check every count exactly.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// startTopicNode serves a table on loopback until the test ends and
// returns its ws:// URL.
func startTopicNode(t *testing.T, tab *handler.Table, opts ...engine.Option) string {
	t.Helper()
	_, addr := enginetest.Start(t, tab, opts...)
	return "ws://" + addr + "/"
}

// topicTable returns a table with jetrpc serve's topic methods over h.
func topicTable(h *topics.Topics, opts ...handler.Option) *handler.Table {
	tab := handler.NewTable(append([]handler.Option{handler.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	demo.RegisterTopics(tab, h)
	return tab
}

func mustFanout(t *testing.T, cfg FanoutConfig) *FanoutResult {
	t.Helper()
	if cfg.Topic == "" {
		cfg.Topic = "news"
	}
	if cfg.PublishRate == 0 {
		cfg.PublishRate = 500
	}
	if cfg.Drain == 0 {
		cfg.Drain = 3 * time.Second
	}
	res, err := RunFanout(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	res.WriteTable(&b)
	t.Logf("\n%s", b.String())
	return res
}

// checkClean fails the test unless every expected delivery was made
// once, in order, with latencies recorded.
func checkClean(t *testing.T, res *FanoutResult, subs int, pubs int64) {
	t.Helper()
	if !res.OK || res.Subscribed != subs || res.Published != pubs || res.Acked != pubs ||
		res.Expected != int64(subs)*pubs || res.Delivered != res.Expected || res.Lost != 0 ||
		res.Duplicated != 0 || res.OutOfOrder != 0 || res.Invalid != 0 || len(res.PublishErrors) != 0 ||
		res.FullDecodes != 0 { // a jetrpc server's notifications are scanned in place
		t.Fatalf("not clean: %+v", res)
	}
	if res.Hist.TotalCount() != res.Delivered || res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 ||
		res.DeliveriesPerSec <= 0 || res.PayloadBytes <= 0 {
		t.Fatalf("latency figures missing: %d recorded, %+v, %.0f/s", res.Hist.TotalCount(), res.Latency, res.DeliveriesPerSec)
	}
}

// TestRunFanout_oneNode: 200 subscribers of one engine get all 50
// messages; the publish replies count them all as local deliveries.
func TestRunFanout_oneNode(t *testing.T) {
	url := startTopicNode(t, topicTable(topics.New(nil, nil)))
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 200, Publishes: 50, PayloadSize: 200})
	checkClean(t, res, 200, 50)
	if res.LocalDeliveries != 200*50 || res.PayloadBytes != 200 {
		t.Fatalf("local deliveries %d, payload %d bytes", res.LocalDeliveries, res.PayloadBytes)
	}
}

// TestRunFanout_twoNodes: two engines joined by a MemoryBus, the
// subscribers spread over both; the publisher's node reports its own
// half as local deliveries, and the other half arrives through the bus.
func TestRunFanout_twoNodes(t *testing.T) {
	bus := topics.NewMemoryBus()
	a := startTopicNode(t, topicTable(topics.New(bus.Node(), nil)))
	b := startTopicNode(t, topicTable(topics.New(bus.Node(), nil)))
	res := mustFanout(t, FanoutConfig{Targets: []string{a, b}, Subscribers: 200, Publishes: 50, Duration: time.Hour})
	checkClean(t, res, 200, 50)
	if res.LocalDeliveries != 100*50 {
		t.Fatalf("local deliveries %d, want %d", res.LocalDeliveries, 100*50)
	}
	for i, n := range res.Nodes {
		if n.Subscribed != 100 || n.Delivered != 100*50 || n.Lost != 0 || n.Latency.P50 <= 0 {
			t.Fatalf("node %d: %+v", i, n)
		}
	}
	// The publisher on the second node: the counts do not depend on it.
	res = mustFanout(t, FanoutConfig{Targets: []string{a, b}, PublishURL: b, Subscribers: 201, Publishes: 20})
	checkClean(t, res, 201, 20)
	if res.Nodes[0].Subscribed != 101 || res.LocalDeliveries != 100*20 {
		t.Fatalf("nodes %+v, local deliveries %d", res.Nodes, res.LocalDeliveries)
	}
}

// TestRunFanout_duration: without Publishes, the rate and the duration
// make the publishes, sent at their intended times.
func TestRunFanout_duration(t *testing.T) {
	url := startTopicNode(t, topicTable(topics.New(nil, nil)))
	t0 := time.Now()
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 20, PublishRate: 100, Duration: 300 * time.Millisecond})
	checkClean(t, res, 20, 30)
	if el := time.Since(t0); res.PublishTime < 280*time.Millisecond || el > 5*time.Second {
		t.Fatalf("published over %v, ran %v", res.PublishTime, el)
	}
}

// TestRunFanout_pings: subscribers only read, so the server pings them;
// they answer, and its idle timeout (from the last frame, pongs
// included) does not drop them.
func TestRunFanout_pings(t *testing.T) {
	url := startTopicNode(t, topicTable(topics.New(nil, nil)),
		engine.WithPingInterval(50*time.Millisecond), engine.WithTimeouts(300*time.Millisecond, 0, 0))
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 20, Publishes: 30, PublishRate: 30})
	checkClean(t, res, 20, 30)
}

// TestRunFanout_progress: the progress line shows the publishing.
func TestRunFanout_progress(t *testing.T) {
	url := startTopicNode(t, topicTable(topics.New(nil, nil)))
	var progress strings.Builder // written by the progress goroutine, which RunFanout waits for
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 10, PublishRate: 20, Duration: 1200 * time.Millisecond, Progress: &progress})
	checkClean(t, res, 10, 24)
	if !strings.Contains(progress.String(), "publishing ") || !strings.Contains(progress.String(), " delivered ") ||
		!strings.HasSuffix(progress.String(), "\r\033[K") {
		t.Fatalf("progress %q", progress.String())
	}
}

// TestRunFanout_lossyNode: a node whose topic_publish drops every 10th
// message (it answers 0 without delivering) is reported lost, exactly,
// and fails the run unless MaxLost allows that many.
func TestRunFanout_lossyNode(t *testing.T) {
	h := topics.New(nil, nil)
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	topics.Register(tab, "topic", h)
	var calls atomic.Int64
	handler.Register(tab, "topic_publish", func(_ context.Context, p demo.TopicParams) (int, error) {
		if calls.Add(1)%10 == 0 {
			return 0, nil // dropped
		}
		return h.Publish(p.Name, p.Payload)
	}, handler.Inline())
	url := startTopicNode(t, tab)
	// The drain waits its whole length for what never comes: long enough
	// for the rest to arrive under -race, and no longer.
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 100, Publishes: 50, Drain: 2 * time.Second})
	if res.OK || res.Lost != 5*100 || res.Delivered != 45*100 || res.Expected != 50*100 || res.LocalDeliveries != 45*100 {
		t.Fatalf("ok %v: lost %d delivered %d expected %d local %d", res.OK, res.Lost, res.Delivered, res.Expected, res.LocalDeliveries)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "500 of 5000 deliveries lost") {
		t.Fatalf("failures %q", res.Failures)
	}
	var b strings.Builder
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "result       FAILED: 500 of 5000 deliveries lost (at most 0 allowed)") {
		t.Fatalf("table:\n%s", b.String())
	}
	calls.Store(0)
	res = mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 50, Publishes: 20, Drain: time.Second, MaxLost: 100})
	if !res.OK || res.Lost != 100 {
		t.Fatalf("MaxLost 100: ok %v, lost %d, failures %q", res.OK, res.Lost, res.Failures)
	}
	calls.Store(0)
	res = mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 50, Publishes: 20, Drain: time.Second, MaxLost: 99})
	if res.OK {
		t.Fatalf("MaxLost 99 with 100 lost: ok")
	}
}

// TestRunFanout_refused: subscribes past the server's limit are answered
// an error; they are reported, with the server's message, and fail the
// run; the subscribers that did subscribe get everything.
func TestRunFanout_refused(t *testing.T) {
	h := topics.New(nil, nil)
	url := startTopicNode(t, topicTable(h, handler.WithMaxSubscriptions(0, 150)))
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 200, Publishes: 20})
	if res.OK || res.Subscribed != 150 || res.SubscribeFailed[SubRefused] != 50 || res.Delivered != 150*20 || res.Lost != 0 {
		t.Fatalf("ok %v subscribed %d failed %v delivered %d lost %d", res.OK, res.Subscribed, res.SubscribeFailed, res.Delivered, res.Lost)
	}
	if !strings.Contains(res.SubscribeError, "refused: -32") || !strings.Contains(res.SubscribeError, "Too many subscriptions") {
		t.Fatalf("subscribe error %q", res.SubscribeError)
	}
	if len(res.Failures) != 1 || res.Failures[0] != "50 of 200 subscribers failed to subscribe (refused 50)" {
		t.Fatalf("failures %q", res.Failures)
	}
}

// TestRunFanout_noServer: nothing listening: every subscriber fails to
// connect, nothing is published, and the run says so.
func TestRunFanout_noServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res := mustFanout(t, FanoutConfig{Targets: []string{"ws://" + addr + "/"}, Subscribers: 5, Publishes: 5, Timeout: time.Second})
	if res.OK || res.SubscribeFailed[SubConnect] != 5 || res.Subscribed != 0 || res.Published != 0 || res.PublishError == "" {
		t.Fatalf("%+v", res)
	}
}

// fakeNode is a raw WebSocket topic server whose publish can misbehave:
// deliver returns, for publish seq, the notifications to send to
// subscriber i (by its subscription number), as payloads; a subscriber
// whose deliver returns "CLOSE" is disconnected.
type fakeNode struct {
	mu      sync.Mutex
	subs    []net.Conn // guarded by mu
	deliver func(i int, seq int, payload string) []string
	refuse  func(i int) bool
	// trickle, when set, sends a publish's notifications after its reply,
	// trickle apart (and reads the next publish after them).
	trickle time.Duration
	wmu     sync.Mutex // held by a write to any connection
}

func (n *fakeNode) serve(t *testing.T) string {
	return "ws://" + fakeServer(t, func(c net.Conn) {
		if _, err := ws.Upgrade(c); err != nil {
			return
		}
		write := func(c net.Conn, s string) error {
			n.wmu.Lock()
			defer n.wmu.Unlock()
			return wsutil.WriteServerText(c, []byte(s))
		}
		for {
			msg, err := wsutil.ReadClientText(c)
			if err != nil {
				return
			}
			var req struct {
				Method string            `json:"method"`
				Params []json.RawMessage `json:"params"`
				ID     json.RawMessage   `json:"id"`
			}
			if err := json.Unmarshal(msg, &req); err != nil {
				return
			}
			switch req.Method {
			case "topic_subscribe":
				n.mu.Lock()
				i := len(n.subs)
				n.subs = append(n.subs, c)
				n.mu.Unlock()
				if n.refuse != nil && n.refuse(i) {
					write(c, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"no"},"id":`+string(req.ID)+`}`)
					continue
				}
				write(c, `{"jsonrpc":"2.0","result":"0x`+strconv.Itoa(i)+`","id":`+string(req.ID)+`}`)
			case "topic_publish":
				var p struct{ Seq int }
				json.Unmarshal(req.Params[1], &p)
				n.mu.Lock()
				subs := append([]net.Conn(nil), n.subs...)
				n.mu.Unlock()
				send := func() {
					for i, sc := range subs {
						for _, body := range n.deliver(i, p.Seq, string(req.Params[1])) {
							if body == "CLOSE" {
								sc.Close()
								continue
							}
							note := `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"0x` + strconv.Itoa(i) + `","result":` + body + `}}`
							if strings.HasPrefix(body, "RAW") {
								note = body[3:]
							}
							time.Sleep(n.trickle)
							write(sc, note)
						}
					}
				}
				if n.trickle == 0 {
					send()
				}
				write(c, `{"jsonrpc":"2.0","result":`+strconv.Itoa(len(subs))+`,"id":`+string(req.ID)+`}`)
				if n.trickle > 0 {
					send() // the next publish waits for it
				}
			}
		}
	}) + "/"
}

// TestRunFanout_fakeNode: every kind of wrong delivery is counted
// exactly: duplicates, reordering, a message that is not one of the
// run's, another subscription's, another form that still parses (the
// slow path), a dropped subscriber, a refused one.
func TestRunFanout_fakeNode(t *testing.T) {
	var held sync.Map // subscriber → its held-back payload, for reordering
	n := &fakeNode{
		refuse: func(i int) bool { return i == 5 },
		deliver: func(i, seq int, payload string) []string {
			switch {
			case i == 0 && seq == 3: // twice
				return []string{payload, payload}
			case i == 1 && seq == 4: // held back, sent after 5
				held.Store(i, payload)
				return nil
			case i == 1 && seq == 5:
				p, _ := held.Load(i)
				return []string{payload, p.(string)}
			case i == 2 && seq == 2: // not the run's, then the right one
				return []string{`{"hello":1}`, payload}
			case i == 3 && seq == 1: // another subscription's: not understood; the message itself lost
				return []string{"RAW" + `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"0x99","result":` + payload + `}}`}
			case i == 3 && seq == 2: // keys in another order, spaces: the slow path takes it
				var p struct{ Seq, T int64 }
				json.Unmarshal([]byte(payload), &p)
				return []string{"RAW" + fmt.Sprintf(`{"params":{"result":{"t": %d, "seq": %d},"subscription":"0x3"},"method":"topic_subscription","jsonrpc":"2.0"}`, p.T, p.Seq)}
			case i == 4 && seq == 6: // dropped: 6, 7, 8, 9 lost
				return []string{"CLOSE"}
			case i == 6 && seq == 7: // a sequence number never published
				return []string{strings.Replace(payload, `"seq":7`, `"seq":70`, 1), payload}
			}
			return []string{payload}
		},
	}
	url := n.serve(t)
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 8, Publishes: 10, Drain: time.Second, ConnectConcurrency: 1})
	want := FanoutResult{Subscribed: 7, Dropped: 1, Expected: 70, Delivered: 70 - 1 - 4, Lost: 5, Duplicated: 1, OutOfOrder: 1, Invalid: 3}
	if res.OK || res.Subscribed != want.Subscribed || res.Dropped != want.Dropped || res.Expected != want.Expected ||
		res.Delivered != want.Delivered || res.Lost != want.Lost || res.Duplicated != want.Duplicated ||
		res.OutOfOrder != want.OutOfOrder || res.Invalid != want.Invalid || res.SubscribeFailed[SubRefused] != 1 ||
		res.LocalDeliveries != 10*8 || res.FullDecodes != 3 {
		t.Fatalf("got %+v\nwant %+v", res, want)
	}
	if len(res.Failures) != 6 {
		t.Fatalf("failures %q", res.Failures)
	}
}

// TestRunFanout_publisherFails: a node that closes the publisher's
// connection after 3 publishes: the rest are counted not sent, and the
// messages never published are not counted lost.
func TestRunFanout_publisherFails(t *testing.T) {
	var publishes atomic.Int64
	n := &fakeNode{deliver: func(i, seq int, payload string) []string { return []string{payload} }}
	url := n.serve(t)
	// A second node for the publisher only: it answers 3 publishes with
	// the subscribers' notifications on the first node, then closes.
	pubURL := "ws://" + fakeServer(t, func(c net.Conn) {
		if _, err := ws.Upgrade(c); err != nil {
			return
		}
		for {
			msg, err := wsutil.ReadClientText(c)
			if err != nil || publishes.Add(1) > 3 {
				return
			}
			id := msg[strings.LastIndex(string(msg), `"id":`)+5 : len(msg)-1]
			wsutil.WriteServerText(c, []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"nope"},"id":`+string(id)+`}`))
		}
	}) + "/"
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, PublishURL: pubURL, Subscribers: 3, Publishes: 10, PublishRate: 50, Drain: time.Second})
	if res.OK || res.PublishErrors[PubError] != 3 || res.Acked != 3 || res.PublishErrors[PubTransport]+res.PublishErrors[PubUnsent] == 0 {
		t.Fatalf("%+v", res)
	}
	if res.Published < 3 || res.Expected != res.Published*3 || res.Delivered != 0 {
		t.Fatalf("published %d expected %d delivered %d", res.Published, res.Expected, res.Delivered)
	}
}

// TestFanoutConfig_errors: configs RunFanout refuses before dialing.
func TestFanoutConfig_errors(t *testing.T) {
	for _, c := range []struct {
		cfg  FanoutConfig
		want string
	}{
		{FanoutConfig{Targets: []string{"ws://127.0.0.1:1/"}}, "no topic"},
		{FanoutConfig{Topic: "a"}, "at least one ws:// target"},
		{FanoutConfig{Topic: "a", Targets: []string{"http://127.0.0.1:1/"}}, "need a ws:// URL"},
		{FanoutConfig{Topic: "a", Targets: []string{"ws://127.0.0.1:1/"}, PublishURL: "tcp://127.0.0.1:1"}, "need a ws:// URL"},
		{FanoutConfig{Topic: "a", Targets: []string{"ws://127.0.0.1:1/"}, Subscribers: -1}, "negative number of subscribers"},
		{FanoutConfig{Topic: "a", Targets: []string{"ws://127.0.0.1:1/"}, PublishRate: -1}, "publish rate"},
		{FanoutConfig{Topic: "a", Targets: []string{"ws://127.0.0.1:1/"}, Subscribers: 100_000, Publishes: 1_000_000}, "a bit per publish per subscriber"},
		{FanoutConfig{Topic: "a", Targets: []string{"ws://127.0.0.1:1/"}, Subscribers: 1 << 30, Publishes: 1}, "file descriptors"},
	} {
		if _, err := RunFanout(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestRunFanout_stillArriving: a node that is behind, still delivering
// when the drain ends, is reported so: what is missing may be late.
func TestRunFanout_stillArriving(t *testing.T) {
	n := &fakeNode{trickle: 40 * time.Millisecond, deliver: func(i, seq int, payload string) []string { return []string{payload} }}
	url := n.serve(t)
	res := mustFanout(t, FanoutConfig{Targets: []string{url}, Subscribers: 4, Publishes: 10, PublishRate: 100, Drain: 600 * time.Millisecond})
	if res.OK || res.DrainComplete || res.StillArriving == 0 || res.Lost == 0 || res.Invalid+res.Duplicated+res.OutOfOrder != 0 {
		t.Fatalf("%+v", res)
	}
	var b strings.Builder
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "with deliveries still arriving") {
		t.Fatalf("table:\n%s", b.String())
	}
}
