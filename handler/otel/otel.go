package otel

// NOTE: the tracer: Options, New, and Tracer.Intercept, the interceptor
// that starts a call's span once sample.go has decided to trace it.
// Everything after the decision — the propagator over the Meta
// (metaCarrier), the span's attributes, its end — is the sampled path,
// and only it calls OpenTelemetry.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans (the tracer's
// name).
const ScopeName = "github.com/jetrpc/jetrpc/handler/otel"

// Options configures a Tracer. The zero value traces the calls whose
// traceparent is sampled, and no root call, with the global
// TracerProvider.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider()
	// at New. Its sampler should sample what it is given — the SDK's
	// default, ParentBased(AlwaysSample), or AlwaysSample: jetrpc has
	// decided already, and a ratio there would sample a second time.
	TracerProvider trace.TracerProvider
	// Ratio is the share of root calls traced — calls without a valid
	// traceparent — from 0 (none; the default) to 1 (all).
	Ratio float64
	// Methods are per-method ratios for root calls, in place of Ratio,
	// by registered method name; a name ending in "*" is a prefix
	// ("admin_*"), the longest matching prefix winning over shorter
	// ones and an exact name over any prefix. Unknown methods take
	// Ratio. nil means none.
	Methods map[string]float64
	// ForceHeader names an HTTP header field (matched ignoring case):
	// a request carrying it with any non-empty value is traced, whatever
	// its traceparent's sampled flag or the ratio; a not-sampled
	// traceparent's trace is then continued as sampled. "" means none.
	// Over WebSocket it is read from the upgrade request, so it traces
	// every call of the connection.
	ForceHeader string
	// ParamsMeta reads the W3C trace context a client puts in a call's
	// params rather than in header fields — params._meta.traceparent and
	// .tracestate, as MCP clients send them — for a call whose request
	// has no valid traceparent field (a stream's, a WebSocket's whose
	// upgrade had none): such a call is then traced, or not, as its
	// traceparent says. Each call with object params is searched for
	// "_meta"; the elements of a batch are decided with the batch, from
	// its header fields.
	ParamsMeta bool
}

// Tracer starts a span for each sampled call of a table. It is
// immutable and safe from any goroutine.
type Tracer struct {
	sampler
	tracer trace.Tracer
	prop   propagation.TraceContext
}

// New returns a Tracer with options o. Add it to a table with
// t.Use(tr.Intercept).
func New(o Options) *Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otelglobal.GetTracerProvider()
	}
	return &Tracer{sampler: newSampler(&o), tracer: tp.Tracer(ScopeName)}
}

var _ handler.Interceptor = (*Tracer)(nil).Intercept

// Intercept is the Tracer as a handler.Interceptor: it decides whether
// call is traced and, when it is, runs it inside a SERVER span whose
// context the method's ctx carries (trace.SpanFromContext), so that
// spans the method starts are its children. A call not traced costs the
// decision alone: no allocation and no OpenTelemetry call. It runs where
// its call runs (the event loop for inline methods) and does not block,
// but for what the TracerProvider's span processor does at a span's end
// (the SDK's batch processor queues it). Safe from any goroutine.
func (tr *Tracer) Intercept(ctx context.Context, call *handler.Call) error {
	if d := decision(tr.Wants(ctx, call)); d != notSampled {
		tr.trace(ctx, call, d)
	}
	return nil // an untraced call: the rest runs with ctx
}

// Wants is the Tracer's decision as a handler.Filter: 0 for a call it
// does not trace, else how it traces it. Instrument gives it to the
// table with the interceptor, so that a call not traced passes by the
// interceptor — and, when the Tracer is the table's only interceptor,
// runs as if the table had none. It allocates nothing and calls no
// OpenTelemetry API. Safe from any goroutine.
func (tr *Tracer) Wants(ctx context.Context, call *handler.Call) uint8 {
	if b := call.Batch(); b != nil {
		if bt, ok := b.Get(batchKey{}).(*batchTrace); ok { // the Tracer's batch hook decided for the batch
			if bt == notTracedBatch {
				return uint8(notSampled)
			}
			return uint8(inTracedBatch)
		}
	}
	return uint8(tr.decide(handler.MetaFrom(ctx), call))
}

// intercept is Intercept for a call Wants wants (UseWhen): it reads the
// decision its filter made.
func (tr *Tracer) intercept(ctx context.Context, call *handler.Call) error {
	tr.trace(ctx, call, decision(call.Filtered()))
	return nil
}

// trace runs call, decided d (not notSampled), in its span.
func (tr *Tracer) trace(ctx context.Context, call *handler.Call, d decision) {
	if d == inTracedBatch {
		if bt, ok := call.Batch().Get(batchKey{}).(*batchTrace); ok {
			ctx = trace.ContextWithSpan(ctx, bt.span)
		}
		d = sampledRoot // the batch's span is its parent
	}
	tr.traced(ctx, handler.MetaFrom(ctx), call, d)
}

// Instrument adds the Tracer to t: its interceptor, for the calls Wants
// (t.UseWhen), and its batch hook (BeginBatch, EndBatch), so that a
// batch gets a span of its own whose children are its elements' spans.
// Call it before t dispatches, where t.Use would be called.
func (tr *Tracer) Instrument(t *handler.Table) {
	t.UseWhen(tr.Wants, tr.intercept)
	t.UseBatch(tr)
}

// parentOf returns ctx with the remote parent of a call or batch decided
// d, read from the request's header fields in m.
func (tr *Tracer) parentOf(ctx context.Context, m *handler.Meta, call *handler.Call, d decision) context.Context {
	if d == sampledRoot {
		return ctx
	}
	if d == sampledMeta {
		return tr.prop.Extract(ctx, paramsCarrier{call: call})
	}
	ctx = tr.prop.Extract(ctx, metaCarrier{m})
	if d == forced {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !sc.IsSampled() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc.WithTraceFlags(sc.TraceFlags()|trace.FlagsSampled))
		}
	}
	return ctx
}

// traced runs call inside its span: a child of ctx's span, or of the
// remote parent d says the request carries.
func (tr *Tracer) traced(ctx context.Context, m *handler.Meta, call *handler.Call, d decision) {
	ctx = tr.parentOf(ctx, m, call, d)
	var buf [12]attribute.KeyValue
	attrs := append(buf[:0], semconv.RPCSystemNameJSONRPC)
	name := otherMethod
	if call.Registered() {
		name = call.Method() // a registered name may be kept
		attrs = append(attrs, semconv.RPCMethod(name))
	} else {
		attrs = append(attrs, semconv.RPCMethod(otherMethod))
		if orig := call.Method(); orig != "" {
			attrs = append(attrs, semconv.RPCMethodOriginal(strings.Clone(orig)))
		}
	}
	if id := requestID(call.ID()); id != "" {
		attrs = append(attrs, semconv.JSONRPCRequestID(id))
	}
	if call.Version() == parser.Version1 {
		attrs = append(attrs, semconv.JSONRPCProtocolVersion("1.0"))
	} else {
		attrs = append(attrs, semconv.JSONRPCProtocolVersion("2.0"))
	}
	attrs = appendTransport(attrs, m)
	if name == otherMethod {
		name = "jsonrpc" // the conventions' span name when rpc.method is _OTHER: rpc.system.name
	}
	ctx, span := tr.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	call.SetSpan(refOf(span.SpanContext()))
	call.Next(ctx)
	if code := call.Code(); code != 0 {
		s := strconv.Itoa(int(code))
		span.SetAttributes(semconv.RPCResponseStatusCode(s), semconv.ErrorTypeKey.String(s))
		span.SetStatus(codes.Error, code.String())
	}
	span.End()
}

// otherMethod is rpc.method for a method the table does not have.
const otherMethod = "_OTHER"

// Attributes of the caller besides the conventions'.
const (
	// TransportKey is jetrpc's transport: "http", "websocket",
	// "stream" or "in-process" (handler.Transport).
	TransportKey = attribute.Key("jetrpc.transport")
)

// appendTransport appends the attributes of the caller m describes.
func appendTransport(attrs []attribute.KeyValue, m *handler.Meta) []attribute.KeyValue {
	attrs = append(attrs, TransportKey.String(m.Transport.String()))
	switch m.Transport {
	case handler.TransportHTTP:
		attrs = append(attrs, semconv.NetworkProtocolName("http"))
	case handler.TransportWebSocket:
		attrs = append(attrs, semconv.NetworkProtocolName("websocket"))
	}
	if a := m.Local; a != nil {
		switch a.Network() {
		case "tcp", "tcp4", "tcp6":
			attrs = append(attrs, semconv.NetworkTransportTCP)
		case "unix":
			attrs = append(attrs, semconv.NetworkTransportUnix)
		}
	}
	if ip := m.ClientIP(); ip.IsValid() {
		attrs = append(attrs, semconv.ClientAddress(ip.String()))
	}
	if m.Principal != "" {
		attrs = append(attrs, semconv.EnduserID(m.Principal))
	}
	return attrs
}

// requestID returns the id as jsonrpc.request.id: a string id decoded,
// a number as written, "" for none or null.
func requestID(id handler.Raw) string {
	switch {
	case len(id) == 0 || string(id) == "null":
		return ""
	case id[0] != '"':
		return string(id)
	}
	if s := id[1 : len(id)-1]; !strings.ContainsRune(string(s), '\\') { // valid JSON: the closing quote is there
		return string(s)
	}
	var s string
	if json.Unmarshal(id, &s) != nil {
		return string(id)
	}
	return s
}

// metaCarrier is a propagation.TextMapCarrier over a call's Meta: Get
// reads the request's header fields in place (Meta.Header), without a
// copy of the head. Set does nothing: a request's fields are not
// written.
type metaCarrier struct{ m *handler.Meta }

var _ propagation.TextMapCarrier = metaCarrier{}

// Get returns the first value of the field key.
func (c metaCarrier) Get(key string) string { return c.m.Header(key) }

// Set does nothing.
func (metaCarrier) Set(string, string) {}

// Keys returns the names of the request's fields.
func (c metaCarrier) Keys() []string {
	var keys []string
	for n := range c.m.Headers() {
		keys = append(keys, n)
	}
	return keys
}

// refOf returns the handler.SpanRef of sc, for the access log and the
// metrics' exemplars.
func refOf(sc trace.SpanContext) handler.SpanRef {
	return handler.SpanRef{TraceID: sc.TraceID(), SpanID: sc.SpanID()}
}

// paramsCarrier is a propagation.TextMapCarrier over a call's
// params._meta (Options.ParamsMeta).
type paramsCarrier struct{ call *handler.Call }

var _ propagation.TextMapCarrier = paramsCarrier{}

// Get returns traceparent or tracestate from params._meta.
func (c paramsCarrier) Get(key string) string {
	tp, ts := paramsMeta(c.call.Params())
	switch key {
	case traceparentHeader:
		return tp
	case "tracestate":
		return ts
	}
	return ""
}

// Set does nothing.
func (paramsCarrier) Set(string, string) {}

// Keys returns the two fields.
func (paramsCarrier) Keys() []string { return []string{traceparentHeader, "tracestate"} }
