package natsbroker_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetrpc/jetrpc/handler/natsbroker"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// TestPublish_reachesEveryNodeOnce: a message published on node A
// reaches every subscriber of A and of B exactly once. Markers published
// afterwards from B and then from A prove it: a duplicate (an echo to A,
// or a second copy sent to B) would travel the same ordered path ahead of
// the marker of the other node.
func TestPublish_reachesEveryNodeOnce(t *testing.T) {
	srv := startNATS(t, -1)
	a, b := startNode(t, srv, "node-a"), startNode(t, srv, "node-b")
	var subs []*client
	ids := map[*client]string{}
	for _, n := range []*node{a, a, a, b, b, b} {
		c := dial(t, n)
		ids[c] = c.subscribe("news")
		subs = append(subs, c)
	}
	pubA, pubB := dial(t, a), dial(t, b)

	if n := pubA.publish("news", map[string]int{"n": 1}); n != 3 {
		t.Fatalf("topic_publish on A delivered to %d local subscribers, want 3", n)
	}
	for i, c := range subs {
		got, sub := c.next()
		if got != `{"n":1}` || sub != ids[c] {
			t.Fatalf("subscriber %d: got %s for %s, want {\"n\":1} for %s", i, got, sub, ids[c])
		}
	}
	if n := pubB.publish("news", "marker-b"); n != 3 {
		t.Fatalf("topic_publish on B delivered to %d local subscribers, want 3", n)
	}
	pubA.publish("news", "marker-a")
	for i, c := range subs {
		seen := map[string]int{}
		for len(seen) < 2 {
			got, _ := c.next()
			if got == `{"n":1}` {
				t.Fatalf("subscriber %d: the message arrived twice", i)
			}
			seen[got]++
		}
		if seen[`"marker-a"`] != 1 || seen[`"marker-b"`] != 1 {
			t.Fatalf("subscriber %d: markers %v, want each once", i, seen)
		}
	}
	time.Sleep(100 * time.Millisecond) // a last chance for a duplicate that the markers would not catch
	for _, c := range subs {
		c.none()
	}
	for _, n := range []*node{a, b} {
		st := n.topics.Stats()
		if st.Delivered != 9 || st.Dropped != 0 || st.Invalid != 0 {
			t.Errorf("stats %+v, want 9 delivered, none dropped or invalid", st)
		}
	}
}

// TestSubscribe_oneNATSSubscriptionPerTopicPerNode: the NATS server holds
// one subscription per topic for a node, whether 1 or 50 local
// subscribers listen to it; a second topic makes a second.
func TestSubscribe_oneNATSSubscriptionPerTopicPerNode(t *testing.T) {
	srv := startNATS(t, -1)
	a := startNode(t, srv, "node-a")
	b := startNode(t, srv, "node-b")
	want := func(name string, n *node, subjects ...string) {
		t.Helper()
		// Subscribe returned after the server confirmed the subscription:
		// no polling needed.
		if got := serverSubs(t, srv, name); strings.Join(got, ",") != strings.Join(subjects, ",") {
			t.Fatalf("%s: server holds %v, want %v", name, got, subjects)
		}
		if n.broker.Subscriptions() != len(subjects) {
			t.Fatalf("%s: broker.Subscriptions() = %d, want %d", name, n.broker.Subscriptions(), len(subjects))
		}
	}
	want("node-a", a)

	clients := make([]*client, 5)
	for i := range clients {
		clients[i] = dial(t, a)
	}
	clients[0].subscribe("news")
	want("node-a", a, "jetrpc.topic.news")
	for i := 1; i < 50; i++ {
		clients[i%len(clients)].subscribe("news")
	}
	if l := a.topics.Local("news"); l != 50 {
		t.Fatalf("Local(news) = %d, want 50", l)
	}
	want("node-a", a, "jetrpc.topic.news")
	want("node-b", b) // B has no subscriber

	clients[0].subscribe("sport")
	want("node-a", a, "jetrpc.topic.news", "jetrpc.topic.sport")
	if st := a.topics.Stats(); st.Topics != 2 || st.Subscribers != 51 {
		t.Fatalf("stats %+v, want 2 topics, 51 subscribers", st)
	}

	dial(t, b).subscribe("sport")
	want("node-b", b, "jetrpc.topic.sport")
	want("node-a", a, "jetrpc.topic.news", "jetrpc.topic.sport")
}

// TestUnsubscribe_releasesNATSSubscription: the node's NATS subscription
// to a topic stays while a local subscriber remains, and goes when the
// last one leaves, by topic_unsubscribe or by disconnecting; a new
// subscriber makes it again.
func TestUnsubscribe_releasesNATSSubscription(t *testing.T) {
	srv := startNATS(t, -1)
	a := startNode(t, srv, "node-a")
	c1, c2, c3 := dial(t, a), dial(t, a), dial(t, a)
	id1 := c1.subscribe("news")
	c2.subscribe("news")
	c3.subscribe("news")
	c3.subscribe("news") // twice on one connection

	if string(c1.call("topic_unsubscribe", []string{id1})) != "true" {
		t.Fatal("topic_unsubscribe did not answer true")
	}
	c2.conn.Close()
	eventually(t, "the disconnected subscriber to be removed", func() bool { return a.topics.Local("news") == 2 })
	if got := serverSubs(t, srv, "node-a"); len(got) != 1 || a.broker.Subscriptions() != 1 {
		t.Fatalf("with subscribers left: server holds %v, broker %d, want one", got, a.broker.Subscriptions())
	}

	c3.conn.Close()
	eventually(t, "the server to drop the node's subscription", func() bool {
		return len(serverSubs(t, srv, "node-a")) == 0
	})
	if a.broker.Subscriptions() != 0 || a.topics.Local("news") != 0 || a.topics.Stats().Topics != 0 {
		t.Fatalf("after the last subscriber: broker %d, local %d, stats %+v", a.broker.Subscriptions(), a.topics.Local("news"), a.topics.Stats())
	}

	c1.subscribe("news")
	if got := serverSubs(t, srv, "node-a"); len(got) != 1 {
		t.Fatalf("subscribing again: server holds %v, want one", got)
	}
}

// TestNATSRestart_callsGoOnAndDeliveryResumes: while NATS is down, the
// nodes answer calls and deliver to their own subscribers, and a
// subscription can be made; once a new server listens on the same port
// and the brokers have reconnected, messages cross between the nodes
// again, on the old subscription and on the one made during the outage.
func TestNATSRestart_callsGoOnAndDeliveryResumes(t *testing.T) {
	srv := startNATS(t, -1)
	port := natsPort(srv)
	a, b := startNode(t, srv, "node-a"), startNode(t, srv, "node-b")
	subA, subB := dial(t, a), dial(t, b)
	subA.subscribe("news")
	subB.subscribe("news")
	pubA, pubB := dial(t, a), dial(t, b)
	pubA.publish("news", "before")
	if got, _ := subB.next(); got != `"before"` {
		t.Fatalf("before the restart B got %s", got)
	}
	if got, _ := subA.next(); got != `"before"` {
		t.Fatalf("before the restart A got %s", got)
	}

	srv.Shutdown()
	eventually(t, "the brokers to see the server gone", func() bool {
		return !a.broker.Connected() && !b.broker.Connected()
	})
	if n := pubA.publish("news", "during"); n != 1 {
		t.Fatalf("topic_publish during the outage delivered to %d, want 1 (local)", n)
	}
	if got, _ := subA.next(); got != `"during"` {
		t.Fatalf("A's subscriber got %s during the outage", got)
	}
	if got := string(pubB.call("add", []int{1, 2})); got != "3" {
		t.Fatalf("add during the outage: %s", got)
	}
	late := dial(t, a)
	late.subscribe("late") // does not wait for a server

	srv2 := startNATS(t, port)
	eventually(t, "the brokers to reconnect", func() bool { return a.broker.Connected() && b.broker.Connected() })
	eventually(t, "the server to hold the replayed subscriptions", func() bool {
		return len(serverSubs(t, srv2, "node-a")) == 2 && len(serverSubs(t, srv2, "node-b")) == 1
	})

	pubA.publish("news", "after")
	for {
		// "during" was kept in A's reconnect buffer: B gets it if it
		// reconnected before A did, else it is lost for B (at-most-once).
		got, _ := subB.next()
		if got == `"after"` {
			break
		}
		if got != `"during"` {
			t.Fatalf("after the restart B got %s", got)
		}
	}
	if n := pubB.publish("late", 7); n != 0 {
		t.Fatalf("B has %d local subscribers to late, want 0", n)
	}
	if got, _ := late.next(); got != "7" {
		t.Fatalf("the subscription made during the outage got %s", got)
	}
	for _, n := range []*node{a, b} {
		if !n.logs.has("disconnected from NATS") || !n.logs.has("reconnected to NATS") {
			t.Errorf("disconnect and reconnect not logged: %v", n.logs.all())
		}
	}
}

// TestExternalPublisher_reachesSubscribersInvalidDropped: raw JSON that
// a plain NATS client publishes on the subject of a topic reaches the
// subscribers of every node; a payload that is not one JSON value is
// counted as invalid and never sent to a client.
func TestExternalPublisher_reachesSubscribersInvalidDropped(t *testing.T) {
	srv := startNATS(t, -1)
	a, b := startNode(t, srv, "node-a"), startNode(t, srv, "node-b")
	subs := []*client{dial(t, a), dial(t, a), dial(t, b)}
	for _, c := range subs {
		c.subscribe("news")
	}
	ext, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)

	publish := func(payload string) {
		t.Helper()
		if err := ext.Publish("jetrpc.topic.news", []byte(payload)); err != nil {
			t.Fatal(err)
		}
	}
	publish(` {"price": 42} `)
	for i, c := range subs {
		if got, _ := c.next(); got != `{"price": 42}` && got != `{"price":42}` {
			t.Fatalf("subscriber %d got %s", i, got)
		}
	}
	publish(`{bad`)
	publish(`1 2`)
	publish(``)
	publish(`"marker"`)
	for i, c := range subs {
		if got, _ := c.next(); got != `"marker"` {
			t.Fatalf("subscriber %d got %s, want the marker: an invalid payload reached it", i, got)
		}
	}
	for _, n := range []*node{a, b} {
		if st := n.topics.Stats(); st.Received != 5 || st.Invalid != 3 {
			t.Fatalf("stats %+v, want 5 received, 3 invalid", st)
		}
	}
}

// TestConnect_nothingListeningFailsFast: Connect to a port where nothing
// listens returns an error at once, naming the URL without its password.
func TestConnect_nothingListeningFailsFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, tc := range []struct{ url, want string }{
		{"nats://" + addr, "nats://" + addr},
		{"nats://user:s3cret@" + addr, "nats://xxxxx@" + addr},
		{"tok3n@" + addr + ", nats://" + addr, "xxxxx@" + addr + ",nats://" + addr},
	} {
		start := time.Now()
		b, err := natsbroker.Connect(tc.url, natsbroker.WithLogger(newLogs().logger()))
		if err == nil {
			b.Close()
			t.Fatalf("Connect(%s) succeeded with nothing listening", tc.url)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Connect(%s) took %v", tc.url, d)
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "s3cret") || strings.Contains(msg, "tok3n") {
			t.Errorf("Connect(%s): %q does not name %s (without secrets)", tc.url, msg, tc.want)
		}
		if !errors.Is(err, nats.ErrNoServers) {
			t.Errorf("Connect(%s): %v is not nats.ErrNoServers", tc.url, err)
		}
	}
}

// TestConnect_invalidPrefixRefused: a prefix that is not a plain subject
// is refused before dialing; a valid one makes the subjects.
func TestConnect_invalidPrefixRefused(t *testing.T) {
	for _, p := range []string{"a..b", ".a", "a.", "a.*", "a.>", "a b", "*"} {
		if b, err := natsbroker.Connect("nats://127.0.0.1:1", natsbroker.WithPrefix(p)); err == nil || !strings.Contains(err.Error(), "prefix") {
			if b != nil {
				b.Close()
			}
			t.Errorf("WithPrefix(%q): %v, want an invalid prefix error", p, err)
		}
	}
	srv := startNATS(t, -1)
	for prefix, want := range map[string]string{"": "news.x", "app.events": "app.events.news.x"} {
		b := connect(t, srv, "p", newLogs().logger(), natsbroker.WithPrefix(prefix))
		if got := b.Subject("news.x"); got != want {
			t.Errorf("prefix %q: Subject = %q, want %q", prefix, got, want)
		}
	}
	if got := connect(t, srv, "d", newLogs().logger()).Subject("news"); got != "jetrpc.topic.news" {
		t.Errorf("default Subject = %q", got)
	}
}

// TestBroker_prefixSeparatesServices: brokers with different prefixes on
// one server do not see each other's messages; the same prefix does.
func TestBroker_prefixSeparatesServices(t *testing.T) {
	srv := startNATS(t, -1)
	log := newLogs().logger()
	a := connect(t, srv, "a", log, natsbroker.WithPrefix("svc1"))
	b := connect(t, srv, "b", log, natsbroker.WithPrefix("svc2"))
	c := connect(t, srv, "c", log, natsbroker.WithPrefix("svc1"))
	got := make(chan string, 10)
	for name, br := range map[string]*natsbroker.Broker{"b": b, "c": c} {
		if _, err := br.Subscribe("news", func(p []byte) { got <- name + ":" + string(p) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Publish("news", []byte(`1`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish("news", []byte(`2`)); err != nil {
		t.Fatal(err)
	}
	// b is its own service: nothing reaches it but 2, which it published
	// itself (no echo). c gets 1 only.
	if g := <-got; g != "c:1" {
		t.Fatalf("got %s, want c:1", g)
	}
	if err := a.Publish("news", []byte(`3`)); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "c:3" {
		t.Fatalf("got %s, want c:3", g)
	}
}

// TestPublish_notEchoedToItsOwnNode: a broker's subscription does not
// receive the broker's own publications (nats.NoEcho). The marker an
// external client publishes after the server has processed the
// publication would arrive behind an echo.
func TestPublish_notEchoedToItsOwnNode(t *testing.T) {
	srv := startNATS(t, -1)
	b := connect(t, srv, "node-a", newLogs().logger())
	got := make(chan string, 10)
	stop, err := b.Subscribe("news", func(p []byte) { got <- string(p) })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := b.Publish("news", []byte(`"own"`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Conn().Flush(); err != nil { // the server has routed it
		t.Fatal(err)
	}
	ext, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if err := ext.Publish("jetrpc.topic.news", []byte(`"marker"`)); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		if g != `"marker"` {
			t.Fatalf("got %s: the broker's own publication was echoed", g)
		}
	case <-time.After(waitFor):
		t.Fatal("the marker did not arrive")
	}
}

// TestStop_noDeliveryAfterReturn: once stop returns, deliver is not
// called again, though messages keep arriving: nats.go may run its
// handler once more after Unsubscribe, and the broker must not pass it
// on.
func TestStop_noDeliveryAfterReturn(t *testing.T) {
	srv := startNATS(t, -1)
	b := connect(t, srv, "node-a", newLogs().logger())
	ext, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	for i := range 20 {
		var got, late atomic.Int64
		var stopped atomic.Bool
		stop, err := b.Subscribe("flood", func([]byte) {
			got.Add(1)
			if stopped.Load() {
				late.Add(1)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					_ = ext.Publish("jetrpc.topic.flood", []byte(`0`))
				}
			}
		})
		eventually(t, "messages to flow", func() bool { return got.Load() > 50 })
		stop()
		stopped.Store(true)
		stop() // idempotent
		close(done)
		wg.Wait()
		if err := ext.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := b.Conn().Flush(); err != nil {
			t.Fatal(err)
		}
		if n := late.Load(); n != 0 {
			t.Fatalf("round %d: deliver called %d times after stop returned", i, n)
		}
		if b.Subscriptions() != 0 {
			t.Fatalf("round %d: Subscriptions() = %d after stop", i, b.Subscriptions())
		}
	}
}

// TestSubscribe_slowConsumerDropsAndLogs: past the pending limits the
// NATS client drops messages, and the broker logs it.
func TestSubscribe_slowConsumerDropsAndLogs(t *testing.T) {
	srv := startNATS(t, -1)
	logs := newLogs()
	b := connect(t, srv, "node-a", logs.logger(), natsbroker.WithPendingLimits(10, 1<<20))
	release := make(chan struct{})
	var got atomic.Int64
	stop, err := b.Subscribe("news", func([]byte) {
		<-release
		got.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	defer close(release)
	ext, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	for range 100 {
		if err := ext.Publish("jetrpc.topic.news", []byte(`0`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ext.Flush(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the slow consumer to be logged", func() bool {
		return logs.has("slow consumer: messages dropped subject=jetrpc.topic.news")
	})
}

// TestBroker_invalidTopicRefused: names topics.Valid refuses, such
// as wildcards, are refused without reaching NATS.
func TestBroker_invalidTopicRefused(t *testing.T) {
	srv := startNATS(t, -1)
	b := connect(t, srv, "node-a", newLogs().logger())
	for _, topic := range []string{"", "a.*", ">", "a b", "a..b"} {
		if _, err := b.Subscribe(topic, func([]byte) {}); err != topics.ErrInvalidTopic {
			t.Errorf("Subscribe(%q): %v", topic, err)
		}
		if err := b.Publish(topic, []byte(`1`)); err != topics.ErrInvalidTopic {
			t.Errorf("Publish(%q): %v", topic, err)
		}
	}
	if _, err := b.Subscribe("news", nil); err == nil {
		t.Error("Subscribe with a nil deliver succeeded")
	}
	if b.Subscriptions() != 0 {
		t.Errorf("Subscriptions() = %d", b.Subscriptions())
	}
}

// TestClose_idempotentAndRefusesAfter: Close closes the connection once;
// Publish and Subscribe then fail, and a stop after Close is harmless.
func TestClose_idempotentAndRefusesAfter(t *testing.T) {
	srv := startNATS(t, -1)
	logs := newLogs()
	b := connect(t, srv, "node-a", logs.logger())
	if !b.Connected() {
		t.Fatal("not connected after Connect")
	}
	stop, err := b.Subscribe("news", func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
	stop()
	if b.Connected() || !b.Conn().IsClosed() {
		t.Fatal("connected after Close")
	}
	if err := b.Publish("news", []byte(`1`)); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("Publish after Close: %v", err)
	}
	if _, err := b.Subscribe("news", func([]byte) {}); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("Subscribe after Close: %v", err)
	}
	if b.Subscriptions() != 0 {
		t.Errorf("Subscriptions() = %d", b.Subscriptions())
	}
	eventually(t, "the close to be logged", func() bool { return logs.has("INFO natsbroker: connection closed") })
	if logs.has("WARN natsbroker: disconnected") {
		t.Errorf("Close logged a warning: %v", logs.all())
	}
}

// TestConnect_noLoggerLogsToSlogDefault: a broker given no logger logs
// to the process's default logger, slog.Default(), as it is when each
// record is made — set before Connect or after — so that a program's
// broker logs in the program's format (it used to keep the default of
// Connect's time: slog's plain text for a program that sets its own
// later).
func TestConnect_noLoggerLogsToSlogDefault(t *testing.T) {
	prev, prevOut, prevFlags := slog.Default(), log.Writer(), log.Flags()
	t.Cleanup(func() { // slog.SetDefault redirects the log package too
		slog.SetDefault(prev)
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
	})
	srv := startNATS(t, -1)
	before := newLogs()
	slog.SetDefault(before.logger())
	b, err := natsbroker.Connect(srv.ClientURL(), natsbroker.WithName("no-logger"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !before.has("INFO natsbroker: connected") {
		t.Errorf("the default logger set before Connect got %v, want the connect", before.all())
	}
	after := newLogs()
	slog.SetDefault(after.logger())
	b.Close()
	eventually(t, "the close to be logged to the default logger set after Connect", func() bool {
		return after.has("INFO natsbroker: connection closed")
	})
	if before.has("natsbroker: connection closed") {
		t.Errorf("the close went to the default logger of Connect's time: %v", before.all())
	}
}

// TestDeps_engineAndHandlerDoNotLinkNATS: importers of engine, handler,
// handler/topics, pool and parser do not link the NATS client; only
// natsbroker does.
func TestDeps_engineAndHandlerDoNotLinkNATS(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies")
	}
	const mod = "github.com/jetrpc/jetrpc/"
	out, err := exec.Command(goTool, "list", "-deps", mod+"engine", mod+"handler", mod+"handler/topics", mod+"pool", mod+"parser").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, l := range strings.Fields(string(out)) {
		if strings.Contains(l, "github.com/nats-io") || strings.Contains(l, "natsbroker") {
			t.Errorf("engine, handler or handler/topics links %s", l)
		}
	}
	out, err = exec.Command(goTool, "list", "-deps", mod+"handler/natsbroker").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/nats-io/nats.go\n") || strings.Contains(string(out), "nats-server") {
		t.Errorf("natsbroker should link nats.go and not the server:\n%s", out)
	}
}

// A pretty-printed payload from a NATS publisher is valid JSON, but
// sent verbatim it would split a notification over several lines of a
// newline-delimited stream: it reaches the subscriber compacted, on one
// line.
func TestExternalPublisher_multiLinePayloadStaysOneLine(t *testing.T) {
	srv := startNATS(t, -1)
	a := startNode(t, srv, "node-a")
	conn, err := net.Dial("tcp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if _, err := io.WriteString(conn, `{"jsonrpc":"2.0","id":1,"method":"topic_subscribe","params":["news"]}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err != nil { // the subscription id
		t.Fatal(err)
	}
	ext, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if err := ext.Publish("jetrpc.topic.news", []byte("{\n  \"a\": 1\r\n}\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(waitFor))
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(line)) || !strings.HasSuffix(line, `"result":{"a":1}}}`+"\n") {
		t.Fatalf("the notification is not one line with the compacted payload: first line %q", line)
	}
}
