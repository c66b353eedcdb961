// Package mcp is a Model Context Protocol server built only with jetrpc's
// public API: a worked example of what an MCP server on jetrpc costs in
// code, and the server that `jetrpc serve --mcp` answers at /mcp.
//
// # Overview
//
// MCP (https://modelcontextprotocol.io) is JSON-RPC 2.0 with a fixed set
// of method names. Register adds them to a handler.Table like any other
// methods:
//
//	t := handler.NewTable()
//	mcp.Register(t)
//	e := engine.New(t) // POST /mcp (any path) speaks MCP over Streamable HTTP
//
// The server offers two tools and one resource:
//
//   - initialize answers the revision the client asks for when it is one
//     of Versions (2025-11-25, 2025-06-18, 2025-03-26), else
//     LatestVersion, with the capabilities tools and resources (neither
//     listChanged nor subscribe) and ServerName;
//   - notifications/initialized and notifications/cancelled are
//     notifications: they get no reply;
//   - ping answers {};
//   - tools/list lists add and countdown, with their input schemas;
//   - tools/call runs add ({"a":number,"b":number}: the sum as text) or
//     countdown ({"from":N,"interval_ms":M}: N steps M ms apart, each
//     reported as a notifications/progress notification carrying the
//     client's _meta.progressToken, then the text "done");
//   - resources/list lists LargeResourceURI, and resources/read answers
//     its LargeResourceSize bytes of text, streamed
//     (handler.RegisterTextStream inside handler.StreamEnvelope).
//
// # Terminology
//
// A revision is a dated version of the MCP specification. The target is
// 2025-06-18, whose shapes every method here follows; 2025-03-26 and
// 2025-11-25 are accepted too, as their shapes for these methods are the
// same (2025-11-25 is the newest revision that initialize carries: the
// official Go SDK v1.8.0 and TypeScript SDK 1.32 send it). The Go SDK
// first tries 2026-07-28, the stateless revision, by calling
// server/discover; that is not served here, so it is answered -32601
// Method not found, and the SDK falls back to initialize, as that
// revision says a client must.
//
// # Transport
//
// Streamable HTTP is jetrpc's HTTP codec as it is: every message is a
// POST, a call's reply is application/json (or, where the engine sends
// server messages over a POST's reply, a text/event-stream that carries
// the call's notifications, then its reply), and a notification is
// answered 204 with no body, which clients take as 202. The server is
// stateless: it issues no Mcp-Session-Id and needs none, which both SDKs
// allow; a GET of the endpoint (the optional standalone event stream) is
// refused 405, which the revision allows. The MCP-Protocol-Version
// header a client sends after initialize is checked by the Authorizer
// that CheckProtocolVersion makes (jetrpc serve --mcp installs it, in
// front of its API keys or JWT): an unsupported revision is refused 400
// Bad Request with the supported ones. The engine serves every POST
// path with the same table, so with `jetrpc serve --mcp` these methods
// answer at / too: /mcp is the path clients are given, not a separate
// table. Their names (with a slash) cannot clash with the bundled
// server's.
//
// # Errors
//
// As the revisions say: a tool that fails (arguments that do not fit
// its schema, a countdown too long) answers a result with "isError":
// true and the reason as text, for the model to read; an unknown tool is
// a JSON-RPC error -32602, an unknown resource -32002 with the URI as
// data; params that do not fit a method are -32602, as jetrpc answers
// them.
//
// # Concurrency
//
// tools/call is a blocking method (a countdown sleeps): it runs on a
// worker, and the context it gets is done when its call is cancelled
// (the table's call timeout, or, where the transport cancels calls whose
// client went away, the client's leaving): a countdown then stops at its
// next step and answers the context's error. The progress notifications
// of one call go out in order, through handler.Notify on the call's
// handler.Conn; where the transport cannot carry them (handler.ConnFrom
// is nil, or its CanPush is false: a POST whose client does not take an
// event stream), the countdown runs without them. Over an event stream,
// and over the engine's WebSocket and streams, they arrive before the
// call's reply (the call's Conn is a handler.DirectConn there, or the
// event stream's own).
// resources/read is streamed, so it runs on a worker, and holds about a
// part of its reply (32 KiB) at a time, however slowly its client reads;
// every other method is inline.
//
// # Cost
//
// The results that never change (initialize's, ping's, the lists) are
// built at Register and copied into each reply; the resource's text is
// made once and escaped into each reply as it streams; add
// reads its arguments in place and writes its sum into the reply. A
// Dispatch of initialize, tools/list, tools/call of add or
// resources/read allocates nothing (TestDispatch_allocatesNothing;
// BenchmarkDispatch measures them). countdown decodes its arguments
// with encoding/json: it sleeps anyway.
//
// # Limits
//
// A countdown counts from at most MaxCountdown, at most
// MaxCountdownInterval apart; it runs under the table's call timeout
// (jetrpc serve's --call-timeout, 30 s by default) like any call. The
// resource is LargeResourceSize bytes of text, its reply somewhat more:
// the table's MaxResponseSize must allow it (the default does).
package mcp
