package main

// NOTE: resolveOTLP's table cases, each naming its own line (here): the
// flags and the environment (a map, read by the getenv the case passes)
// in, the otlpTarget or the error out. Exports over both protocols are
// in trace_test.go and jaeger_test.go.

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// here returns "file:line" of its caller, for a table case to name itself.
func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
}

// TestResolveOTLP_flagsAndEnvironment: the endpoint and protocol come
// from the flags, else the OpenTelemetry variables (the signal's before
// the generic one), else no tracing and http/protobuf; the generic
// endpoint is a base URL for http/protobuf, the signal's one is as is.
func TestResolveOTLP_flagsAndEnvironment(t *testing.T) {
	for _, tc := range []struct {
		at                 string
		endpoint, protocol string            // the flags
		env                map[string]string // besides all unset
		off                bool              // no tracing
		want               otlpTarget
		warn               string // a warning containing this
	}{
		{at: here(), off: true},
		{at: here(), protocol: "grpc", off: true}, // a protocol alone turns nothing on
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, off: true},
		{at: here(), endpoint: "http://c:4318",
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/v1/traces", from: "--otlp-endpoint", protocolFrom: "default"}},
		{at: here(), endpoint: "https://c:4318/",
			want: otlpTarget{protocol: "http/protobuf", endpoint: "https://c:4318/v1/traces", from: "--otlp-endpoint", protocolFrom: "default"}},
		{at: here(), endpoint: "http://c:4318/custom/traces",
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/custom/traces", from: "--otlp-endpoint", protocolFrom: "default"}},
		{at: here(), endpoint: "http://c:4317", protocol: "grpc",
			want: otlpTarget{protocol: "grpc", endpoint: "http://c:4317", from: "--otlp-endpoint", protocolFrom: "--otlp-protocol"}},
		{at: here(), endpoint: "https://c:4317/", protocol: "grpc",
			want: otlpTarget{protocol: "grpc", endpoint: "https://c:4317", from: "--otlp-endpoint", protocolFrom: "--otlp-protocol"}},
		// The flags win over the variables.
		{at: here(), endpoint: "http://flag:4317", protocol: "grpc",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_TRACES_EXPORTER": "none"},
			want: otlpTarget{protocol: "grpc", endpoint: "http://flag:4317", from: "--otlp-endpoint", protocolFrom: "--otlp-protocol"}},
		// The protocol from the variables, the signal's first.
		{at: here(), endpoint: "http://c:4317", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: otlpTarget{protocol: "grpc", endpoint: "http://c:4317", from: "--otlp-endpoint", protocolFrom: "OTEL_EXPORTER_OTLP_PROTOCOL"}},
		{at: here(), endpoint: "http://c:4317", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			want: otlpTarget{protocol: "grpc", endpoint: "http://c:4317", from: "--otlp-endpoint", protocolFrom: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}},
		// The endpoint from the variables: the generic one a base URL.
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/v1/traces", from: "OTEL_EXPORTER_OTLP_ENDPOINT", protocolFrom: "default"}},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318/base/"},
			want: otlpTarget{protocol: "http/protobuf", endpoint: "https://c:4318/base/v1/traces", from: "OTEL_EXPORTER_OTLP_ENDPOINT", protocolFrom: "default"}},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: otlpTarget{protocol: "grpc", endpoint: "http://c:4317", from: "OTEL_EXPORTER_OTLP_ENDPOINT", protocolFrom: "OTEL_EXPORTER_OTLP_PROTOCOL"}},
		// The signal's endpoint as is (the root path when it has none), and before the generic one.
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"},
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/", from: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", protocolFrom: "default"}},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/x/v1/traces"},
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/x/v1/traces", from: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", protocolFrom: "default"}},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			want: otlpTarget{protocol: "grpc", endpoint: "http://c:4317", from: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", protocolFrom: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}},
		// OTEL_TRACES_EXPORTER: none turns the environment's endpoint off; others are ignored, with a warning.
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, off: true},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": " None "}, off: true},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "otlp"},
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/v1/traces", from: "OTEL_EXPORTER_OTLP_ENDPOINT", protocolFrom: "default"}},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "otlp,console"}, warn: `"console" ignored`,
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/v1/traces", from: "OTEL_EXPORTER_OTLP_ENDPOINT", protocolFrom: "default"}},
		// OTEL_TRACES_SAMPLER changes nothing here (nor in the TracerProvider: TestServe_otlpEnvironment).
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "always_off"},
			want: otlpTarget{protocol: "http/protobuf", endpoint: "http://c:4318/v1/traces", from: "OTEL_EXPORTER_OTLP_ENDPOINT", protocolFrom: "default"}},
	} {
		getenv := func(k string) string { return tc.env[k] }
		got, ok, warnings, err := resolveOTLP(tc.endpoint, tc.protocol, getenv)
		if err != nil {
			t.Errorf("%s: %v", tc.at, err)
			continue
		}
		if ok == tc.off {
			t.Errorf("%s: tracing %v; want %v (%+v)", tc.at, ok, !tc.off, got)
		}
		if !tc.off && got != tc.want {
			t.Errorf("%s: %+v\nwant %+v", tc.at, got, tc.want)
		}
		if w := strings.Join(warnings, "\n"); (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
			t.Errorf("%s: warnings %q; want one with %q", tc.at, warnings, tc.warn)
		}
	}
}

// TestResolveOTLP_refused: a protocol other than grpc and http/protobuf,
// an endpoint not an http(s) URL, and a gRPC endpoint with a path are
// refused, naming the flag or variable they came from.
func TestResolveOTLP_refused(t *testing.T) {
	for _, tc := range []struct {
		at                 string
		endpoint, protocol string
		env                map[string]string
		want               string // in the error
	}{
		{at: here(), endpoint: "localhost:4318", want: "--otlp-endpoint"},
		{at: here(), endpoint: "grpc://localhost:4317", protocol: "grpc", want: "--otlp-endpoint"},
		{at: here(), endpoint: "http://", want: "--otlp-endpoint"},
		{at: here(), endpoint: "http://c:4318?x=1", want: "--otlp-endpoint"},
		{at: here(), endpoint: "http://c:4318", protocol: "http/json", want: "--otlp-protocol"},
		{at: here(), endpoint: "http://c:4318", protocol: "http", want: "--otlp-protocol"},
		{at: here(), endpoint: "http://c:4317/v1/traces", protocol: "grpc", want: "without a path"},
		{at: here(), endpoint: "http://c:4318", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, want: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4317"}, want: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{at: here(), env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	} {
		getenv := func(k string) string { return tc.env[k] }
		got, ok, _, err := resolveOTLP(tc.endpoint, tc.protocol, getenv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v %v, %v; want an error naming %s", tc.at, got, ok, err, tc.want)
		}
	}
}
