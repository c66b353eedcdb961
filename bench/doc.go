// Package bench is a JSON-RPC-aware load generator: the library behind
// `jetrpc bench`, usable on any JSON-RPC 2.0 server.
//
// # Overview
//
// Run opens Config.Conns connections to an http://, ws:// (WebSocket),
// https:// or wss:// (TLS, Config.TLS), tcp:// or unix:// target and
// sends JSON-RPC requests — single calls, batches, a share of
// notifications, request bodies from a file, or a Workload's weighted,
// templated calls — either as fast as the server answers (closed loop)
// or at a fixed rate or on a rate Schedule (open loop, latency measured
// from each request's intended send time, as wrk2 does, so that a
// stalling server cannot hide its stalls). FindMax searches for the
// highest rate that holds an SLO. Requests may be pipelined on
// each connection. Every reply is checked: valid JSON, JSON-RPC 2.0
// (jsonrpc "2.0", an id, exactly one of result and error, an error object
// with an integer code and a string message), the id of a call in flight,
// its shape (an array for a batch, an object for a single call; on a
// stream a batch is answered by one array), error or result as expected;
// a message that comes when nothing is in flight, or with a null id, is a
// reply to no request. Errors are counted by kind, so that a server
// answering fast but wrong does not look good; error replies also by
// JSON-RPC code, and for the errors with a cause (connect, tls,
// websocket, transport, encoding) the first cause's text is kept.
// Result.Failure says why a run failed; Result.CheckThresholds checks
// conditions on it (ParseThreshold: p99<5ms, errors==0, rps>50000) for a
// CI gate.
//
// Over a stream (tcp, unix, ws) the server never answers notifications,
// so a closed loop whose every message is a notification is refused: use
// an open loop (Config.Rate).
//
// Servers that want authentication get Config.Header, sent with every
// HTTP request and with the WebSocket upgrade request, and
// Config.JWTSecret: an HS256 JWT with a fresh iat in an Authorization
// header, re-minted every Config.JWTRefresh (the Engine API's scheme, as
// geth checks it). A tcp:// or unix:// stream has no headers to carry
// them.
//
// With Config.TraceSample a share of the requests carry a W3C traceparent
// with fresh random ids and the sampled flag, so that a server which
// traces shows the load test's calls: each HTTP request is drawn alone, a
// WebSocket once per connection, at its upgrade; a stream cannot carry
// one. A share of 0 costs the request path nothing.
//
// With Config.Compression an HTTP request asks for gzip or zstd replies
// (Accept-Encoding, the first coding named preferred) and a reply whose
// Content-Encoding is one of them is decoded before its checks; with
// Config.WSCompression the WebSocket upgrade offers permessage-deflate
// without context takeover, and a message with RSV1 set is inflated
// before its checks (the tool's own messages go raw, which RFC 7692
// allows); FanoutConfig.WSCompression does the same for the fan-out's
// subscribers. A reply that does not decode is an ErrEncoding error.
// Every run counts the bytes read from and written to its connections,
// as they are on the wire (compressed, above TLS), and reports them per
// request (Result.WireInPerRequest, WireOutPerRequest), compressed or
// not.
//
// With Config.MetricsURL, Run reads the server's Prometheus metrics (a
// jetrpc server's jsonrpc_server_handled_total and
// jsonrpc_server_handling_seconds) when the measured window opens and
// when it closes, and Result.Server gives the server's own view of the
// window beside the client's: the calls it handled, its error replies by
// code, and quantiles of its handling time.
//
// At the end of the measured window Run waits, up to Config.Timeout, for
// the replies in flight (a healthy server answers at once; only a stalled
// one makes Run overrun the window, by Timeout at most). The measured
// requests still unanswered then count as ErrTimeout, their latency until
// then recorded, so that a server that goes silent shows in the errors
// and in the tail. In an open loop, the requests that were due in the
// window and still not sent by then, because every pipeline slot was
// waiting, count as ErrUnsent, their latency until then recorded; those
// sent after the end, as slots free up, count in the latencies but not in
// the throughput.
//
// # Terminology
//
// A request is one message (a call or a batch); a call is one element of
// it. Requests/s counts messages, calls/s counts calls.
//
// # Concurrency
//
// A closed loop runs its connections on gnet event loops (one read and
// one write per burst of replies, as wrk does); an open loop runs a
// goroutine per connection, which reads until its next send time; so
// does a closed loop over TLS (the event loops read raw sockets). Run
// returns when the test ends and every event loop, goroutine and redial
// has stopped. Counters are per connection and merged at the end.
//
// # Buffer lifetimes
//
// Each connection reuses one write buffer and one read buffer; requests
// are built from templates with the ids patched in, behind an HTTP head
// built once per JWT (swapped atomically when the token is re-minted);
// replies are checked in place, or decoded first into a buffer the
// connection keeps, by coders it makes on first use and resets per reply
// (Config.Compression, WSCompression). A request costs no allocation in
// steady state.
//
// # Limits
//
// Pipeline ≤ 4096, Batch ≤ 10000; a reply later than Config.Timeout
// (default 10 s) counts as a timeout and its connection is reopened; a
// timed-out request's latency is recorded. One reply (an HTTP body, a
// chunk, a stream message, a WebSocket payload) is at most 64 MiB; a
// chunk size of more than 8 hex digits, a Content-Length of more than
// 10 digits, a response head over 64 KiB, or chunk extensions and
// trailers over 64 KiB in all is an HTTP framing error (responses are
// read with parser/http1's ResponseReader). A compressed reply inflates
// to 64 MiB at most (past it, an ErrEncoding error).
package bench
