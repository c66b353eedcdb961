package engine_test

// Tests of server pushes (push.go): subscriptions over each transport,
// their order against replies, the end of a connection, and slow
// consumers.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// note is a notification of a subscription, as the client reads it.
type note struct {
	Method string `json:"method"`
	Params struct {
		Subscription string          `json:"subscription"`
		Result       json.RawMessage `json:"result"`
	} `json:"params"`
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func decodeNote(t testing.TB, b []byte) note {
	t.Helper()
	var n note
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return n
}

// clockSession drives the demo clock over one transport: subscribe,
// notifications counting up, unsubscribe, then silence.
func clockSession(t *testing.T, tab *handler.Table, send func(string), read func() []byte) {
	send(`{"jsonrpc":"2.0","method":"clock_subscribe","params":[5],"id":1}`)
	reply := decodeNote(t, read())
	var id string
	if err := json.Unmarshal(reply.Result, &id); err != nil || string(reply.ID) != "1" || !strings.HasPrefix(id, "0x") || len(id) != 34 {
		t.Fatalf("subscribe reply: %+v", reply)
	}
	for want := 1; want <= 3; want++ {
		n := decodeNote(t, read())
		if n.Method != "clock_subscription" || n.Params.Subscription != id || string(n.Params.Result) != fmt.Sprint(want) || n.ID != nil {
			t.Fatalf("notification %d: %+v", want, n)
		}
	}
	send(`{"jsonrpc":"2.0","method":"clock_unsubscribe","params":["` + id + `"],"id":2}`)
	for {
		n := decodeNote(t, read())
		if n.Method == "clock_subscription" {
			continue // sent before the unsubscribe arrived
		}
		if string(n.ID) != "2" || string(n.Result) != "true" {
			t.Fatalf("unsubscribe reply: %+v", n)
		}
		break
	}
	if got := tab.Subscriptions("clock"); got != 0 {
		t.Fatalf("%d subscriptions live after unsubscribe", got)
	}
	// A notification queued while the unsubscribe ran may follow its
	// reply, but none may follow the reply to a later request.
	send(`{"jsonrpc":"2.0","method":"clock_unsubscribe","params":["` + id + `"],"id":3}`)
	n := decodeNote(t, read())
	for late := 0; n.Method == "clock_subscription"; late++ {
		if late == 2 {
			t.Fatalf("notifications go on after the unsubscribe reply: %+v", n)
		}
		n = decodeNote(t, read())
	}
	if string(n.ID) != "3" || n.Error == nil {
		t.Fatalf("second unsubscribe: %+v", n)
	}
	send(sentinel)
	if got := read(); !strings.Contains(string(got), "sentinel") {
		t.Fatalf("a notification after the unsubscribe reply: %s", got)
	}
}

func demoTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	return tab
}

// TestPush_clockWS and TestPush_clockStream: the demo subscription over
// WebSocket and over a TCP stream.
func TestPush_clockWS(t *testing.T) {
	tab := demoTable()
	_, tcp, _ := startEngine(t, tab)
	c := dialWS(t, tcp, nil)
	clockSession(t, tab, func(m string) {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}, func() []byte { return wsRead(t, c) })
}

func TestPush_clockStream(t *testing.T) {
	tab := demoTable()
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	clockSession(t, tab, func(m string) { s.send(t, []byte(m)) }, func() []byte { return s.line(t) })
}

// kindsTable registers geth's shape, eth_subscribe with the kinds
// "newHeads" (whose start sends heads 1 to 3 itself) and "topic" (bound
// to a topic of h), and accountSubscribe, accountUnsubscribe and
// accountNotification (SubscriptionMethods), whose start sends one.
func kindsTable(h *topics.Topics) *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.RegisterSubscriptionKinds(tab, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("newHeads", func(_ context.Context, _ struct{}, sub *handler.Subscription) error {
			for i := 1; i <= 3; i++ {
				if err := sub.Notify(i); err != nil {
					return err
				}
			}
			return nil
		}),
		handler.NewSubscriptionKind("topic", func(_ context.Context, p [1]string, sub *handler.Subscription) error {
			return h.Subscribe(sub, p[0])
		}),
	})
	handler.RegisterSubscription(tab, "account", func(_ context.Context, p [1]string, sub *handler.Subscription) error {
		return sub.Notify(p[0])
	}, handler.Inline(), handler.SubscriptionMethods(handler.SubscriptionNames{
		Subscribe: "accountSubscribe", Unsubscribe: "accountUnsubscribe", Notification: "accountNotification",
	}))
	return tab
}

// kindsSession drives kindsTable over one transport: each kind, a
// published topic message, the errors of a bad kind and bad kind
// params, the renamed methods, and the unsubscribes.
func kindsSession(t *testing.T, tab *handler.Table, h *topics.Topics, send func(string), read func() []byte) {
	subscribe := func(method, params string, id int) string {
		t.Helper()
		send(`{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":` + fmt.Sprint(id) + `}`)
		reply := decodeNote(t, read())
		var sid string
		if err := json.Unmarshal(reply.Result, &sid); err != nil || string(reply.ID) != fmt.Sprint(id) || len(sid) != 34 {
			t.Fatalf("%s %s: %+v", method, params, reply)
		}
		return sid
	}
	expect := func(method, sid, result string) {
		t.Helper()
		n := decodeNote(t, read())
		if n.Method != method || n.Params.Subscription != sid || string(n.Params.Result) != result || n.ID != nil {
			t.Fatalf("got %+v, want %s of %s: %s", n, method, sid, result)
		}
	}
	heads := subscribe("eth_subscribe", `["newHeads"]`, 1)
	for i := 1; i <= 3; i++ {
		expect("eth_subscription", heads, fmt.Sprint(i))
	}
	prices := subscribe("eth_subscribe", ` [ "topic" , "prices.ABC" ] `, 2)
	if n, err := h.Publish("prices.ABC", handler.Raw(`{"bid": 101.25}`)); n != 1 || err != nil {
		t.Fatalf("Publish: %d %v", n, err)
	}
	expect("eth_subscription", prices, `{"bid":101.25}`)
	account := subscribe("accountSubscribe", `["7xKX"]`, 3)
	expect("accountNotification", account, `"7xKX"`)
	for _, c := range []struct{ params, want string }{
		{`["syncing"]`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"no \"syncing\" subscription in eth namespace"},"id":4}`},
		{`["topic",5]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: param 2: expected a string"},"id":4}`},
		{`[]`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: kind: missing required param"},"id":4}`},
	} {
		send(`{"jsonrpc":"2.0","method":"eth_subscribe","params":` + c.params + `,"id":4}`)
		if got := strings.TrimSpace(string(read())); got != c.want {
			t.Fatalf("eth_subscribe %s: %s, want %s", c.params, got, c.want)
		}
	}
	if tab.Subscriptions("eth") != 2 || tab.SubscriptionCount() != 3 {
		t.Fatalf("%d eth subscriptions, %d in all", tab.Subscriptions("eth"), tab.SubscriptionCount())
	}
	for i, u := range [][2]string{{"eth_unsubscribe", heads}, {"eth_unsubscribe", prices}, {"accountUnsubscribe", account}} {
		send(`{"jsonrpc":"2.0","method":"` + u[0] + `","params":["` + u[1] + `"],"id":` + fmt.Sprint(10+i) + `}`)
		if got, want := strings.TrimSpace(string(read())), `{"jsonrpc":"2.0","result":true,"id":`+fmt.Sprint(10+i)+`}`; got != want {
			t.Fatalf("%s: %s, want %s", u[0], got, want)
		}
	}
	if tab.SubscriptionCount() != 0 {
		t.Fatalf("%d subscriptions after unsubscribing", tab.SubscriptionCount())
	}
	for deadline := time.Now().Add(5 * time.Second); h.Local("prices.ABC") != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the topic kept its subscriber")
		}
	}
}

// TestPush_kindsWS and TestPush_kindsStream: eth_subscribe with kinds,
// a topic kind and renamed subscription methods, over WebSocket and
// over a TCP stream.
func TestPush_kindsWS(t *testing.T) {
	h := topics.New(nil, quiet())
	tab := kindsTable(h)
	_, tcp, _ := startEngine(t, tab)
	c := dialWS(t, tcp, nil)
	kindsSession(t, tab, h, func(m string) {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}, func() []byte { return wsRead(t, c) })
}

func TestPush_kindsStream(t *testing.T) {
	h := topics.New(nil, quiet())
	tab := kindsTable(h)
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	kindsSession(t, tab, h, func(m string) { s.send(t, []byte(m)) }, func() []byte { return s.line(t) })
}

// TestPush_HTTP: over HTTP a subscribe is refused with geth's error.
func TestPush_HTTP(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	resps := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"clock_subscribe","params":[5],"id":1}`, ""), 1)
	if len(resps) != 1 || bodyOf(resps[0]) != `{"jsonrpc":"2.0","error":{"code":-32601,"message":"notifications not supported"},"id":1}` {
		t.Fatalf("%v", resps)
	}
}

// TestPush_closeEndsSubscriptions: closing the connection ends its
// subscriptions, and Send then fails.
func TestPush_closeEndsSubscriptions(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	conns := make(chan handler.Conn, 1)
	handler.RegisterSubscription(tab, "x", func(ctx context.Context, _ handler.Raw, sub *handler.Subscription) error {
		conns <- sub.Conn()
		return nil
	}, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	for range 3 {
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"x_subscribe","id":1}`))
		s.line(t)
		c := <-conns
		if tab.Subscriptions("x") != 1 {
			t.Fatalf("%d subscriptions", tab.Subscriptions("x"))
		}
		s.c.Close()
		select {
		case <-c.Context().Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the connection's context not done after close")
		}
		deadline := time.Now().Add(10 * time.Second)
		for tab.Subscriptions("x") != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := tab.Subscriptions("x"); n != 0 {
			t.Fatalf("%d subscriptions left after close", n)
		}
		if err := c.Send([]byte(`{}`)); err != handler.ErrConnClosed {
			t.Fatalf("Send after close: %v", err)
		}
	}
}

// TestPush_orderAfterReply: notifications sent by the subscribe method
// itself, inline on the loop or on a worker, reach the client after the
// subscribe reply.
func TestPush_orderAfterReply(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	start := func(_ context.Context, _ handler.Raw, sub *handler.Subscription) error {
		go func() {
			for i := range 5 {
				_ = sub.Notify(i)
			}
		}()
		for i := range 5 {
			if err := sub.Notify(100 + i); err != nil {
				return err
			}
		}
		time.Sleep(20 * time.Millisecond) // let the goroutine race the reply
		return nil
	}
	handler.RegisterSubscription(tab, "inl", start, handler.Inline())
	handler.RegisterSubscription(tab, "blk", start)
	_, tcp, _ := startEngine(t, tab)
	for _, ns := range []string{"inl", "blk"} {
		for round := range 5 {
			c := dialWS(t, tcp, nil)
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"`+ns+`_subscribe","id":1}`)); err != nil {
				t.Fatal(err)
			}
			if first := decodeNote(t, wsRead(t, c)); string(first.ID) != "1" {
				t.Fatalf("%s round %d: first message is not the subscribe reply: %+v", ns, round, first)
			}
			for range 10 {
				if n := decodeNote(t, wsRead(t, c)); n.Method != ns+"_subscription" {
					t.Fatalf("%+v", n)
				}
			}
		}
	}
}

// blockingResult is a notification result whose encoding (done under the
// subscription's lock) waits for release.
type blockingResult struct {
	inside  chan struct{}
	release chan struct{}
}

func (b blockingResult) AppendJSON(dst []byte) ([]byte, error) {
	close(b.inside)
	<-b.release
	return append(dst, `"late"`...), nil
}

// TestPush_notificationBeforeLaterReply: a notification queued while
// an unsubscribe runs goes out before the reply to a later request of the
// same read.
//
// It went out after that reply: pushes were only written at the start of the next pass (found in a review).
func TestPush_notificationBeforeLaterReply(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	subs := make(chan *handler.Subscription, 1)
	handler.RegisterSubscription(tab, "t", func(_ context.Context, _ []int, s *handler.Subscription) error {
		subs <- s
		return nil
	})
	_, tcp, _ := startEngine(t, tab)
	c, r := rawWS(t, tcp)
	if _, err := c.Write(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"t_subscribe","params":[],"id":1}`), true)); err != nil {
		t.Fatal(err)
	}
	_, p, err := readFrame(r, c)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Result string }
	if err := json.Unmarshal(p, &rep); err != nil {
		t.Fatal(err)
	}
	sub := <-subs
	b := blockingResult{make(chan struct{}), make(chan struct{})}
	go func() { _ = sub.Notify(b) }()
	<-b.inside // the notifier holds the subscription's lock
	// The unsubscribe, then a later request, in one write.
	var w []byte
	w = append(w, frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"t_unsubscribe","params":["`+rep.Result+`"],"id":2}`), true)...)
	w = append(w, frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}`), true)...)
	if _, err := c.Write(w); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the loop waits in the unsubscribe for the lock
	close(b.release)
	var got []note
	for range 3 {
		_, p, err := readFrame(r, c)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, decodeNote(t, p))
	}
	if string(got[0].ID) != "2" || got[1].Method != "t_subscription" || string(got[2].ID) != "3" {
		t.Fatalf("want the unsubscribe reply, the late notification, then the later reply: %+v", got)
	}
}

// TestPush_slowSubscriber: one subscriber stops reading while the server
// floods it; it is disconnected, the server's heap stays bounded, and
// another subscriber goes on receiving all along.
func TestPush_slowSubscriber(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	payload := strings.Repeat("x", 1000)
	var refused atomic.Int64
	handler.RegisterSubscription(tab, "flood", func(_ context.Context, _ handler.Raw, sub *handler.Subscription) error {
		go func() {
			for sub.Context().Err() == nil {
				if err := sub.Notify(payload); err != nil {
					if err == handler.ErrSlowConsumer {
						refused.Add(1)
					}
					return
				}
				runtime.Gosched()
			}
		}()
		return nil
	}, handler.Inline())
	demo.Register(tab)
	_, tcp, _ := startEngine(t, tab, engine.WithMaxPendingOutput(256<<10), engine.WithMaxPushQueue(1<<20))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc

	slow, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte(`{"jsonrpc":"2.0","method":"flood_subscribe","id":1}` + "\n")); err != nil {
		t.Fatal(err)
	}
	// The healthy one: a clock every 5 ms, read all along.
	good := dialWS(t, tcp, nil)
	if err := good.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"clock_subscribe","params":[5],"id":1}`)); err != nil {
		t.Fatal(err)
	}
	wsRead(t, good)
	var maxHeap uint64
	deadline := time.Now().Add(30 * time.Second)
	got := 0
	for refused.Load() == 0 || got < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d notifications to the good client, slow one refused %d times", got, refused.Load())
		}
		if n := decodeNote(t, wsRead(t, good)); n.Method != "clock_subscription" {
			t.Fatalf("%+v", n)
		}
		got++
		if got%10 == 0 {
			runtime.GC() // the live heap, not garbage waiting for collection
			runtime.ReadMemStats(&ms)
			maxHeap = max(maxHeap, ms.HeapAlloc)
		}
	}
	if !waitClosed(slow, 10*time.Second) {
		t.Fatal("the slow subscriber was not disconnected")
	}
	// Bounded: MaxPushQueue for the slow one (its unsent output and its
	// queue together) and pooled buffers; far below what the flood would
	// have queued (it runs unbounded until refused).
	if grew := int64(maxHeap) - int64(base); grew > 16<<20 {
		t.Fatalf("the live heap grew by %d MiB", grew>>20)
	}
	t.Logf("live heap grew by at most %d KiB; the good client got %d notifications; the flood was refused %d times",
		(int64(maxHeap)-int64(base))>>10, got, refused.Load())
}

// TestPush_slowConsumerDuringClose: Send hitting the slow-consumer limit
// while its connection closes fails cleanly (ErrSlowConsumer or
// ErrConnClosed), without a data race.
//
// Send's slow-consumer branch read the gnet connection's address off the loop as the loop released it (found in a review).
func TestPush_slowConsumerDuringClose(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	conns := make(chan handler.Conn, 1)
	handler.Register(tab, "hold", func(ctx context.Context, _ []int) (int, error) {
		conns <- handler.ConnFrom(ctx)
		<-ctx.Done()
		return 0, nil
	})
	_, tcp, _ := startEngine(t, tab, engine.WithMaxPushQueue(4096))
	msg := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	for i := range 300 {
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(`{"jsonrpc":"2.0","method":"hold","params":[],"id":1}` + "\n"))
		hc := <-conns
		for range 3 {
			if err := hc.Send(msg); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				if err := hc.Send(msg); err != nil {
					if !errors.Is(err, handler.ErrSlowConsumer) && !errors.Is(err, handler.ErrConnClosed) {
						t.Error(err)
					}
					return
				}
			}
		}()
		if i%2 == 0 {
			time.Sleep(time.Duration(i%7) * time.Microsecond)
		}
		c.Close()
		<-done
	}
}

// TestPush_slowConsumerBound: a subscriber that never reads is
// disconnected once its unsent output and its queued server messages
// together pass MaxPushQueue — holding no more than that and one message
// on the way — while one that reads a steady flood all along is not.
//
// A subscriber that did not read first filled MaxPendingOutput of unsent output, and only then its MaxPushQueue: 4 MiB more than the bound documented (issue 22).
func TestPush_slowConsumerBound(t *testing.T) {
	for _, transport := range []string{"stream", "ws"} {
		t.Run(transport, func(t *testing.T) { testSlowConsumerBound(t, transport == "ws") })
	}
}

// pacedNote is a notification of the paced subscription: Seq counts up,
// -1 ends.
type pacedNote struct {
	Seq int    `json:"seq"`
	Pad string `json:"pad"`
}

func testSlowConsumerBound(t *testing.T, ws bool) {
	const bound = 256 << 10
	pad := strings.Repeat("x", 1000)
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var refused, accepted atomic.Int64
	// paced: params[0] notifications of about 1 KB a millisecond, until
	// stop (then a last one, Seq -1) or until refused.
	stop := make(chan struct{})
	pacedErr := make(chan error, 2)
	handler.RegisterSubscription(tab, "paced", func(_ context.Context, p []int, sub *handler.Subscription) error {
		go func() {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for seq := 0; ; {
				select {
				case <-stop:
					pacedErr <- sub.Notify(pacedNote{Seq: -1})
					return
				case <-tick.C:
				}
				for range p[0] {
					if err := sub.Notify(pacedNote{seq, pad}); err != nil {
						if err == handler.ErrSlowConsumer {
							refused.Add(1)
						} else {
							pacedErr <- err
						}
						return
					}
					accepted.Add(1)
					seq++
				}
			}
		}()
		return nil
	}, handler.Inline())
	e, tcp, _ := startEngine(t, tab, engine.WithMaxPushQueue(bound))

	// The reader: reads every notification, in order, until the last.
	readerMsgs := make(chan []byte, 64)
	var readErr atomic.Value
	subscribe := `{"jsonrpc":"2.0","method":"paced_subscribe","params":[2],"id":1}`
	if ws {
		c := dialWS(t, tcp, nil)
		if err := c.WriteMessage(websocket.TextMessage, []byte(subscribe)); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(readerMsgs)
			for {
				_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, m, err := c.ReadMessage()
				if err != nil {
					readErr.Store(err)
					return
				}
				readerMsgs <- m
			}
		}()
	} else {
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(subscribe))
		go func() {
			defer close(readerMsgs)
			for {
				_ = s.c.SetReadDeadline(time.Now().Add(30 * time.Second))
				m, err := s.r.ReadBytes('\n')
				if err != nil {
					readErr.Store(err)
					return
				}
				readerMsgs <- m
			}
		}()
	}
	if n := decodeNote(t, <-readerMsgs); string(n.ID) != "1" {
		t.Fatalf("the subscribe reply: %+v", n)
	}
	got := make(chan int, 1)
	maxMsg := 0
	go func() {
		want := 0
		for m := range readerMsgs {
			maxMsg = max(maxMsg, len(m))
			var n struct {
				Params struct{ Result pacedNote }
			}
			if err := json.Unmarshal(m, &n); err != nil || n.Params.Result.Seq != want && n.Params.Result.Seq != -1 {
				t.Errorf("notification %d: %s (%v)", want, m, err)
				break
			}
			if n.Params.Result.Seq == -1 {
				break
			}
			want++
		}
		got <- want
	}()

	// The subscriber that never reads, with a small kernel receive buffer,
	// of a steady flood the loop keeps up with: its unsent output grows.
	flood := `{"jsonrpc":"2.0","method":"paced_subscribe","params":[8],"id":1}`
	var slow net.Conn
	if ws {
		d := &websocket.Dialer{NetDialContext: smallReceiveBuffer().DialContext, HandshakeTimeout: 10 * time.Second}
		c := dialWS(t, tcp, d)
		if err := c.WriteMessage(websocket.TextMessage, []byte(flood)); err != nil {
			t.Fatal(err)
		}
		slow = c.NetConn()
	} else {
		c, err := smallReceiveBuffer().Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(flood + "\n")); err != nil {
			t.Fatal(err)
		}
		slow = c
	}
	deadline := time.Now().Add(30 * time.Second)
	for refused.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the flood is not refused: %d notifications taken, %+v", accepted.Load(), e.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !waitClosed(slow, 10*time.Second) {
		t.Fatal("the subscriber that does not read was not disconnected")
	}
	time.Sleep(200 * time.Millisecond) // the reader goes on meanwhile
	close(stop)
	var n int
	select {
	case n = <-got:
	case <-time.After(30 * time.Second):
		t.Fatalf("the reader did not get the last notification: %v", readErr.Load())
	}
	if err := <-pacedErr; err != nil {
		t.Fatalf("the reader's subscription: %v", err)
	}
	accepted.Add(-int64(n)) // the flood's alone
	st := e.Stats()
	t.Logf("the flood was taken %d notifications (%d KiB, the kernel's buffers included) before it was refused; the reader got %d; the most one connection held: %d KiB (bound %d KiB)",
		accepted.Load(), accepted.Load()*int64(maxMsg)>>10, n, st.ConnOutputPeak>>10, bound>>10)
	if st.Closed.PushQueue != 1 {
		t.Errorf("%d connections closed for their push queue, want 1 (the one that does not read)", st.Closed.PushQueue)
	}
	if st.ConnOutputPeak > int64(bound+maxMsg) {
		t.Errorf("a connection held %d bytes, over the bound of %d and one message (%d)", st.ConnOutputPeak, bound, maxMsg)
	}
}

// TestPush_methodMessagesBeforeItsReply: the messages a method sends
// through its context's Conn while it runs reach the client before its
// reply, over WebSocket and streams, with or without cancellable calls,
// in a batch too, and without waiting for an earlier call still running;
// a subscription made by hand through handler.Connection still has its
// first notification after its subscribe reply.
//
// They came after the reply: a push waited for every message on a worker, the sender's own call among them.
func TestPush_methodMessagesBeforeItsReply(t *testing.T) {
	for _, cancel := range []bool{false, true} {
		var opts []handler.Option
		if cancel {
			opts = append(opts, handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
		}
		tab := handler.NewTable(append(opts, handler.WithLogger(quiet()))...)
		demo.Register(tab)
		handler.Register(tab, "handmade_subscribe", func(ctx context.Context, _ []int) (string, error) {
			c := handler.Connection(handler.ConnFrom(ctx))
			sent := make(chan struct{})
			go func() {
				_ = handler.Notify(c, "handmade_subscription", map[string]string{"subscription": "sub", "result": "first"})
				close(sent)
			}()
			<-sent // queued before the method returns
			return "sub", nil
		})
		_, tcp, _ := startEngine(t, tab)
		for name, tr := range wsAndStream(t, tcp) {
			for round := range 3 {
				where := fmt.Sprintf("%s cancel=%v round %d", name, cancel, round)
				// A call still running before it holds none of them.
				tr.send(`{"jsonrpc":"2.0","method":"sleep","params":{"ms":300},"id":"slow"}`)
				tr.send(`{"jsonrpc":"2.0","method":"countdown","params":{"from":5,"interval_ms":0},"id":1}`)
				for left := 4; left >= 0; left-- {
					b := tr.read()
					var n struct {
						Method string
						Params struct{ Left *int }
					}
					if err := json.Unmarshal(b, &n); err != nil || n.Method != "countdown_progress" || n.Params.Left == nil || *n.Params.Left != left {
						t.Fatalf("%s: want countdown_progress left %d, got %s", where, left, b)
					}
				}
				if r := decodeNote(t, tr.read()); string(r.ID) != "1" || string(r.Result) != `"done"` {
					t.Fatalf("%s: want the countdown's reply after its progress, got %+v", where, r)
				}
				if r := decodeNote(t, tr.read()); string(r.ID) != `"slow"` {
					t.Fatalf("%s: want the sleep's reply, got %+v", where, r)
				}
				// A batch: its elements' messages, then its replies.
				tr.send(`[{"jsonrpc":"2.0","method":"countdown","params":{"from":2,"interval_ms":0},"id":2},{"jsonrpc":"2.0","method":"countdown","params":{"from":3,"interval_ms":0},"id":3}]`)
				for range 5 {
					if n := decodeNote(t, tr.read()); n.Method != "countdown_progress" {
						t.Fatalf("%s: batch: want countdown_progress, got %+v", where, n)
					}
				}
				var replies []note
				if err := json.Unmarshal(tr.read(), &replies); err != nil || len(replies) != 2 {
					t.Fatalf("%s: batch: want the array of 2 replies last: %v %+v", where, err, replies)
				}
				// Through the connection's Conn: after the reply.
				tr.send(`{"jsonrpc":"2.0","method":"handmade_subscribe","params":[],"id":4}`)
				if r := decodeNote(t, tr.read()); string(r.ID) != "4" {
					t.Fatalf("%s: want the subscribe reply first, got %+v", where, r)
				}
				if n := decodeNote(t, tr.read()); n.Method != "handmade_subscription" {
					t.Fatalf("%s: want the notification after the reply, got %+v", where, n)
				}
			}
		}
	}
}

// TestPush_methodMessagesBeforeItsReplyPastPendingOutput: a method's
// messages precede its reply even when the client reads them slower than
// they come, past MaxPendingOutput (they are bounded by MaxPushQueue).
//
// The reply overtook the last of 1,000 notifications when the unsent output passed the limit (found by bench/peers/cmd/notifyload).
func TestPush_methodMessagesBeforeItsReplyPastPendingOutput(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	_, tcp, _ := startEngine(t, tab, engine.WithMaxPendingOutput(2<<10))
	for name, tr := range wsAndStream(t, tcp) {
		for round := range 3 {
			tr.send(`{"jsonrpc":"2.0","method":"countdown","params":{"from":1000,"interval_ms":0},"id":7}`)
			time.Sleep(20 * time.Millisecond) // the client reads late: the output piles up
			for i := range 1000 {
				if n := decodeNote(t, tr.read()); n.Method != "countdown_progress" {
					t.Fatalf("%s round %d: message %d is not a notification: %+v", name, round, i, n)
				}
			}
			if r := decodeNote(t, tr.read()); string(r.ID) != "7" {
				t.Fatalf("%s round %d: want the reply after 1,000 notifications, got %+v", name, round, r)
			}
		}
	}
}
