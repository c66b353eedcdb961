package http1

// NOTE: the request framer (RFC 9112). ParseHead finds the end of the
// head, resuming a partial head where it stopped (HeadScan) so that a
// head arriving a byte at a time is scanned once; parseLines then checks
// every line in one pass and records the few fields a JSON-RPC server
// reads (framing, connection, content type, expectation, upgrade) as
// spans of the buffer. Everything a request smuggler could exploit is
// refused: Transfer-Encoding together with Content-Length, duplicate or
// malformed lengths, obs-folded lines, whitespace before a colon, bare
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
	HeadLen     int    // bytes of the head: the request line, the fields and the blank line (and empty lines before the request line)
	BodyLen     int64  // the Content-Length, or -1 when absent
	Minor       int    // the minor version: HTTP/1.Minor, 0 or 1
	Chunked     bool   // Transfer-Encoding: chunked (never together with a Content-Length)
	KeepAlive   bool   // the connection persists after the reply (HTTP/1.1 without Connection: close, or 1.0 with keep-alive)
	Expect100   bool   // Expect: 100-continue from an HTTP/1.1 client (ignored for 1.0, RFC 9110 10.1.1)
	ConnUpgrade bool   // Connection has the upgrade option
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
		// Fast path, the usual case: the whole head in one read. parseLines
		// checks that every line ends with CRLF, so a bare LF before the
		// blank line is refused as below.
		if k := bytes.Index(b, crlf2); k >= 0 {
			if k+4 > maxHead {
				return StatusHeaderTooLarge
			}
			return parseLines(b[:k+4], r)
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

// parseLines parses a complete head (b ends with the blank line).
func parseLines(b []byte, r *Request) int {
	*r = Request{HeadLen: len(b), BodyLen: -1}
	// RFC 9112 2.2: ignore empty lines before the request line.
	i := 0
	for i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
		i += 2
	}
	// Request line: method SP target SP version, then CRLF; a stray '\r'
	// inside a line is a control character and refused below.
	eol := i + bytes.IndexByte(b[i:], '\n') - 1
	if eol < i || b[eol] != '\r' {
		return StatusBadRequest // bare LF
	}
	line := b[i:eol]
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !IsToken(line[:sp]) {
		return StatusBadRequest
	}
	r.Method = line[:sp]
	rest := line[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return StatusBadRequest
	}
	r.Target, rest = rest[:sp], rest[sp+1:]
	for _, c := range r.Target {
		if c <= ' ' || c == 0x7f {
			return StatusBadRequest
		}
	}
	switch string(rest) {
	case "HTTP/1.1":
		r.Minor = 1
	case "HTTP/1.0":
		r.Minor = 0
	default:
		if len(rest) == 8 && string(rest[:5]) == "HTTP/" && unhex[rest[5]] < 10 && rest[6] == '.' && unhex[rest[7]] < 10 {
			return StatusVersionNotSupported
		}
		return StatusBadRequest
	}
	r.KeepAlive = r.Minor == 1
	var sawClose, sawKeepAlive, sawTE, sawCL bool
	hosts := 0
	i = eol + 2
	for i < len(b) {
		// One pass over the field line: a token, a colon, a value without
		// control characters, CRLF. This refuses obs-fold, a space before
		// the colon and a stray CR (b ends with the blank line, so a line
		// always ends inside b).
		if b[i] == '\r' {
			if b[i+1] != '\n' {
				return StatusBadRequest // a stray CR
			}
			break // the blank line
		}
		start := i
		for tchar[b[i]] {
			i++
		}
		if i == start || b[i] != ':' {
			return StatusBadRequest
		}
		name := b[start:i]
		i++
		vs := i
		for fieldChar[b[i]] {
			i++
		}
		if b[i] != '\r' || b[i+1] != '\n' {
			return StatusBadRequest
		}
		value := TrimOWS(b[vs:i])
		i += 2
		switch {
		case !fieldOfInterest(name):
			// Most fields: nothing to do.
		case EqualFold(name, "content-length"):
			if sawCL {
				return StatusBadRequest
			}
			sawCL = true
			n, ok := parseLength(value)
			if !ok {
				return StatusBadRequest
			}
			r.BodyLen = n
		case EqualFold(name, "transfer-encoding"):
			if sawTE || !EqualFold(value, "chunked") {
				if sawTE {
					return StatusBadRequest
				}
				return StatusNotImplemented
			}
			sawTE = true
			r.Chunked = true
		case EqualFold(name, "connection"):
			for list := value; len(list) > 0; {
				var tok []byte
				tok, list = nextElement(list)
				switch {
				case EqualFold(tok, "close"):
					sawClose = true
				case EqualFold(tok, "keep-alive"):
					sawKeepAlive = true
				case EqualFold(tok, "upgrade"):
					r.ConnUpgrade = true
				}
			}
		case EqualFold(name, "content-type"):
			r.ContentType = value
		case EqualFold(name, "host"):
			hosts++
			r.Host = value
		case EqualFold(name, "expect"):
			if EqualFold(value, "100-continue") && r.Minor == 1 {
				r.Expect100 = true // an HTTP/1.0 client's expectation is ignored (RFC 9110 10.1.1)
			}
		case EqualFold(name, "upgrade"):
			r.Upgrade = value
		case EqualFold(name, "sec-websocket-key"):
			r.WSKey = value
		case EqualFold(name, "sec-websocket-version"):
			r.WSVersion = value
		case EqualFold(name, "origin"):
			r.Origin = value
		case EqualFold(name, "authorization"):
			if r.Auth == nil {
				r.Auth = value
			}
		}
	}
	if sawTE && (sawCL || r.Minor == 0) {
		return StatusBadRequest // RFC 9112 6.1: smuggling; 1.0 has no chunked
	}
	if hosts > 1 || hosts == 0 && r.Minor == 1 {
		return StatusBadRequest // RFC 9112 3.2: exactly one Host (1.0 may omit it)
	}
	switch {
	case sawClose:
		r.KeepAlive = false
	case sawKeepAlive:
		r.KeepAlive = true
	}
	return StatusOK
}

// fieldOfInterest reports, from its length alone, whether a header
// field name may be one that parseLines reads: most names are then
// compared with none of them.
func fieldOfInterest(name []byte) bool {
	switch len(name) {
	case len("host"), len("expect"), len("upgrade"), len("connection"), len("content-type"),
		len("content-length"), len("transfer-encoding"), len("sec-websocket-version"), len("authorization"):
		return true
	}
	return false
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
