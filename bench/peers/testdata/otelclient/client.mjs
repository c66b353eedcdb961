// A JSON-RPC 2.0 client instrumented with the OpenTelemetry JS SDK (the
// versions pinned in package.json), for jetrpc's tracing interop test
// (bench/peers/otel_node_test.go).
//
//   node client.mjs http://127.0.0.1:PORT/ http://127.0.0.1:PORT/v1/traces
//
// The first argument is jetrpc's HTTP URL, the second a collector's
// OTLP/HTTP traces URL (Jaeger's). It starts a CLIENT span, injects its
// context as a W3C traceparent into the headers of a fetch POST of
// add [1,2], ends the span once the reply is in, and shuts the tracer
// provider down, which exports the span (SimpleSpanProcessor). On
// success it prints one JSON line ({"ok":true,"traceId":…,"spanId":…,
// "reply":…}) and exits 0; when the call, the export or anything else
// fails, or after 10 s, it prints why on stderr and exits 1.

import { createRequire } from "node:module";
import { SpanKind, SpanStatusCode, context, propagation, trace } from "@opentelemetry/api";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";

const require = createRequire(import.meta.url);
const sdkVersion = require("@opentelemetry/sdk-trace-node/package.json").version;
const [rpcURL, otlpURL] = process.argv.slice(2);
if (!rpcURL || !otlpURL) {
  fail("usage: node client.mjs JETRPC_HTTP_URL OTLP_TRACES_URL");
}

let step = "starting";
const timer = setTimeout(() => fail(`timeout after 10 s while ${step}`), 10_000);

function fail(why) {
  console.error(`otelclient (sdk-trace-node ${sdkVersion}): FAIL: ${why}`);
  process.exit(1);
}

// The exporter, wrapped to keep every export's result: a span Jaeger
// refused must fail the script, not pass unseen.
const exporter = new OTLPTraceExporter({ url: otlpURL });
const exports = [];
const export_ = exporter.export.bind(exporter);
exporter.export = (spans, done) =>
  export_(spans, (result) => {
    exports.push(result);
    done(result);
  });

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "node-otel-client" }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
provider.register({ propagator: new W3CTraceContextPropagator() });
const tracer = trace.getTracer("jetrpc-otelclient", "0.0.0");

try {
  const span = tracer.startSpan("add", {
    kind: SpanKind.CLIENT,
    attributes: { "rpc.system.name": "jsonrpc", "rpc.method": "add", "url.full": rpcURL },
  });
  const headers = { "Content-Type": "application/json" };
  propagation.inject(trace.setSpan(context.active(), span), headers);
  if (!/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/.test(headers.traceparent ?? "")) {
    fail(`propagation.inject wrote traceparent ${JSON.stringify(headers.traceparent)}`);
  }
  step = "calling add";
  const resp = await fetch(rpcURL, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "add", params: [1, 2], id: 1 }),
  });
  const reply = await resp.json();
  span.setAttribute("http.response.status_code", resp.status);
  if (resp.status !== 200 || reply.error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
  const { traceId, spanId } = span.spanContext();

  step = "exporting the span";
  await provider.forceFlush();
  await provider.shutdown();
  if (exports.length !== 1 || exports[0].code !== ExportResultCode.SUCCESS) {
    fail(`export to ${otlpURL}: ${JSON.stringify(exports.map((r) => ({ code: r.code, error: String(r.error ?? "") })))}`);
  }
  clearTimeout(timer);
  console.log(JSON.stringify({ ok: true, node: process.version, sdk: sdkVersion, traceId, spanId, status: resp.status, reply }));
} catch (err) {
  fail(`${step}: ${err?.stack ?? err}`);
}
