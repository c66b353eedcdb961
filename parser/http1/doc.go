// Package http1 is jetrpc's HTTP/1.1 wire format (RFC 9112): the request
// head parser and the chunked-body decoder the engine serves with, the
// header fields the method table reads call metadata from (package
// handler), the response framer the load generator (package bench) reads
// replies with, status lines, and the token helpers they share. It lives
// under parser, next to the JSON scanner, so that each of its users
// imports it downward; it imports only the standard library and
// allocates nothing on its hot paths.
//
// # Overview
//
// A server reads a request in two steps. ParseHead finds and checks the
// head at the start of the buffer read so far, keeping its place in a
// HeadScan while the head is incomplete:
//
//	var s http1.HeadScan // one per connection
//	var r http1.Request
//	switch st := http1.ParseHead(buf, &s, maxHead, &r); st {
//	case 0: // read more, call again with the same s
//	case http1.StatusOK: // r describes the head; the body starts at buf[r.HeadLen:]
//	default: // answer st (http1.AppendStatusLine) and close
//	}
//
// Then the body: r.BodyLen bytes, or, when r.Chunked, what a
// ChunkedDecoder (one per connection) decodes across as many reads as it
// takes. Header and Fields read any other field of the head. A client
// frames the replies on a connection with a ResponseReader.
//
// # Terminology
//
// The head is the request line (or status line) and the header fields
// up to and including the blank line. A field is one header line: a name
// (a token, see IsToken), a colon and a value without control
// characters; OWS is the optional spaces and tabs around a value. A
// chunked body is a series of chunks, each a size line (the size in hex,
// then optional extensions after ';') and that many bytes of data, ended
// by a chunk of size 0 and a trailer section (fields, then a blank
// line). Non-data is what a chunked body holds besides sizes, data and
// the CRLFs that frame them: extensions and trailer fields.
//
// # Concurrency
//
// Every function is safe from any goroutine: none keeps state between
// calls except in the values passed to it. A HeadScan, ChunkedDecoder,
// ResponseReader or Fields belongs to one connection (or one head) and
// must not be used from two goroutines at once; on a gnet server that is
// the connection's event loop, where every function here may run: none
// blocks, none allocates (beyond growing the caller's dst).
//
// # Buffer lifetimes
//
// Nothing is copied: a Request's byte slices, the values of Header and
// Fields, and a Response's Body for a Content-Length response alias the
// buffer they were found in. The returned slices are valid until that
// buffer changes and must not be modified; copy them to keep them. A
// chunked Response's Body is the ResponseReader's own buffer, reused for
// the next chunked response. ParseHead, ChunkedDecoder.Decode and
// ResponseReader.Next resume where they stopped: between two calls the
// bytes they left unconsumed must stay at the start of the buffer, more
// bytes after them.
//
// # Limits
//
// Every limit is the caller's, passed in (ParseHead's maxHead,
// Decode's maxBody and maxOverhead) or set on the ResponseReader
// (MaxHead, MaxBody, with defaults DefaultMaxResponseHead and
// DefaultMaxResponseBody). Beyond them a request is refused with
// StatusHeaderTooLarge or StatusPayloadTooLarge as soon as the bytes
// read prove it over, whether its last line is complete or not, so the
// verdict does not depend on how the bytes were split. A chunked body's
// non-data is bounded in total by maxOverhead (a server passes its head
// limit): without such a bound a client could make a server read
// megabytes of extensions or trailers for a small body (the class of
// CVE-2023-39326 and CVE-2024-22019). A Content-Length has at most 18
// digits and a chunk size at most 15 hex digits, so that neither
// overflows an int64 (in a response, 10 and 8).
//
// # Strictness
//
// ParseHead refuses what a request smuggler could exploit, where other
// servers are lenient: Transfer-Encoding together with Content-Length,
// or in HTTP/1.0; a transfer coding other than chunked (501); two
// Content-Lengths, even equal; a Content-Length that is not digits only;
// obs-folded lines; whitespace between a field name and its colon; bare
// LF and stray CR; control characters in fields and in the target; an
// HTTP/1.1 request without exactly one Host; versions other than 1.0 and
// 1.1 (505). Empty lines before the request line are skipped (RFC 9112
// 2.2), and an HTTP/1.0 client's Expect: 100-continue is ignored (RFC
// 9110 10.1.1). The chunked decoder refuses control characters in
// extensions and trailer fields, bare LF, stray CR and whitespace before
// a chunk size, but allows whitespace before ';' (RFC 9112 7.1.1).
package http1
