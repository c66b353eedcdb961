package main

// NOTE: tracing for jetrpc serve: the --trace-method flag's Value, and
// tracing, which builds the OpenTelemetry SDK's TracerProvider with an
// OTLP exporter (over HTTP or gRPC: otlp.go) and handler/otel's Tracer
// from the --otlp-* and --trace-* flags and the OTEL_* environment —
// nothing at all when no endpoint is named. jetrpc samples (handler/otel)
// before OpenTelemetry is called, so the TracerProvider samples every
// span it is given: OTEL_TRACES_SAMPLER is not a second sampler.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	jotel "github.com/jetrpc/jetrpc/handler/otel"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// defaultTraceSample is --trace-sample: 1 % of root calls.
const defaultTraceSample = 0.01

// traceFlushTimeout bounds the flush of the spans still queued when
// serve stops.
const traceFlushTimeout = 5 * time.Second

// methodRatios is the repeatable --trace-method METHOD=RATIO.
type methodRatios struct{ m *map[string]float64 }

func (r methodRatios) String() string {
	if r.m == nil { // the flag package's zero Value
		return ""
	}
	var parts []string
	for k, v := range *r.m {
		parts = append(parts, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func (r methodRatios) Set(v string) error {
	name, ratio, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return errors.New("want METHOD=RATIO, such as admin_*=1 or add=0.01")
	}
	x, err := strconv.ParseFloat(ratio, 64)
	if err != nil || !(x >= 0 && x <= 1) {
		return fmt.Errorf("ratio %q: must be a number between 0 and 1", ratio)
	}
	if *r.m == nil {
		*r.m = map[string]float64{}
	}
	(*r.m)[name] = x
	return nil
}

// tracing returns the Tracer of the calls (its Instrument adds it to the
// table: interceptor and batch hook), and the func that
// flushes and stops the exporter (within traceFlushTimeout), from c's
// flags and the environment (resolveOTLP); a nil Tracer and a no-op
// when no endpoint is named. The exporter reads the other
// OTEL_EXPORTER_OTLP_* variables itself (headers, timeout, compression,
// TLS); the service is named by OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES), else "jetrpc". OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG are not read: the TracerProvider samples every
// span, jetrpc's --trace-* flags having chosen the calls traced.
func (c *serveFlags) tracing(logger *slog.Logger) (*jotel.Tracer, func(), error) {
	target, ok, warnings, err := resolveOTLP(c.otlpEndpoint, c.otlpProtocol, os.Getenv)
	for _, w := range warnings {
		logger.Warn("jetrpc: tracing: " + w)
	}
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, func() {}, nil
	}
	exp, err := target.exporter(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", target.from, err)
	}
	logger.Info("jetrpc: tracing", "otlp_protocol", target.protocol, "otlp_endpoint", target.endpoint, "from", target.from)
	res := resource.Default()
	// Default reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES once
	// per process; Environment reads them now, for a serve that is not
	// the process's first (tests run several).
	if r, err := resource.Merge(res, resource.Environment()); err == nil {
		res = r
	}
	if os.Getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		if r, err := resource.Merge(res, resource.NewSchemaless(semconv.ServiceName("jetrpc"))); err == nil {
			res = r
		}
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		// jetrpc has sampled already: not OTEL_TRACES_SAMPLER (which
		// WithSampler overrides; always_off or a ratio would drop or
		// thin out the calls the --trace-* flags chose).
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	)
	tr := jotel.New(jotel.Options{
		TracerProvider: tp,
		Ratio:          c.traceSample,
		Methods:        c.traceMethods,
		ForceHeader:    c.traceForce,
		ParamsMeta:     c.traceParams,
	})
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			logger.Warn("jetrpc: flushing traces", "err", err)
		}
	}
	return tr, stop, nil
}
