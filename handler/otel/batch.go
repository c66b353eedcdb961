package otel

// NOTE: batches: the Tracer as a handler.BatchHook. BeginBatch decides
// for the whole batch — the force header, the traceparent, else one
// draw against the highest ratio of its elements' methods — and, when
// the batch is traced, starts its span; the elements' interceptors find
// the decision in the handler.Batch (batchKey) and trace every element
// as a child of that span, or none. A batch not traced keeps the
// sentinel notTracedBatch there: no allocation.

import (
	"context"

	"github.com/jetrpc/jetrpc/handler"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// BatchSpanName is the name of a batch's span.
const BatchSpanName = "jsonrpc.batch"

// Attributes of a batch's span besides the conventions'.
const (
	// BatchSizeKey is the number of elements of a batch.
	BatchSizeKey = attribute.Key("jetrpc.batch.size")
	// BatchErrorsKey is the number of its elements answered with an
	// error (notifications count the error their reply would have had).
	BatchErrorsKey = attribute.Key("jetrpc.batch.errors")
)

// batchKey is the key of a batch's batchTrace in its handler.Batch.
type batchKey struct{}

// batchTrace is a traced batch: its span.
type batchTrace struct{ span trace.Span }

// notTracedBatch marks a batch the Tracer decided not to trace.
var notTracedBatch = &batchTrace{}

var _ handler.BatchHook = (*Tracer)(nil)

// BeginBatch decides whether the batch b is traced — carrying the force
// header, or a sampled traceparent, or winning one draw against the
// highest ratio of its elements' methods (Options.Methods, else Ratio)
// — and, if so, starts its SERVER span, named "jsonrpc.batch", whose
// children its elements' spans are; if not, none of its elements is
// traced. A Tracer added with Instrument is a batch hook; added with
// Use(tr.Intercept) alone, each element is decided and traced as a
// single call is.
func (tr *Tracer) BeginBatch(ctx context.Context, b *handler.Batch) {
	m := handler.MetaFrom(ctx)
	d := tr.decideBatch(m, b)
	if d == notSampled {
		b.Set(batchKey{}, notTracedBatch)
		return
	}
	ctx = tr.parentOf(ctx, m, nil, d)
	var buf [10]attribute.KeyValue
	attrs := append(buf[:0], semconv.RPCSystemNameJSONRPC, semconv.JSONRPCProtocolVersion("2.0"), BatchSizeKey.Int(b.Len())) // a batch is JSON-RPC 2.0's
	attrs = appendTransport(attrs, m)
	_, span := tr.tracer.Start(ctx, BatchSpanName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	b.SetSpan(refOf(span.SpanContext()))
	b.Set(batchKey{}, &batchTrace{span: span})
}

// EndBatch ends the batch's span, if it has one, with the number of its
// elements answered with an error; its status is Error when every
// element that was answered failed.
func (tr *Tracer) EndBatch(_ context.Context, b *handler.Batch) {
	bt, ok := b.Get(batchKey{}).(*batchTrace)
	if !ok || bt == notTracedBatch {
		return
	}
	errs := b.Errors()
	bt.span.SetAttributes(BatchErrorsKey.Int(errs))
	if errs > 0 && errs == b.Len() {
		bt.span.SetStatus(codes.Error, "every element failed")
	}
	bt.span.End()
}
