package http1

// NOTE: the request framer (RFC 9112). ParseHead parses a head that
// arrived whole in one pass (parseLines), which stops at the blank line;
// a head not whole yet is searched for its end line by line, resuming
// where it stopped (HeadScan) so that a head arriving a byte at a time is
// scanned once, and then parsed. parseLines checks every line and
// records the few fields a JSON-RPC server reads (framing, connection,
// content type, expectation, upgrade) as spans of the buffer; the known
// field names are recognised, and the values and the target checked, a
// word at a time (scan.go). Everything a request smuggler could exploit
// is refused: Transfer-Encoding together with Content-Length, duplicate
// or malformed lengths, obs-folded lines, whitespace before a colon, bare
// LF, stray CR, control characters.

import "bytes"

// Request is the head of one request, as ParseHead found it. The zero
// value is an empty head; ParseHead overwrites every field.
//
// Its byte slices alias the buffer given to ParseHead: they are valid
// until that buffer changes and must not be modified; copy them to keep
// them.
type Request struct {
	Method      []byte // the request method, a token ("POST")
	Target      []byte // the request target as sent ("/rpc?x=1"); see Path
	ContentType []byte // the Content-Type value, OWS-trimmed; nil when absent
	Upgrade     []byte // the Upgrade value; nil when absent
	WSKey       []byte // the Sec-WebSocket-Key value; nil when absent
	WSVersion   []byte // the Sec-WebSocket-Version value; nil when absent
	Origin      []byte // the Origin value; nil when absent
	Host        []byte // the Host value; nil when absent (HTTP/1.0)
	Auth        []byte // the first Authorization value; nil when absent
	Traceparent []byte // the first W3C Trace Context traceparent value; nil when absent
	// AcceptEncoding is the first Accept-Encoding value (the codings the
	// client takes in a reply, RFC 9110 12.5.3); nil when absent. A list
	// split over several field lines is read from its first line alone.
	AcceptEncoding []byte
	// ContentEncoding is the first Content-Encoding value (the codings
	// applied to the body, RFC 9110 8.4); nil when absent.
	ContentEncoding []byte
	// Accept is the first Accept value (the media types the client takes:
	// text/event-stream asks for a reply as an event stream); nil when
	// absent.
	Accept      []byte
	HeadLen     int   // bytes of the head: the request line, the fields and the blank line (and empty lines before the request line)
	BodyLen     int64 // the Content-Length, or -1 when absent
	Minor       int   // the minor version: HTTP/1.Minor, 0 or 1
	Chunked     bool  // Transfer-Encoding: chunked (never together with a Content-Length)
	KeepAlive   bool  // the connection persists after the reply (HTTP/1.1 without Connection: close, or 1.0 with keep-alive)
	Expect100   bool  // Expect: 100-continue from an HTTP/1.1 client (ignored for 1.0, RFC 9110 10.1.1)
	ConnUpgrade bool  // Connection has the upgrade option
}

// HasBody reports whether a body follows the head: it is chunked, or its
// Content-Length is more than 0.
func (r *Request) HasBody() bool { return r.Chunked || r.BodyLen > 0 }

// Path returns the target without its query ("/rpc" for "/rpc?x=1").
// The returned Path is valid until the buffer given to ParseHead changes
// and must not be modified; copy it to keep it.
func (r *Request) Path() []byte {
	if k := bytes.IndexByte(r.Target, '?'); k >= 0 {
		return r.Target[:k]
	}
	return r.Target
}

// HeadScan is the resumable state of a head that ParseHead has not found
// whole yet: how far the search for the blank line has got. The zero
// value is ready; ParseHead resets it when it returns non-zero. One
// HeadScan serves one connection, one head at a time.
type HeadScan struct {
	from    int  // offset where the next line starts; the lines before it ended with CRLF
	started bool // a non-empty line was seen (empty lines before the request line are skipped)
}

// ParseHead parses the request head at the start of b into r, resuming
// after the lines already checked in s. It returns:
//
//   - 0 when more bytes are needed: call it again, with the same s, once
//     b (the same bytes at its start, more after them) has grown;
//   - StatusOK when r describes a complete head of r.HeadLen bytes; the
//     body, if any, starts at b[r.HeadLen:];
//   - otherwise the error status to answer, after which the connection
//     must be closed: StatusBadRequest (malformed, or a request a smuggler
//     could exploit), StatusHeaderTooLarge (a head over maxHead bytes,
//     found as soon as more than maxHead bytes hold no blank line),
//     StatusNotImplemented (a transfer coding other than chunked) or
//     StatusVersionNotSupported (HTTP/x.y other than 1.0 and 1.1).
//
// A head of exactly maxHead bytes is accepted; maxHead ≤ 0 refuses every
// head. It allocates nothing. It may run on any goroutine, one call at a
// time per s and r. A request with two faults may get either's status
// depending on how its bytes were split (the whole head in one read is
// checked for size first); one with a single fault always gets its own.
// The returned r's spans are valid until b changes and must not be
// modified; copy them to keep them.
func ParseHead(b []byte, s *HeadScan, maxHead int, r *Request) int {
	if s.from == 0 && !s.started && len(b) > 0 && b[0] != '\r' && b[0] != '\n' {
		// Fast path, the usual case: the whole head in one read, parsed in
		// one pass that stops at its blank line and reads no further than
		// maxHead bytes, so that a head it accepts is not too large.
		// Anything else (a head not whole yet, too large, or refused) is
		// decided below as if this pass had not run: the size first. When
		// the pass ran out of b (st 0, all of b read), b holds no blank
		// line, and the search for one is skipped.
		st := parseLines(b[:min(len(b), max(maxHead, 0))], r)
		if st == StatusOK {
			return StatusOK
		}
		if st != 0 || len(b) > maxHead {
			if k := bytes.Index(b, crlf2); k >= 0 {
				if k+4 > maxHead {
					return StatusHeaderTooLarge
				}
				return parseLines(b[:k+4], r)
			}
		}
	}
	i := s.from
	for {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			if len(b) > maxHead {
				*s = HeadScan{}
				return StatusHeaderTooLarge
			}
			s.from = i
			return 0
		}
		end := i + j
		if end == 0 || b[end-1] != '\r' {
			*s = HeadScan{}
			return StatusBadRequest // bare LF
		}
		blank := end-1 == i
		i = end + 1
		if i > maxHead {
			*s = HeadScan{}
			return StatusHeaderTooLarge
		}
		if blank && s.started {
			break
		}
		s.started = s.started || !blank
	}
	*s = HeadScan{}
	return parseLines(b[:i], r)
}

var crlf2 = []byte("\r\n\r\n")

// parseLines parses the head at the start of b in one pass, up to and
// including its blank line, and returns StatusOK (r.HeadLen is the
// head's length), the error status, or 0 when b ends before the blank
// line. Given a whole head (b ending with the head's blank line, the
// first CRLF CRLF in b) it never returns 0; given a prefix of one, it
// returns 0 or the status the whole head gets. Bytes after the blank
// line are not read, except by word loads, which decide nothing.
func parseLines(b []byte, r *Request) int {
	*r = Request{}
	r.BodyLen = -1
	// RFC 9112 2.2: ignore empty lines before the request line.
	i := 0
	for i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
		i += 2
	}
	// The request line: method SP target SP version CRLF. A control
	// character (a stray CR or LF included) ends the method or the target
	// where a space must stand, and is refused.
	m := i
	if len(b)-i >= 5 && string(b[i:i+5]) == "POST " {
		i += 4
	} else {
		for i < len(b) && tchar[b[i]] {
			i++
		}
	}
	if i == len(b) {
		return 0
	}
	if i == m || b[i] != ' ' {
		return StatusBadRequest
	}
	r.Method = b[m:i]
	i++
	t := i
	i = scanTarget(b, i)
	if i == len(b) {
		return 0
	}
	if i == t || b[i] != ' ' {
		return StatusBadRequest
	}
	r.Target = b[t:i]
	i++
	switch v := b[i:]; {
	case len(v) >= 10 && string(v[:10]) == "HTTP/1.1\r\n":
		r.Minor = 1
	case len(v) >= 10 && string(v[:10]) == "HTTP/1.0\r\n":
		r.Minor = 0
	default:
		return badVersion(v)
	}
	i += 10
	r.KeepAlive = r.Minor == 1
	var seen uint // the fields seen (seenCL, seenTE) and the connection options (seenClose, seenKeepAlive)
	hosts := 0
	for {
		// A field line: a token, a colon, a value without control
		// characters, CRLF. This refuses obs-fold, a space before the colon
		// and a stray CR.
		if i >= len(b) {
			return 0
		}
		if b[i] == '\r' {
			if i+1 >= len(b) {
				return 0
			}
			if b[i+1] != '\n' {
				return StatusBadRequest // a stray CR
			}
			i += 2 // the blank line
			break
		}
		f, n := scanName(b, i)
		vs := i + n
		if n == 0 {
			f, vs = scanNameSlow(b, i)
			if vs >= len(b) {
				return 0
			}
			if vs == i || b[vs] != ':' {
				return StatusBadRequest
			}
			vs++
		}
		for vs < len(b) && (b[vs] == ' ' || b[vs] == '\t') {
			vs++ // OWS before the value
		}
		i = scanValue(b, vs)
		if i >= len(b) {
			return 0
		}
		if b[i] != '\r' {
			return StatusBadRequest // a control character
		}
		if i+1 >= len(b) {
			return 0
		}
		if b[i+1] != '\n' {
			return StatusBadRequest // a stray CR
		}
		if f == fieldOther {
			i += 2
			continue // most fields: nothing to do
		}
		ve := i
		for ve > vs && (b[ve-1] == ' ' || b[ve-1] == '\t') {
			ve-- // OWS after the value
		}
		value := b[vs:ve]
		i += 2
		switch f {
		case fieldContentLength:
			if seen&seenCL != 0 {
				return StatusBadRequest
			}
			seen |= seenCL
			n, ok := parseLength(value)
			if !ok {
				return StatusBadRequest
			}
			r.BodyLen = n
		case fieldTransferEncoding:
			if seen&seenTE != 0 {
				return StatusBadRequest
			}
			if !EqualFold(value, "chunked") {
				return StatusNotImplemented
			}
			seen |= seenTE
			r.Chunked = true
		case fieldConnection:
			seen |= connectionOptions(value, r)
		case fieldContentType:
			r.ContentType = value
		case fieldHost:
			hosts++
			r.Host = value
		case fieldExpect:
			if EqualFold(value, "100-continue") && r.Minor == 1 {
				r.Expect100 = true // an HTTP/1.0 client's expectation is ignored (RFC 9110 10.1.1)
			}
		case fieldUpgrade:
			r.Upgrade = value
		case fieldWSKey:
			r.WSKey = value
		case fieldWSVersion:
			r.WSVersion = value
		case fieldOrigin:
			r.Origin = value
		case fieldAuthorization:
			if r.Auth == nil {
				r.Auth = value
			}
		case fieldTraceparent:
			if r.Traceparent == nil {
				r.Traceparent = value
			}
		case fieldAcceptEncoding:
			if r.AcceptEncoding == nil {
				r.AcceptEncoding = value
			}
		case fieldContentEncoding:
			if r.ContentEncoding == nil {
				r.ContentEncoding = value
			}
		case fieldAccept:
			if r.Accept == nil {
				r.Accept = value
			}
		}
	}
	r.HeadLen = i
	if seen&seenTE != 0 && (seen&seenCL != 0 || r.Minor == 0) {
		return StatusBadRequest // RFC 9112 6.1: smuggling; 1.0 has no chunked
	}
	if hosts > 1 || hosts == 0 && r.Minor == 1 {
		return StatusBadRequest // RFC 9112 3.2: exactly one Host (1.0 may omit it)
	}
	switch {
	case seen&seenClose != 0:
		r.KeepAlive = false
	case seen&seenKeepAlive != 0:
		r.KeepAlive = true
	}
	return StatusOK
}

// Bits of parseLines' seen.
const (
	seenCL        = 1 << iota // a Content-Length
	seenTE                    // a Transfer-Encoding
	seenClose                 // the close connection option
	seenKeepAlive             // the keep-alive connection option
)

// connectionOptions reads the options of a Connection field: it sets
// r.ConnUpgrade for upgrade, and returns seenClose and seenKeepAlive for
// close and keep-alive.
func connectionOptions(list []byte, r *Request) uint {
	var seen uint
	for len(list) > 0 {
		var tok []byte
		tok, list = nextElement(list)
		switch {
		case EqualFold(tok, "close"):
			seen |= seenClose
		case EqualFold(tok, "keep-alive"):
			seen |= seenKeepAlive
		case EqualFold(tok, "upgrade"):
			r.ConnUpgrade = true
		}
	}
	return seen
}

// badVersion returns the status of a request line whose version and line
// end, v up to its CRLF, are neither "HTTP/1.1" nor "HTTP/1.0": 0 when v
// ends before its LF, StatusVersionNotSupported for another HTTP/x.y,
// StatusBadRequest otherwise.
func badVersion(v []byte) int {
	k := bytes.IndexByte(v, '\n')
	switch {
	case k < 0:
		return 0
	case k == 0 || v[k-1] != '\r':
		return StatusBadRequest // bare LF
	}
	v = v[:k-1]
	if len(v) == 8 && string(v[:5]) == "HTTP/" && unhex[v[5]] < 10 && v[6] == '.' && unhex[v[7]] < 10 {
		return StatusVersionNotSupported
	}
	return StatusBadRequest
}

// parseLength parses a Content-Length value: 1 to 18 decimal digits, so
// that it fits an int64.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if unhex[c] >= 10 { // not a decimal digit
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
