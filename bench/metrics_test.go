package bench

// Tests of the server view (metrics.go): hand-written expositions served by
// httptest, changing between the two scrapes, give known deltas; broken
// metrics endpoints give an error that names the URL, and the run goes on.

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// exposition values: handled counters and the per-method histograms. The
// deltas from expoBefore to expoAfter: calls add/0 +1000, add/-32602 +3
// (a new series), nope/-32601 +20, sub/0 +77 (a new method): 1100 calls,
// 23 errors. Cumulative bucket deltas, all methods merged: le 1e-5 0,
// 1e-4 600, 1e-3 1090, +Inf 1100.
const (
	expoBefore = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 12
# HELP jsonrpc_server_started_total Calls started.
# TYPE jsonrpc_server_started_total counter
jsonrpc_server_started_total{method="add"} 100
jsonrpc_server_started_total{method="nope"} 5
# HELP jsonrpc_server_handled_total Calls finished.
# TYPE jsonrpc_server_handled_total counter
jsonrpc_server_handled_total{code="0",method="add"} 100
jsonrpc_server_handled_total{code="-32601",method="nope"} 5
# HELP jsonrpc_server_handling_seconds Handling time of calls.
# TYPE jsonrpc_server_handling_seconds histogram
jsonrpc_server_handling_seconds_bucket{method="add",le="1e-05"} 50
jsonrpc_server_handling_seconds_bucket{method="add",le="0.0001"} 90
jsonrpc_server_handling_seconds_bucket{method="add",le="0.001"} 100
jsonrpc_server_handling_seconds_bucket{method="add",le="+Inf"} 100
jsonrpc_server_handling_seconds_sum{method="add"} 0.002
jsonrpc_server_handling_seconds_count{method="add"} 100
jsonrpc_server_handling_seconds_bucket{method="nope",le="1e-05"} 5
jsonrpc_server_handling_seconds_bucket{method="nope",le="0.0001"} 5
jsonrpc_server_handling_seconds_bucket{method="nope",le="0.001"} 5
jsonrpc_server_handling_seconds_bucket{method="nope",le="+Inf"} 5
jsonrpc_server_handling_seconds_sum{method="nope"} 2e-05
jsonrpc_server_handling_seconds_count{method="nope"} 5
`
	expoAfter = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 40
# HELP jsonrpc_server_started_total Calls started.
# TYPE jsonrpc_server_started_total counter
jsonrpc_server_started_total{method="add"} 1103
jsonrpc_server_started_total{method="nope"} 25
jsonrpc_server_started_total{method="sub"} 77
# HELP jsonrpc_server_handled_total Calls finished.
# TYPE jsonrpc_server_handled_total counter
jsonrpc_server_handled_total{code="0",method="add"} 1100
jsonrpc_server_handled_total{code="-32602",method="add"} 3
jsonrpc_server_handled_total{code="-32601",method="nope"} 25
jsonrpc_server_handled_total{code="0",method="sub"} 77
# HELP jsonrpc_server_handling_seconds Handling time of calls.
# TYPE jsonrpc_server_handling_seconds histogram
jsonrpc_server_handling_seconds_bucket{method="add",le="1e-05"} 50
jsonrpc_server_handling_seconds_bucket{method="add",le="0.0001"} 593
jsonrpc_server_handling_seconds_bucket{method="add",le="0.001"} 1093
jsonrpc_server_handling_seconds_bucket{method="add",le="+Inf"} 1103
jsonrpc_server_handling_seconds_sum{method="add"} 0.3
jsonrpc_server_handling_seconds_count{method="add"} 1103
jsonrpc_server_handling_seconds_bucket{method="nope",le="1e-05"} 5
jsonrpc_server_handling_seconds_bucket{method="nope",le="0.0001"} 25
jsonrpc_server_handling_seconds_bucket{method="nope",le="0.001"} 25
jsonrpc_server_handling_seconds_bucket{method="nope",le="+Inf"} 25
jsonrpc_server_handling_seconds_sum{method="nope"} 0.001
jsonrpc_server_handling_seconds_count{method="nope"} 25
jsonrpc_server_handling_seconds_bucket{method="sub",le="1e-05"} 0
jsonrpc_server_handling_seconds_bucket{method="sub",le="0.0001"} 77
jsonrpc_server_handling_seconds_bucket{method="sub",le="0.001"} 77
jsonrpc_server_handling_seconds_bucket{method="sub",le="+Inf"} 77
jsonrpc_server_handling_seconds_sum{method="sub"} 0.004
jsonrpc_server_handling_seconds_count{method="sub"} 77
`
)

// The expected quantiles of the deltas, in µs: p50 has rank 550 in the
// (10 µs, 100 µs] bucket of 600, p99 rank 1089 in (100 µs, 1 ms], the
// bucket's 490 after 600.
var (
	wantP50 = 10 + 90*550.0/600
	wantP99 = 100 + 900*489.0/490
)

// metricsServer serves the expositions in turn, one a GET, the last one
// again after; it records when each GET came. The server stops when the
// test ends.
type metricsServer struct {
	URL string
	mu  sync.Mutex
	at  []time.Time // guarded by mu
}

func newMetricsServer(t *testing.T, expositions ...string) *metricsServer {
	t.Helper()
	m := &metricsServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		n := len(m.at)
		m.at = append(m.at, time.Now())
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write([]byte(expositions[min(n, len(expositions)-1)]))
	}))
	t.Cleanup(srv.Close)
	m.URL = srv.URL + "/metrics"
	return m
}

func (m *metricsServer) scrapes() []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]time.Time(nil), m.at...)
}

// scrapeBoth reads url twice and returns the view of the window between.
func scrapeBoth(t *testing.T, url string) *ServerView {
	t.Helper()
	client := &http.Client{}
	before, err := scrapeServer(context.Background(), client, url)
	if err != nil {
		return failedView(url, " not read: "+err.Error())
	}
	time.Sleep(20 * time.Millisecond)
	after, err := scrapeServer(context.Background(), client, url)
	if err != nil {
		return failedView(url, " not read: "+err.Error())
	}
	return serverView(url, before, after)
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// checkDeltas checks the view of expoBefore to expoAfter.
func checkDeltas(t *testing.T, v *ServerView) {
	t.Helper()
	if v == nil || v.Error != "" {
		t.Fatalf("view %+v", v)
	}
	if v.Calls != 1100 || v.TotalErrors() != 23 || v.Errors["-32601"] != 20 || v.Errors["-32602"] != 3 || len(v.Errors) != 2 {
		t.Errorf("calls %d, errors %v; want 1100, -32601 20, -32602 3", v.Calls, v.Errors)
	}
	if v.Window <= 0 || !near(v.CallsPerSec, 1100/v.Window.Seconds()) {
		t.Errorf("rate %v over %v, want %v", v.CallsPerSec, v.Window, 1100/v.Window.Seconds())
	}
	if v.Handling == nil || !near(v.Handling.P50, wantP50) || !near(v.Handling.P99, wantP99) {
		t.Errorf("handling %+v, want p50 %v p99 %v", v.Handling, wantP50, wantP99)
	}
}

// TestServerView_deltasBetweenScrapes: the calls, errors by code, rate and
// quantiles are those of the change between the two scrapes, all methods
// merged, new series (a method, a code) counting from zero.
func TestServerView_deltasBetweenScrapes(t *testing.T) {
	m := newMetricsServer(t, expoBefore, expoAfter)
	checkDeltas(t, scrapeBoth(t, m.URL))
}

// TestServerView_noChange: no call in the window: zero calls and rate, no
// errors, no quantiles.
func TestServerView_noChange(t *testing.T) {
	m := newMetricsServer(t, expoBefore)
	v := scrapeBoth(t, m.URL)
	if v.Error != "" || v.Calls != 0 || v.CallsPerSec != 0 || len(v.Errors) != 0 || v.Handling != nil {
		t.Errorf("view %+v, want nothing handled", v)
	}
}

// TestServerView_freshServer: a server that had handled nothing when the
// window opened exposes no jsonrpc_server_* series yet (client_golang
// omits a vector without children): that is zero, not an error.
func TestServerView_freshServer(t *testing.T) {
	empty := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 3\n"
	m := newMetricsServer(t, empty, expoBefore)
	v := scrapeBoth(t, m.URL)
	if v.Error != "" || v.Calls != 105 || v.Errors["-32601"] != 5 || v.Handling == nil {
		t.Errorf("view %+v, want 105 calls, 5 -32601", v)
	}
}

// TestServerView_errors: a broken endpoint gives an error naming the URL
// and the cause.
func TestServerView_errors(t *testing.T) {
	unreachable := func() string { // a port with nothing listening on it
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "http://" + ln.Addr().String() + "/metrics"
	}()
	for _, c := range []struct {
		name string
		url  string
		want []string
	}{
		{"malformed", newMetricsServer(t, "jsonrpc_server_handled_total{code=\"0\" 12\n").URL,
			[]string{"text format parsing error in line 1"}},
		{"not a counter", newMetricsServer(t, "# TYPE jsonrpc_server_handled_total gauge\njsonrpc_server_handled_total 3\n").URL,
			[]string{"jsonrpc_server_handled_total is a GAUGE, not a counter"}},
		{"not jetrpc", newMetricsServer(t, "# TYPE up gauge\nup 1\n").URL,
			[]string{"no jsonrpc_server_handled_total in either scrape"}},
		{"counter reset", newMetricsServer(t, expoAfter, expoBefore).URL,
			[]string{"counters went down between the scrapes"}},
		{"status 500", func() string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "collector failed", http.StatusInternalServerError)
			}))
			t.Cleanup(srv.Close)
			return srv.URL + "/metrics"
		}(), []string{"HTTP 500 Internal Server Error: collector failed"}},
		{"status 404", func() string {
			srv := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(srv.Close)
			return srv.URL + "/nometrics"
		}(), []string{"HTTP 404 Not Found"}},
		{"unreachable", unreachable, []string{"connection refused"}},
	} {
		v := scrapeBoth(t, c.url)
		if !strings.HasPrefix(v.Error, "metrics at "+c.url) {
			t.Errorf("%s: error %q does not start with the URL", c.name, v.Error)
		}
		for _, w := range c.want {
			if !strings.Contains(v.Error, w) {
				t.Errorf("%s: error %q, want %q in it", c.name, v.Error, w)
			}
		}
		if v.Calls != 0 || v.Handling != nil {
			t.Errorf("%s: a failed view with figures: %+v", c.name, v)
		}
	}
}

// TestHistogramQuantile_promQL: the estimates of PromQL's
// histogram_quantile for the same buckets.
func TestHistogramQuantile_promQL(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name string
		q    float64
		bs   []bucket
		want float64 // NaN: none
	}{
		{"first bucket interpolates from 0", 0.5, []bucket{{1, 10}, {2, 10}, {inf, 10}}, 0.5},
		{"middle bucket", 0.75, []bucket{{1, 10}, {2, 30}, {inf, 30}}, 1.625},
		{"unsorted input", 0.75, []bucket{{inf, 30}, {2, 30}, {1, 10}}, 1.625},
		{"rank on a bound", 0.5, []bucket{{1, 5}, {2, 10}, {inf, 10}}, 1},
		{"+Inf bucket: highest finite bound", 0.99, []bucket{{1, 5}, {2, 10}, {inf, 20}}, 2},
		{"non-monotonic counts made monotonic", 0.5, []bucket{{1, 10}, {2, 8}, {inf, 20}}, 1},
		{"q 0", 0, []bucket{{1, 10}, {2, 20}, {inf, 20}}, 0},
		{"q 1", 1, []bucket{{1, 10}, {2, 20}, {inf, 20}}, 2},
		{"q above 1", 1.5, []bucket{{1, 10}, {inf, 10}}, inf},
		{"q below 0", -1, []bucket{{1, 10}, {inf, 10}}, math.Inf(-1)},
		{"no observation", 0.5, []bucket{{1, 0}, {inf, 0}}, math.NaN()},
		{"no +Inf bucket", 0.5, []bucket{{1, 10}, {2, 10}}, math.NaN()},
		{"one bucket", 0.5, []bucket{{inf, 10}}, math.NaN()},
	} {
		got := histogramQuantile(c.q, c.bs)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: q %v: %v, want %v", c.name, c.q, got, c.want)
		}
	}
}

// TestRun_metricsServerView: Run reads the metrics when the measured
// window opens, after the warm-up, and when it closes, and prints and
// encodes the server's view beside the client's.
func TestRun_metricsServerView(t *testing.T) {
	addr := NewLineServer(t, func(line string, _ int) string { return okReply(requestIDs(line)[0]) + "\n" })
	m := newMetricsServer(t, expoBefore, expoAfter)
	const warmup, window = 150 * time.Millisecond, 300 * time.Millisecond
	t0 := time.Now()
	res := mustRun(t, Config{Target: "tcp://" + addr, Warmup: warmup, Duration: window, MetricsURL: m.URL})
	checkDeltas(t, res.Server)
	at := m.scrapes()
	if len(at) != 2 {
		t.Fatalf("%d scrapes, want 2", len(at))
	}
	if at[0].Sub(t0) < warmup {
		t.Errorf("first scrape %v after the start, within the %v warm-up", at[0].Sub(t0), warmup)
	}
	if d := at[1].Sub(at[0]); d < window-20*time.Millisecond || d > window+200*time.Millisecond {
		t.Errorf("scrapes %v apart, want the %v window", d, window)
	}
	var b strings.Builder
	res.WriteTable(&b)
	for _, want := range []string{
		"client                server " + m.URL,
		"calls       " + strconv.FormatInt(res.Calls, 10) + " answered",
		"1100 handled",
		"23 error replies: -32601 20, -32602 3",
		usFloat(wantP50), usFloat(wantP99),
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Server struct {
			URL      string                `json:"url"`
			Calls    int64                 `json:"calls"`
			Errors   map[string]int64      `json:"errors"`
			Handling struct{ P50 float64 } `json:"handling_us"`
		} `json:"server"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if s := back.Server; s.URL != m.URL || s.Calls != 1100 || s.Errors["-32602"] != 3 || !near(s.Handling.P50, wantP50) {
		t.Errorf("JSON server %+v from %s", s, js)
	}
}

// TestRun_metricsRequestCount: a run of -n requests has no set end: the
// second scrape comes after its last reply.
func TestRun_metricsRequestCount(t *testing.T) {
	addr := NewLineServer(t, func(line string, _ int) string { return okReply(requestIDs(line)[0]) + "\n" })
	m := newMetricsServer(t, expoBefore, expoAfter)
	res := mustRun(t, Config{Target: "tcp://" + addr, Requests: 50, MetricsURL: m.URL})
	checkDeltas(t, res.Server)
	if n := len(m.scrapes()); n != 2 {
		t.Errorf("%d scrapes, want 2", n)
	}
}

// TestRun_metricsUnreachable: metrics that cannot be read do not stop the
// run: the client's figures are there, the server's view says why it is
// missing.
func TestRun_metricsUnreachable(t *testing.T) {
	addr := NewLineServer(t, func(line string, _ int) string { return okReply(requestIDs(line)[0]) + "\n" })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	res := mustRun(t, Config{Target: "tcp://" + addr, Duration: 100 * time.Millisecond, MetricsURL: url})
	if res.Requests == 0 || res.TotalErrors() != 0 {
		t.Errorf("client figures: %d requests, errors %v", res.Requests, res.Errors)
	}
	want := "metrics at " + url + " not read when the measured window opened: dial tcp"
	if res.Server == nil || !strings.HasPrefix(res.Server.Error, want) {
		t.Fatalf("server view %+v, want an error starting %q", res.Server, want)
	}
	var b strings.Builder
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "SERVER      "+want) || !strings.Contains(b.String(), "throughput") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestConfig_metricsURL: the metrics URL must be an http:// or https://
// URL with a host.
func TestConfig_metricsURL(t *testing.T) {
	for _, u := range []string{"127.0.0.1:9100", "ftp://h/metrics", "http:///metrics", "http://a b/"} {
		if _, err := Run(context.Background(), Config{Target: "tcp://127.0.0.1:1", MetricsURL: u}); err == nil || !strings.Contains(err.Error(), "metrics URL") {
			t.Errorf("%q: err %v, want a metrics URL error", u, err)
		}
	}
}

// TestServerView_writeTableSeparatesLongCounts: client cells as wide as
// the client column or wider stay two spaces clear of the server's
// (a run with 27,064 client errors printed "27064 wrong or
// missing26987 error replies"), and every server cell of the table
// starts in one column.
func TestServerView_writeTableSeparatesLongCounts(t *testing.T) {
	v := &ServerView{URL: "http://127.0.0.1:1/metrics", Window: time.Second, Calls: 123456789012, CallsPerSec: 1,
		Errors: map[string]int64{"-32000": 26987}}
	r := &Result{Duration: time.Second, Calls: 98765432109876, Errors: map[string]int64{ErrTimeout: 27064}}
	var b strings.Builder
	v.writeTable(&b, r)
	out := b.String()
	for _, want := range []string{
		`27064 wrong or missing {2,}26987 error replies: -32000 26987`,
		`98765432109876 answered {2,}123456789012 handled`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	col := -1
	for _, line := range strings.Split(strings.Trim(out, "\n"), "\n") {
		if strings.HasPrefix(line, "            (") { // the footnote, last
			break
		}
		// The server cell starts after the first run of two spaces or
		// more past the name column.
		rs := []rune(line)
		at := -1
		for i := 13; i < len(rs); i++ {
			if rs[i] != ' ' && rs[i-1] == ' ' && rs[i-2] == ' ' {
				at = i
				break
			}
		}
		switch {
		case at < 0:
			t.Errorf("no server cell in %q:\n%s", line, out)
		case col < 0:
			col = at
		case at != col:
			t.Errorf("server cell at %d, want %d: %q\n%s", at, col, line, out)
		}
	}
}
