package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServe_otlpEndpoint: with --otlp-endpoint, the calls' spans reach
// the OTLP/HTTP receiver (POST /v1/traces) by the time serve stops: the
// exporter is flushed on stop.
func TestServe_otlpEndpoint(t *testing.T) {
	var mu sync.Mutex
	var posts []string // "path content-type len", guarded by mu
	var body []byte    // the bodies, guarded by mu
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		body = append(body, b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	t.Setenv("OTEL_SERVICE_NAME", "jetrpc-test")

	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", srv.URL, "--trace-sample", "1"}, &out, &errOut)
	}()
	var urls map[string]string
	for deadline := time.Now().Add(10 * time.Second); urls == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "jetrpc: serving JSON-RPC on ") {
				urls = urlsIn(l)
			}
		}
	}
	if urls == nil {
		cancel()
		t.Fatalf("not serving: %q %q", out.String(), errOut.String())
	}
	postAs(t, urls["http"], addCall)
	postAs(t, urls["http"], `{"jsonrpc":"2.0","method":"no_such_method","id":2}`)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) == 0 || !strings.HasPrefix(posts[0], "POST /v1/traces application/x-protobuf") {
		t.Fatalf("OTLP receiver got %q; stderr %q", posts, errOut.String())
	}
	for _, want := range []string{"jetrpc-test", "rpc.method", "add", "_OTHER", "no_such_method", "jsonrpc"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the export has no %q", want)
		}
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
