//go:build linux

package main

// Tests of jetrpc serve --metrics against the real Prometheus tools (Debian's
// prometheus package): a Prometheus server scrapes a jetrpc serve process
// while jetrpc bench loads it at a fixed rate, and its PromQL rate must
// agree with the rate the bench measured; promtool lints the exposition.
// Both run the jetrpc binary, built once per test, in processes of their
// own, on loopback ports, each bounded in time and ended by t.Cleanup.
// Without the tools they skip, unless JETRPC_REQUIRE_PROMETHEUS=1.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireProm is the variable that turns a missing prometheus or promtool
// into a failure (CI, where the package is installed).
const requireProm = "JETRPC_REQUIRE_PROMETHEUS"

// needTool returns the path of the command name, or skips the test (fails
// it with JETRPC_REQUIRE_PROMETHEUS=1) when it is not installed.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s is not installed (Debian: apt-get install --no-install-recommends prometheus): %v", name, err)
	if os.Getenv(requireProm) == "1" {
		t.Fatalf("%s, and %s=1", msg, requireProm)
	}
	t.Skipf("%s; set %s=1 to make this a failure", msg, requireProm)
	return ""
}

// buildJetrpc builds this command into a temporary folder and returns the
// binary's path.
func buildJetrpc(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(build.Default.GOROOT, "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "jetrpc")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goCmd, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startProcess starts name with args until the test ends: then it gets
// SIGTERM, and SIGKILL if it has not exited 10 s later. Its stdout and
// stderr go to out. The channel it returns is closed when it has exited.
func startProcess(t *testing.T, out io.Writer, name string, args ...string) <-chan struct{} {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// serveWithMetrics starts `jetrpc serve --listen 127.0.0.1:0 --metrics
// 127.0.0.1:0` and returns its JSON-RPC http:// URL and its metrics URL,
// read from the lines it prints.
func serveWithMetrics(t *testing.T, bin string, extra ...string) (rpcURL, metricsURL string) {
	t.Helper()
	var out syncBuffer
	exited := startProcess(t, &out, bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, extra...)...)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("jetrpc serve --metrics exited:\n%s", firstLines(out.String(), 5))
		default:
		}
		for _, l := range strings.Split(out.String(), "\n") {
			switch {
			case strings.HasPrefix(l, "jetrpc: serving JSON-RPC on "):
				rpcURL = urlsIn(l)["http"]
			case strings.HasPrefix(l, "jetrpc: metrics on "):
				metricsURL = strings.TrimSpace(strings.TrimPrefix(l, "jetrpc: metrics on "))
			}
		}
		if rpcURL != "" && metricsURL != "" {
			return rpcURL, metricsURL
		}
	}
	t.Fatalf("jetrpc serve --metrics printed no JSON-RPC URL or no metrics URL:\n%s", firstLines(out.String(), 5))
	return "", ""
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// freePort returns a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrometheus runs a Prometheus server, on a free loopback port with
// its storage in a temporary folder, that scrapes metricsURL every second,
// and returns its URL once it is ready.
func startPrometheus(t *testing.T, prom, metricsURL string, flags ...string) string {
	t.Helper()
	u, err := url.Parse(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: jetrpc
    metrics_path: %q
    static_configs:
      - targets: [%q]
`, u.Path, u.Host)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	var out syncBuffer
	args := append([]string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}, flags...)
	exited := startProcess(t, &out, prom, args...)
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", out.String())
		default:
		}
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
	t.Fatalf("prometheus on %s not ready in 30s:\n%s", addr, out.String())
	return ""
}

// promQuery evaluates query at time at with Prometheus' HTTP API and
// returns the value of its one sample; ok is false for an empty result.
func promQuery(t *testing.T, base, query string, at time.Time) (v float64, ok bool) {
	t.Helper()
	var data struct {
		Result []struct {
			Value [2]any `json:"value"` // [time, "value"]
		} `json:"result"`
	}
	promAPI(t, base, "query", url.Values{"query": {query}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}, &data)
	if len(data.Result) == 0 {
		return 0, false
	}
	s, _ := data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %q: value %q", query, s)
	}
	return v, true
}

// promAPI GETs Prometheus' HTTP API endpoint /api/v1/<endpoint> with q
// and decodes the data of a success into data.
func promAPI(t *testing.T, base, endpoint string, q url.Values, data any) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/" + endpoint + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   any    `json:"data"`
	}{Data: data}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("%s %v: %v %s %s", endpoint, q, err, r.Status, r.Error)
	}
}

// TestScrape_prometheusRate: Prometheus scrapes jetrpc serve --metrics every
// second while jetrpc bench sends 2000 requests/s in an open loop for 12 s;
// the server's handled rate that PromQL computes over 8 s inside the
// measured window is within 10 % of the rate the bench measured.
//
// The query is sum(rate(jsonrpc_server_handled_total[8s])) evaluated 2 s
// before the bench ended: its range, [end-10s, end-2s], lies inside the
// 12 s window (after the 1 s warm-up, whose load is at the same rate),
// away from its edges, and at 1 scrape a second holds about 8 samples;
// at a fixed open-loop rate the rate over any such range is the run's.
func TestScrape_prometheusRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run against a Prometheus server")
	}
	prom := needTool(t, "prometheus")
	bin := buildJetrpc(t)
	rpcURL, metricsURL := serveWithMetrics(t, bin)
	base := startPrometheus(t, prom, metricsURL)
	// Wait for the first scrapes, so that the run's window is all covered.
	up := false
	for deadline := time.Now().Add(20 * time.Second); !up && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v, ok := promQuery(t, base, `up{job="jetrpc"}`, time.Now())
		up = ok && v == 1
	}
	if !up {
		t.Fatalf("prometheus at %s never scraped %s successfully", base, metricsURL)
	}

	const rate, window = 2000, 12 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), window+60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "bench", "-q", "-json", "-rate", strconv.Itoa(rate), "-d", window.String(), "-c", "4",
		"-warmup", "1s", "-metrics", metricsURL, rpcURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	end := time.Now()
	if err != nil {
		t.Fatalf("jetrpc bench: %v\n%s\n%s", err, out, stderr.String())
	}
	var res struct {
		CallsPerSec float64 `json:"calls_per_sec"`
		Server      struct {
			Error       string  `json:"error"`
			CallsPerSec float64 `json:"calls_per_sec"`
		} `json:"server"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("bench -json: %v\n%s", err, out)
	}
	if res.CallsPerSec < 0.9*rate {
		t.Fatalf("the bench reached %.0f calls/s of %d: the machine is too busy for the comparison", res.CallsPerSec, rate)
	}

	at := end.Add(-2 * time.Second)
	const query = `sum(rate(jsonrpc_server_handled_total[8s]))`
	var promRate float64
	ok := false
	for deadline := time.Now().Add(10 * time.Second); !ok && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		promRate, ok = promQuery(t, base, query, at)
	}
	if !ok {
		t.Fatalf("%s at %v: no result", query, at)
	}
	t.Logf("bench %.1f calls/s; its -metrics view %.1f calls/s; Prometheus %s: %.1f calls/s",
		res.CallsPerSec, res.Server.CallsPerSec, query, promRate)
	if d := promRate/res.CallsPerSec - 1; d < -0.10 || d > 0.10 {
		t.Errorf("Prometheus rate %.1f calls/s, the bench's %.1f: %+.1f %%, want within 10 %%", promRate, res.CallsPerSec, 100*d)
	}
	if res.Server.Error != "" {
		t.Errorf("bench -metrics: %s", res.Server.Error)
	} else if d := res.Server.CallsPerSec/res.CallsPerSec - 1; d < -0.10 || d > 0.10 {
		t.Errorf("bench -metrics rate %.1f calls/s, its client-side %.1f: %+.1f %%", res.Server.CallsPerSec, res.CallsPerSec, 100*d)
	}
}

// TestScrape_promtoolLint: the exposition of jetrpc serve --metrics, after
// calls that succeed, fail, come in a batch and as a notification, passes
// promtool check metrics, which exits non-zero on a lint problem (checked
// first on a known-bad exposition, so that a promtool that lints nothing
// does not pass).
func TestScrape_promtoolLint(t *testing.T) {
	promtool := needTool(t, "promtool")
	check := func(exposition []byte) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(exposition)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := check([]byte("# HELP bad_count A counter named as a histogram part.\n# TYPE bad_count counter\nbad_count 1\n")); err == nil {
		t.Fatalf("promtool check metrics passed a counter without _total: %s", out)
	}

	bin := buildJetrpc(t)
	rpcURL, metricsURL := serveWithMetrics(t, bin)
	callHTTP(t, rpcURL)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"no_such_method","id":2}`,
		`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3},{"jsonrpc":"2.0","method":"add","params":[3],"id":4}]`,
		`{"jsonrpc":"2.0","method":"add","params":[1,2]}`,
	} {
		resp, err := http.Post(rpcURL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	exposition, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", metricsURL, resp.StatusCode, err)
	}
	if !bytes.Contains(exposition, []byte(`jsonrpc_server_handled_total{`)) || !bytes.Contains(exposition, []byte(`code="-32601"`)) {
		t.Errorf("GET %s: no jsonrpc_server_handled_total series with code -32601:\n%s", metricsURL, exposition)
	}
	if out, err := check(exposition); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestScrape_prometheusExemplars: a real Prometheus, its exemplar storage
// on, scrapes jetrpc serve --metrics with tracing (--trace-sample 0, to
// an OTLP/HTTP receiver on loopback) on the engine's own listener (the
// Page, which answers OpenMetrics to Prometheus' Accept) and on a
// listener of its own (promhttp); calls sent with a sampled traceparent
// are found among the exemplars of jsonrpc_server_handling_seconds
// through Prometheus' query_exemplars API, with their trace ids.
func TestScrape_prometheusExemplars(t *testing.T) {
	prom := needTool(t, "prometheus")
	bin := buildJetrpc(t)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, onPage := range []bool{true, false} {
		t.Run(map[bool]string{true: "page", false: "own listener"}[onPage], func(t *testing.T) {
			extra := []string{"--otlp-endpoint", sink.URL, "--trace-sample", "0"}
			var rpcURL, metricsURL string
			if onPage {
				extra = append(extra, "--metrics", "/metrics") // the last --metrics wins
				rpcURL, _ = serveWithMetricsPage(t, bin, extra...)
				metricsURL = strings.TrimSuffix(rpcURL, "/") + "/metrics"
			} else {
				rpcURL, metricsURL = serveWithMetrics(t, bin, extra...)
			}
			base := startPrometheus(t, prom, metricsURL, "--enable-feature=exemplar-storage")
			traceID := fmt.Sprintf("%016x%016x", time.Now().UnixNano(), 0xabc0+map[bool]int{true: 1, false: 2}[onPage])
			for i := range 3 {
				code, reply := postAs(t, rpcURL, fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":%d}`, i),
					"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
				if code != 200 || !strings.Contains(reply, `"result":3`) {
					t.Fatalf("add: %d %s", code, reply)
				}
			}
			start := time.Now().Add(-time.Minute)
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
				ids := promExemplarTraceIDs(t, base, `jsonrpc_server_handling_seconds_bucket{method="add"}`, start)
				if ids[traceID] {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("no exemplar with trace_id %s in Prometheus after 20 s; it has %v", traceID, ids)
				}
			}
		})
	}
}

// serveWithMetricsPage is serveWithMetrics for --metrics on the
// JSON-RPC listeners (a path): it returns the JSON-RPC URL only.
func serveWithMetricsPage(t *testing.T, bin string, extra ...string) (rpcURL, _ string) {
	t.Helper()
	var out syncBuffer
	exited := startProcess(t, &out, bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, extra...)...)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("jetrpc serve exited:\n%s", firstLines(out.String(), 5))
		default:
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "jetrpc: serving JSON-RPC on ") {
				return urlsIn(l)["http"], ""
			}
		}
	}
	t.Fatalf("jetrpc serve printed no JSON-RPC URL:\n%s", firstLines(out.String(), 5))
	return "", ""
}

// promExemplarTraceIDs returns the trace_id labels of the exemplars
// Prometheus holds for query since start.
func promExemplarTraceIDs(t *testing.T, base, query string, start time.Time) map[string]bool {
	t.Helper()
	var data []struct {
		Exemplars []struct {
			Labels map[string]string `json:"labels"`
		} `json:"exemplars"`
	}
	promAPI(t, base, "query_exemplars", url.Values{"query": {query}, "start": {strconv.FormatInt(start.Unix(), 10)},
		"end": {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)}}, &data)
	ids := map[string]bool{}
	for _, d := range data {
		for _, e := range d.Exemplars {
			ids[e.Labels["trace_id"]] = true
		}
	}
	return ids
}
