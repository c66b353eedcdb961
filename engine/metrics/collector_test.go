package metrics_test

// Tests of the collector (Collector, Register, Page) against Prometheus'
// own checks: promtool's linter, the pedantic registry, and counters that
// never go back across scrapes taken under load.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

// traffic drives every kind of series of s once: calls that succeed and
// fail over HTTP, a stream and a WebSocket with a subscription, a batch,
// a notification, a message too large, a head too large.
func traffic(t *testing.T, s *server) {
	t.Helper()
	for _, body := range []string{
		add,
		`{"jsonrpc":"2.0","method":"add","params":[1,2]}`,
		`{"jsonrpc":"2.0","method":"nope","id":2}`,
		`{"jsonrpc":`,
		`[` + add + `,{"jsonrpc":"2.0","method":"fail","id":3},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":4}]`,
		`{"jsonrpc":"2.0","method":"fail","params":[1],"id":5}`,
		`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 3000) + `"],"id":6}`,
	} {
		postJSON(t, s.addr, body)
	}
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX: "+strings.Repeat("y", 5000)+"\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.Copy(io.Discard, c)
	c.Close()
	sc, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	_, _ = io.WriteString(sc, add+"\n"+`{"jsonrpc":"2.0","method":"sleep","params":[1],"id":7}`+"\n")
	sr := bufio.NewReader(sc)
	_ = sc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for range 2 {
		if _, err := sr.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"clock_subscribe","params":[5],"id":9}`))
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for range 3 {
		if _, _, err := ws.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
}

// rawScrape returns the exposition of s's page as served.
func rawScrape(t *testing.T, s *server) []byte {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %v %s", err, resp.Status)
	}
	return b
}

// TestCollector_promtoolLint: the exposition after every kind of
// traffic passes promtool check metrics.
func TestCollector_promtoolLint(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed")
	}
	tab := handler.NewTable(handler.WithMetrics(true), handler.WithMaxBatch(2))
	demo.Register(tab)
	s := startServer(t, tab, engine.WithMaxMessageSize(2048), engine.WithMaxHeaderSize(4096))
	traffic(t, s)
	postJSON(t, s.addr, `[1,2,3]`) // a batch too long
	exposition := rawScrape(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestCollector_pedanticRegistry: what the collector collects is what it
// describes, consistently — Prometheus' pedantic registry checks every
// metric against its descriptions.
func TestCollector_pedanticRegistry(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	s := startServer(t, tab, engine.WithMaxMessageSize(2048), engine.WithMaxHeaderSize(4096))
	traffic(t, s)
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(metrics.NewCollector(tab, s.e)); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("pedantic gather: %v", err)
	}
	tabOnly := prometheus.NewPedanticRegistry()
	if err := tabOnly.Register(metrics.NewCollector(tab, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := tabOnly.Gather(); err != nil {
		t.Fatalf("pedantic gather without an engine: %v", err)
	}
	plain := handler.NewTable() // no Options.Metrics
	demo.Register(plain)
	noMetrics := prometheus.NewPedanticRegistry()
	if err := noMetrics.Register(metrics.NewCollector(plain, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := noMetrics.Gather(); err != nil {
		t.Fatalf("pedantic gather of a table without metrics: %v", err)
	}
}

// TestCollector_engineNotStarted: an engine not started yet, or stopped,
// is collected without error.
func TestCollector_engineNotStarted(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"))
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, tab, e); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("before Start: %v", err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("after Stop: %v", err)
	}
}

// seriesKey names one series: its family and its labels.
func seriesKey(name string, m *dto.Metric, suffix string) string {
	var ls []string
	for _, l := range m.Label {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(ls)
	return name + suffix + "{" + strings.Join(ls, ",") + "}"
}

// monotonic returns the values of every counter, histogram count and
// bucket of fams, by series, and checks that each histogram is
// consistent in itself.
func monotonic(t *testing.T, fams []*dto.MetricFamily) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, f := range fams {
		name := f.GetName()
		if !strings.HasPrefix(name, metrics.Namespace) {
			continue
		}
		for _, m := range f.Metric {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[seriesKey(name, m, "")] = m.Counter.GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.Histogram
				out[seriesKey(name, m, "_count")] = float64(h.GetSampleCount())
				prev := uint64(0)
				for _, b := range h.Bucket {
					out[seriesKey(name, m, "_bucket_"+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))] = float64(b.GetCumulativeCount())
					if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
						t.Errorf("%s: bucket le=%v holds %d, after %d, of %d", seriesKey(name, m, ""), b.GetUpperBound(), b.GetCumulativeCount(), prev, h.GetSampleCount())
					}
					prev = b.GetCumulativeCount()
				}
			}
		}
	}
	return out
}

// TestCollector_countersNeverDecrease: scrapes taken while every
// transport is loaded never see a counter, a histogram's count or one of
// its buckets go back; at rest, every method's calls started equal those
// handled.
func TestCollector_countersNeverDecrease(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	workers := pool.NewWorkers(4, 4) // small: some messages are busy
	defer workers.Close()
	reg := prometheus.NewRegistry()
	s := startServer(t, tab, engine.WithWorkers(workers), engine.WithLoops(2))
	if err := reg.Register(metrics.NewCollector(tab, s.e)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				switch (g + i) % 4 {
				case 0:
					postJSON(t, s.addr, `[`+add+`,{"jsonrpc":"2.0","method":"sleep","params":[1],"id":2},{"jsonrpc":"2.0","method":"nope","id":3}]`)
				case 1:
					c, err := net.Dial("tcp", s.addr)
					if err != nil {
						t.Error(err)
						return
					}
					var b strings.Builder
					for range 20 {
						b.WriteString(add + "\n")
					}
					b.WriteString(`{"jsonrpc":"2.0","method":"sleep","params":[1],"id":1}` + "\n")
					_, _ = io.WriteString(c, b.String())
					r := bufio.NewReader(c)
					_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
					for range 21 {
						if _, err := r.ReadString('\n'); err != nil {
							t.Error(err)
							break
						}
					}
					c.Close()
				case 2:
					ws, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+"/", nil)
					if err != nil {
						t.Error(err)
						return
					}
					_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"clock_subscribe","params":[1],"id":1}`))
					_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
					for range 5 {
						if _, _, err := ws.ReadMessage(); err != nil {
							t.Error(err)
							break
						}
					}
					ws.Close()
				case 3:
					postJSON(t, s.addr, `{"jsonrpc":"2.0","method":"sleep","params":[2],"id":1}`)
				}
				calls.Add(1)
			}
		})
	}
	prev := map[string]float64{}
	scrapes := 0
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		cur := monotonic(t, fams)
		for k, v := range cur {
			if p, ok := prev[k]; ok && v < p {
				t.Errorf("scrape %d: %s went from %v to %v", scrapes, k, p, v)
			}
		}
		for k := range prev {
			if _, ok := cur[k]; !ok {
				t.Errorf("scrape %d: %s disappeared", scrapes, k)
			}
		}
		prev = cur
		scrapes++
	}
	close(stop)
	wg.Wait()
	if calls.Load() == 0 {
		t.Fatal("no traffic")
	}
	// At rest: started equals the sum of handled, method by method.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		started, handled := map[string]float64{}, map[string]float64{}
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			for _, m := range f.Metric {
				method := ""
				for _, l := range m.Label {
					if l.GetName() == "method" {
						method = l.GetValue()
					}
				}
				switch f.GetName() {
				case "jsonrpc_server_started_total":
					started[method] += m.Counter.GetValue()
				case "jsonrpc_server_handled_total":
					handled[method] += m.Counter.GetValue()
				}
			}
		}
		same := len(started) > 0
		for k, v := range started {
			same = same && handled[k] == v
		}
		if same {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("at rest after %d scrapes: started %v, handled %v", scrapes, started, handled)
		}
	}
	t.Logf("%d scrapes under %d client operations", scrapes, calls.Load())
}

// TestRegister_twiceIsAnError: registering a table's collectors twice on
// one registry is an error, not a panic.
func TestRegister_twiceIsAnError(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, tab, nil); err != nil {
		t.Fatal(err)
	}
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("the second Register panicked: %v", v)
			}
		}()
		err = metrics.Register(reg, tab, nil)
	}()
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		t.Fatalf("the second Register: %v, want an AlreadyRegisteredError", err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("the registry after the refused Register: %v", err)
	}
}

// TestRegister_besideTheRuntimeCollectors: a registry that already has
// the Go and process collectors — as prometheus.DefaultRegisterer has —
// takes the table's metrics: Register succeeds, and the table's series
// are gathered once.
//
// Register failed with "duplicate metrics collector registration attempted" after registering the table's collector, so it could not be retried either.
func TestRegister_besideTheRuntimeCollectors(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	err := metrics.Register(reg, tab, nil)
	fams, gerr := reg.Gather()
	if gerr != nil {
		t.Fatal(gerr)
	}
	n := 0
	for _, f := range fams {
		if f.GetName() == "jsonrpc_server_limit_refusals_total" {
			n++
		}
	}
	if err != nil {
		t.Errorf("Register on a registry with the runtime collectors: %v (the table's series registered anyway: %v)", err, n == 1)
	}
	if n != 1 {
		t.Errorf("the table's series gathered %d times", n)
	}
}

// failing is a collector whose metric is invalid, so that gathering
// fails.
type failing struct{ d *prometheus.Desc }

func (f failing) Describe(ch chan<- *prometheus.Desc) { ch <- f.d }
func (f failing) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(f.d, errors.New("the backend \"is\" down\nsecond line"))
}

// TestPage_gatherFailureStillServes: a gathering that fails serves what
// was gathered and a comment, which Prometheus' parser and promtool
// take.
func TestPage_gatherFailureStillServes(t *testing.T) {
	tab := handler.NewTable(handler.WithMetrics(true))
	demo.Register(tab)
	reg := prometheus.NewRegistry()
	reg.MustRegister(failing{prometheus.NewDesc("broken_total", "A broken counter.", nil, nil)})
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithPage(metrics.Page("/metrics", reg)))
	if err := reg.Register(metrics.NewCollector(tab, e)); err != nil {
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
	s := &server{e: e, t: tab, addr: e.Addrs()[0].String()}
	postJSON(t, s.addr, add)
	exposition := rawScrape(t, s)
	if !bytes.Contains(exposition, []byte("# jetrpc: gathering failed: ")) {
		t.Errorf("no failure comment:\n%s", exposition)
	}
	f := parse(t, bytes.NewReader(exposition))
	want(t, f, 1, "jsonrpc_server_handled_total", "method", "add", "code", "0")
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(exposition)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
