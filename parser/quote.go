package parser

import "unicode/utf8"

// AppendQuote appends s to dst as a JSON string, quotes included, escaped
// as encoding/json escapes it with HTML escaping off: quotes, backslashes
// and control characters are escaped, as are U+2028 and U+2029; invalid
// UTF-8 becomes U+FFFD. It allocates nothing beyond growing dst. Safe
// from any goroutine.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends s to dst escaped as AppendQuote escapes it,
// without the quotes: the content of a JSON string, which AppendUnquote
// decodes back. It lets a caller build one string from several pieces.
// It allocates nothing beyond growing dst. Safe from any goroutine.
func AppendEscaped(dst []byte, s string) []byte {
	start := 0
	slowTo := 0 // byte by byte before this: the eight bytes there hold one to escape, or the text is not ASCII
	for i := 0; i < len(s); {
		if i >= slowTo && i+8 <= len(s) {
			if plain8(s, i) {
				i += 8 // eight bytes that go as they are
				continue
			}
			slowTo = i + 8
		}
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		slowTo = i + 32 // text outside ASCII likely has more of it
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

const hexDigits = "0123456789abcdef"

// plainByte marks the bytes that go into a JSON string as they are:
// ASCII but control characters, '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plain8 reports whether the eight bytes of s from i need no escaping:
// ASCII, none a control character, '"' or '\\' (exact bit tests on the
// eight together, as in "Bit Twiddling Hacks": a byte below 0x20, a byte
// equal to '"' or '\\', a byte from 0x80).
func plain8(s string, i int) bool {
	x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (x - 0x20*ones) &^ x
	q := x ^ '"'*ones
	quote := (q - ones) &^ q
	bs := x ^ '\\'*ones
	backslash := (bs - ones) &^ bs
	return (x|control|quote|backslash)&highs == 0
}
