package http1

// NOTE: the client side: a response framer for a client that pipelines
// requests over one connection (jetrpc's load generator). It finds the
// status, the framing (Content-Length, or chunked through the same
// ChunkedDecoder the server uses) and Connection: close, and keeps its
// place across reads, so that neither a head nor a chunked body arriving
// in pieces is scanned twice.

import "bytes"

// Limits of a ResponseReader whose MaxHead or MaxBody is 0.
const (
	DefaultMaxResponseHead = 64 << 10 // bytes of a response head; also of a chunked body's extensions and trailers in total
	DefaultMaxResponseBody = 64 << 20 // bytes of a response body
)

// Response is one response framed by ResponseReader.Next.
type Response struct {
	// Status is the status code, three digits.
	Status int
	// Body is the body, chunked bodies decoded; empty for a response
	// without one (1xx, 204, 304, or Content-Length: 0).
	Body []byte
	// Size is the bytes of the whole response in the buffer given to
	// Next: the next response starts at b[Size:].
	Size int
	// Close is true when the response has Connection: close: the server
	// closes the connection after it.
	Close bool
}

// ResponseReader frames the responses that arrive on one connection, one
// after another, keeping its place in a response that has not arrived
// whole. Set MaxHead and MaxBody before the first call, or leave them 0
// for the defaults. The zero value is ready. A ResponseReader is not safe
// for concurrent use; keep one per connection.
type ResponseReader struct {
	// MaxHead bounds the head of a response (the status line, the fields
	// and the blank line), and separately the extensions and trailer
	// fields of a chunked body in total; 0 means DefaultMaxResponseHead.
	MaxHead int
	// MaxBody bounds a body; 0 means DefaultMaxResponseBody. A
	// Content-Length of more than 10 digits is refused whatever MaxBody.
	MaxBody int64

	scan    int   // bytes of the head already searched for its end
	headLen int   // the head's length, blank line included; 0 until the head is in
	off     int   // bytes of the response consumed so far: the head, then chunked body bytes
	status  int   // the status code (once headLen > 0)
	length  int64 // Content-Length, or -1 (once headLen > 0)
	chunked bool  // Transfer-Encoding: chunked (once headLen > 0)
	close   bool  // Connection: close (once headLen > 0)
	chunk   ChunkedDecoder
	body    []byte // a chunked body's data; reused from response to response
}

// Next frames the response at the start of b. When done is true, r is
// the response and the next one starts at b[r.Size:]. When done is false
// and err is nil, more bytes are needed: call Next again with b grown
// (the same bytes at its start, more after them). A non-nil err (one of
// the Err variables of this package) means the response is malformed or
// over a limit; the connection must be closed, and Reset called before
// the reader frames another one.
//
// A response to a request other than HEAD has a body delimited by
// Content-Length or by the chunked coding, or none at all (1xx, 204,
// 304); a body delimited by the end of the connection is ErrUnframed.
//
// It allocates nothing in steady state: a chunked body is decoded into a
// buffer the reader keeps and reuses. It may run on any goroutine, one
// call at a time per rr.
// The returned Body is valid until the next call to Next or Reset and
// until b changes, and must not be modified; copy it to keep it.
func (rr *ResponseReader) Next(b []byte) (r Response, done bool, err error) {
	maxHead, maxBody := rr.limits()
	if rr.headLen == 0 {
		end := -1
		window := b[:min(len(b), maxHead)]
		from := min(rr.scan, len(window)) // rr.scan ≤ len(b) unless b shrank, against the contract
		if k := bytes.Index(window[from:], crlf2); k >= 0 {
			end = from + k
		}
		if end < 0 {
			if len(b) >= maxHead {
				return r, false, ErrHeadTooLarge
			}
			rr.scan = max(len(b)-3, 0)
			return r, false, nil
		}
		if err := rr.parseHead(b[:end], maxBody); err != nil {
			return r, false, err
		}
		rr.headLen = end + 4
		rr.off = rr.headLen
		if rr.chunked {
			rr.chunk.Reset()
			rr.chunk.maxDigits = 8 // a size of up to 4 GiB; more is not from a server worth measuring
			rr.body = rr.body[:0]
		}
	}
	r.Status, r.Close = rr.status, rr.close
	switch {
	case rr.status/100 == 1 || rr.status == StatusNoContent || rr.status == StatusNotModified:
		r.Size = rr.headLen // never a body (RFC 9112 6.3)
	case rr.chunked:
		var n, st int
		var end bool
		rr.body, n, end, st = rr.chunk.Decode(rr.body, b[rr.off:], maxBody, maxHead)
		rr.off += n
		if st != 0 {
			return Response{}, false, ErrChunked
		}
		if !end {
			return Response{}, false, nil
		}
		r.Body, r.Size = rr.body, rr.off
	case rr.length >= 0:
		n := int(rr.length)
		if len(b)-rr.headLen < n {
			return Response{}, false, nil
		}
		r.Body, r.Size = b[rr.headLen:rr.headLen+n], rr.headLen+n
	default:
		return Response{}, false, ErrUnframed // a body delimited by close: not for pipelining
	}
	rr.next()
	return r, true, nil
}

// Reset makes rr ready for a new connection, keeping its limits and its
// body buffer.
func (rr *ResponseReader) Reset() { rr.next() }

// next makes rr ready for the next response, keeping its limits and its
// body buffer.
func (rr *ResponseReader) next() {
	*rr = ResponseReader{MaxHead: rr.MaxHead, MaxBody: rr.MaxBody, body: rr.body}
}

func (rr *ResponseReader) limits() (maxHead int, maxBody int64) {
	maxHead, maxBody = rr.MaxHead, rr.MaxBody
	if maxHead <= 0 {
		maxHead = DefaultMaxResponseHead
	}
	if maxBody <= 0 {
		maxBody = DefaultMaxResponseBody
	}
	return maxHead, maxBody
}

// parseHead reads the status line and the fields that frame the body
// from head, the head without its final CRLFCRLF.
func (rr *ResponseReader) parseHead(head []byte, maxBody int64) error {
	line, rest, _ := bytes.Cut(head, crlf2[:2])
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
		return ErrStatusLine
	}
	for _, c := range line[9:12] {
		if unhex[c] >= 10 { // not a decimal digit
			return ErrStatusLine
		}
		rr.status = rr.status*10 + int(c-'0')
	}
	rr.length = -1
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, crlf2[:2])
		colon := bytes.IndexByte(h, ':')
		if colon < 0 {
			return ErrHeaderField
		}
		name, value := h[:colon], TrimOWS(h[colon+1:])
		switch {
		case EqualFold(name, "content-length"):
			if len(value) == 0 || len(value) > 10 {
				return ErrHeaderField
			}
			n, ok := parseLength(value)
			if !ok {
				return ErrHeaderField
			}
			if n > maxBody {
				return ErrBodyTooLarge
			}
			rr.length = n
		case EqualFold(name, "transfer-encoding"):
			rr.chunked = EqualFold(value, "chunked")
		case EqualFold(name, "connection"):
			rr.close = HasToken(value, "close")
		}
	}
	return nil
}
