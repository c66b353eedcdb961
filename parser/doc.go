// Package parser scans JSON-RPC 2.0 messages without decoding them.
//
// # Overview
//
// Parser.Parse validates one message as strict JSON (RFC 8259: UTF-8 only,
// control characters, escapes and numbers checked, nesting bounded) in one
// pass and exposes the envelope of a request — jsonrpc, method, id and
// params — as byte spans into the message. Params are not decoded: that is
// left to the method that receives them. Batches are walked with Iter, one
// element view at a time, so that no slice of requests is ever allocated.
//
// Framer finds where each JSON value ends in a byte stream that may be cut
// anywhere, resuming where it stopped so that a message arriving in many
// pieces is scanned once.
//
// Values and Members iterate the elements of an array or the members of an
// object that Parse has already validated; AppendUnquote decodes a string,
// and AppendQuote and AppendEscaped encode one, as encoding/json does.
//
// Package parser/http1 is the HTTP/1.1 wire format, next to the JSON one:
// engine, handler and bench import both downward.
//
// # Terminology
//
// A message is the whole text received: one request object, or a batch (a
// JSON array of request objects). A span is a sub-slice of the message. A
// fault is an Error value: -32700 (CodeParseError) when the text is not one
// valid JSON value, -32600 (CodeInvalidRequest) when it is JSON but not a valid
// request. Faults carry the byte offset where they were found.
//
// # Classification
//
// The rules are those of the JSON-RPC 2.0 specification, with the open
// points fixed as follows. Member names are case-sensitive; unknown
// members are ignored; a duplicated jsonrpc, method, params or id member
// is -32600; jsonrpc must be the string "2.0"; method a String; params an
// Array or Object; id a String, Number or null. An invalid request keeps
// its id when the id member itself was valid and not duplicated. A request
// without jsonrpc whose params is an Array and that has an id is a
// JSON-RPC 1.0 request (a null id makes it a 1.0 notification), unless
// Parser.RejectV1 is set. An empty batch is -32600. Invalid JSON anywhere
// in a batch makes the whole message -32700.
//
// Differences from encoding/json.Valid: a leading UTF-8 byte order mark is
// ignored, invalid UTF-8 inside strings is rejected, and nesting beyond
// MaxDepth (default 256) is a -32600 fault where encoding/json allows
// 10000 levels.
//
// # Concurrency
//
// A Parser or Framer holds scratch state and must be used by one goroutine
// at a time; keep one per event loop or per goroutine. The package-level
// functions are safe from any goroutine.
//
// # Buffer lifetimes
//
// Parsing never copies: every span in a Message, Request, Iter, Values or
// Members points into the message. They are valid until the message is
// modified and must not be modified; copy them to keep them.
//
// # Limits
//
// DefaultMaxDepth (256) bounds nesting, settable with Parser.MaxDepth; the
// scanner is iterative, so no input can overflow the stack. DefaultMaxSize
// (5 MiB) bounds one framed value, settable with Framer.MaxSize.
package parser
