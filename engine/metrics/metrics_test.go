package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// server is an engine serving a table with metrics on, its exposition
// at /metrics on its own listener.
type server struct {
	e    *engine.Engine
	t    *handler.Table
	addr string
}

func startServer(t *testing.T, tab *handler.Table, opts ...engine.Option) *server {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts = append([]engine.Option{
		engine.WithAddrs("tcp://127.0.0.1:0"),
		engine.WithLoops(1),
		engine.WithPage(metrics.Page("/metrics", reg)),
	}, opts...)
	e := engine.New(tab, opts...)
	if err := metrics.Register(reg, tab, e); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return &server{e: e, t: tab, addr: e.Addrs()[0].String()}
}

// scrape gets and parses the exposition with the official parser.
func (s *server) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != metrics.ContentType {
		t.Fatalf("scrape: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return parse(t, resp.Body)
}

func parse(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return fams
}

// value returns the value of the series of family name with the given
// label pairs (a counter's, a gauge's, or a histogram's count), and
// whether it exists.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// want checks that the series has the value v.
func want(t *testing.T, fams map[string]*dto.MetricFamily, v float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v: no such series", name, labels)
		return
	}
	if got != v {
		t.Errorf("%s%v = %v, want %v", name, labels, got, v)
	}
}

// atLeast checks that the series is at least v.
func atLeast(t *testing.T, fams map[string]*dto.MetricFamily, v float64, name string, labels ...string) {
	t.Helper()
	if got, ok := value(fams, name, labels...); !ok || got < v {
		t.Errorf("%s%v = %v (present %v), want at least %v", name, labels, got, ok, v)
	}
}

func postJSON(t *testing.T, addr, body string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const add = `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`

// TestMetrics_movesUnderTraffic drives each transport and checks every
// series the traffic should move, with exact counts, through a real
// scrape of /metrics parsed by Prometheus' own parser.
func TestMetrics_movesUnderTraffic(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	workers := pool.NewWorkers(1, 0) // one worker, no queue: a second blocking message is busy
	defer workers.Close()
	s := startServer(t, tab, engine.WithWorkers(workers), engine.WithMaxMessageSize(1024))

	// HTTP: 3 calls, a notification, an unknown method, a parse error, a
	// batch of three, a message too large.
	for range 3 {
		if code, body := postJSON(t, s.addr, add); code != 200 || !strings.Contains(body, `"result":3`) {
			t.Fatalf("add: %d %s", code, body)
		}
	}
	if code, _ := postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"add","params":[1,2]}`); code != 204 {
		t.Fatalf("notification: %d", code)
	}
	postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"nope","id":2}`)
	postJSON(t, s.addr, `{"jsonrpc":`)
	postJSON(t, s.addr, `[`+add+`,{"jsonrpc":"2.0","method":"fail","id":3},{"jsonrpc":"2.0","method":"nope","id":4}]`)
	if code, _ := postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("x", 2000)+`"],"id":5}`); code != 413 {
		t.Fatalf("a message over the limit: %d, want 413", code)
	}

	// A stream: two calls.
	sc, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, err := io.WriteString(sc, add+"\n"+add+"\n"); err != nil {
		t.Fatal(err)
	}
	sr := bufio.NewReader(sc)
	for range 2 {
		if line, err := sr.ReadString('\n'); err != nil || !strings.Contains(line, `"result":3`) {
			t.Fatalf("stream: %q %v", line, err)
		}
	}

	// A WebSocket: a call and a subscription with one notification.
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, msg := range []string{add, `{"jsonrpc":"2.0","method":"clock_subscribe","params":[10],"id":9}`} {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"result"`) {
			t.Fatalf("ws: %s %v", b, err)
		}
	}
	if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"clock_subscription"`) {
		t.Fatalf("ws notification: %s %v", b, err)
	}

	// Busy: the one worker holds a sleep while a second one arrives.
	done := make(chan string, 1)
	go func() {
		_, body := postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"sleep","params":{"ms":300},"id":6}`)
		done <- body
	}()
	for deadline := time.Now().Add(5 * time.Second); s.e.Stats().InFlight != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sleep never reached the worker")
		}
	}
	if _, body := postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"sleep","params":{"ms":1},"id":7}`); !strings.Contains(body, "-32000") {
		t.Fatalf("a message with the worker taken: %s, want Server busy", body)
	}
	if body := <-done; !strings.Contains(body, `"result":300`) {
		t.Fatalf("sleep: %s", body)
	}

	f := s.scrape(t)
	// 3 calls + the notification + the batch's + 2 on the stream + 1 on the WebSocket.
	want(t, f, 8, "jsonrpc_server_started_total", "method", "add")
	want(t, f, 8, "jsonrpc_server_handled_total", "method", "add", "code", "0")
	want(t, f, 8, "jsonrpc_server_handling_seconds", "method", "add")
	want(t, f, 2, "jsonrpc_server_started_total", "method", "sleep")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "sleep", "code", "0")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "sleep", "code", "-32000")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "fail", "code", "1000")
	want(t, f, 2, "jsonrpc_server_handled_total", "method", stats.UnknownMethod, "code", "-32601")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", stats.InvalidMethod, "code", "-32700")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "clock_subscribe", "code", "0")
	want(t, f, 1, "jsonrpc_server_batch_size")
	want(t, f, 1, "jsonrpc_server_busy_messages_total", "transport", "http")
	want(t, f, 0, "jsonrpc_server_busy_messages_total", "transport", "stream")
	want(t, f, 1, "jsonrpc_server_limit_refusals_total", "limit", "message_size")
	want(t, f, 1, "jsonrpc_server_websocket_upgrades_total")
	want(t, f, 1, "jsonrpc_server_subscriptions")
	want(t, f, 0, "jsonrpc_server_messages_in_flight")
	want(t, f, 1, "jsonrpc_server_connections", "transport", "websocket")
	want(t, f, 1, "jsonrpc_server_connections", "transport", "stream")
	atLeast(t, f, 1, "jsonrpc_server_connections", "transport", "http") // the scrape's own
	atLeast(t, f, 1, "jsonrpc_server_pushes_sent_total")
	atLeast(t, f, 0, "jsonrpc_server_output_held_bytes")
	// The peak: a notification at least.
	atLeast(t, f, float64(len(`{"jsonrpc":"2.0","method":"clock_subscription"}`)), "jsonrpc_server_connection_output_peak_bytes")
	atLeast(t, f, 4, "jsonrpc_server_connections_accepted_total") // HTTP keeps its connections alive
	want(t, f, float64(2*len(add+"\n")), "jsonrpc_server_received_bytes_total", "transport", "stream")
	want(t, f, float64(2*len(`{"jsonrpc":"2.0","result":3,"id":1}`+"\n")), "jsonrpc_server_sent_bytes_total", "transport", "stream")
	for _, tr := range []string{"http", "websocket"} {
		atLeast(t, f, 100, "jsonrpc_server_received_bytes_total", "transport", tr)
		atLeast(t, f, 100, "jsonrpc_server_sent_bytes_total", "transport", tr)
	}
	if _, ok := value(f, "go_goroutines"); !ok {
		t.Error("no Go collector series")
	}
	if sum := f["jsonrpc_server_batch_size"].Metric[0].Histogram.GetSampleSum(); sum != 3 {
		t.Errorf("batch size sum %v, want 3", sum)
	}

	// Closing the stream and the WebSocket closes their subscription
	// and moves the gauges.
	closedBefore, _ := value(f, "jsonrpc_server_connections_closed_total", "reason", "client")
	sc.Close()
	ws.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st := s.e.Stats()
		if st.Stream.Conns == 0 && st.WebSocket.Conns == 0 && tab.SubscriptionCount() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connections still open: %+v", st)
		}
	}
	f = s.scrape(t)
	want(t, f, 0, "jsonrpc_server_connections", "transport", "websocket")
	want(t, f, 0, "jsonrpc_server_connections", "transport", "stream")
	want(t, f, 0, "jsonrpc_server_subscriptions")
	atLeast(t, f, closedBefore+2, "jsonrpc_server_connections_closed_total", "reason", "client")
}

// TestMetrics_limitRefusals: each limit's refusals are counted under its
// label, and the calls under their codes.
func TestMetrics_limitRefusals(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true), handler.WithMaxBatch(2),
		handler.WithMaxResponseSize(200, -1),
		handler.WithRateLimit(ratelimit.Limits{Rate: 1, Burst: 5, Identity: func(ctx context.Context) string {
			return handler.MetaFrom(ctx).Header("X-Client") // only requests with the header are limited by name: the others share "local"
		}}))
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	handler.Register(tab, "hold", func(ctx context.Context, _ handler.Raw) (int, error) {
		entered <- struct{}{}
		<-release
		return 1, nil
	}, handler.MaxConcurrent(1))
	handler.Register(tab, "big", func(context.Context, handler.Raw) (string, error) { return strings.Repeat("y", 300), nil }, handler.Inline())
	handler.Register(tab, "one", func(context.Context, handler.Raw) (int, error) { return 1, nil }, handler.Inline())
	s := startServer(t, tab, engine.WithMaxConns(20))

	send := func(client, body string) (string, error) {
		req, _ := http.NewRequest("POST", "http://"+s.addr+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Client", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	postAs := func(client, body string) string {
		b, err := send(client, body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Rate: a burst of 5, then refusals; notifications over it dropped.
	refused := 0
	for range 8 {
		if strings.Contains(postAs("c1", `{"jsonrpc":"2.0","method":"one","id":1}`), "-32005") {
			refused++
		}
	}
	if refused < 2 {
		t.Fatalf("%d calls refused by the rate limit, want at least 2", refused)
	}
	postAs("c1", `{"jsonrpc":"2.0","method":"one"}`)
	// Concurrency: one hold runs, a second is refused.
	held := make(chan error, 1)
	go func() {
		_, err := send("c2", `{"jsonrpc":"2.0","method":"hold","id":1}`)
		held <- err
	}()
	<-entered
	if body := postAs("c3", `{"jsonrpc":"2.0","method":"hold","id":2}`); !strings.Contains(body, "-32000") {
		t.Fatalf("hold past MaxConcurrent: %s", body)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	// Response size and batch length.
	if body := postAs("c4", `{"jsonrpc":"2.0","method":"big","id":1}`); !strings.Contains(body, "-32008") {
		t.Fatalf("big: %s", body)
	}
	if body := postAs("c5", `[1,2,3]`); !strings.Contains(body, "batch of 3") {
		t.Fatalf("batch: %s", body)
	}

	f := s.scrape(t)
	want(t, f, float64(refused), "jsonrpc_server_limit_refusals_total", "limit", "rate")
	want(t, f, float64(refused+1), "jsonrpc_server_handled_total", "method", "one", "code", "-32005") // the notification dropped too
	want(t, f, 1, "jsonrpc_server_limit_refusals_total", "limit", "rate_notification")
	want(t, f, 1, "jsonrpc_server_limit_refusals_total", "limit", "concurrency")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "hold", "code", "-32000")
	want(t, f, 1, "jsonrpc_server_limit_refusals_total", "limit", "response_size")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "big", "code", "-32008")
	want(t, f, 1, "jsonrpc_server_limit_refusals_total", "limit", "batch_length")
	want(t, f, 1, "jsonrpc_server_handled_total", "method", stats.InvalidMethod, "code", "-32600")
}

// TestMetrics_cardinalityBounded: 10,000 random method names and 100
// distinct error codes leave a bounded number of series.
func TestMetrics_cardinalityBounded(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	handler.Register(tab, "coded", func(_ context.Context, p [1]int) (int, error) {
		return 0, handler.NewError(parser.Code(p[0]), "coded")
	}, handler.Inline())
	s := startServer(t, tab)
	var b strings.Builder
	for i := range 10 {
		b.Reset()
		b.WriteByte('[')
		for k := range 1000 {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"m%x","id":%d}`, rand.Uint64(), i*1000+k)
		}
		b.WriteByte(']')
		if code, _ := postJSON(t, s.addr, b.String()); code != 200 {
			t.Fatalf("batch: %d", code)
		}
	}
	b.Reset()
	b.WriteByte('[')
	for k := range 100 {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"coded","params":[%d],"id":%d}`, 1000+k, k)
	}
	b.WriteByte(']')
	postJSON(t, s.addr, b.String())

	f := s.scrape(t)
	want(t, f, 10000, "jsonrpc_server_started_total", "method", stats.UnknownMethod)
	for _, name := range []string{"jsonrpc_server_started_total", "jsonrpc_server_handling_seconds"} {
		if n := len(f[name].Metric); n != 3 { // coded, (unknown), (invalid)
			t.Errorf("%s: %d series, want 3", name, n)
		}
	}
	handled := f["jsonrpc_server_handled_total"].Metric
	if n := len(handled); n != 1+32+1 { // (unknown) -32601; coded: 32 codes and other
		t.Errorf("handled_total: %d series, want 34", n)
	}
	want(t, f, 100-32, "jsonrpc_server_handled_total", "method", "coded", "code", "other")
}

// TestMetrics_handlerOnItsOwnAddress: Handler serves the same exposition
// for a listener of its own, gzip and all.
func TestMetrics_handlerOnItsOwnAddress(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	out := tab.Dispatch(context.Background(), nil, []byte(add))
	if !strings.Contains(string(out), `"result":3`) {
		t.Fatalf("add: %s", out)
	}
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, tab, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := http.Get(srv.URL) // Go's client asks for gzip and undoes it
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	f := parse(t, resp.Body)
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "add", "code", "0")
	if _, ok := f["jsonrpc_server_connections"]; ok {
		t.Error("engine series without an engine")
	}
}

// TestMetrics_pageRefusedWithoutAuthorization: a page passes the
// Authorizer as a call does.
func TestMetrics_pageRefusedWithoutAuthorization(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	s := startServer(t, tab, engine.WithAuthorize(func(m *handler.Meta) (handler.Grants, error) {
		if m.Header("Authorization") != "Bearer secret" {
			return nil, handler.ErrUnauthenticated
		}
		return handler.Grants{"*"}, nil
	}))
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("scrape without a key: %s, want 401", resp.Status)
	}
	req, _ := http.NewRequest("GET", "http://"+s.addr+"/metrics?x=1", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scrape with the key: %s", resp.Status)
	}
	parse(t, resp.Body)
}

// TestMetrics_engineDoesNotLinkPrometheus: an importer of engine (and
// of handler) does not link the Prometheus client.
func TestMetrics_engineDoesNotLinkPrometheus(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/jetrpc/jetrpc/engine", "github.com/jetrpc/jetrpc/handler").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, l := range strings.Fields(string(out)) {
		if strings.Contains(l, "prometheus") || strings.Contains(l, "jsonschema") {
			t.Errorf("engine links %s", l)
		}
	}
}

// TestMetrics_connectionsRefusedAndClosed: refused connections count by
// reason, closed ones by why they closed.
func TestMetrics_connectionsRefusedAndClosed(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	var refuse atomic.Bool
	s := startServer(t, tab, engine.WithMaxConns(3),
		engine.WithAcceptConn(func(net.Addr) bool { return !refuse.Load() }),
		engine.WithTimeouts(300*time.Millisecond, 150*time.Millisecond, 0))
	dial := func() net.Conn {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	closed := func(c net.Conn) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("not closed by the server: %v", err)
		}
	}
	refuse.Store(true)
	closed(dial()) // refused by AcceptConn
	refuse.Store(false)

	idle := dial() // closed by the idle timeout
	partial := dial()
	io.WriteString(partial, `{"jsonrpc":"2.0"`) // closed by the read timeout
	bad := dial()
	io.WriteString(bad, "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n") // closed: not HTTP
	closed(bad)
	for deadline := time.Now().Add(5 * time.Second); s.e.Stats().Conns != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("open connections: %d, want 2", s.e.Stats().Conns)
		}
	}
	third := dial()
	io.WriteString(third, add+"\n")
	over := dial() // the fourth: past MaxConns
	closed(over)
	third.Close()
	closed(idle)
	closed(partial)
	for deadline := time.Now().Add(5 * time.Second); s.e.Stats().Conns != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("open connections: %d, want 0", s.e.Stats().Conns)
		}
	}
	f := s.scrape(t)
	want(t, f, 1, "jsonrpc_server_connections_refused_total", "reason", "address")
	want(t, f, 1, "jsonrpc_server_connections_refused_total", "reason", "max_conns")
	want(t, f, 1, "jsonrpc_server_limit_refusals_total", "limit", "connections")
	want(t, f, 1, "jsonrpc_server_connections_closed_total", "reason", "idle")
	want(t, f, 1, "jsonrpc_server_connections_closed_total", "reason", "read_timeout")
	want(t, f, 1, "jsonrpc_server_connections_closed_total", "reason", "protocol")
	want(t, f, 1, "jsonrpc_server_connections_closed_total", "reason", "client")
	want(t, f, 5, "jsonrpc_server_connections_accepted_total") // idle, partial, bad, third, and the scrape's own
}
