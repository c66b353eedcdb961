package main

// NOTE: jetrpc serve's spans in a real Jaeger v2 (bench/jaeger: the
// binary named by JETRPC_JAEGER, with bench/jaeger/jaeger-ci.yaml on
// free loopback ports): serve exports over OTLP/HTTP with
// --otlp-endpoint, and the spans Jaeger's query API gives back carry the
// attributes handler/otel documents, for calls over HTTP (one with a
// client's traceparent, a batch, an error reply, an unknown method, a
// notification), WebSocket and a TCP stream (TestJaeger_serveSpans;
// one stream call's parent is in its params._meta, as MCP clients send
// it);
// and a call's span reaches Jaeger over OTLP/gRPC (--otlp-protocol grpc),
// and with the endpoint named only by OTEL_EXPORTER_OTLP_ENDPOINT
// (TestJaeger_serveSpansByProtocolAndEnvironment).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// requireJaeger turns a missing Jaeger into a failure (CI builds it).
const requireJaeger = "JETRPC_REQUIRE_JAEGER"

// needJaeger returns the path of the Jaeger v2 binary named by
// JETRPC_JAEGER, or skips the test (fails it with
// JETRPC_REQUIRE_JAEGER=1) where there is none.
func needJaeger(t *testing.T) string {
	t.Helper()
	path := os.Getenv("JETRPC_JAEGER")
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	msg := fmt.Sprintf("no Jaeger binary at JETRPC_JAEGER=%q (build it: cd bench/jaeger && go build -o /tmp/jaeger github.com/jaegertracing/jaeger/cmd/jaeger)", path)
	if os.Getenv(requireJaeger) == "1" {
		t.Fatalf("%s, and %s=1", msg, requireJaeger)
	}
	t.Skipf("%s; set %s=1 to make this a failure", msg, requireJaeger)
	return ""
}

// startJaeger runs Jaeger with bench/jaeger/jaeger-ci.yaml on free
// loopback ports until the test ends, and returns its OTLP/HTTP traces
// URL, its OTLP/gRPC endpoint (http://127.0.0.1:port) and its query
// API's base URL once the API answers.
func startJaeger(t *testing.T, bin string) (otlpURL, otlpGRPC, queryURL string) {
	t.Helper()
	config, err := filepath.Abs("../../bench/jaeger/jaeger-ci.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(config); err != nil { // and go test's cache sees its changes
		t.Fatal(err)
	}
	query, otlpHTTP, grpcPort := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(bin, "--config", config)
	cmd.Env = append(os.Environ(),
		"JAEGER_QUERY_PORT="+strconv.Itoa(query),
		"JAEGER_QUERY_GRPC_PORT="+strconv.Itoa(freePort(t)),
		"JAEGER_OTLP_HTTP_PORT="+strconv.Itoa(otlpHTTP),
		"JAEGER_OTLP_GRPC_PORT="+strconv.Itoa(grpcPort),
	)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stopping := time.Now()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		t.Logf("jaeger stopped in %v", time.Since(stopping).Round(time.Millisecond))
		if t.Failed() {
			t.Logf("jaeger's output:\n%s", out.String())
		}
	})
	otlpURL = fmt.Sprintf("http://127.0.0.1:%d/v1/traces", otlpHTTP)
	otlpGRPC = fmt.Sprintf("http://127.0.0.1:%d", grpcPort)
	queryURL = fmt.Sprintf("http://127.0.0.1:%d", query)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("jaeger exited:\n%s", out.String())
		default:
		}
		if resp, err := http.Get(queryURL + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return otlpURL, otlpGRPC, queryURL
			}
		}
	}
	t.Fatalf("jaeger's query API did not answer:\n%s", out.String())
	return "", "", ""
}

// otlpSpan is a span of the query API's OTLP JSON (GET /api/v3/traces/ID).
type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"`
	Attributes   []struct {
		Key   string `json:"key"`
		Value struct {
			StringValue *string `json:"stringValue"`
			IntValue    *string `json:"intValue"`
		} `json:"value"`
	} `json:"attributes"`
	Status struct {
		Code int `json:"code"`
	} `json:"status"`
	service string
}

// attr returns the span's attribute key as a string and whether it has
// one.
func (s *otlpSpan) attr(key string) (string, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			switch {
			case a.Value.StringValue != nil:
				return *a.Value.StringValue, true
			case a.Value.IntValue != nil:
				return *a.Value.IntValue, true
			}
			return "", true
		}
	}
	return "", false
}

func (s *otlpSpan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s kind %d trace %s span %s parent %q status %d {", s.Name, s.Kind, s.TraceID, s.SpanID, s.ParentSpanID, s.Status.Code)
	for _, a := range s.Attributes {
		v, _ := s.attr(a.Key)
		fmt.Fprintf(&b, " %s=%q", a.Key, v)
	}
	return b.String() + " }"
}

// jaegerGet gets url and decodes its JSON into v; false on a status
// other than 200 (such as 404 for a trace not stored yet).
func jaegerGet(t *testing.T, url string, v any) bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, b)
	}
	return true
}

// jaegerSpans returns every span of service's traces in Jaeger: the
// trace ids from the v1 search (GET /api/traces), then each trace in
// OTLP JSON from the v3 API (GET /api/v3/traces/ID).
func jaegerSpans(t *testing.T, queryURL, service string) []*otlpSpan {
	t.Helper()
	var found struct {
		Data []struct {
			TraceID string `json:"traceID"`
		} `json:"data"`
	}
	if !jaegerGet(t, queryURL+"/api/traces?service="+service+"&limit=1000&lookback=1h", &found) {
		return nil
	}
	var spans []*otlpSpan
	for _, tr := range found.Data {
		var got struct {
			Result struct {
				ResourceSpans []struct {
					Resource struct {
						Attributes []struct {
							Key   string `json:"key"`
							Value struct {
								StringValue string `json:"stringValue"`
							} `json:"value"`
						} `json:"attributes"`
					} `json:"resource"`
					ScopeSpans []struct {
						Spans []*otlpSpan `json:"spans"`
					} `json:"scopeSpans"`
				} `json:"resourceSpans"`
			} `json:"result"`
		}
		if !jaegerGet(t, queryURL+"/api/v3/traces/"+tr.TraceID, &got) {
			continue
		}
		for _, rs := range got.Result.ResourceSpans {
			svc := ""
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					svc = a.Value.StringValue
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					s.service = svc
					spans = append(spans, s)
				}
			}
		}
	}
	return spans
}

// wantSpan is a SERVER span the test expects of one call.
type wantSpan struct {
	name      string
	transport string
	attrs     map[string]string // besides rpc.system.name, jsonrpc.protocol.version and jetrpc.transport
	absent    []string          // attributes it must not have
	errorCode string            // rpc.response.status_code and error.type; "" for none
}

// matches reports whether s is the span w describes: its name,
// transport, method and id.
func (w *wantSpan) matches(s *otlpSpan) bool {
	if s.Name != w.name || s.Kind != 2 {
		return false
	}
	if v, _ := s.attr("jetrpc.transport"); v != w.transport {
		return false
	}
	for _, k := range []string{"rpc.method", "jsonrpc.request.id"} {
		want, wok := w.attrs[k]
		got, gok := s.attr(k)
		if wok != gok || want != got {
			return false
		}
	}
	return true
}

func TestJaeger_serveSpans(t *testing.T) {
	jaeger := needJaeger(t)
	start := time.Now()
	otlpURL, _, queryURL := startJaeger(t, jaeger)
	t.Logf("jaeger answers after %v", time.Since(start).Round(time.Millisecond))
	service := fmt.Sprintf("jetrpc-jaeger-test-%d", time.Now().UnixNano())
	t.Setenv("OTEL_SERVICE_NAME", service)

	srv := serveOperate(t, false, "--listen", "127.0.0.1:0", "--otlp-endpoint", otlpURL, "--trace-sample", "1",
		"--access-log", "--metrics", "/metrics")
	urls := srv.urls
	if urls["ws"] == "" || urls["tcp"] == "" {
		t.Fatalf("no WebSocket or TCP URL: %v", urls)
	}
	httpURL := urls["http"]

	// HTTP, with a sampled traceparent: the span is the client's child.
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := func(body string, header ...string) {
		t.Helper()
		code, reply := postAs(t, httpURL, body, header...)
		if code != 200 && code != 204 {
			t.Fatalf("POST %s: %d %s", body, code, reply)
		}
	}
	call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	call(`[{"jsonrpc":"2.0","method":"add","params":[3,4],"id":11},{"jsonrpc":"2.0","method":"echo","params":["x"],"id":"b12"}]`)
	call(`{"jsonrpc":"2.0","method":"fail","params":[1],"id":21}`)
	call(`{"jsonrpc":"2.0","method":"no_such_method","id":31}`)
	call(`{"jsonrpc":"2.0","method":"notify_hello","params":[7]}`)

	// WebSocket.
	ws, _, err := websocket.DefaultDialer.Dial(urls["ws"], nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"add","params":[5,6],"id":41}`)); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.ReadMessage(); err != nil || !strings.Contains(string(msg), `"result":11`) {
		t.Fatalf("WebSocket add: %s %v", msg, err)
	}
	ws.Close()

	// A TCP stream.
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(urls["tcp"], "tcp://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, `{"jsonrpc":"2.0","method":"add","params":[7,8],"id":51}`+"\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"result":15`) {
		t.Fatalf("TCP add: %q %v", line, err)
	}
	// An MCP-style client's trace context in params._meta, over the stream.
	const metaTrace, metaSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	if _, err := io.WriteString(c, `{"jsonrpc":"2.0","method":"subtract","params":{"minuend":9,"subtrahend":2,"_meta":{"traceparent":"00-`+metaTrace+`-`+metaSpan+`-01"}},"id":52}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"result":7`) {
		t.Fatalf("TCP subtract: %q %v", line, err)
	}
	c.Close()

	// The exposition a Prometheus scraper asks for (OpenMetrics) has the
	// exemplars of traced calls; the text format has none.
	metricsURL := strings.TrimSuffix(httpURL, "/") + "/metrics"
	om := getAccept(t, metricsURL, "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	text := getAccept(t, metricsURL, "")
	if !strings.Contains(om, `# {span_id="`) && !strings.Contains(om, `# {trace_id="`) {
		t.Errorf("OpenMetrics exposition without exemplars:\n%s", firstLines(grepLines(om, "handling_seconds_bucket"), 20))
	}
	if strings.Contains(text, "trace_id") || !strings.HasSuffix(om, "# EOF\n") {
		t.Errorf("text exposition with exemplars, or OpenMetrics without # EOF")
	}

	// Stopping serve flushes its spans (the tracer provider's shutdown).
	srv.stop(t)

	wants := []*wantSpan{
		{name: "add", transport: "http", attrs: map[string]string{"rpc.method": "add", "jsonrpc.request.id": "1", "network.protocol.name": "http", "network.transport": "tcp"}},
		{name: "jsonrpc.batch", transport: "http", attrs: map[string]string{"jetrpc.batch.size": "2", "jetrpc.batch.errors": "0"}, absent: []string{"rpc.method"}},
		{name: "add", transport: "http", attrs: map[string]string{"rpc.method": "add", "jsonrpc.request.id": "11"}},
		{name: "echo", transport: "http", attrs: map[string]string{"rpc.method": "echo", "jsonrpc.request.id": "b12"}},
		{name: "fail", transport: "http", attrs: map[string]string{"rpc.method": "fail", "jsonrpc.request.id": "21"}, errorCode: "1000"},
		{name: "jsonrpc", transport: "http", attrs: map[string]string{"rpc.method": "_OTHER", "rpc.method_original": "no_such_method", "jsonrpc.request.id": "31"}, errorCode: "-32601"},
		{name: "notify_hello", transport: "http", attrs: map[string]string{"rpc.method": "notify_hello"}, absent: []string{"jsonrpc.request.id"}},
		{name: "add", transport: "websocket", attrs: map[string]string{"rpc.method": "add", "jsonrpc.request.id": "41", "network.protocol.name": "websocket"}},
		{name: "add", transport: "stream", attrs: map[string]string{"rpc.method": "add", "jsonrpc.request.id": "51", "network.transport": "tcp"}, absent: []string{"network.protocol.name"}},
		{name: "subtract", transport: "stream", attrs: map[string]string{"rpc.method": "subtract", "jsonrpc.request.id": "52"}},
	}
	t.Logf("serve stopped after %v", time.Since(start).Round(time.Millisecond))
	// Jaeger stores what its batch processor passes on: poll.
	var spans []*otlpSpan
	found := make([]*otlpSpan, len(wants))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		spans = jaegerSpans(t, queryURL, service)
		all := true
		for i, w := range wants {
			found[i] = nil
			for _, s := range spans {
				if w.matches(s) {
					if found[i] != nil {
						t.Fatalf("two spans for %s over %s: %s and %s", w.name, w.transport, found[i], s)
					}
					found[i] = s
				}
			}
			all = all && found[i] != nil
		}
		if all || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("spans read after %v", time.Since(start).Round(time.Millisecond))
	for _, s := range spans {
		t.Logf("span %s", s)
	}
	if len(spans) != len(wants) {
		t.Errorf("Jaeger holds %d spans of %s; want %d", len(spans), service, len(wants))
	}
	for i, w := range wants {
		s := found[i]
		if s == nil {
			t.Errorf("no SERVER span %s (%v) over %s in Jaeger", w.name, w.attrs, w.transport)
			continue
		}
		if s.service != service {
			t.Errorf("%s: service.name %q; want %q", s, s.service, service)
		}
		want := map[string]string{"rpc.system.name": "jsonrpc", "jsonrpc.protocol.version": "2.0", "jetrpc.transport": w.transport}
		for k, v := range w.attrs {
			want[k] = v
		}
		if w.errorCode != "" {
			want["rpc.response.status_code"], want["error.type"] = w.errorCode, w.errorCode
			if s.Status.Code != 2 {
				t.Errorf("%s: status %d; want 2 (Error)", s, s.Status.Code)
			}
		} else {
			w.absent = append(w.absent, "rpc.response.status_code", "error.type")
			if s.Status.Code == 2 {
				t.Errorf("%s: status Error on a call that succeeded", s)
			}
		}
		for k, v := range want {
			if got, ok := s.attr(k); !ok || got != v {
				t.Errorf("%s: %s = %q (%v); want %q", s, k, got, ok, v)
			}
		}
		for _, k := range w.absent {
			if _, ok := s.attr(k); ok {
				t.Errorf("%s: has %s", s, k)
			}
		}
		switch batch := found[1]; {
		case i == 0: // the call with the client's traceparent
			if s.TraceID != clientTrace || s.ParentSpanID != clientSpan {
				t.Errorf("%s: want trace %s, parent %s (the client's traceparent)", s, clientTrace, clientSpan)
			}
			// Its access log record names its trace and span.
			rec := logRecord(t, srv.errOut.String(), " id=1 ")
			if rec["trace_id"] != s.TraceID || rec["span_id"] != s.SpanID {
				t.Errorf("access log record %v; want trace_id %s span_id %s", rec, s.TraceID, s.SpanID)
			}
		case w.name == "subtract": // params._meta.traceparent: the client's span is its parent
			if s.TraceID != metaTrace || s.ParentSpanID != metaSpan {
				t.Errorf("%s: want trace %s, parent %s (params._meta)", s, metaTrace, metaSpan)
			}
		case i == 2 || i == 3: // the batch's elements: the batch span's children
			if batch == nil || s.ParentSpanID != batch.SpanID || s.TraceID != batch.TraceID {
				t.Errorf("%s: want the batch span %v as its parent", s, batch)
			}
		case s.ParentSpanID != "" || s.TraceID == clientTrace:
			t.Errorf("%s: a root call's span has a parent, or the client's trace", s)
		}
	}
}

// TestJaeger_serveSpansByProtocolAndEnvironment: a call's span reaches
// Jaeger over OTLP/gRPC (--otlp-protocol grpc, --otlp-endpoint to its
// 4317-style port), and with no --otlp-endpoint at all, from
// OTEL_EXPORTER_OTLP_ENDPOINT (Jaeger's OTLP/HTTP base URL, and its
// gRPC port with OTEL_EXPORTER_OTLP_PROTOCOL=grpc).
func TestJaeger_serveSpansByProtocolAndEnvironment(t *testing.T) {
	jaeger := needJaeger(t)
	otlpURL, otlpGRPC, queryURL := startJaeger(t, jaeger)
	otlpBase := strings.TrimSuffix(otlpURL, "/v1/traces")
	for i, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{name: "grpc flags", args: []string{"--otlp-protocol", "grpc", "--otlp-endpoint", otlpGRPC}},
		{name: "http environment", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlpBase}},
		{name: "grpc environment", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlpGRPC, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			service := fmt.Sprintf("jetrpc-jaeger-test-%d-%d", time.Now().UnixNano(), i)
			t.Setenv("OTEL_SERVICE_NAME", service)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			srv := serveOperate(t, false, append([]string{"--listen", "127.0.0.1:0", "--trace-sample", "1"}, tc.args...)...)
			if code, reply := postAs(t, srv.rpc, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":61}`); code != 200 {
				t.Fatalf("add: %d %s", code, reply)
			}
			srv.stop(t) // flushes the spans
			w := &wantSpan{name: "add", transport: "http", attrs: map[string]string{"rpc.method": "add", "jsonrpc.request.id": "61"}}
			var spans []*otlpSpan
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				spans = jaegerSpans(t, queryURL, service)
				if len(spans) > 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(spans) != 1 || !w.matches(spans[0]) || spans[0].service != service {
				t.Errorf("Jaeger holds %d spans of %s: %v; want the SERVER span of add, id 61; serve's stderr %q", len(spans), service, spans, srv.errOut.String())
			}
		})
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// logRecord returns the fields (key=value) of the access log's call
// record in log whose line contains sub.
func logRecord(t *testing.T, log, sub string) map[string]string {
	t.Helper()
	for _, l := range logLines(log, "jetrpc: call") {
		if strings.Contains(l, sub) {
			rec := map[string]string{}
			for _, f := range strings.Fields(l) {
				if k, v, ok := strings.Cut(f, "="); ok {
					rec[k] = strings.Trim(v, `"`)
				}
			}
			return rec
		}
	}
	t.Fatalf("no access log record with %q in:\n%s", sub, log)
	return nil
}
