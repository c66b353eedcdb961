package main

// Tests of jetrpc serve's operating flags (operate.go): --metrics on a
// listener of its own or on a path of the JSON-RPC listeners,
// --access-log, --access-log-sample and --slow-call, run in-process.

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// served is a jetrpc serve run in-process.
type served struct {
	out, errOut *syncBuffer
	cancel      context.CancelFunc
	done        chan error
	rpc         string            // the first http:// URL
	urls        map[string]string // the first line's URLs by scheme (urlsIn)
	metrics     []string
}

// serveOperate runs jetrpc serve with args until stop or the end of the
// test, and returns once it prints its first JSON-RPC URL and, when
// wantMetrics, a metrics URL.
func serveOperate(t *testing.T, wantMetrics bool, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{out: &syncBuffer{}, errOut: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- run(ctx, append([]string{"serve"}, args...), s.out, s.errOut) }()
	t.Cleanup(func() { s.stop(t) })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.rpc, s.metrics = "", nil
		for _, l := range strings.Split(s.out.String(), "\n") {
			switch {
			case strings.HasPrefix(l, "jetrpc: serving JSON-RPC on ") && s.rpc == "":
				s.urls = urlsIn(l)
				s.rpc = s.urls["http"]
			case strings.HasPrefix(l, "jetrpc: metrics on "):
				s.metrics = append(s.metrics, strings.TrimSpace(strings.TrimPrefix(l, "jetrpc: metrics on ")))
			}
		}
		if s.rpc != "" && (!wantMetrics || len(s.metrics) > 0) {
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("serve %q: %v; stdout %q, stderr %q", args, err, s.out.String(), s.errOut.String())
		default:
		}
	}
	t.Fatalf("serve %q: not serving; stdout %q, stderr %q", args, s.out.String(), s.errOut.String())
	return nil
}

// stop stops the server and waits for run to return; it may be called
// again (the end of the test does).
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("serve did not stop")
	}
}

// getAccept GETs url with the Accept field accept ("" for none) and
// returns the body of a 200.
func getAccept(t *testing.T, url, accept string) string {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// get returns the status, Content-Type and body of a GET of url.
func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestServe_metricsOwnListener: --metrics host:port prints the metrics
// URL and serves the exposition there, a pointer to it at /, and closes
// the listener when serve stops.
func TestServe_metricsOwnListener(t *testing.T) {
	s := serveOperate(t, true, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0")
	if len(s.metrics) != 1 || !strings.HasPrefix(s.metrics[0], "http://127.0.0.1:") || !strings.HasSuffix(s.metrics[0], "/metrics") ||
		strings.Contains(s.metrics[0], ":0/") {
		t.Fatalf("metrics URLs %q", s.metrics)
	}
	callHTTP(t, s.rpc)
	st, ct, body := get(t, s.metrics[0])
	if st != 200 || !strings.HasPrefix(ct, "text/plain") ||
		!strings.Contains(body, `jsonrpc_server_handled_total{code="0",method="add"} 1`) || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET %s: %d %q\n%s", s.metrics[0], st, ct, body)
	}
	if st, _, body := get(t, strings.TrimSuffix(s.metrics[0], "metrics")); st != 200 || !strings.Contains(body, "/metrics") {
		t.Errorf("GET /: %d %q", st, body)
	}
	if st, _, _ := get(t, strings.TrimSuffix(s.metrics[0], "metrics")+"nope"); st != 404 {
		t.Errorf("GET /nope: %d", st)
	}
	// The JSON-RPC listeners do not serve it.
	if st, _, _ := get(t, strings.TrimSuffix(s.rpc, "/")+"/metrics"); st == 200 {
		t.Errorf("the JSON-RPC listener serves /metrics too")
	}
	host := strings.TrimSuffix(strings.TrimPrefix(s.metrics[0], "http://"), "/metrics")
	s.stop(t)
	if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
		c.Close()
		t.Errorf("the metrics listener %s is still open after serve stopped", host)
	}
	ln, err := net.Listen("tcp", host)
	if err != nil {
		t.Fatalf("the metrics port is not free again: %v", err)
	}
	ln.Close()
}

// TestServe_metricsPath: --metrics /path serves the exposition on the
// JSON-RPC listeners, beside the calls, and prints its URL.
func TestServe_metricsPath(t *testing.T) {
	s := serveOperate(t, true, "--listen", "127.0.0.1:0", "--metrics", "/metrics")
	if want := strings.TrimSuffix(s.rpc, "/") + "/metrics"; len(s.metrics) != 1 || s.metrics[0] != want {
		t.Fatalf("metrics URLs %q, want %q", s.metrics, want)
	}
	callHTTP(t, s.rpc)
	st, ct, body := get(t, s.metrics[0])
	if st != 200 || !strings.HasPrefix(ct, "text/plain") || !strings.Contains(body, `jsonrpc_server_handled_total{code="0",method="add"} 1`) ||
		!strings.Contains(body, `jsonrpc_server_connections{transport="http"}`) {
		t.Fatalf("GET %s: %d %q\n%s", s.metrics[0], st, ct, body)
	}
	callHTTP(t, s.rpc)
	callStream(t, "tcp", strings.TrimSuffix(strings.TrimPrefix(s.rpc, "http://"), "/"))
}

// TestServe_metricsPathIsServed: whatever path --metrics names on the
// JSON-RPC listeners, the URL serve prints serves the metrics — or the
// path is refused before serving.
//
// --metrics /health printed "metrics on http://…/health", which answered the health check: the engine routes the health path first.
func TestServe_metricsPathIsServed(t *testing.T) {
	for _, path := range []string{"/health", "/stats", "/"} {
		t.Run(path, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var out, errOut syncBuffer
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--metrics", path}, &out, &errOut)
			}()
			defer func() { cancel(); <-done }()
			var url string
			for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				select {
				case err := <-done:
					done <- err
					if err == nil || strings.Contains(out.String(), "serving") {
						t.Fatalf("exited with %v after serving", err)
					}
					return // refused before serving: fine
				default:
				}
				for _, l := range strings.Split(out.String(), "\n") {
					if u, ok := strings.CutPrefix(l, "jetrpc: metrics on "); ok {
						url = strings.TrimSpace(u)
					}
				}
			}
			if url == "" {
				t.Fatalf("no metrics URL printed: %q", out.String())
			}
			if st, _, body := get(t, url); st != 200 || !strings.Contains(body, "jsonrpc_server_") {
				t.Errorf("GET %s (printed as the metrics URL): %d %q", url, st, body)
			}
		})
	}
}

// TestServe_operateFlagsRefused: bad --metrics, --access-log-sample and
// --slow-call values are refused with an error naming the flag, before
// anything listens.
func TestServe_operateFlagsRefused(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--metrics", "http://127.0.0.1:9100/metrics"}, "--metrics"},
		{[]string{"--metrics", "foo"}, "--metrics"},
		{[]string{"--metrics", "/a?b"}, "--metrics"},
		{[]string{"--metrics", "/a#b"}, "--metrics"},
		{[]string{"--metrics", "/a b"}, "--metrics"},
		{[]string{"--metrics", "127.0.0.1"}, "--metrics"},
		{[]string{"--metrics", taken.Addr().String()}, "--metrics"},
		{[]string{"--access-log-sample", "2"}, "--access-log-sample"},
		{[]string{"--access-log", "--access-log-sample", "-0.5"}, "--access-log-sample"},
		{[]string{"--slow-call", "-1s"}, "--slow-call"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var out, errOut syncBuffer
		err := run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, c.args...), &out, &errOut)
		cancel()
		if err == nil || strings.Contains(out.String(), "serving") {
			t.Errorf("%q: err %v, stdout %q: want an error before serving", c.args, err, out.String())
			continue
		}
		if !strings.Contains(err.Error()+errOut.String(), c.flag) {
			t.Errorf("%q: error %q does not name %s", c.args, err, c.flag)
		}
	}
}

// TestServe_accessLogSampleNaNRefused: --access-log-sample NaN is
// refused as any share outside 0 to 1 is.
//
// NaN passed the range check (every comparison with NaN is false), and --access-log then logged nothing, silently.
func TestServe_accessLogSampleNaNRefused(t *testing.T) {
	for _, v := range []string{"NaN", "nan", "+Inf"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var out, errOut syncBuffer
		err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--access-log", "--access-log-sample", v}, &out, &errOut)
		cancel()
		if err == nil || strings.Contains(out.String(), "serving") || !strings.Contains(err.Error()+errOut.String(), "--access-log-sample") {
			t.Errorf("--access-log-sample %s: err %v, stdout %q: want an error naming the flag before serving", v, err, out.String())
		}
	}
}

// waitLog waits until the server's stderr holds n lines containing
// substr, and returns it.
func waitLog(t *testing.T, s *served, substr string, n int) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Count(s.errOut.String(), substr) >= n {
			break
		}
	}
	return s.errOut.String()
}

// logLines returns the lines of logs with msg="jetrpc: …".
func logLines(logs, msg string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `msg="`+msg+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// TestServe_accessLog: --access-log writes one record to stderr per
// message: a call with its method, id, code and transport; a
// notification marked so; a batch with its counts; a call over a stream.
func TestServe_accessLog(t *testing.T) {
	s := serveOperate(t, false, "--listen", "127.0.0.1:0", "--access-log")
	callHTTP(t, s.rpc)
	postAs(t, s.rpc, `{"jsonrpc":"2.0","method":"add","params":[1,2]}`)
	postAs(t, s.rpc, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3},{"jsonrpc":"2.0","method":"nope","id":4},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":5}]`)
	postAs(t, s.rpc, `{"jsonrpc":"2.0","method":"sleep","params":[1],"id":"s"}`)
	callStream(t, "tcp", strings.TrimSuffix(strings.TrimPrefix(s.rpc, "http://"), "/"))
	logs := waitLog(t, s, "jetrpc: ", 5)
	calls := logLines(logs, "jetrpc: call")
	batches := logLines(logs, "jetrpc: batch")
	if len(calls) != 4 || len(batches) != 1 {
		t.Fatalf("%d call records (want 4), %d batch records (want 1):\n%s", len(calls), len(batches), logs)
	}
	for i, want := range [][]string{
		{"level=INFO", "method=add", "id=1", "code=0", "duration_ms=", "transport=http", "remote=127.0.0.1:"},
		{"method=add", "notification=true", "code=0", "transport=http"},
		{"method=sleep", " id=s ", "code=0", "duration_ms=", "transport=http"},
		{"method=add", "id=1", "code=0", "transport=stream"},
	} {
		for _, w := range want {
			if !strings.Contains(calls[i], w) {
				t.Errorf("record %d %q: no %s", i, calls[i], w)
			}
		}
	}
	for _, w := range []string{"elements=3", "errors=1", "transport=http"} {
		if !strings.Contains(batches[0], w) {
			t.Errorf("batch record %q: no %s", batches[0], w)
		}
	}
	if len(logLines(logs, "jetrpc: slow call")) != 0 {
		t.Errorf("slow records without --slow-call:\n%s", logs)
	}
}

// TestServe_accessLogRefusals: --access-log records the requests
// refused before JSON-RPC — here a Host --vhosts does not allow — with
// their status and reason; it recorded none.
func TestServe_accessLogRefusals(t *testing.T) {
	s := serveOperate(t, false, "--listen", "127.0.0.1:0", "--access-log", "--vhosts", "localhost")
	if code, _ := postAs(t, s.rpc, addCall, "Host", "evil.example"); code != 403 {
		t.Fatalf("a Host not allowed: %d, want 403", code)
	}
	logs := waitLog(t, s, "jetrpc: refused", 1)
	refused := logLines(logs, "jetrpc: refused")
	if len(refused) != 1 {
		t.Fatalf("%d refusal records, want 1:\n%s", len(refused), logs)
	}
	for _, w := range []string{"level=INFO", "status=403", "reason=forbidden_host", "transport=http", "remote=127.0.0.1:"} {
		if !strings.Contains(refused[0], w) {
			t.Errorf("record %q: no %s", refused[0], w)
		}
	}
}

// TestServe_slowCallAlone: --slow-call without --access-log logs only
// the slow messages, at WARN — a slow call and a slow batch.
func TestServe_slowCallAlone(t *testing.T) {
	s := serveOperate(t, false, "--listen", "127.0.0.1:0", "--slow-call", "30ms")
	callHTTP(t, s.rpc)
	postAs(t, s.rpc, `{"jsonrpc":"2.0","method":"sleep","params":[1],"id":1}`)
	postAs(t, s.rpc, `{"jsonrpc":"2.0","method":"sleep","params":[80],"id":2}`)
	postAs(t, s.rpc, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3},{"jsonrpc":"2.0","method":"sleep","params":[80],"id":4}]`)
	postAs(t, s.rpc, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":5}]`)
	logs := waitLog(t, s, "jetrpc: slow ", 2)
	time.Sleep(50 * time.Millisecond)
	logs = s.errOut.String()
	slow, slowBatch := logLines(logs, "jetrpc: slow call"), logLines(logs, "jetrpc: slow batch")
	if len(slow) != 1 || !strings.Contains(slow[0], "method=sleep") || !strings.Contains(slow[0], "id=2") || !strings.Contains(slow[0], "level=WARN") {
		t.Errorf("slow call records %q", slow)
	}
	if len(slowBatch) != 1 || !strings.Contains(slowBatch[0], "elements=2") {
		t.Errorf("slow batch records %q", slowBatch)
	}
	if n := len(logLines(logs, "jetrpc: call")) + len(logLines(logs, "jetrpc: batch")); n != 0 {
		t.Errorf("%d records of fast messages:\n%s", n, logs)
	}
}

// TestServe_accessLogSampleZero: --access-log --access-log-sample 0 logs
// nothing but slow messages.
func TestServe_accessLogSampleZero(t *testing.T) {
	s := serveOperate(t, false, "--listen", "127.0.0.1:0", "--access-log", "--access-log-sample", "0", "--slow-call", "30ms")
	for range 5 {
		callHTTP(t, s.rpc)
	}
	postAs(t, s.rpc, `{"jsonrpc":"2.0","method":"sleep","params":[60],"id":2}`)
	logs := waitLog(t, s, "jetrpc: slow call", 1)
	if len(logLines(logs, "jetrpc: slow call")) != 1 || len(logLines(logs, "jetrpc: call")) != 0 {
		t.Errorf("logs:\n%s", logs)
	}
}
