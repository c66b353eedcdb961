package parser

// NOTE: this file is the validating scanner. skip walks one JSON value
// iteratively (no recursion, so no input can overflow the goroutine stack),
// keeping the kind of every open container in a bit stack: bit set for an
// object, clear for an array. Levels up to 256 live in a local array; deeper
// ones spill into Parser.stack, which grows once and is then reused.
// Depth beyond Parser.maxDepth does not stop the walk: the fault is noted
// (Parser.deepAt) and the rest of the text is still validated, so that a
// message that is both too deep and malformed is reported as malformed.

import (
	"encoding/binary"
	"unicode/utf8"
)

// Bit masks for the word-at-a-time string scan.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// isSpace reports JSON whitespace (RFC 8259: space, tab, LF, CR).
func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// skipSpace returns the offset of the first non-space byte at or after i.
// Kept inlinable.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// fault builds an Error value. Kept inlinable.
func fault(code Code, off int, reason string) Error {
	return Error{Code: code, Offset: off, Reason: reason}
}

// plainRun returns the offset of the first byte at or after i that is '"',
// '\\', a control character or a non-ASCII byte, or len(b).
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		m := ((x - ones*0x20) | (q - ones) | (s - ones)) &^ x
		m |= x
		if m&highs != 0 {
			break
		}
		i += 8
	}
	for i < len(b) {
		c := b[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
		i++
	}
	return i
}

// scanString validates the string whose opening quote is at b[i] and
// returns the offset just past its closing quote and whether it holds an
// escape sequence.
func scanString(b []byte, i int) (end int, escaped bool, f Error) {
	i++
	for {
		i = plainRun(b, i)
		if i >= len(b) {
			return i, escaped, fault(CodeParseError, len(b), reasonEOF)
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, Error{}
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return len(b), escaped, fault(CodeParseError, len(b), reasonEOF)
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) {
						return len(b), escaped, fault(CodeParseError, len(b), reasonEOF)
					}
					if !isHex(b[i+k]) {
						return i + k, escaped, fault(CodeParseError, i+k, reasonEscape)
					}
				}
				i += 6
			default:
				return i + 1, escaped, fault(CodeParseError, i+1, reasonEscape)
			}
		case c < 0x20:
			return i, escaped, fault(CodeParseError, i, reasonControl)
		default: // c >= 0x80
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, escaped, fault(CodeParseError, i, reasonUTF8)
			}
			i += size
		}
	}
}

func isHex(c byte) bool {
	return c-'0' < 10 || (c|0x20)-'a' < 6
}

func isDigit(c byte) bool { return c-'0' < 10 }

// scanNumber validates the number that starts at b[i] (RFC 8259 grammar)
// and returns the offset just past it.
func scanNumber(b []byte, i int) (int, Error) {
	n := len(b)
	if b[i] == '-' {
		i++
		if i >= n {
			return i, fault(CodeParseError, i, reasonEOF)
		}
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c-'1' < 9:
		i++
		for i < n && isDigit(b[i]) {
			i++
		}
	default:
		return i, fault(CodeParseError, i, reasonNumber)
	}
	if i < n && b[i] == '.' {
		i++
		if i >= n {
			return i, fault(CodeParseError, i, reasonEOF)
		}
		if !isDigit(b[i]) {
			return i, fault(CodeParseError, i, reasonNumber)
		}
		for i < n && isDigit(b[i]) {
			i++
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n {
			return i, fault(CodeParseError, i, reasonEOF)
		}
		if !isDigit(b[i]) {
			return i, fault(CodeParseError, i, reasonNumber)
		}
		for i < n && isDigit(b[i]) {
			i++
		}
	}
	return i, Error{}
}

// scanLiteral validates the literal lit (true, false or null) at b[i].
func scanLiteral(b []byte, i int, lit string) (int, Error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return len(b), fault(CodeParseError, len(b), reasonEOF)
		}
		if b[i+k] != lit[k] {
			return i + k, fault(CodeParseError, i+k, reasonLiteral)
		}
	}
	return i + len(lit), Error{}
}

// skip validates the JSON value at or after b[i] (leading whitespace is
// skipped) and returns the offset just past it. depth is the number of
// containers that enclose the value. A syntax fault is returned; nesting
// beyond the limit is only noted in p.deepAt.
func (p *Parser) skip(b []byte, i, depth int) (int, Error) {
	var local [4]uint64
	stack := local[:]
	base := depth
	n := len(b)
	var f Error

value:
	i = skipSpace(b, i)
	if i >= n {
		return i, fault(CodeParseError, n, reasonEOF)
	}
	switch c := b[i]; c {
	case '{', '[':
		depth++
		if depth > p.maxDepth() && p.deepAt < 0 {
			p.deepAt = i
		}
		lvl := depth - base - 1
		if lvl >= len(stack)*64 {
			stack = p.grow(stack)
		}
		if c == '{' {
			stack[lvl>>6] |= 1 << (lvl & 63)
			i = skipSpace(b, i+1)
			if i < n && b[i] == '}' {
				i++
				depth--
				goto after
			}
			goto key
		}
		stack[lvl>>6] &^= 1 << (lvl & 63)
		i = skipSpace(b, i+1)
		if i < n && b[i] == ']' {
			i++
			depth--
			goto after
		}
		goto value
	case '"':
		if i, _, f = scanString(b, i); f.Code != 0 {
			return i, f
		}
	case 't':
		if i, f = scanLiteral(b, i, "true"); f.Code != 0 {
			return i, f
		}
	case 'f':
		if i, f = scanLiteral(b, i, "false"); f.Code != 0 {
			return i, f
		}
	case 'n':
		if i, f = scanLiteral(b, i, "null"); f.Code != 0 {
			return i, f
		}
	default:
		if c != '-' && !isDigit(c) {
			return i, fault(CodeParseError, i, reasonValueStart)
		}
		if i, f = scanNumber(b, i); f.Code != 0 {
			return i, f
		}
	}

after:
	if depth == base {
		return i, Error{}
	}
	i = skipSpace(b, i)
	if i >= n {
		return i, fault(CodeParseError, n, reasonEOF)
	}
	if lvl := depth - base - 1; stack[lvl>>6]&(1<<(lvl&63)) != 0 {
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
			goto key
		case '}':
			i++
			depth--
			goto after
		}
		return i, fault(CodeParseError, i, reasonObjectNext)
	}
	switch b[i] {
	case ',':
		i++
		goto value
	case ']':
		i++
		depth--
		goto after
	}
	return i, fault(CodeParseError, i, reasonArrayNext)

key:
	if i >= n {
		return i, fault(CodeParseError, n, reasonEOF)
	}
	if b[i] != '"' {
		return i, fault(CodeParseError, i, reasonObjectKey)
	}
	if i, _, f = scanString(b, i); f.Code != 0 {
		return i, f
	}
	i = skipSpace(b, i)
	if i >= n {
		return i, fault(CodeParseError, n, reasonEOF)
	}
	if b[i] != ':' {
		return i, fault(CodeParseError, i, reasonColon)
	}
	i++
	goto value
}

// grow moves the bit stack into p.stack with room for 256 more levels.
func (p *Parser) grow(stack []uint64) []uint64 {
	need := len(stack) + 4
	if cap(p.stack) < need {
		p.stack = make([]uint64, need, need*2)
	}
	p.stack = p.stack[:need]
	copy(p.stack, stack)
	return p.stack
}
