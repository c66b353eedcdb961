//go:build unix

package peers

// NOTE: trace context from another OpenTelemetry SDK, end to end. A
// client instrumented with the Node.js OpenTelemetry SDK (the npm
// packages pinned in testdata/otelclient/package.json, running
// testdata/otelclient/client.mjs) calls `jetrpc serve` (this checkout's
// cmd/jetrpc, built and started by browser_test.go's helpers) with its
// CLIENT span's W3C traceparent, and both export over OTLP/HTTP to a
// real Jaeger v2 (the binary JETRPC_JAEGER names, with
// bench/jaeger/jaeger-ci.yaml on free loopback ports). Jaeger's query
// API must then give back one trace holding the Node span and jetrpc's
// SERVER span, the latter a child of the former. serve runs with
// --trace-sample 0, so its span exists only because the client's
// traceparent is sampled.
//
// Skips follow the other tests': without node or npm on PATH the test
// skips (as TestNodeWS_client does); without JETRPC_JAEGER it skips,
// unless JETRPC_REQUIRE_JAEGER=1 (set by .ci/run) makes that a failure
// (as cmd/jetrpc's TestJaeger_serveSpans does). needJaeger and
// startJaeger are copies of that test's, the modules being separate.
// The file is unix-only because browser_test.go's helpers are.

import (
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
)

const otelClientDir = "testdata/otelclient"

// The names of the two services in the trace: client.mjs's resource,
// and serve's default (OTEL_SERVICE_NAME unset).
const (
	otelClientService = "node-otel-client"
	otelServerService = "jetrpc"
)

// requireJaeger turns a missing Jaeger into a failure (CI builds it).
const requireJaeger = "JETRPC_REQUIRE_JAEGER"

// otelClientSummary is the line client.mjs prints on success.
type otelClientSummary struct {
	OK      bool   `json:"ok"`
	Node    string `json:"node"`
	SDK     string `json:"sdk"`
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
	Status  int    `json:"status"`
	Reply   struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	} `json:"reply"`
}

// otelClientPins returns the packages testdata/otelclient/package.json
// depends on and their versions, failing the test unless every one is
// pinned exactly.
func otelClientPins(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(otelClientDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	if len(pkg.Dependencies) == 0 {
		t.Fatal("package.json has no dependencies")
	}
	for name, v := range pkg.Dependencies {
		if v == "" || strings.ContainsAny(v, "^~<>=* ") {
			t.Fatalf("package.json must pin %s to an exact version, has %q", name, v)
		}
	}
	return pkg.Dependencies
}

// installedNodePackage returns the version of the npm package name in
// dir's node_modules, "" if none.
func installedNodePackage(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &pkg)
	return pkg.Version
}

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
	t.Skipf("SKIPPED: %s; set %s=1 to make this a failure", msg, requireJaeger)
	return ""
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startJaeger runs Jaeger with bench/jaeger/jaeger-ci.yaml on free
// loopback ports until the test ends, and returns its OTLP/HTTP base URL
// (no path) and its query API's base URL once the API answers.
func startJaeger(t *testing.T, bin string) (otlpBase, queryURL string) {
	t.Helper()
	config, err := filepath.Abs("../jaeger/jaeger-ci.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(config); err != nil { // and go test's cache sees its changes
		t.Fatal(err)
	}
	query, otlpHTTP := freePort(t), freePort(t)
	cmd := exec.Command(bin, "--config", config)
	cmd.Env = append(os.Environ(),
		"JAEGER_QUERY_PORT="+strconv.Itoa(query),
		"JAEGER_QUERY_GRPC_PORT="+strconv.Itoa(freePort(t)),
		"JAEGER_OTLP_HTTP_PORT="+strconv.Itoa(otlpHTTP),
		"JAEGER_OTLP_GRPC_PORT="+strconv.Itoa(freePort(t)),
	)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
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
		if t.Failed() {
			t.Logf("jaeger's output:\n%s", out.String())
		}
	})
	otlpBase = fmt.Sprintf("http://127.0.0.1:%d", otlpHTTP)
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
				return otlpBase, queryURL
			}
		}
	}
	t.Fatalf("jaeger's query API did not answer:\n%s", out.String())
	return "", ""
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

// traceSpan is a span of one trace as Jaeger's OTLP JSON API (GET
// /api/v3/traces/ID) gives it, with its resource's service.name.
type traceSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"` // 2 SERVER, 3 CLIENT
	service      string
}

func (s *traceSpan) String() string {
	return fmt.Sprintf("%s/%s kind %d trace %s span %s parent %q", s.service, s.Name, s.Kind, s.TraceID, s.SpanID, s.ParentSpanID)
}

// jaegerTrace returns the spans of trace id in Jaeger, nil while it has
// none.
func jaegerTrace(t *testing.T, queryURL, id string) []*traceSpan {
	t.Helper()
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
					Spans []*traceSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		} `json:"result"`
	}
	if !jaegerGet(t, queryURL+"/api/v3/traces/"+id, &got) {
		return nil
	}
	var spans []*traceSpan
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
	return spans
}

// jaegerUISpan is a span of the v1 API (GET /api/traces/ID), the one
// Jaeger's UI draws: its parent is a CHILD_OF reference.
type jaegerUISpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
}

func TestOtelNode_clientSpanIsServerSpanParent(t *testing.T) {
	jaeger := needJaeger(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: the OpenTelemetry Node.js interop test needs node on PATH: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("SKIPPED: the OpenTelemetry Node.js interop test needs npm on PATH: %v", err)
	}
	start := time.Now()
	pins := otelClientPins(t)
	for name, want := range pins {
		if got := installedNodePackage(otelClientDir, name); got != want {
			t.Logf("%s/node_modules has %s %q, package.json pins %s: running npm ci", otelClientDir, name, got, want)
			out, errOut, err := runTool(t, 3*time.Minute, otelClientDir, npm, "ci", "--no-audit", "--no-fund")
			if err != nil {
				t.Fatalf("npm ci: %v\n%s%s", err, out, errOut)
			}
			break
		}
	}
	for name, want := range pins {
		if got := installedNodePackage(otelClientDir, name); got != want {
			t.Fatalf("node_modules has %s %q, want %s", name, got, want)
		}
	}

	otlpBase, queryURL := startJaeger(t, jaeger)
	bin := buildJetrpc(t)
	// serve's batch processor would hold its span for 5 s (the SDK's
	// default delay); and its service is the default name.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	httpURL, _ := startJetrpc(t, bin, "--otlp-endpoint", otlpBase, "--trace-sample", "0")

	out, errOut, err := runTool(t, 30*time.Second, otelClientDir, node, "client.mjs", httpURL, otlpBase+"/v1/traces")
	var c otelClientSummary
	last := nodeSummary(t, httpURL, out, errOut, err, &c)
	if !c.OK || c.SDK != pins["@opentelemetry/sdk-trace-node"] || c.Status != 200 ||
		c.Reply.JSONRPC != "2.0" || string(c.Reply.ID) != "1" || string(c.Reply.Result) != "3" || c.Reply.Error != nil ||
		len(c.TraceID) != 32 || len(c.SpanID) != 16 {
		t.Fatalf("summary: %s", last)
	}
	t.Logf("node %s, sdk-trace-node %s: %s", c.Node, c.SDK, last)

	// The client exported its span before it printed; serve's comes
	// within its batch delay, and Jaeger stores both after its own.
	var client, server *traceSpan
	var spans []*traceSpan
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		spans = jaegerTrace(t, queryURL, c.TraceID)
		client, server = nil, nil
		for _, s := range spans {
			switch s.service {
			case otelClientService:
				client = s
			case otelServerService:
				server = s
			}
		}
		if (client != nil && server != nil) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("trace read after %v", time.Since(start).Round(time.Millisecond))
	for _, s := range spans {
		t.Logf("span %s", s)
	}
	if client == nil || server == nil || len(spans) != 2 {
		t.Fatalf("trace %s in Jaeger: %d spans; want the %s CLIENT span and the %s SERVER span", c.TraceID, len(spans), otelClientService, otelServerService)
	}
	if client.SpanID != c.SpanID || client.Kind != 3 || client.Name != "add" || client.ParentSpanID != "" {
		t.Errorf("client span %s; want the root CLIENT span add with id %s", client, c.SpanID)
	}
	if server.Kind != 2 || server.Name != "add" || server.TraceID != c.TraceID || server.ParentSpanID != c.SpanID {
		t.Errorf("server span %s; want the SERVER span add, child of %s in trace %s", server, c.SpanID, c.TraceID)
	}

	// The same in the v1 API that Jaeger's UI draws: a CHILD_OF reference.
	var ui struct {
		Data []struct {
			Spans     []jaegerUISpan `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if !jaegerGet(t, queryURL+"/api/traces/"+c.TraceID, &ui) || len(ui.Data) != 1 {
		t.Fatalf("GET /api/traces/%s: no trace", c.TraceID)
	}
	found := false
	for _, s := range ui.Data[0].Spans {
		if ui.Data[0].Processes[s.ProcessID].ServiceName != otelServerService {
			continue
		}
		found = true
		if s.OperationName != "add" || len(s.References) != 1 || s.References[0].RefType != "CHILD_OF" ||
			s.References[0].SpanID != c.SpanID || s.References[0].TraceID != c.TraceID {
			t.Errorf("v1 API: %s span %+v; want operation add, CHILD_OF %s", otelServerService, s, c.SpanID)
		}
	}
	if !found {
		t.Errorf("v1 API: no %s span in trace %s", otelServerService, c.TraceID)
	}
}
