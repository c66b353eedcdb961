package otel_test

// NOTE: API tests of the tracer, through Table.Dispatch with a
// CallContext whose Meta is an HTTP head (harness.call), into the SDK's
// in-memory exporter: the attributes of a call, an error, an unknown
// method, a notification, a batch; the remote parent; the sampling
// rules; the allocation guards; and the engine over a loopback socket.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	jotel "github.com/jetrpc/jetrpc/handler/otel"
	"github.com/jetrpc/jetrpc/handler/stats"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Parent's ids, as a W3C traceparent carries them.
const (
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
	sampledTP   = "00-" + parentTrace + "-" + parentSpan + "-01"
	unsampledTP = "00-" + parentTrace + "-" + parentSpan + "-00"
)

// harness is a table traced into an in-memory exporter.
type harness struct {
	tab       *handler.Table
	exp       *tracetest.InMemoryExporter
	inMethod  trace.SpanContext // the span the method's ctx carried, last call
	principal string
}

func newHarness(t *testing.T, o jotel.Options) *harness {
	t.Helper()
	h := &harness{tab: handler.NewTable(), exp: tracetest.NewInMemoryExporter()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	o.TracerProvider = tp
	jotel.New(o).Instrument(h.tab)
	handler.Register(h.tab, "add", func(ctx context.Context, p [2]int) (int, error) {
		h.inMethod = trace.SpanContextFromContext(ctx)
		return p[0] + p[1], nil
	}, handler.Inline())
	handler.Register(h.tab, "fail", func(ctx context.Context, p []int) (int, error) {
		return 0, handler.NewError(-32001, "failed")
	}, handler.Inline())
	handler.Register(h.tab, "admin_stats", func(ctx context.Context, p []int) (int, error) { return 1, nil }, handler.Inline())
	handler.Register(h.tab, "update", func(ctx context.Context, p []int) (int, error) { return 0, nil }, handler.Inline())
	handler.Register(h.tab, "work", func(ctx context.Context, p []int) (string, error) { // blocking: on a worker
		return trace.SpanContextFromContext(ctx).SpanID().String(), nil
	})
	return h
}

// call dispatches msg as an HTTP POST whose head has the fields given
// ("Name: value" each), and returns the reply.
func (h *harness) call(msg string, fields ...string) string {
	head := "POST / HTTP/1.1\r\nHost: x\r\n"
	for _, f := range fields {
		head += f + "\r\n"
	}
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.SetHTTPHead([]byte(head + "\r\n"))
	cc.Meta.Transport = handler.TransportHTTP
	cc.Meta.Principal = h.principal
	return string(h.tab.Dispatch(cc, nil, []byte(msg)))
}

// spans returns the spans ended so far and forgets them.
func (h *harness) spans() tracetest.SpanStubs {
	s := h.exp.GetSpans()
	h.exp.Reset()
	return s
}

// attrs returns the attributes of s as strings by key.
func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// wantAttrs checks that s has the attributes of want ("" for absent).
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if g, ok := got[k]; v == "" && ok {
			t.Errorf("span %s: %s = %q, want absent", s.Name, k, g)
		} else if v != "" && g != v {
			t.Errorf("span %s: %s = %q, want %q (all: %v)", s.Name, k, g, v, got)
		}
	}
}

func TestTracer_singleCall(t *testing.T) {
	h := newHarness(t, jotel.Options{Ratio: 1})
	h.principal = "alice"
	if got := h.call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":7}`); got != `{"jsonrpc":"2.0","result":3,"id":7}` {
		t.Fatalf("reply %s", got)
	}
	spans := h.spans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "add" || s.SpanKind != trace.SpanKindServer || s.Status.Code != codes.Unset {
		t.Errorf("span %q kind %v status %v", s.Name, s.SpanKind, s.Status)
	}
	wantAttrs(t, s, map[string]string{
		"rpc.system.name":          "jsonrpc",
		"rpc.method":               "add",
		"rpc.method_original":      "",
		"jsonrpc.request.id":       "7",
		"jsonrpc.protocol.version": "2.0",
		"jetrpc.transport":         "http",
		"network.protocol.name":    "http",
		"enduser.id":               "alice",
		"rpc.response.status_code": "",
		"error.type":               "",
	})
	if s.Parent.IsValid() {
		t.Errorf("a root call has parent %v", s.Parent)
	}
	if h.inMethod.SpanID() != s.SpanContext.SpanID() {
		t.Errorf("the method's ctx carried span %v, want %v", h.inMethod.SpanID(), s.SpanContext.SpanID())
	}
	// A string id is decoded, escapes too.
	h.call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"a\"b"}`)
	wantAttrs(t, h.spans()[0], map[string]string{"jsonrpc.request.id": `a"b`})
	// JSON-RPC 1.0.
	h.call(`{"method":"add","params":[1,2],"id":1}`)
	wantAttrs(t, h.spans()[0], map[string]string{"jsonrpc.protocol.version": "1.0"})
}

func TestTracer_errorReply(t *testing.T) {
	h := newHarness(t, jotel.Options{Ratio: 1})
	h.call(`{"jsonrpc":"2.0","method":"fail","id":1}`)
	h.call(`{"jsonrpc":"2.0","method":"add","params":["a","b"],"id":2}`)
	spans := h.spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for i, code := range []string{"-32001", "-32602"} {
		s := spans[i]
		wantAttrs(t, s, map[string]string{"rpc.response.status_code": code, "error.type": code})
		if s.Status.Code != codes.Error {
			t.Errorf("span %s: status %v, want Error", s.Name, s.Status)
		}
	}
	if d := spans[1].Status.Description; d != "Invalid params" {
		t.Errorf("status description %q", d)
	}
}

func TestTracer_unknownMethod(t *testing.T) {
	h := newHarness(t, jotel.Options{Ratio: 1})
	h.call(`{"jsonrpc":"2.0","method":"no_such","id":1}`)
	s := h.spans()[0]
	if s.Name != "jsonrpc" {
		t.Errorf("span name %q, want jsonrpc", s.Name)
	}
	wantAttrs(t, s, map[string]string{"rpc.method": "_OTHER", "rpc.method_original": "no_such", "rpc.response.status_code": "-32601"})
	// A message that is not JSON: _OTHER, without an original name.
	h.call(`{"jsonrpc":`)
	wantAttrs(t, h.spans()[0], map[string]string{"rpc.method": "_OTHER", "rpc.method_original": "", "rpc.response.status_code": "-32700"})
}

func TestTracer_notification(t *testing.T) {
	h := newHarness(t, jotel.Options{Ratio: 1})
	if got := h.call(`{"jsonrpc":"2.0","method":"update","params":[1]}`); got != "" {
		t.Fatalf("reply %q to a notification", got)
	}
	h.call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":null}`)
	for _, s := range h.spans() {
		wantAttrs(t, s, map[string]string{"jsonrpc.request.id": ""})
	}
}

// TestTracer_batch: a traced batch has a span of its own, the child of
// the request's traceparent, whose children are its elements' spans —
// inline elements on the caller and blocking ones on workers alike.
func TestTracer_batch(t *testing.T) {
	h := newHarness(t, jotel.Options{})
	reply := h.call(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"fail","id":2},{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"work","id":4},{"jsonrpc":"2.0","method":"nope","id":5}]`,
		"traceparent: "+sampledTP)
	spans := h.spans()
	if len(spans) != 6 {
		t.Fatalf("%d spans, want 6: %v", len(spans), spans)
	}
	var batch tracetest.SpanStub
	for _, s := range spans {
		if s.Name == jotel.BatchSpanName {
			batch = s
		}
	}
	if batch.Name == "" || batch.Parent.SpanID().String() != parentSpan || batch.SpanKind != trace.SpanKindServer {
		t.Fatalf("batch span %+v", batch)
	}
	wantAttrs(t, batch, map[string]string{"rpc.system.name": "jsonrpc", "jetrpc.batch.size": "5", "jetrpc.batch.errors": "2", "jetrpc.transport": "http", "rpc.method": ""})
	names := map[string]bool{}
	for _, s := range spans {
		if s.Name == jotel.BatchSpanName {
			continue
		}
		names[s.Name] = true
		if s.Parent.SpanID() != batch.SpanContext.SpanID() || s.SpanContext.TraceID().String() != parentTrace {
			t.Errorf("span %s: parent %v, want the batch's %v", s.Name, s.Parent.SpanID(), batch.SpanContext.SpanID())
		}
		if s.Name == "work" && !strings.Contains(reply, `"result":"`+s.SpanContext.SpanID().String()+`"`) {
			t.Errorf("the blocking method's ctx did not carry its span %v: %s", s.SpanContext.SpanID(), reply)
		}
	}
	if !names["add"] || !names["fail"] || !names["update"] || !names["work"] || !names["jsonrpc"] {
		t.Errorf("spans %v", names)
	}
}

// TestTracer_batchSampling: a batch is decided once — the force header,
// the traceparent, or one draw against the highest ratio of its
// elements' methods — and then every element is traced, or none.
func TestTracer_batchSampling(t *testing.T) {
	const batch = `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"admin_stats","id":2}]`
	for _, c := range []struct {
		name   string
		o      jotel.Options
		fields []string
		spans  int
	}{
		{"root, ratio 0", jotel.Options{}, nil, 0},
		{"root, ratio 1", jotel.Options{Ratio: 1}, nil, 3},
		{"parent not sampled", jotel.Options{Ratio: 1}, []string{"traceparent: " + unsampledTP}, 0},
		{"an element's method always", jotel.Options{Methods: map[string]float64{"admin_*": 1}}, nil, 3},
		{"no element's method", jotel.Options{Ratio: 1, Methods: map[string]float64{"admin_*": 0, "add": 0}}, nil, 0},
		{"forced", jotel.Options{ForceHeader: "X-Force-Trace"}, []string{"traceparent: " + unsampledTP, "X-Force-Trace: 1"}, 3},
	} {
		h := newHarness(t, c.o)
		h.call(batch, c.fields...)
		if got := len(h.spans()); got != c.spans {
			t.Errorf("%s: %d spans, want %d", c.name, got, c.spans)
		}
	}
}

// TestTracer_batchInterceptOnly: a Tracer added as an interceptor alone
// (no batch hook) traces each element as a single call, under the
// request's parent.
func TestTracer_batchInterceptOnly(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tab := handler.NewTable()
	tab.Use(jotel.New(jotel.Options{TracerProvider: tp}).Intercept)
	handler.Register(tab, "add", func(ctx context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.SetHTTPHead([]byte("POST / HTTP/1.1\r\nHost: x\r\ntraceparent: " + sampledTP + "\r\n\r\n"))
	tab.Dispatch(cc, nil, []byte(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]`))
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if s.Name != "add" || s.Parent.SpanID().String() != parentSpan {
			t.Errorf("span %s parent %v", s.Name, s.Parent.SpanID())
		}
	}
}

func TestTracer_remoteParent(t *testing.T) {
	h := newHarness(t, jotel.Options{}) // no root call traced
	h.call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "Traceparent: "+sampledTP, "tracestate: vendor=x")
	spans := h.spans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != parentTrace || s.Parent.SpanID().String() != parentSpan || !s.Parent.IsRemote() {
		t.Errorf("span trace %v parent %v remote %v", s.SpanContext.TraceID(), s.Parent.SpanID(), s.Parent.IsRemote())
	}
	if ts := s.SpanContext.TraceState().Get("vendor"); ts != "x" {
		t.Errorf("tracestate vendor = %q", ts)
	}
	// A parent not sampled: not traced, ratio or not.
	h = newHarness(t, jotel.Options{Ratio: 1})
	h.call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "traceparent: "+unsampledTP)
	if n := len(h.spans()); n != 0 {
		t.Errorf("%d spans under a parent not sampled", n)
	}
	// An invalid traceparent: a root call.
	h.call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "traceparent: 00-"+strings.ToUpper(parentTrace)+"-"+parentSpan+"-01")
	if s := h.spans(); len(s) != 1 || s[0].Parent.IsValid() {
		t.Errorf("invalid traceparent: spans %v", s)
	}
}

func TestTracer_sampling(t *testing.T) {
	add := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	admin := `{"jsonrpc":"2.0","method":"admin_stats","id":1}`
	count := func(h *harness, msg string, n int, fields ...string) int {
		for range n {
			h.call(msg, fields...)
		}
		return len(h.spans())
	}
	if n := count(newHarness(t, jotel.Options{}), add, 100); n != 0 {
		t.Errorf("ratio 0: %d spans", n)
	}
	if n := count(newHarness(t, jotel.Options{Ratio: 1}), add, 100); n != 100 {
		t.Errorf("ratio 1: %d spans of 100", n)
	}
	if n := count(newHarness(t, jotel.Options{Ratio: 0.5}), add, 2000); n < 800 || n > 1200 {
		t.Errorf("ratio 0.5: %d spans of 2000", n)
	}
	h := newHarness(t, jotel.Options{Ratio: 1, Methods: map[string]float64{"add": 0, "admin_*": 1}})
	if n := count(h, add, 50); n != 0 {
		t.Errorf("override add=0 under ratio 1: %d spans", n)
	}
	h = newHarness(t, jotel.Options{Methods: map[string]float64{"admin_*": 1, "admin_s*": 0}})
	if n := count(h, admin, 10); n != 0 {
		t.Errorf("the longer prefix admin_s*=0 should win: %d spans", n)
	}
	h = newHarness(t, jotel.Options{Methods: map[string]float64{"admin_*": 1}})
	if n := count(h, admin, 10); n != 10 {
		t.Errorf("admin_*=1 under ratio 0: %d spans of 10", n)
	}
	if n := count(h, add, 10); n != 0 {
		t.Errorf("add under ratio 0: %d spans", n)
	}
	// The force header: traced under ratio 0, and under a parent not
	// sampled, whose trace it continues.
	h = newHarness(t, jotel.Options{ForceHeader: "X-Force-Trace"})
	if n := count(h, add, 5, "x-force-trace: 1"); n != 5 {
		t.Errorf("forced: %d spans of 5", n)
	}
	h.call(add, "X-Force-Trace: yes", "traceparent: "+unsampledTP)
	if s := h.spans(); len(s) != 1 || s[0].SpanContext.TraceID().String() != parentTrace || s[0].Parent.SpanID().String() != parentSpan {
		t.Errorf("forced under a parent not sampled: %v", s)
	}
}

// TestTracer_noAllocsUnsampled: a call not traced — ratio 0, a parent
// not sampled, a method overridden to 0 — allocates nothing.
func TestTracer_noAllocsUnsampled(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and the race detector allocate")
	}
	h := newHarness(t, jotel.Options{Ratio: 0, ForceHeader: "X-Force-Trace", Methods: map[string]float64{"admin_*": 0, "fail": 1}})
	msg := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	batch := []byte(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"update","id":2}]`)
	for _, head := range []string{
		"POST / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\ntraceparent: " + unsampledTP + "\r\n\r\n",
	} {
		cc := &handler.CallContext{Parent: context.Background()}
		cc.Meta.SetHTTPHead([]byte(head))
		cc.Meta.Transport = handler.TransportHTTP
		dst := make([]byte, 0, 256)
		if got := testing.AllocsPerRun(200, func() { dst = h.tab.Dispatch(cc, dst[:0], msg) }); got != 0 {
			t.Errorf("%q: %v allocs per unsampled call, want 0", head, got)
		}
		if got := testing.AllocsPerRun(200, func() { dst = h.tab.Dispatch(cc, dst[:0], batch) }); got != 0 {
			t.Errorf("%q: %v allocs per unsampled batch, want 0", head, got)
		}
	}
	if n := len(h.spans()); n != 0 {
		t.Errorf("%d spans", n)
	}
}

// TestTracer_allocsSampled states the cost of a traced call, SDK
// included, with a no-op exporter.
func TestTracer_allocsSampled(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and the race detector allocate")
	}
	tab := handler.NewTable()
	tp := sdktrace.NewTracerProvider() // no processor: spans are made and dropped at End
	defer tp.Shutdown(context.Background())
	tab.Use(jotel.New(jotel.Options{TracerProvider: tp}).Intercept)
	handler.Register(tab, "add", func(ctx context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	msg := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.SetHTTPHead([]byte("POST / HTTP/1.1\r\nHost: x\r\ntraceparent: " + sampledTP + "\r\n\r\n"))
	cc.Meta.Transport = handler.TransportHTTP
	dst := make([]byte, 0, 256)
	got := testing.AllocsPerRun(200, func() { dst = tab.Dispatch(cc, dst[:0], msg) })
	t.Logf("%v allocs per traced call (remote parent, SDK TracerProvider)", got)
	if got > 16 {
		t.Errorf("%v allocs per traced call: more than the 16 expected", got)
	}
}

// TestTracer_engineHTTP: through the engine over a real socket, an HTTP
// POST with a traceparent is traced under it, with the transport's
// attributes.
func TestTracer_engineHTTP(t *testing.T) {
	h := newHarness(t, jotel.Options{})
	_, addr := enginetest.Start(t, h.tab, engine.WithLoops(1))
	url := "http://" + addr + "/"
	for _, tp := range []string{sampledTP, unsampledTP, ""} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
		req.Header.Set("Content-Type", "application/json")
		if tp != "" {
			req.Header.Set("traceparent", tp)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != `{"jsonrpc":"2.0","result":3,"id":1}` {
			t.Fatalf("reply %s", body)
		}
	}
	spans := h.spans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1 (the sampled parent's)", len(spans))
	}
	s := spans[0]
	if s.Parent.SpanID().String() != parentSpan || s.SpanContext.TraceID().String() != parentTrace {
		t.Errorf("parent %v trace %v", s.Parent.SpanID(), s.SpanContext.TraceID())
	}
	wantAttrs(t, s, map[string]string{"jetrpc.transport": "http", "network.transport": "tcp", "client.address": "127.0.0.1", "rpc.method": "add"})
}

// TestTracer_joinsLogAndMetrics: a traced call's access log record
// carries its span's trace_id and span_id, and its method's
// handling-time histogram an exemplar of that span; a batch's record
// carries the batch span's; an untraced call's has neither.
func TestTracer_joinsLogAndMetrics(t *testing.T) {
	var log strings.Builder
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tab := handler.NewTable(handler.WithMetrics(true), handler.WithAccessLog(handler.AccessLog{
		Logger: slog.New(slog.NewJSONHandler(&log, nil)), Sample: 1,
	}))
	jotel.New(jotel.Options{TracerProvider: tp}).Instrument(tab)
	handler.Register(tab, "add", func(ctx context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	call := func(msg, tp string) map[string]any {
		log.Reset()
		cc := &handler.CallContext{Parent: context.Background()}
		cc.Meta.SetHTTPHead([]byte("POST / HTTP/1.1\r\nHost: x\r\ntraceparent: " + tp + "\r\n\r\n"))
		cc.Meta.Transport = handler.TransportHTTP
		tab.Dispatch(cc, nil, []byte(msg))
		var rec map[string]any
		if err := json.Unmarshal([]byte(log.String()), &rec); err != nil {
			t.Fatalf("record %q: %v", log.String(), err)
		}
		return rec
	}
	rec := call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, unsampledTP)
	if _, ok := rec["trace_id"]; ok {
		t.Errorf("untraced call's record has a trace_id: %v", rec)
	}
	rec = call(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, sampledTP)
	spans := exp.GetSpans()
	exp.Reset()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	sc := spans[0].SpanContext
	if rec["trace_id"] != parentTrace || rec["span_id"] != sc.SpanID().String() {
		t.Errorf("record %v, want trace_id %s span_id %s", rec, parentTrace, sc.SpanID())
	}
	found := false
	tab.Metrics(func(m *stats.Method) {
		for _, e := range m.Duration.Exemplars {
			if m.Method == "add" && e.Valid() && e.TraceID == [16]byte(sc.TraceID()) && e.SpanID == [8]byte(sc.SpanID()) {
				found = true
			}
		}
	})
	if !found {
		t.Errorf("no exemplar of span %v", sc.SpanID())
	}
	rec = call(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}]`, sampledTP)
	var batchSpan trace.SpanContext
	for _, s := range exp.GetSpans() {
		if s.Name == jotel.BatchSpanName {
			batchSpan = s.SpanContext
		}
	}
	if rec["msg"] != "jetrpc: batch" || rec["trace_id"] != parentTrace || rec["span_id"] != batchSpan.SpanID().String() {
		t.Errorf("batch record %v, want the batch span %v", rec, batchSpan.SpanID())
	}
}

// TestTracer_paramsMeta: with Options.ParamsMeta, a call without a
// traceparent field is traced as its params._meta.traceparent says (as
// MCP clients send it), with its tracestate; a traceparent field wins;
// without the option, or in a batch, params are not read.
func TestTracer_paramsMeta(t *testing.T) {
	withMeta := func(tp string) string {
		return `{"jsonrpc":"2.0","method":"update","params":{"x":[1,{"_meta":0}],"_meta":{"progressToken":7,"traceparent":"` + tp + `","tracestate":"v=1"}},"id":1}`
	}
	const otherTP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, c := range []struct {
		name       string
		o          jotel.Options
		msg        string
		fields     []string
		wantParent string // "" for no span
	}{
		{"sampled", jotel.Options{ParamsMeta: true}, withMeta(sampledTP), nil, parentSpan},
		{"not sampled", jotel.Options{ParamsMeta: true, Ratio: 1}, withMeta(unsampledTP), nil, ""},
		{"invalid: a root call", jotel.Options{ParamsMeta: true, Ratio: 1}, withMeta("00-zz"), nil, "root"},
		{"the field wins", jotel.Options{ParamsMeta: true}, withMeta(unsampledTP), []string{"traceparent: " + otherTP}, "b7ad6b7169203331"},
		{"option off", jotel.Options{}, withMeta(sampledTP), nil, ""},
		{"in a batch", jotel.Options{ParamsMeta: true}, "[" + withMeta(sampledTP) + "]", nil, ""},
	} {
		h := newHarness(t, c.o)
		h.call(c.msg, c.fields...)
		spans := h.spans()
		switch {
		case c.wantParent == "" && len(spans) != 0:
			t.Errorf("%s: %d spans, want none", c.name, len(spans))
		case c.wantParent == "":
		case len(spans) != 1:
			t.Errorf("%s: %d spans, want 1", c.name, len(spans))
		case c.wantParent == "root" && spans[0].Parent.IsValid():
			t.Errorf("%s: parent %v, want none", c.name, spans[0].Parent.SpanID())
		case c.wantParent != "root" && spans[0].Parent.SpanID().String() != c.wantParent:
			t.Errorf("%s: parent %v, want %s", c.name, spans[0].Parent.SpanID(), c.wantParent)
		case c.name == "sampled" && (spans[0].SpanContext.TraceID().String() != parentTrace || spans[0].Parent.TraceState().String() != "v=1"):
			t.Errorf("%s: trace %v state %q", c.name, spans[0].SpanContext.TraceID(), spans[0].Parent.TraceState().String())
		}
	}
}
