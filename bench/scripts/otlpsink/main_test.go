package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The real exporter, plain and gzipped, takes the sink's empty 200 for
// a success, and the sink counts the spans it sent.
func TestSink_countsExportersSpans(t *testing.T) {
	for _, gz := range []bool{false, true} {
		var st stats
		srv := httptest.NewServer(newHandler(&st))
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(srv.URL + "/v1/traces")}
		if gz {
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		}
		exp, err := otlptracehttp.New(context.Background(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		tr := tp.Tracer("test")
		for range 3 {
			_, s := tr.Start(context.Background(), "call")
			s.End()
		}
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatalf("gzip %v: the exporter's error: %v", gz, err)
		}
		if got := st.spans.Load(); got != 3 || st.requests.Load() != 3 || st.bad.Load() != 0 || st.bytes.Load() == 0 {
			b, _ := st.MarshalJSON()
			t.Errorf("gzip %v: stats %s, want 3 requests of 1 span, none bad", gz, b)
		}
		resp, err := http.Get(srv.URL + "/stats")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]int64
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m["spans"] != 3 {
			t.Errorf("gzip %v: GET /stats = %v, %v; want spans 3", gz, m, err)
		}
		resp.Body.Close()
		srv.Close()
	}
}

func TestCountSpans_malformed(t *testing.T) {
	for _, b := range [][]byte{{0x0a}, {0x0a, 0x05, 0x12}, {0xff}, {0x0b}} {
		if _, err := countSpans(b); err == nil {
			t.Errorf("countSpans(%x): no error", b)
		}
	}
}
