// Package bench is a JSON-RPC-aware load generator: the library behind
// `jetrpc bench`, usable on any JSON-RPC 2.0 server.
//
// # Overview
//
// Run opens Config.Conns connections to an http://, ws:// (WebSocket),
// tcp:// or unix:// target and sends JSON-RPC requests — single calls, batches, a share of
// notifications, or request bodies from a file — either as fast as the
// server answers (closed loop) or at a fixed rate (open loop, latency
// measured from each request's intended send time, as wrk2 does, so that
// a stalling server cannot hide its stalls). Requests may be pipelined on
// each connection. Every reply is checked: valid JSON, JSON-RPC 2.0, the
// id of a call in flight, error or result as expected; errors are counted
// by kind, so that a server answering fast but wrong does not look good.
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
// goroutine per connection, which sleeps until its next send time. Run
// returns when the test ends. Counters are per connection and merged at
// the end.
//
// # Buffer lifetimes
//
// Each connection reuses one write buffer and one read buffer; requests
// are built from templates with the ids patched in, replies are checked in
// place. A request costs no allocation in steady state.
//
// # Limits
//
// Pipeline ≤ 4096, Batch ≤ 10000; a reply later than Config.Timeout
// (default 10 s) counts as a timeout and its connection is reopened.
package bench
