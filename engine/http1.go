package engine

// NOTE: a hand-written HTTP/1.1 request framer (RFC 9112) for JSON-RPC:
// it finds the request line and the few headers that matter (framing,
// connection, content type, expectation, upgrade) as spans of the
// buffer, allocates nothing, and resumes a partial head where it stopped
// so that a head arriving a byte at a time is scanned once. Everything a
// request smuggler could exploit is refused: Transfer-Encoding together
// with Content-Length, duplicate or malformed lengths, obs-folded lines,
// whitespace before a colon, bare LF, control characters.

import "bytes"

// Status codes the framer and the server answer with.
const (
	statusOK                  = 200
	statusNoContent           = 204
	statusBadRequest          = 400
	statusNotFound            = 404
	statusMethodNotAllowed    = 405
	statusPayloadTooLarge     = 413
	statusUnsupportedMedia    = 415
	statusHeaderTooLarge      = 431
	statusNotImplemented      = 501
	statusVersionNotSupported = 505
)

// httpReq is the head of one request. Its spans point into the buffer
// given to parseHead and are valid until that buffer changes.
type httpReq struct {
	method      []byte
	target      []byte
	contentType []byte
	upgrade     []byte // the Upgrade header value
	wsKey       []byte // Sec-WebSocket-Key
	wsVersion   []byte // Sec-WebSocket-Version
	origin      []byte
	headLen     int   // request line and headers, the blank line included
	bodyLen     int64 // Content-Length, or -1 when absent
	minor       int   // HTTP/1.minor
	chunked     bool  // Transfer-Encoding: chunked
	keepAlive   bool  // the connection persists after the reply
	expect100   bool  // Expect: 100-continue
	connUpgrade bool  // Connection: upgrade
}

// hasBody reports whether a body follows the head.
func (r *httpReq) hasBody() bool { return r.chunked || r.bodyLen > 0 }

// headScan is the resumable state of a head parse: how far the search
// for the blank line has got.
type headScan struct {
	from    int  // offset where the next line starts
	started bool // a non-empty line was seen (empty lines before the request line are skipped)
}

// parseHead parses the request head at the start of b, resuming after
// the lines already checked in s. It returns 0 when more bytes are needed,
// statusOK when r describes a complete head, or the error status to
// answer (the connection must then be closed). maxHead limits the head.
func parseHead(b []byte, s *headScan, maxHead int, r *httpReq) int {
	if s.from == 0 && !s.started && len(b) > 0 && b[0] != '\r' && b[0] != '\n' {
		// Fast path, the usual case: the whole head in one read. parseLines
		// checks that every line ends with CRLF, so a bare LF before the
		// blank line is refused as below.
		if k := bytes.Index(b, crlf2); k >= 0 {
			if k+4 > maxHead {
				return statusHeaderTooLarge
			}
			return parseLines(b[:k+4], r)
		}
	}
	i := s.from
	for {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			if len(b) > maxHead {
				return statusHeaderTooLarge
			}
			s.from = i
			return 0
		}
		end := i + j
		if end == 0 || b[end-1] != '\r' {
			return statusBadRequest // bare LF
		}
		blank := end-1 == i
		i = end + 1
		if i > maxHead {
			return statusHeaderTooLarge
		}
		if blank && s.started {
			break
		}
		s.started = s.started || !blank
	}
	*s = headScan{}
	return parseLines(b[:i], r)
}

var crlf2 = []byte("\r\n\r\n")

// parseLines parses a complete head (b ends with the blank line).
func parseLines(b []byte, r *httpReq) int {
	*r = httpReq{headLen: len(b), bodyLen: -1}
	// RFC 9112 2.2: ignore empty lines before the request line.
	i := 0
	for i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
		i += 2
	}
	// Request line: method SP target SP version, then CRLF; a stray '\r'
	// inside a line is a control character and refused below.
	eol := i + bytes.IndexByte(b[i:], '\n') - 1
	if eol < i || b[eol] != '\r' {
		return statusBadRequest // bare LF
	}
	line := b[i:eol]
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !isToken(line[:sp]) {
		return statusBadRequest
	}
	r.method = line[:sp]
	rest := line[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return statusBadRequest
	}
	r.target, rest = rest[:sp], rest[sp+1:]
	for _, c := range r.target {
		if c <= ' ' || c == 0x7f {
			return statusBadRequest
		}
	}
	switch string(rest) {
	case "HTTP/1.1":
		r.minor = 1
	case "HTTP/1.0":
		r.minor = 0
	default:
		if len(rest) == 8 && string(rest[:5]) == "HTTP/" && isDigit(rest[5]) && rest[6] == '.' && isDigit(rest[7]) {
			return statusVersionNotSupported
		}
		return statusBadRequest
	}
	r.keepAlive = r.minor == 1
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
				return statusBadRequest // a stray CR
			}
			break // the blank line
		}
		start := i
		for tchar[b[i]] {
			i++
		}
		if i == start || b[i] != ':' {
			return statusBadRequest
		}
		name := b[start:i]
		i++
		vs := i
		for fieldChar[b[i]] {
			i++
		}
		if b[i] != '\r' || b[i+1] != '\n' {
			return statusBadRequest
		}
		value := trimOWS(b[vs:i])
		i += 2
		switch {
		case !fieldOfInterest(name):
			// Most fields: nothing to do.
		case equalFold(name, "content-length"):
			if sawCL {
				return statusBadRequest
			}
			sawCL = true
			n, ok := parseLength(value)
			if !ok {
				return statusBadRequest
			}
			r.bodyLen = n
		case equalFold(name, "transfer-encoding"):
			if sawTE || !equalFold(value, "chunked") {
				if sawTE {
					return statusBadRequest
				}
				return statusNotImplemented
			}
			sawTE = true
			r.chunked = true
		case equalFold(name, "connection"):
			forEachToken(value, func(tok []byte) {
				switch {
				case equalFold(tok, "close"):
					sawClose = true
				case equalFold(tok, "keep-alive"):
					sawKeepAlive = true
				case equalFold(tok, "upgrade"):
					r.connUpgrade = true
				}
			})
		case equalFold(name, "content-type"):
			r.contentType = value
		case equalFold(name, "host"):
			hosts++
		case equalFold(name, "expect"):
			if equalFold(value, "100-continue") && r.minor == 1 {
				r.expect100 = true // an HTTP/1.0 client's expectation is ignored (RFC 9110 10.1.1)
			}
		case equalFold(name, "upgrade"):
			r.upgrade = value
		case equalFold(name, "sec-websocket-key"):
			r.wsKey = value
		case equalFold(name, "sec-websocket-version"):
			r.wsVersion = value
		case equalFold(name, "origin"):
			r.origin = value
		}
	}
	if sawTE && (sawCL || r.minor == 0) {
		return statusBadRequest // RFC 9112 6.1: smuggling; 1.0 has no chunked
	}
	if hosts > 1 || hosts == 0 && r.minor == 1 {
		return statusBadRequest // RFC 9112 3.2: exactly one Host (1.0 may omit it)
	}
	switch {
	case sawClose:
		r.keepAlive = false
	case sawKeepAlive:
		r.keepAlive = true
	}
	return statusOK
}

// validField reports whether line (without CRLF) is a well-formed header
// field: a token, a colon, a value without control characters (for
// chunked trailers; parseLines checks head fields in its own pass).
func validField(line []byte) bool {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || !isToken(line[:colon]) {
		return false
	}
	for _, c := range line[colon+1:] {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// fieldOfInterest reports, from its length alone, whether a header
// field name may be one that parseLines reads: most names are then
// compared with none of them.
func fieldOfInterest(name []byte) bool {
	switch len(name) {
	case len("host"), len("expect"), len("upgrade"), len("connection"), len("content-type"),
		len("content-length"), len("transfer-encoding"), len("sec-websocket-version"):
		return true
	}
	return false
}

// parseLength parses a Content-Length value: decimal digits only.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func isDigit(c byte) bool { return c-'0' < 10 }

// isToken reports whether b is an RFC 9110 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tchar[c] {
			return false
		}
	}
	return true
}

var tchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// fieldChar marks the bytes a field value may hold: visible ASCII,
// space, tab and obs-text (0x80 and up); not controls, not DEL.
var fieldChar = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= ' ' && c != 0x7f || c == '\t'
	}
	return t
}()

// trimOWS trims spaces and tabs at both ends.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold reports whether b equals the lower-case ASCII s, ignoring
// ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(s) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// forEachToken calls fn with each comma-separated element of a list
// header value, trimmed.
func forEachToken(v []byte, fn func([]byte)) {
	for len(v) > 0 {
		var tok []byte
		if k := bytes.IndexByte(v, ','); k >= 0 {
			tok, v = v[:k], v[k+1:]
		} else {
			tok, v = v, nil
		}
		if tok = trimOWS(tok); len(tok) > 0 {
			fn(tok)
		}
	}
}

// chunkState decodes a chunked body incrementally.
type chunkState struct {
	phase  uint8 // chunkSize, chunkData, chunkDataEnd, chunkTrailer
	remain int64 // bytes left in the current chunk
}

const (
	chunkSize = iota
	chunkData
	chunkDataEnd
	chunkTrailer
)

// decodeChunked consumes chunked-body bytes from b, appending the data to
// dst. It returns the extended dst, how many bytes of b it consumed, and
// whether the body ended; status is non-zero for a malformed body
// (statusBadRequest) or one whose data would exceed max
// (statusPayloadTooLarge). Bytes of a line not yet complete are left
// unconsumed.
func (cs *chunkState) decode(dst, b []byte, max int64) (out []byte, consumed int, done bool, status int) {
	i := 0
	for i < len(b) {
		switch cs.phase {
		case chunkSize:
			k := bytes.IndexByte(b[i:], '\n')
			if k < 0 {
				if len(b)-i > 1024 {
					return dst, i, false, statusBadRequest // no size line is that long
				}
				return dst, i, false, 0
			}
			line := b[i : i+k]
			if len(line) == 0 || line[len(line)-1] != '\r' {
				return dst, i, false, statusBadRequest
			}
			line = line[:len(line)-1]
			if semi := bytes.IndexByte(line, ';'); semi >= 0 {
				line = line[:semi] // chunk extensions are ignored
			}
			line = trimOWS(line)
			size, ok := parseHex(line)
			if !ok {
				return dst, i, false, statusBadRequest
			}
			i += k + 1
			if size == 0 {
				cs.phase = chunkTrailer
				continue
			}
			if int64(len(dst))+size > max {
				return dst, i, false, statusPayloadTooLarge
			}
			cs.phase, cs.remain = chunkData, size
		case chunkData:
			n := min(int64(len(b)-i), cs.remain)
			dst = append(dst, b[i:i+int(n)]...)
			i += int(n)
			if cs.remain -= n; cs.remain == 0 {
				cs.phase = chunkDataEnd
			}
		case chunkDataEnd:
			if len(b)-i < 2 {
				return dst, i, false, 0
			}
			if b[i] != '\r' || b[i+1] != '\n' {
				return dst, i, false, statusBadRequest
			}
			i += 2
			cs.phase = chunkSize
		case chunkTrailer:
			k := bytes.IndexByte(b[i:], '\n')
			if k < 0 {
				if len(b)-i > 8192 {
					return dst, i, false, statusHeaderTooLarge
				}
				return dst, i, false, 0
			}
			if k == 0 || b[i+k-1] != '\r' {
				return dst, i, false, statusBadRequest
			}
			line := b[i : i+k-1]
			i += k + 1
			if len(line) == 0 { // the blank line ends the trailers and the body
				*cs = chunkState{}
				return dst, i, true, 0
			}
			if !validField(line) {
				return dst, i, false, statusBadRequest
			}
		}
	}
	return dst, i, false, 0
}

// parseHex parses a chunk size.
func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case isDigit(c):
			n = n<<4 | int64(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			n = n<<4 | int64(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
