// Package otel traces the calls of a handler.Table with OpenTelemetry:
// one SERVER span per call, named and described by the OpenTelemetry
// semantic conventions for JSON-RPC, with the sampling decided by
// jetrpc before OpenTelemetry is called, so that a call not traced
// costs no allocation. It is the only package of jetrpc that links
// OpenTelemetry: importers of engine and handler alone do not.
//
// # Overview
//
//	tr := otel.New(otel.Options{
//		TracerProvider: tp,          // an sdktrace.TracerProvider with an exporter
//		Ratio:          0.01,        // 1 % of root calls
//		Methods:        map[string]float64{"admin_*": 1},
//		ForceHeader:    "X-Force-Trace",
//	})
//	tr.Instrument(table) // the interceptor, with Wants as its filter, and the batch hook
//
// Each traced call — a single request, each element of a batch, a
// notification, a fault — gets its span, and its method's ctx carries
// it: spans the method starts from ctx (a database driver's, an HTTP
// client's) are its children. A traced batch gets a span of its own,
// named "jsonrpc.batch", the parent of its elements' spans. A traced
// call's span is named to the table (handler.Call.SetSpan): its access
// log record carries trace_id and span_id, and its method's
// handling-time histogram an exemplar (engine/metrics exposes it in
// OpenMetrics).
//
// Instrument gives the table the Tracer's decision as the interceptor's
// filter (Wants, handler.Table.UseWhen): a call not traced passes the
// interceptor by, and when the Tracer is the table's only interceptor
// it runs as if the table had none. table.Use(tr.Intercept) works too,
// deciding inside the interceptor, with each batch element decided and
// traced as a single call.
//
// # Terminology
//
// A root call has no valid W3C traceparent header field. A call is
// sampled (traced) when
//
//   - it carries Options.ForceHeader (any non-empty value), or else
//   - its traceparent is valid and its sampled flag is set (a
//     traceparent whose flag is clear is not traced: parent-based), or
//     else
//   - it is a root call and wins the draw against its method's ratio
//     (Options.Methods) or Options.Ratio.
//
// The decision reads the request's header fields in place and draws from
// math/rand/v2 (a per-thread ChaCha8); it calls no OpenTelemetry API.
// A traced call's parent is its traceparent (and tracestate), read with
// OpenTelemetry's propagation.TraceContext through a carrier over the
// call's handler.Meta, without a copy of the head. A call that is not
// traced runs with its context untouched: a not-sampled traceparent is
// not passed on to what the method calls.
//
// Over WebSocket the header fields are the upgrade request's: its
// traceparent is the parent of every call of the connection. A browser
// can send no header field per message, and a page's connection then
// groups its calls under the page's trace; a span link instead would
// make each call a trace of its own, which a client that wants that
// gets by sending no traceparent on the upgrade. (A per-message
// traceparent in params._meta, as MCP clients send it, is not read.)
// Streams (TCP, Unix sockets) and in-process calls have no header
// fields: their calls are root calls.
//
// A batch is decided once, as a whole, by BeginBatch: the force header
// and the traceparent as for a call, and for a root batch one draw
// against the highest ratio of its elements' methods. Its elements are
// then all traced, as children of its span, or none is.
//
// # Attributes
//
// A span is named by its method (rpc.method), or "jsonrpc" when the
// method is unknown. Its attributes:
//
//   - rpc.system.name: "jsonrpc".
//   - rpc.method: the method's registered name, or "_OTHER" for a
//     method the table does not have (or a message without one), so
//     that a client cannot make span names without bound.
//   - rpc.method_original: for "_OTHER", the name the client sent.
//   - jsonrpc.request.id: the id, a string id decoded and a number as
//     written; absent for a notification and an id null.
//   - jsonrpc.protocol.version: "2.0", or "1.0" for a JSON-RPC 1.0
//     request.
//   - rpc.response.status_code and error.type: on an error reply (or
//     the error a notification would have had), its code as a string
//     ("-32601"); the span's status is then Error, with the code's name
//     ("Method not found") as its description.
//   - jetrpc.transport: "http", "websocket", "stream" or "in-process".
//   - network.protocol.name: "http" or "websocket", for those.
//   - network.transport: "tcp" or "unix", from the listener's address.
//   - client.address: the client's IP address (handler.Meta.ClientIP):
//     behind a trusted proxy, the client the proxy names.
//   - enduser.id: the caller the transport's Authorizer named
//     (handler.Meta.Principal), when one did.
//
// # Concurrency
//
// A Tracer is immutable and safe from any goroutine. Its interceptor
// runs where the call runs — on the event loop for inline methods and
// faults — and never blocks there but for what the TracerProvider does
// at a span's end (the SDK's batch span processor queues, dropping when
// full). The batch hook runs on the batch's caller; its elements' spans
// may end on workers.
//
// # Buffer lifetimes
//
// The span keeps copies of the strings it is given: the method name
// sent for an unknown method and the id are copied out of the message.
//
// # Limits
//
// A traced call allocates (the span, its attributes, the contexts that
// carry it: 8 allocations with the SDK, TestTracer_allocsSampled); one
// not traced allocates nothing, on every transport. Its decision reads
// the traceparent the engine's HTTP parser found (no pass over the
// head); a ForceHeader costs one pass over each request's head. The
// TracerProvider's sampler should sample what it is given (the SDK's
// default ParentBased(AlwaysSample) does): jetrpc has decided already.
// The writing of a reply has no span of its own.
package otel
