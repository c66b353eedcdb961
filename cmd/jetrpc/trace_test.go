package main

// NOTE: serve's spans reach real OTLP receivers on loopback: an
// OTLP/HTTP one (otlpHTTPReceiver, an httptest server) and an OTLP/gRPC
// one (otlpGRPCReceiver, the collector's TraceService on a grpc.Server);
// serveTraced runs serve with the flags of a case, makes its calls and
// stops it, which flushes the spans. The environment of each case is set
// with t.Setenv. A real Jaeger is in jaeger_test.go.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// otlpHTTPReceiver is an OTLP/HTTP receiver on loopback that records
// what it is sent.
type otlpHTTPReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	posts   []string      // "METHOD path content-type", guarded by mu
	headers []http.Header // of each post, guarded by mu
	body    []byte        // the bodies, guarded by mu
}

// newOTLPHTTPReceiver starts an otlpHTTPReceiver until the test ends.
func newOTLPHTTPReceiver(t *testing.T) *otlpHTTPReceiver {
	r := &otlpHTTPReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.posts = append(r.posts, req.Method+" "+req.URL.Path+" "+req.Header.Get("Content-Type"))
		r.headers = append(r.headers, req.Header.Clone())
		r.body = append(r.body, b...)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(r.Close)
	return r
}

// otlpGRPCReceiver is an OTLP/gRPC receiver (the collector's
// TraceService) on loopback that records what it is sent.
type otlpGRPCReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	addr    string // host:port
	mu      sync.Mutex
	exports int           // guarded by mu
	md      []metadata.MD // of each export, guarded by mu
	body    []byte        // the requests, marshalled, guarded by mu
}

// newOTLPGRPCReceiver starts an otlpGRPCReceiver until the test ends.
func newOTLPGRPCReceiver(t *testing.T) *otlpGRPCReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpGRPCReceiver{addr: ln.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

// Export records req and its metadata.
func (r *otlpGRPCReceiver) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	r.exports++
	r.md = append(r.md, md)
	r.body = append(r.body, b...)
	r.mu.Unlock()
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// serveTraced runs serve with args (and --listen 127.0.0.1:0
// --trace-sample 1), calls add and an unknown method over HTTP, stops it
// (which flushes the spans) and returns its stderr.
func serveTraced(t *testing.T, args ...string) string {
	t.Helper()
	srv := serveOperate(t, false, append([]string{"--listen", "127.0.0.1:0", "--trace-sample", "1"}, args...)...)
	postAs(t, srv.rpc, addCall)
	postAs(t, srv.rpc, `{"jsonrpc":"2.0","method":"no_such_method","id":2}`)
	srv.stop(t) // flushes the spans
	return srv.errOut.String()
}

// wantExported fails t unless body, the spans exported, holds the
// service jetrpc-test and serveTraced's calls.
func wantExported(t *testing.T, body []byte) {
	t.Helper()
	for _, want := range []string{"jetrpc-test", "rpc.method", "add", "_OTHER", "no_such_method", "jsonrpc"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the export has no %q", want)
		}
	}
}

// TestServe_otlpEndpoint: with --otlp-endpoint, the calls' spans reach
// the OTLP/HTTP receiver (POST /v1/traces) by the time serve stops: the
// exporter is flushed on stop.
func TestServe_otlpEndpoint(t *testing.T) {
	r := newOTLPHTTPReceiver(t)
	t.Setenv("OTEL_SERVICE_NAME", "jetrpc-test")
	stderr := serveTraced(t, "--otlp-endpoint", r.URL)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.posts) == 0 || !strings.HasPrefix(r.posts[0], "POST /v1/traces application/x-protobuf") {
		t.Fatalf("OTLP receiver got %q; stderr %q", r.posts, stderr)
	}
	wantExported(t, r.body)
}

// TestServe_otlpEnvironmentHeadersWithEndpointFlag: with --otlp-endpoint
// (an explicit endpoint URL to the exporter), OTEL_EXPORTER_OTLP_HEADERS
// still reaches the receiver, and the flag wins over
// OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_TRACES_EXPORTER=none.
func TestServe_otlpEnvironmentHeadersWithEndpointFlag(t *testing.T) {
	r := newOTLPHTTPReceiver(t)
	t.Setenv("OTEL_SERVICE_NAME", "jetrpc-test")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-jetrpc-test=h31,authorization=Bearer%20k1")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	stderr := serveTraced(t, "--otlp-endpoint", r.URL)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.posts) == 0 || !strings.HasPrefix(r.posts[0], "POST /v1/traces ") {
		t.Fatalf("OTLP receiver got %q; stderr %q", r.posts, stderr)
	}
	if h := r.headers[0]; h.Get("X-Jetrpc-Test") != "h31" || h.Get("Authorization") != "Bearer k1" {
		t.Errorf("the receiver got headers %v; want OTEL_EXPORTER_OTLP_HEADERS's", h)
	}
	wantExported(t, r.body)
}

// TestServe_otlpEnvironmentEndpoint: without --otlp-endpoint,
// OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on, as a base URL
// (/v1/traces appended to its path), with OTEL_EXPORTER_OTLP_HEADERS;
// OTEL_TRACES_SAMPLER=always_off does not stop the spans jetrpc sampled.
func TestServe_otlpEnvironmentEndpoint(t *testing.T) {
	r := newOTLPHTTPReceiver(t)
	t.Setenv("OTEL_SERVICE_NAME", "jetrpc-test")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL+"/base")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-jetrpc-test=h31")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	stderr := serveTraced(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.posts) == 0 || !strings.HasPrefix(r.posts[0], "POST /base/v1/traces application/x-protobuf") {
		t.Fatalf("OTLP receiver got %q; stderr %q", r.posts, stderr)
	}
	if got := r.headers[0].Get("X-Jetrpc-Test"); got != "h31" {
		t.Errorf("X-Jetrpc-Test: %q; want OTEL_EXPORTER_OTLP_HEADERS's h31", got)
	}
	if !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Errorf("stderr does not say where tracing goes: %q", stderr)
	}
	wantExported(t, r.body)
}

// TestServe_otlpTracesExporterNone: OTEL_TRACES_EXPORTER=none turns off
// the tracing OTEL_EXPORTER_OTLP_ENDPOINT would turn on.
func TestServe_otlpTracesExporterNone(t *testing.T) {
	r := newOTLPHTTPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	stderr := serveTraced(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.posts) != 0 || strings.Contains(stderr, "tracing") {
		t.Errorf("traced with OTEL_TRACES_EXPORTER=none: receiver got %q; stderr %q", r.posts, stderr)
	}
}

// TestServe_otlpGRPC: with --otlp-protocol grpc (or
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc and OTEL_EXPORTER_OTLP_ENDPOINT), the
// spans reach an OTLP/gRPC receiver, with OTEL_EXPORTER_OTLP_HEADERS as
// metadata.
func TestServe_otlpGRPC(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string // besides the service and the headers; %s is the receiver's host:port
		args []string          // %s is the receiver's host:port
	}{
		{name: "flags", args: []string{"--otlp-protocol", "grpc", "--otlp-endpoint", "http://%s"}},
		{name: "environment", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://%s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newOTLPGRPCReceiver(t)
			t.Setenv("OTEL_SERVICE_NAME", "jetrpc-test")
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-jetrpc-test=h31")
			for k, v := range tc.env {
				t.Setenv(k, strings.ReplaceAll(v, "%s", r.addr))
			}
			var args []string
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "%s", r.addr))
			}
			stderr := serveTraced(t, args...)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.exports == 0 {
				t.Fatalf("the gRPC receiver got nothing; stderr %q", stderr)
			}
			if got := r.md[0].Get("x-jetrpc-test"); len(got) != 1 || got[0] != "h31" {
				t.Errorf("metadata x-jetrpc-test: %q; want OTEL_EXPORTER_OTLP_HEADERS's h31", got)
			}
			wantExported(t, r.body)
		})
	}
}

// TestServe_traceMethodFlag: --trace-method takes METHOD=RATIO with a
// ratio from 0 to 1.
func TestServe_traceMethodFlag(t *testing.T) {
	m := map[string]float64{}
	r := methodRatios{&m}
	for _, bad := range []string{"add", "=1", "add=2", "add=x", "add=-0.1"} {
		if r.Set(bad) == nil {
			t.Errorf("--trace-method %q accepted", bad)
		}
	}
	if err := r.Set("admin_*=1"); err != nil || m["admin_*"] != 1 {
		t.Errorf("admin_*=1: %v %v", err, m)
	}
}

// TestServe_otlpEndpointRefused: an --otlp-endpoint that is not an
// http(s) URL fails before serving.
func TestServe_otlpEndpointRefused(t *testing.T) {
	var out, errOut syncBuffer
	err := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", "localhost:4318"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--otlp-endpoint") {
		t.Errorf("serve --otlp-endpoint localhost:4318: %v", err)
	}
}
