package topics

// White-box tests of Topics (topics.go) and MemoryBus: fan-out to
// local subscriptions, the broker subscription of each topic (one per
// node, dropped after the last subscriber), two nodes on a MemoryBus, a
// failing or panicking broker, slow consumers, races between a topic's
// drop and a new subscriber, and the allocations of a delivery.
// White-box to call fanOut on a topic made by hand and to read the
// topic map; the fake connection stands in for the engine's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
)

// tpConn is a Conn that can push and records what it is sent. With
// refuse set, Send returns it instead; handler.ErrSlowConsumer also closes the
// connection, as the engine does.
type tpConn struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	sent   []string       // guarded by mu
	refuse error          // guarded by mu
	tally  map[string]int // when not nil, Send counts by subscription id instead of keeping; guarded by mu
}

func newTPConn() *tpConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &tpConn{ctx: ctx, cancel: cancel}
}

func (c *tpConn) Send(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse != nil {
		if c.refuse == handler.ErrSlowConsumer {
			c.cancel()
		}
		return c.refuse
	}
	if c.tally != nil {
		c.tally[tpSubID(msg)]++
		return nil
	}
	c.sent = append(c.sent, string(msg))
	return nil
}

// tpSubID returns the subscription id of a topic notification, or the
// whole message if it is not one.
func tpSubID(msg []byte) string {
	const head = `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"`
	m := string(msg)
	if !strings.HasPrefix(m, head) || len(m) < len(head)+45 || m[len(head)+34:len(head)+45] != `","result":` {
		return m
	}
	return m[len(head) : len(head)+34]
}

func (c *tpConn) CanPush() bool            { return true }
func (c *tpConn) Context() context.Context { return c.ctx }

func (c *tpConn) setRefuse(err error) {
	c.mu.Lock()
	c.refuse = err
	c.mu.Unlock()
}

// messages returns what c has been sent, and forgets it.
func (c *tpConn) messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.sent
	c.sent = nil
	return out
}

// call dispatches one request on tab as a request of c.
func (c *tpConn) call(tab *handler.Table, method, params string, id int) string {
	msg := `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":` + fmt.Sprint(id) + `}`
	return string(tab.Dispatch(handler.ContextWithConn(c.ctx, c), nil, []byte(msg)))
}

// subscribe calls topic_subscribe [name] and returns the subscription id.
func (c *tpConn) subscribe(t testing.TB, tab *handler.Table, name string) string {
	t.Helper()
	reply := c.call(tab, "topic_subscribe", `["`+name+`"]`, 1)
	var r struct{ Result string }
	if err := json.Unmarshal([]byte(reply), &r); err != nil || len(r.Result) != 34 {
		t.Fatalf("topic_subscribe %q: %s", name, reply)
	}
	if want := `{"jsonrpc":"2.0","result":"` + r.Result + `","id":1}`; reply != want {
		t.Fatalf("topic_subscribe %q: %s, want %s", name, reply, want)
	}
	return r.Result
}

// unsubscribe calls topic_unsubscribe [id]; the subscription leaves its
// topics on its own goroutine (context.AfterFunc).
func (c *tpConn) unsubscribe(t testing.TB, tab *handler.Table, id string) {
	t.Helper()
	if got := c.call(tab, "topic_unsubscribe", `["`+id+`"]`, 2); got != `{"jsonrpc":"2.0","result":true,"id":2}` {
		t.Fatalf("topic_unsubscribe %s: %s", id, got)
	}
}

// tpNode returns a table serving topic_subscribe and topic_unsubscribe
// over the topics of one node on b (nil: a single node).
func tpNode(t testing.TB, b Broker) (*handler.Table, *Topics) {
	t.Helper()
	tab := handler.NewTable(handler.WithLogger(rvLogger()))
	h := New(b, rvLogger())
	Register(tab, "topic", h)
	return tab, h
}

// tpNote is the notification of subscription id for a message.
func tpNote(id, message string) string {
	return `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"` + id + `","result":` + message + `}}`
}

func tpSame(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s got:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// tpBroker wraps a Broker: it counts subscriptions and stops, can refuse
// or panic in Subscribe, and calls onStop as a stop begins.
type tpBroker struct {
	Broker
	subscribes, stops, doubleStops atomic.Int64

	mu     sync.Mutex
	fail   error          // Subscribe's answer while set; guarded by mu
	panics bool           // Subscribe panics while set; guarded by mu
	onSub  func()         // called by Subscribe before it answers; guarded by mu
	onStop func(string)   // called as a stop begins; guarded by mu
	live   map[string]int // broker subscriptions by topic; guarded by mu
}

func (b *tpBroker) set(fn func(b *tpBroker)) {
	b.mu.Lock()
	fn(b)
	b.mu.Unlock()
}

func (b *tpBroker) Subscribe(topic string, deliver func([]byte)) (func(), error) {
	b.subscribes.Add(1)
	b.mu.Lock()
	fail, panics, onSub := b.fail, b.panics, b.onSub
	b.mu.Unlock()
	if onSub != nil {
		onSub()
	}
	if panics {
		panic("tpBroker: Subscribe panics")
	}
	if fail != nil {
		return nil, fail
	}
	stop, err := b.Broker.Subscribe(topic, deliver)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.live == nil {
		b.live = map[string]int{}
	}
	b.live[topic]++
	b.mu.Unlock()
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			b.doubleStops.Add(1)
			return
		}
		b.mu.Lock()
		onStop := b.onStop
		b.mu.Unlock()
		if onStop != nil {
			onStop(topic)
		}
		stop()
		b.mu.Lock()
		if b.live[topic]--; b.live[topic] == 0 {
			delete(b.live, topic)
		}
		b.mu.Unlock()
		b.stops.Add(1)
	}, nil
}

// liveSubs returns the broker subscriptions made and not stopped.
func (b *tpBroker) liveSubs() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, k := range b.live {
		n += k
	}
	return n
}

// Subscriptions made through Dispatch receive each message published on
// their topic once, as the exact notification, and Publish counts them.
func TestTopics_publishReachesEachSubscriptionOnce(t *testing.T) {
	tab, h := tpNode(t, nil)
	a, b := newTPConn(), newTPConn()
	a1 := a.subscribe(t, tab, "news.eu")
	a2 := a.subscribe(t, tab, "news.eu")
	b1 := b.subscribe(t, tab, "news.eu")
	bs := b.subscribe(t, tab, "sport")
	if h.Local("news.eu") != 3 || h.Local("sport") != 1 || h.Local("other") != 0 {
		t.Fatalf("Local: %d %d %d", h.Local("news.eu"), h.Local("sport"), h.Local("other"))
	}

	n, err := h.Publish("news.eu", handler.Raw(" {\"a\" : [1, \"x y\"]}\n"))
	if n != 3 || err != nil {
		t.Fatalf("Publish: %d %v, want 3 <nil>", n, err)
	}
	msg := `{"a":[1,"x y"]}` // compacted, as AppendJSON does
	tpSame(t, "a", a.messages(), tpNote(a1, msg), tpNote(a2, msg))
	tpSame(t, "b", b.messages(), tpNote(b1, msg))

	if n, err := h.Publish("sport", 7); n != 1 || err != nil {
		t.Fatalf("Publish sport: %d %v", n, err)
	}
	tpSame(t, "a", a.messages())
	tpSame(t, "b", b.messages(), tpNote(bs, "7"))
	if n, err := h.Publish("nobody", "x"); n != 0 || err != nil {
		t.Fatalf("Publish to no subscriber: %d %v", n, err)
	}
	want := Stats{Topics: 2, Subscribers: 4, Published: 3, Delivered: 4}
	if s := h.Stats(); s != want {
		t.Fatalf("Stats %+v, want %+v", s, want)
	}
}

// A name Valid refuses is answered -32602, by topic_subscribe (which
// then holds no subscription slot) and by Publish.
func TestTopics_invalidTopic(t *testing.T) {
	tab, h := tpNode(t, nil)
	c := newTPConn()
	want := `{"jsonrpc":"2.0","error":{"code":-32602,"message":"` + ErrInvalidTopic.Message + `"},"id":1}`
	for _, name := range []string{`""`, `"a..b"`, `"a.*"`, `"x y"`, `"` + strings.Repeat("a", MaxLen+1) + `"`} {
		if got := c.call(tab, "topic_subscribe", "["+name+"]", 1); got != want {
			t.Errorf("subscribe %s: %s, want %s", name, got, want)
		}
		if n, err := h.Publish(strings.Trim(name, `"`), 1); n != 0 || err != ErrInvalidTopic {
			t.Errorf("Publish %s: %d %v", name, n, err)
		}
	}
	if got := c.call(tab, "topic_subscribe", "[1]", 1); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("subscribe [1]: %s", got)
	}
	if n := tab.Subscriptions("topic"); n != 0 {
		t.Fatalf("%d subscription slot(s) held by refused subscribes", n)
	}
	if s := h.Stats(); s != (Stats{}) {
		t.Fatalf("Stats %+v after refusals", s)
	}
	tpSame(t, "sent", c.messages())
}

// A payload AppendJSON cannot encode is Publish's error, and is delivered
// to nobody, here or through the broker.
func TestTopics_publishInvalidPayloadDeliversNothing(t *testing.T) {
	bus := NewMemoryBus()
	tabA, hA := tpNode(t, bus.Node())
	tabB, _ := tpNode(t, bus.Node())
	a, b := newTPConn(), newTPConn()
	a.subscribe(t, tabA, "t")
	b.subscribe(t, tabB, "t")
	for _, p := range []any{handler.Raw(`{"a":`), handler.Raw(`[1]x`), json.RawMessage(`nul`), make(chan int)} {
		if n, err := hA.Publish("t", p); n != 0 || err == nil {
			t.Errorf("Publish(%v): %d %v, want an error", p, n, err)
		}
	}
	for _, p := range []string{`{"a":`, `[1]x`, `nul`, "\"\xff\""} {
		if n, err := hA.PublishRaw("t", []byte(p)); n != 0 || err == nil {
			t.Errorf("PublishRaw(%q): %d %v, want an error", p, n, err)
		}
	}
	tpSame(t, "a", a.messages())
	tpSame(t, "b", b.messages())
	if s := hA.Stats(); s.Published != 0 || s.Delivered != 0 || s.Dropped != 0 {
		t.Fatalf("Stats %+v", s)
	}
}

// Unsubscribing, and closing the connection, take subscriptions out of
// their topic; after the last, the topic is dropped and its broker
// subscription stopped, once.
func TestTopics_unsubscribeAndCloseRemove(t *testing.T) {
	bus := NewMemoryBus()
	br := &tpBroker{Broker: bus.Node()}
	tab, h := tpNode(t, br)
	a, b := newTPConn(), newTPConn()
	a1 := a.subscribe(t, tab, "t")
	a.subscribe(t, tab, "t")
	b1 := b.subscribe(t, tab, "t")

	a.unsubscribe(t, tab, a1)
	rvWait(t, func() bool { return h.Local("t") == 2 })
	if n, _ := h.Publish("t", 1); n != 2 {
		t.Fatalf("Publish after an unsubscribe: %d deliveries, want 2", n)
	}
	if len(a.messages()) != 1 || len(b.messages()) != 1 {
		t.Fatal("a message reached an unsubscribed subscription")
	}

	a.cancel() // the connection closes
	rvWait(t, func() bool { return h.Local("t") == 1 })
	if br.stops.Load() != 0 || bus.Subscriptions("t") != 1 {
		t.Fatalf("the broker subscription was stopped with a subscriber left (stops %d, bus %d)", br.stops.Load(), bus.Subscriptions("t"))
	}

	b.unsubscribe(t, tab, b1)
	rvWait(t, func() bool { return br.stops.Load() == 1 })
	if s := h.Stats(); s.Topics != 0 || s.Subscribers != 0 || bus.Subscriptions("t") != 0 || tab.Subscriptions("topic") != 0 {
		t.Fatalf("after the last subscriber: %+v, bus %d, slots %d", s, bus.Subscriptions("t"), tab.Subscriptions("topic"))
	}
	if n, _ := h.Publish("t", 2); n != 0 {
		t.Fatalf("Publish to a dropped topic: %d deliveries", n)
	}

	// A second round makes a second broker subscription, stopped once.
	c := newTPConn()
	c.subscribe(t, tab, "t")
	c.cancel()
	rvWait(t, func() bool { return br.stops.Load() == 2 })
	if br.subscribes.Load() != 2 || br.doubleStops.Load() != 0 || br.liveSubs() != 0 {
		t.Fatalf("subscribes %d, stops %d, stopped twice %d, live %d", br.subscribes.Load(), br.stops.Load(), br.doubleStops.Load(), br.liveSubs())
	}
}

// A node holds one broker subscription per topic, however many local
// subscribers it has.
func TestTopics_oneBrokerSubscriptionPerTopicPerNode(t *testing.T) {
	bus := NewMemoryBus()
	brA := &tpBroker{Broker: bus.Node()}
	tabA, hA := tpNode(t, brA)
	tabB, _ := tpNode(t, bus.Node())
	var conns []*tpConn
	for range 3 {
		c := newTPConn()
		conns = append(conns, c)
		for range 4 {
			c.subscribe(t, tabA, "t")
		}
		c.subscribe(t, tabA, "u")
	}
	if got := bus.Subscriptions("t"); got != 1 || bus.Subscriptions("u") != 1 || brA.subscribes.Load() != 2 {
		t.Fatalf("bus t %d, u %d, broker Subscribe calls %d; want 1 1 2", got, bus.Subscriptions("u"), brA.subscribes.Load())
	}
	if s := hA.Stats(); s.Topics != 2 || s.Subscribers != 15 {
		t.Fatalf("Stats %+v", s)
	}
	cb := newTPConn()
	conns = append(conns, cb)
	for range 5 {
		cb.subscribe(t, tabB, "t")
	}
	if got := bus.Subscriptions("t"); got != 2 {
		t.Fatalf("two nodes on t: %d bus subscriptions, want 2", got)
	}
	for _, c := range conns {
		c.cancel()
	}
	rvWait(t, func() bool { return bus.Subscriptions("t") == 0 && bus.Subscriptions("u") == 0 })
	if brA.stops.Load() != 2 || brA.doubleStops.Load() != 0 {
		t.Fatalf("stops %d, twice %d", brA.stops.Load(), brA.doubleStops.Load())
	}
}

// With two nodes on a bus, a message published on one reaches every
// subscription of both, once: the publishing node delivers its own, and
// the bus does not echo it back. A message from the bus that is not one
// JSON value is dropped and counted.
func TestTopics_twoNodesDeliverOnce(t *testing.T) {
	bus := NewMemoryBus()
	tabA, hA := tpNode(t, bus.Node())
	tabB, hB := tpNode(t, bus.Node())
	a, b := newTPConn(), newTPConn()
	a1 := a.subscribe(t, tabA, "t")
	a2 := a.subscribe(t, tabA, "t")
	b1 := b.subscribe(t, tabB, "t")

	if n, err := hA.Publish("t", handler.Raw(`{"n":1}`)); n != 2 || err != nil {
		t.Fatalf("Publish on A: %d %v, want 2 (A's own)", n, err)
	}
	tpSame(t, "A", a.messages(), tpNote(a1, `{"n":1}`), tpNote(a2, `{"n":1}`))
	tpSame(t, "B", b.messages(), tpNote(b1, `{"n":1}`))
	if n, err := hB.Publish("t", "two"); n != 1 || err != nil {
		t.Fatalf("Publish on B: %d %v, want 1", n, err)
	}
	tpSame(t, "A", a.messages(), tpNote(a1, `"two"`), tpNote(a2, `"two"`))
	tpSame(t, "B", b.messages(), tpNote(b1, `"two"`))

	other := bus.Node() // a publisher that is not a jetrpc node
	for _, bad := range []string{`{"n":`, ``, `1 2`, "\"\xff\""} {
		if err := other.Publish("t", []byte(bad)); err != nil {
			t.Fatal(err)
		}
	}
	tpSame(t, "A", a.messages())
	tpSame(t, "B", b.messages())
	wantA := Stats{Topics: 1, Subscribers: 2, Published: 1, Received: 5, Invalid: 4, Delivered: 4}
	wantB := Stats{Topics: 1, Subscribers: 1, Published: 1, Received: 5, Invalid: 4, Delivered: 2}
	if sa, sb := hA.Stats(), hB.Stats(); sa != wantA || sb != wantB {
		t.Fatalf("Stats\nA %+v, want %+v\nB %+v, want %+v", sa, wantA, sb, wantB)
	}
}

// Regression from a review of topics: receive sent a broker's payload verbatim, so a foreign publisher's newlines broke stream framing.
//
// A broker's message is sent compact, as Publish sends its own: a
// message of a stream connection is one line.
func TestTopics_brokerMessageIsCompacted(t *testing.T) {
	bus := NewMemoryBus()
	tab, _ := tpNode(t, bus.Node())
	c := newTPConn()
	id := c.subscribe(t, tab, "t")
	if err := bus.Node().Publish("t", []byte("{\n  \"a\": [1, \"x y\\n\"]\r\n}\n")); err != nil {
		t.Fatal(err)
	}
	tpSame(t, "sent", c.messages(), tpNote(id, `{"a":[1,"x y\n"]}`))
}

// A broker that refuses a subscription: the subscribe call is answered
// an error, nothing stays bound (for the subscribers that waited on the
// same topic too), and a later subscribe asks the broker again.
func TestTopics_brokerSubscribeFails(t *testing.T) {
	bus := NewMemoryBus()
	br := &tpBroker{Broker: bus.Node()}
	br.fail = errors.New("broker down")
	tab, h := tpNode(t, br)
	c := newTPConn()
	want := `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}`
	if got := c.call(tab, "topic_subscribe", `["t"]`, 1); got != want {
		t.Fatalf("subscribe with the broker down: %s, want %s", got, want)
	}
	check := func(when string) {
		t.Helper()
		if s := h.Stats(); s.Topics != 0 || s.Subscribers != 0 || tab.Subscriptions("topic") != 0 || bus.Subscriptions("t") != 0 {
			t.Fatalf("%s: %+v, %d slots, %d bus subscriptions", when, s, tab.Subscriptions("topic"), bus.Subscriptions("t"))
		}
		if n, _ := h.Publish("t", 1); n != 0 {
			t.Fatalf("%s: Publish delivered %d", when, n)
		}
		tpSame(t, when, c.messages())
	}
	check("after a refusal")

	// A subscriber that arrives while the first waits for the broker
	// shares its fate.
	entered, release := make(chan struct{}), make(chan struct{})
	br.set(func(b *tpBroker) {
		b.onSub = func() { entered <- struct{}{}; <-release }
	})
	replies := make(chan string, 2)
	go func() { replies <- c.call(tab, "topic_subscribe", `["t"]`, 1) }()
	<-entered
	br.set(func(b *tpBroker) { b.onSub = nil })
	d := newTPConn()
	go func() { replies <- d.call(tab, "topic_subscribe", `["t"]`, 1) }()
	rvWait(t, func() bool { return h.Local("t") == 2 }) // both bound, the second waiting
	close(release)
	for range 2 {
		if got := <-replies; got != want {
			t.Fatalf("subscribe while the broker refuses: %s, want %s", got, want)
		}
	}
	check("after a shared refusal")
	if n := br.subscribes.Load(); n != 2 {
		t.Fatalf("%d broker Subscribe calls, want 2 (one per attempt, not per subscriber)", n)
	}

	br.set(func(b *tpBroker) { b.fail = nil })
	id := c.subscribe(t, tab, "t")
	if n := br.subscribes.Load(); n != 3 || bus.Subscriptions("t") != 1 {
		t.Fatalf("the retry: %d Subscribe calls, %d bus subscriptions", n, bus.Subscriptions("t"))
	}
	if err := bus.Node().Publish("t", []byte(`5`)); err != nil {
		t.Fatal(err)
	}
	tpSame(t, "after the retry", c.messages(), tpNote(id, "5"))
}

// Regression from a review of topics: a panicking broker Subscribe left ready open and its subscriber bound, so the next subscribe hung.
//
// A broker whose Subscribe panics: the call is answered -32603 and the
// topic is not left half made, so that the next subscriber to it does
// not wait forever for the broker's answer.
func TestTopics_brokerSubscribePanics(t *testing.T) {
	bus := NewMemoryBus()
	br := &tpBroker{Broker: bus.Node()}
	br.panics = true
	tab, h := tpNode(t, br)
	c := newTPConn()
	if got := c.call(tab, "topic_subscribe", `["t"]`, 1); !strings.Contains(got, `"code":-32603`) {
		t.Fatalf("subscribe with a panicking broker: %s", got)
	}
	if s := h.Stats(); s.Topics != 0 || s.Subscribers != 0 || tab.Subscriptions("topic") != 0 {
		t.Fatalf("after the panic: %+v, %d slots", s, tab.Subscriptions("topic"))
	}
	br.set(func(b *tpBroker) { b.panics = false })
	done := make(chan string, 1)
	go func() { done <- c.call(tab, "topic_subscribe", `["t"]`, 2) }()
	select {
	case got := <-done:
		if !strings.Contains(got, `"result":"0x`) {
			t.Fatalf("subscribe after the panic: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a subscribe after the broker panicked is stuck waiting for the topic")
	}
	if bus.Subscriptions("t") != 1 || h.Local("t") != 1 {
		t.Fatalf("bus %d, local %d", bus.Subscriptions("t"), h.Local("t"))
	}
}

// A subscriber whose connection is too slow does not stop the delivery
// to the others; its refusal is counted as dropped.
func TestTopics_slowConsumerDoesNotStopOthers(t *testing.T) {
	bus := NewMemoryBus()
	tab, h := tpNode(t, bus.Node())
	a, slow, b := newTPConn(), newTPConn(), newTPConn()
	ia := a.subscribe(t, tab, "t")
	slow.subscribe(t, tab, "t")
	ib := b.subscribe(t, tab, "t")
	slow.setRefuse(handler.ErrSlowConsumer)

	if n, err := h.Publish("t", 1); n != 2 || err != nil {
		t.Fatalf("Publish: %d %v, want 2", n, err)
	}
	tpSame(t, "a", a.messages(), tpNote(ia, "1"))
	tpSame(t, "b", b.messages(), tpNote(ib, "1"))
	if s := h.Stats(); s.Delivered != 2 || s.Dropped != 1 {
		t.Fatalf("Stats %+v, want 2 delivered, 1 dropped", s)
	}
	// The engine closes a slow connection: its subscription leaves.
	rvWait(t, func() bool { return h.Local("t") == 2 })
	if err := bus.Node().Publish("t", []byte(`2`)); err != nil { // from the broker, too
		t.Fatal(err)
	}
	tpSame(t, "a", a.messages(), tpNote(ia, "2"))
	tpSame(t, "b", b.messages(), tpNote(ib, "2"))
	if s := h.Stats(); s.Delivered != 4 || s.Dropped != 1 {
		t.Fatalf("Stats %+v, want 4 delivered, 1 dropped", s)
	}
}

// Many connections subscribing, unsubscribing, closing and publishing on
// a few topics of two nodes at once: no panic or race, every message a
// connection receives is a notification of one of its own subscriptions,
// and when all have ended nothing is left, on either node or on the bus.
func TestTopics_concurrentSubscribePublishUnsubscribe(t *testing.T) {
	bus := NewMemoryBus()
	brs := []*tpBroker{{Broker: bus.Node()}, {Broker: bus.Node()}}
	var tabs []*handler.Table
	var hs []*Topics
	for _, br := range brs {
		tab, h := tpNode(t, br)
		tabs, hs = append(tabs, tab), append(hs, h)
	}
	topics := []string{"a", "b", "c"}
	const workers, rounds = 8, 60
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tab := tabs[w%2]
			var c *tpConn
			var mine map[string]bool
			var ids []string
			open := func() {
				c, mine, ids = newTPConn(), map[string]bool{}, nil
				c.tally = map[string]int{}
			}
			closeAndCheck := func() { // the connection closes: what it got must be its own
				c.cancel()
				c.mu.Lock()
				defer c.mu.Unlock()
				for id := range c.tally {
					if !mine[id] {
						t.Errorf("worker %d got %q, not a notification of its subscriptions", w, id)
					}
				}
				for id := range mine {
					if c.tally[id] == 0 {
						t.Errorf("worker %d: subscription %s got nothing", w, id)
					}
				}
			}
			open()
			for i := range rounds {
				name := topics[(w+i)%len(topics)]
				id := c.subscribe(t, tab, name)
				mine[id] = true
				// id is bound until this worker ends it: its own message reaches it.
				if n, err := hs[w%2].Publish(name, -1); n < 1 || err != nil {
					t.Errorf("worker %d: Publish to its own subscription: %d %v", w, n, err)
				}
				ids = append(ids, id)
				if i%3 == 2 {
					c.unsubscribe(t, tab, ids[0])
					ids = ids[1:]
				}
				if i%20 == 19 {
					closeAndCheck()
					open()
				}
			}
			closeAndCheck()
		}()
	}
	var pubs sync.WaitGroup
	for p := range 2 {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			for i := 0; !stop.Load(); i++ {
				if _, err := hs[p].Publish(topics[i%len(topics)], i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	pubs.Wait()
	rvWait(t, func() bool {
		for _, name := range topics {
			if hs[0].Local(name) != 0 || hs[1].Local(name) != 0 || bus.Subscriptions(name) != 0 {
				return false
			}
		}
		return brs[0].liveSubs() == 0 && brs[1].liveSubs() == 0
	})
	for i, h := range hs {
		if s := h.Stats(); s.Topics != 0 || s.Subscribers != 0 || tabs[i].Subscriptions("topic") != 0 {
			t.Errorf("node %d: %+v, %d slots", i, s, tabs[i].Subscriptions("topic"))
		}
		if br := brs[i]; br.subscribes.Load() != br.stops.Load() || br.doubleStops.Load() != 0 {
			t.Errorf("node %d: %d broker subscriptions, %d stops, %d stopped twice", i, br.subscribes.Load(), br.stops.Load(), br.doubleStops.Load())
		}
	}
}

// The last subscriber of a topic leaves and a new one arrives while the
// old broker subscription is being stopped: the new subscriber gets the
// broker's messages afterwards, once each.
func TestTopics_dropRacesNewSubscriber(t *testing.T) {
	bus := NewMemoryBus()
	br := &tpBroker{Broker: bus.Node()}
	tab, h := tpNode(t, br)
	pub := bus.Node()

	// Forced order: the old topic's stop runs after the new subscription
	// is made.
	stopping, release := make(chan string), make(chan struct{})
	br.set(func(b *tpBroker) {
		b.onStop = func(name string) { stopping <- name; <-release }
	})
	c1 := newTPConn()
	c1.unsubscribe(t, tab, c1.subscribe(t, tab, "t"))
	<-stopping // the topic is out of the map; its broker subscription not yet stopped
	br.set(func(b *tpBroker) { b.onStop = nil })
	c2 := newTPConn()
	id := c2.subscribe(t, tab, "t")
	if err := pub.Publish("t", []byte(`1`)); err != nil {
		t.Fatal(err)
	}
	close(release)
	rvWait(t, func() bool { return br.stops.Load() == 1 })
	if err := pub.Publish("t", []byte(`2`)); err != nil {
		t.Fatal(err)
	}
	tpSame(t, "new subscriber", c2.messages(), tpNote(id, "1"), tpNote(id, "2"))
	tpSame(t, "old subscriber", c1.messages())
	if h.Local("t") != 1 || bus.Subscriptions("t") != 1 {
		t.Fatalf("local %d, bus %d", h.Local("t"), bus.Subscriptions("t"))
	}
	c2.cancel()
	rvWait(t, func() bool { return bus.Subscriptions("t") == 0 })

	// Unforced: the last leaves while a new one subscribes, many times.
	for i := range 200 {
		old, nw := newTPConn(), newTPConn()
		oldID := old.subscribe(t, tab, "t")
		var wg sync.WaitGroup
		var newID string
		wg.Add(2)
		go func() { defer wg.Done(); old.unsubscribe(t, tab, oldID) }()
		go func() { defer wg.Done(); newID = nw.subscribe(t, tab, "t") }()
		wg.Wait()
		rvWait(t, func() bool { return h.Local("t") == 1 && bus.Subscriptions("t") == 1 })
		if err := pub.Publish("t", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		tpSame(t, fmt.Sprint("round ", i), nw.messages(), tpNote(newID, fmt.Sprint(i)))
		nw.cancel()
		rvWait(t, func() bool { return h.Local("t") == 0 && bus.Subscriptions("t") == 0 })
	}
	if br.subscribes.Load() != br.stops.Load() || br.doubleStops.Load() != 0 {
		t.Fatalf("%d broker subscriptions, %d stops, %d twice", br.subscribes.Load(), br.stops.Load(), br.doubleStops.Load())
	}
}

// tpBufConn is a Conn whose Send copies into one preallocated buffer.
type tpBufConn struct {
	ctx context.Context
	buf []byte
	n   int
}

func (c *tpBufConn) Send(msg []byte) error {
	c.buf = append(c.buf[:0], msg...)
	c.n++
	return nil
}
func (c *tpBufConn) CanPush() bool            { return true }
func (c *tpBufConn) Context() context.Context { return c.ctx }

// Regression from a review of topics: on pool.Responses, fanOut allocated 3-4 times a message once bytebufferpool had calibrated on smaller buffers (run with -count=50).
//
// A delivery allocates nothing: fanOut of a message to 100 subscribers,
// and Publish of a handler.Raw to local subscribers without a broker.
func TestTopics_deliveryZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	if mxRaceEnabled() {
		t.Skip("the race detector makes sync.Pool drop objects")
	}
	h := New(nil, rvLogger())
	conn := &tpBufConn{ctx: context.Background(), buf: make([]byte, 0, 4096)}
	tp := &topic{name: "t", ready: make(chan struct{})}
	subs := tpSubscriptions(t, 100, func(int) handler.Conn { return conn })
	tp.subs.Store(&subs)
	payload := []byte(`{"price":101.25,"sym":"ABC"}`)
	if n := h.fanOut(tp, payload); n != 100 {
		t.Fatalf("fanOut: %d deliveries", n)
	}
	if want := tpNote(subs[99].ID(), string(payload)); string(conn.buf) != want {
		t.Fatalf("last notification %s, want %s", conn.buf, want)
	}
	if a := testing.AllocsPerRun(100, func() { h.fanOut(tp, payload) }); a != 0 {
		t.Errorf("fanOut to 100 subscribers: %v allocations per message, want 0", a)
	}

	tab, hp := tpNode(t, nil)
	c := &tpBufConn{ctx: context.Background(), buf: make([]byte, 0, 4096)}
	ctx := handler.ContextWithConn(context.Background(), c)
	for range 10 {
		if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`))); !strings.Contains(got, `"result":"0x`) {
			t.Fatal(got)
		}
	}
	raw := handler.Raw(`{"price":101.25,"sym":"ABC"}`)
	if n, err := hp.Publish("t", raw); n != 10 || err != nil {
		t.Fatalf("Publish: %d %v", n, err)
	}
	before := c.n
	var boxed any = raw
	if a := testing.AllocsPerRun(100, func() { _, _ = hp.Publish("t", boxed) }); a != 0 {
		t.Errorf("Publish of a handler.Raw boxed once to 10 local subscribers: %v allocations per call, want 0", a)
	}
	// Publish's payload leaks (AppendJSON hands it to sonic's
	// EncodeInto), so a caller that boxes a handler.Raw at each call allocates
	// the box: PublishRaw takes the bytes.
	if a := testing.AllocsPerRun(100, func() { _, _ = hp.PublishRaw("t", raw) }); a != 0 {
		t.Errorf("PublishRaw to 10 local subscribers: %v allocations per call, want 0", a)
	}
	if c.n-before != 2*101*10 {
		t.Fatalf("%d notifications sent during AllocsPerRun, want %d", c.n-before, 2*101*10)
	}
}

// A subscription made by any registration binds to a topic: here one of
// the kind "topic" of geth-shaped eth_subscribe, ["topic", NAME], and
// one of topics.Register under names of its own.
func TestTopics_subscribeFromKindsAndNamedMethods(t *testing.T) {
	h := New(nil, rvLogger())
	tab := handler.NewTable(handler.WithLogger(rvLogger()))
	handler.RegisterSubscriptionKinds(tab, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("topic", func(_ context.Context, p [1]string, sub *handler.Subscription) error {
			return h.Subscribe(sub, p[0])
		}),
		handler.NewSubscriptionKind("newHeads", func(context.Context, struct{}, *handler.Subscription) error { return nil }),
	}, handler.Inline())
	Register(tab, "prices", h, handler.SubscriptionMethods(handler.SubscriptionNames{
		Subscribe: "subscribePrices", Unsubscribe: "unsubscribePrices", Notification: "price",
	}))
	c := newTPConn()
	id := func(reply string) string {
		var r struct{ Result string }
		if err := json.Unmarshal([]byte(reply), &r); err != nil || len(r.Result) != 34 {
			t.Fatalf("subscribe: %s", reply)
		}
		return r.Result
	}
	kindID := id(c.call(tab, "eth_subscribe", `["topic","prices.ABC"]`, 1))
	namedID := id(c.call(tab, "subscribePrices", `["prices.ABC"]`, 2))
	if got := c.call(tab, "eth_subscribe", `["topic","prices.*"]`, 3); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("invalid topic: %s", got)
	}
	if h.Local("prices.ABC") != 2 || tab.Subscriptions("eth") != 1 || tab.Subscriptions("prices") != 1 {
		t.Fatalf("Local %d, eth %d, prices %d", h.Local("prices.ABC"), tab.Subscriptions("eth"), tab.Subscriptions("prices"))
	}
	if n, err := h.Publish("prices.ABC", handler.Raw(`{"bid": 101.25}`)); n != 2 || err != nil {
		t.Fatalf("Publish: %d %v", n, err)
	}
	got := c.messages()
	want := []string{
		`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` + kindID + `","result":{"bid":101.25}}}`,
		`{"jsonrpc":"2.0","method":"price","params":{"subscription":"` + namedID + `","result":{"bid":101.25}}}`,
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if r := c.call(tab, "eth_unsubscribe", `["`+kindID+`"]`, 4); !strings.Contains(r, `"result":true`) {
		t.Fatal(r)
	}
	if r := c.call(tab, "unsubscribePrices", `["`+namedID+`"]`, 5); !strings.Contains(r, `"result":true`) {
		t.Fatal(r)
	}
	rvWait(t, func() bool { return h.Local("prices.ABC") == 0 })
	if n, _ := h.Publish("prices.ABC", 1); n != 0 || len(c.messages()) != 0 {
		t.Fatalf("delivered %d after unsubscribing", n)
	}
}
