package http1

import "errors"

// Errors of ResponseReader.Next: each means the response is malformed or
// over a limit, and the connection cannot be used further.
var (
	// ErrStatusLine: the first line is not "HTTP/1.x NNN ...".
	ErrStatusLine = errors.New("jetrpc: HTTP response: malformed status line")
	// ErrHeaderField: a header line without a colon, or a malformed or
	// out-of-range Content-Length.
	ErrHeaderField = errors.New("jetrpc: HTTP response: malformed header field")
	// ErrHeadTooLarge: the head is longer than ResponseReader.MaxHead.
	ErrHeadTooLarge = errors.New("jetrpc: HTTP response: head too large")
	// ErrBodyTooLarge: a Content-Length over ResponseReader.MaxBody.
	ErrBodyTooLarge = errors.New("jetrpc: HTTP response: body too large")
	// ErrChunked: a malformed chunked body (or a chunk size of more than
	// 8 hex digits), one whose data exceed ResponseReader.MaxBody, or one
	// whose extensions and trailers exceed ResponseReader.MaxHead.
	ErrChunked = errors.New("jetrpc: HTTP response: malformed chunked body")
	// ErrUnframed: a body delimited by the end of the connection (neither
	// Content-Length nor chunked), which a pipelining client cannot use.
	ErrUnframed = errors.New("jetrpc: HTTP response: body without length")
)
