package parser

import (
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnquote appends to dst the decoded content of a JSON string, given
// without its quotes. It decodes escapes the way encoding/json does: a
// \u escape that is a lone UTF-16 surrogate, and any invalid UTF-8, become
// U+FFFD. Malformed escapes are copied through unchanged; content that
// came from Parse has none.
func AppendUnquote(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
				i += 2
			case 'b':
				dst = append(dst, '\b')
				i += 2
			case 'f':
				dst = append(dst, '\f')
				i += 2
			case 'n':
				dst = append(dst, '\n')
				i += 2
			case 'r':
				dst = append(dst, '\r')
				i += 2
			case 't':
				dst = append(dst, '\t')
				i += 2
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					dst = append(dst, c)
					i++
					continue
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, ok2 = hex4(s, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
			default:
				dst = append(dst, c)
				i++
			}
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// hex4 decodes the four hex digits at s[i:i+4].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c-'0' < 10:
			c -= '0'
		case c-'a' < 6:
			c = c - 'a' + 10
		case c-'A' < 6:
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
