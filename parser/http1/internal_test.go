package http1

// The reference the head parser is checked against: ParseHead and
// parseLines as they were before the one-pass parser (commit 4778003),
// byte for byte but renamed, so that FuzzParseHead_reference can compare
// every verdict and every field with them.

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"testing"
)

func refParseHead(b []byte, s *HeadScan, maxHead int, r *Request) int {
	if s.from == 0 && !s.started && len(b) > 0 && b[0] != '\r' && b[0] != '\n' {
		// Fast path, the usual case: the whole head in one read. parseLines
		// checks that every line ends with CRLF, so a bare LF before the
		// blank line is refused as below.
		if k := bytes.Index(b, refCRLF2); k >= 0 {
			if k+4 > maxHead {
				return StatusHeaderTooLarge
			}
			return refParseLines(b[:k+4], r)
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
	return refParseLines(b[:i], r)
}

var refCRLF2 = []byte("\r\n\r\n")

// parseLines parses a complete head (b ends with the blank line).
func refParseLines(b []byte, r *Request) int {
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
		case !refFieldOfInterest(name):
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
		case EqualFold(name, "traceparent"):
			if r.Traceparent == nil {
				r.Traceparent = value
			}
		case EqualFold(name, "accept-encoding"):
			if r.AcceptEncoding == nil {
				r.AcceptEncoding = value
			}
		case EqualFold(name, "content-encoding"):
			if r.ContentEncoding == nil {
				r.ContentEncoding = value
			}
		case EqualFold(name, "accept"):
			if r.Accept == nil {
				r.Accept = value
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

// refFieldOfInterest reports, from its length alone, whether a header
// field name may be one that parseLines reads: most names are then
// compared with none of them.
func refFieldOfInterest(name []byte) bool {
	switch len(name) {
	case len("host"), len("expect"), len("upgrade"), len("connection"), len("content-type"),
		len("content-length"), len("transfer-encoding"), len("sec-websocket-version"), len("authorization"), len("traceparent"),
		len("accept-encoding"), len("content-encoding"):
		return true
	}
	return false
}

// RefParseHead is refParseHead, for the tests of package http1_test.
var RefParseHead = refParseHead

// TestCtlMask_lowestMarkIsFirst: the lowest byte ctlMask and targetMask
// mark is the first byte that fails their test, for every pair of
// adjacent bytes at every offset of a word (a borrow from one byte into
// the next must not mark a byte before the first).
func TestCtlMask_lowestMarkIsFirst(t *testing.T) {
	for _, c := range []struct {
		name string
		mask func(uint64) uint64
		bad  func(byte) bool
	}{
		{"ctlMask", ctlMask, func(c byte) bool { return c < 0x20 || c == 0x7f }},
		{"targetMask", targetMask, func(c byte) bool { return c <= 0x20 || c == 0x7f }},
	} {
		for _, fill := range []byte{'a', 0xff, 0x80, '~'} {
			for p := range 7 {
				for pair := range 1 << 16 {
					w := bytes.Repeat([]byte{fill}, 8)
					w[p], w[p+1] = byte(pair), byte(pair>>8)
					want := -1
					for i, b := range w {
						if c.bad(b) {
							want = i
							break
						}
					}
					m := c.mask(binary.LittleEndian.Uint64(w))
					got := -1
					if m != 0 {
						got = bits.TrailingZeros64(m) >> 3
					}
					if got != want {
						t.Fatalf("%s(% x): first marked byte %d, want %d", c.name, w, got, want)
					}
				}
			}
		}
	}
}

// TestColonMask_lowestMarkIsFirst: the lowest byte colonMask marks is
// the first colon, for every pair of adjacent bytes at every offset.
func TestColonMask_lowestMarkIsFirst(t *testing.T) {
	for p := range 7 {
		for pair := range 1 << 16 {
			w := bytes.Repeat([]byte{'a'}, 8)
			w[p], w[p+1] = byte(pair), byte(pair>>8)
			want := bytes.IndexByte(w, ':')
			got := -1
			if m := colonMask(binary.LittleEndian.Uint64(w)); m != 0 {
				got = bits.TrailingZeros64(m) >> 3
			}
			if got != want {
				t.Fatalf("colonMask(% x): first marked byte %d, want %d", w, got, want)
			}
		}
	}
}
