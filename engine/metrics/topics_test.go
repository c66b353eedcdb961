package metrics_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestTopics_seriesMoveWithMessages: the topics' series count what two
// nodes on a bus do — a subscriber on node A, a publication on each node
// — read back through a real registry.
func TestTopics_seriesMoveWithMessages(t *testing.T) {
	bus := topics.NewMemoryBus()
	hubA, hubB := topics.New(bus.Node(), nil), topics.New(bus.Node(), nil)
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	demo.RegisterTopics(tab, hubA)
	s := startServer(t, tab)
	up := true
	reg := prometheus.NewPedanticRegistry()
	if err := metrics.RegisterTopics(reg, hubA, func() bool { return up }); err != nil {
		t.Fatal(err)
	}

	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	line := func() string {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(l)
	}
	_, _ = c.Write([]byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["news"],"id":1}` + "\n"))
	if l := line(); !strings.Contains(l, `"result":"0x`) {
		t.Fatalf("subscribe: %s", l)
	}
	if n, err := hubA.Publish("news", 1); n != 1 || err != nil {
		t.Fatalf("publish on A: %d %v", n, err)
	}
	if n, err := hubB.Publish("news", 2); n != 0 || err != nil { // B has no local subscriber; A gets it from the bus
		t.Fatalf("publish on B: %d %v", n, err)
	}
	line()
	line()

	fams := gather(t, reg)
	want(t, fams, 1, "jsonrpc_server_broker_connected")
	want(t, fams, 2, "jsonrpc_server_topic_deliveries_total", "outcome", "sent")
	want(t, fams, 0, "jsonrpc_server_topic_deliveries_total", "outcome", "dropped")
	want(t, fams, 1, "jsonrpc_server_topic_messages_total", "source", "local")
	want(t, fams, 1, "jsonrpc_server_topic_messages_total", "source", "broker")
	want(t, fams, 0, "jsonrpc_server_topic_messages_invalid_total")
	want(t, fams, 0, "jsonrpc_server_topic_publish_failures_total")
	want(t, fams, 1, "jsonrpc_server_topic_subscribers")
	want(t, fams, 1, "jsonrpc_server_topics")
	want(t, fams, 0, "jsonrpc_server_topic_publish_backlog_bytes")
	want(t, fams, 0, "jsonrpc_server_topic_publish_refused_total")
	up = false
	c.Close() // the subscriber leaves: the topic and its broker subscription go
	deadline := time.Now().Add(10 * time.Second)
	for hubA.Local("news") != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	fams = gather(t, reg)
	want(t, fams, 0, "jsonrpc_server_broker_connected")
	want(t, fams, 0, "jsonrpc_server_topic_subscribers")
	want(t, fams, 0, "jsonrpc_server_topics")
	if bus.Subscriptions("news") != 0 {
		t.Fatalf("%d bus subscriptions left on news", bus.Subscriptions("news"))
	}
}

// gather collects reg's families by name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	list, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]*dto.MetricFamily{}
	for _, f := range list {
		fams[f.GetName()] = f
	}
	return fams
}

// TestCollector_readyFollowsDrain: jsonrpc_server_ready is 1, then 0
// once the engine drains.
func TestCollector_readyFollowsDrain(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	s := startServer(t, tab)
	want(t, s.scrape(t), 1, "jsonrpc_server_ready")
	s.e.Drain()
	want(t, s.scrape(t), 0, "jsonrpc_server_ready")
}
