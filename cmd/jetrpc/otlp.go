package main

// NOTE: where and how jetrpc serve exports its spans: resolveOTLP turns
// --otlp-endpoint and --otlp-protocol, and the OpenTelemetry environment
// variables standing in for them (OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT and _PROTOCOL), into an
// otlpTarget, and otlpTarget.exporter builds its OTLP exporter, over
// HTTP (otlptracehttp) or gRPC (otlptracegrpc). The flags win over the
// variables, and a signal's variable (_TRACES_) over the generic one.
// The rest of OTEL_EXPORTER_OTLP_* (headers, timeout, compression, TLS)
// the exporters read themselves: an explicit endpoint URL replaces only
// the endpoint, its path and, by its scheme, whether TLS is used.

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protocols of --otlp-protocol, named as
// OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	otlpGRPC = "grpc"
	otlpHTTP = "http/protobuf" // the default, as the OpenTelemetry spec's
)

// otlpTracesPath is the path of OTLP/HTTP's traces, appended to a base
// URL (an --otlp-endpoint without a path, OTEL_EXPORTER_OTLP_ENDPOINT).
const otlpTracesPath = "/v1/traces"

// The environment variables resolveOTLP reads.
const (
	envTracesExporter = "OTEL_TRACES_EXPORTER"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
)

// otlpTarget is where and how serve exports spans.
type otlpTarget struct {
	protocol     string // otlpGRPC or otlpHTTP
	endpoint     string // an http(s) URL: with the traces' path for otlpHTTP, with none (or /) for otlpGRPC
	from         string // what named the endpoint: "--otlp-endpoint" or a variable's name
	protocolFrom string // what named the protocol: "--otlp-protocol", a variable's name, or "default"
}

// resolveOTLP returns the target of serve's spans from its flags
// --otlp-endpoint (endpoint) and --otlp-protocol (protocol), "" when not
// given, and the environment read by getenv; ok is false for no tracing.
// warnings are settings ignored (an exporter of OTEL_TRACES_EXPORTER
// other than otlp or none), for the log.
//
// The endpoint is --otlp-endpoint, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// as is, else OTEL_EXPORTER_OTLP_ENDPOINT as a base URL (/v1/traces
// appended to its path for http/protobuf); none of them: no tracing, and
// OTEL_TRACES_EXPORTER=none turns off an endpoint from the environment
// (not --otlp-endpoint). The protocol is --otlp-protocol, else
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf; http/json and other values are refused. An
// --otlp-endpoint for http/protobuf without a path gets /v1/traces; one
// for gRPC must have no path but /.
func resolveOTLP(endpoint, protocol string, getenv func(string) string) (t otlpTarget, ok bool, warnings []string, err error) {
	t.from = "--otlp-endpoint"
	if endpoint == "" {
		exporters := getenv(envTracesExporter)
		for e := range strings.SplitSeq(exporters, ",") {
			switch e = strings.ToLower(strings.TrimSpace(e)); e {
			case "", "otlp":
			case "none":
				return otlpTarget{}, false, warnings, nil
			default:
				warnings = append(warnings, fmt.Sprintf("%s=%q: jetrpc serve exports by OTLP only; %q ignored", envTracesExporter, exporters, e))
			}
		}
		for _, name := range []string{envTracesEndpoint, envEndpoint} {
			if v := strings.TrimSpace(getenv(name)); v != "" {
				endpoint, t.from = v, name
				break
			}
		}
		if endpoint == "" {
			return otlpTarget{}, false, warnings, nil
		}
	}

	t.protocol, t.protocolFrom = protocol, "--otlp-protocol"
	for _, name := range []string{envTracesProtocol, envProtocol} {
		if t.protocol != "" {
			break
		}
		t.protocol, t.protocolFrom = strings.TrimSpace(getenv(name)), name
	}
	switch t.protocol {
	case "":
		t.protocol, t.protocolFrom = otlpHTTP, "default"
	case otlpHTTP, otlpGRPC:
	default:
		return otlpTarget{}, false, warnings, fmt.Errorf("%s %q: want grpc or http/protobuf", t.protocolFrom, t.protocol)
	}

	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return otlpTarget{}, false, warnings, fmt.Errorf("%s %q: want an http:// or https:// URL", t.from, endpoint)
	}
	switch {
	case t.protocol == otlpGRPC:
		if u.Path != "" && u.Path != "/" {
			return otlpTarget{}, false, warnings, fmt.Errorf("%s %q: OTLP over gRPC takes scheme://host:port, without a path (such as http://localhost:4317)", t.from, endpoint)
		}
		u.Path = ""
	case t.from == envEndpoint:
		u.Path = path.Join("/", u.Path, otlpTracesPath) // a base URL, as the spec reads it
	case t.from == envTracesEndpoint:
		if u.Path == "" {
			u.Path = "/" // as is: the spec's root path
		}
	case u.Path == "" || u.Path == "/":
		u.Path = otlpTracesPath // --otlp-endpoint: a collector's base URL
	}
	t.endpoint = u.String()
	return t, true, warnings, nil
}

// exporter returns a new OTLP exporter of t's spans. Neither protocol
// connects before its first export.
func (t otlpTarget) exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if t.protocol == otlpGRPC {
		return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(t.endpoint))
	}
	return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(t.endpoint))
}
