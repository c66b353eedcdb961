package http1

import "bytes"

// EqualFold reports whether b equals lower, ignoring ASCII case. lower
// must be lower-case ASCII; b may be anything (a nil or empty b equals
// only ""). It allocates nothing and is safe from any goroutine.
func EqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(lower) {
		c := b[i]
		if c-'A' < 26 {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// TrimOWS returns b without the optional whitespace (spaces and tabs,
// RFC 9110 5.6.3) at both ends. The returned slice aliases b.
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// IsToken reports whether b is an RFC 9110 token (5.6.2): one or more
// tchars. An empty b is not a token.
func IsToken(b []byte) bool {
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

// HasToken reports whether the comma-separated list (a header value such
// as Connection's or Upgrade's) has an element equal to lower, ignoring
// ASCII case and the whitespace around elements. lower must be
// lower-case ASCII and non-empty; empty elements are skipped. It
// allocates nothing.
func HasToken(list []byte, lower string) bool {
	for len(list) > 0 {
		var tok []byte
		tok, list = nextElement(list)
		if EqualFold(tok, lower) {
			return true
		}
	}
	return false
}

// nextElement splits the first element, trimmed, off a comma-separated
// list.
func nextElement(list []byte) (elem, rest []byte) {
	if k := bytes.IndexByte(list, ','); k >= 0 {
		return TrimOWS(list[:k]), list[k+1:]
	}
	return TrimOWS(list), nil
}

// tchar marks the bytes of a token (RFC 9110 5.6.2).
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

// unhex maps a hex digit to its value and every other byte to 0xff: the
// decimal digits are the bytes it maps below 10.
var unhex = func() (t [256]byte) {
	for c := range 256 {
		t[c] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()
