package parser

import "encoding/binary"

// DefaultMaxSize is the default limit, in bytes, on one message in a
// stream, leading whitespace included.
const DefaultMaxSize = 5 << 20

// Status is the outcome of Framer.Next.
type Status uint8

const (
	// NeedMore means no complete value is buffered yet. Call Next again
	// with the same bytes and more appended.
	NeedMore Status = iota
	// Complete means buf[start:end] is one complete value; the caller
	// consumes buf[:end] and passes what follows to the next call.
	Complete
	// Malformed means the stream cannot be framed: end is the offset of a
	// byte that cannot begin a value. The stream is unusable afterwards.
	Malformed
	// TooLarge means the value (or the whitespace before it) exceeds
	// MaxSize; it is reported as soon as MaxSize bytes are scanned, before
	// the rest arrives. The stream is unusable afterwards.
	TooLarge
)

// String returns the name of the status.
func (s Status) String() string {
	switch s {
	case Complete:
		return "complete"
	case Malformed:
		return "malformed"
	case TooLarge:
		return "too large"
	}
	return "need more"
}

// Framer finds the boundaries of JSON values in a stream of bytes that may
// be cut anywhere: values separated by optional whitespace, such as
// newline-delimited JSON. It tracks only strings and bracket depth; the
// text of each value is validated later by Parse. Its state carries over
// between calls, so that a large value arriving in many pieces is scanned
// once, in O(n).
//
// The zero Framer is ready to use. A Framer must not be used by two
// goroutines at once.
type Framer struct {
	// MaxSize limits one value, and separately the whitespace before it;
	// 0 means DefaultMaxSize.
	MaxSize int

	pos     int  // offset in buf where scanning resumes
	start   int  // offset of the value's first byte, when inValue
	depth   int  // open brackets
	inValue bool // a value has started
	inStr   bool // inside a string
	esc     bool // after a backslash inside a string
	scalar  bool // the value is a top-level number or literal
}

// Reset forgets any partial value, for use on a new stream.
func (f *Framer) Reset() { *f = Framer{MaxSize: f.MaxSize} }

func (f *Framer) maxSize() int {
	if f.MaxSize > 0 {
		return f.MaxSize
	}
	return DefaultMaxSize
}

// Next scans buf, which must begin where the previous Complete value ended
// (or at the start of the stream), and holds the bytes of earlier NeedMore
// calls unchanged followed by new ones. See Status for the results. A
// leading UTF-8 byte order mark is skipped like whitespace.
func (f *Framer) Next(buf []byte) (start, end int, st Status) {
	i := f.pos
	limit := f.maxSize()
	if !f.inValue {
		for i < len(buf) {
			c := buf[i]
			if isSpace(c) {
				i++
				continue
			}
			if c == 0xEF {
				if i+3 > len(buf) {
					break
				}
				if buf[i+1] == 0xBB && buf[i+2] == 0xBF {
					i += 3
					continue
				}
			}
			break
		}
		if i >= len(buf) || (buf[i] == 0xEF && i+3 > len(buf)) {
			f.pos = i
			if i > limit {
				return 0, i, TooLarge
			}
			return 0, 0, NeedMore
		}
		switch c := buf[i]; {
		case c == '{' || c == '[':
			f.depth = 1
		case c == '"':
			f.inStr = true
		case c == '-' || isDigit(c) || c == 't' || c == 'f' || c == 'n':
			f.scalar = true
		default:
			f.pos = i
			return 0, i, Malformed
		}
		f.inValue = true
		f.start = i
		i++
	}
	if f.scalar {
		for i < len(buf) && isScalarByte(buf[i]) {
			i++
		}
		if i < len(buf) {
			return f.complete(i, limit)
		}
	} else {
		for i < len(buf) {
			if f.inStr {
				if f.esc {
					f.esc = false
					i++
					continue
				}
				i = quoteOrBackslash(buf, i)
				if i >= len(buf) {
					break
				}
				if buf[i] == '\\' {
					f.esc = true
					i++
					continue
				}
				f.inStr = false
				i++
				if f.depth == 0 {
					return f.complete(i, limit)
				}
				continue
			}
			switch buf[i] {
			case '"':
				f.inStr = true
			case '{', '[':
				f.depth++
			case '}', ']':
				f.depth--
				if f.depth == 0 {
					return f.complete(i+1, limit)
				}
			}
			i++
		}
	}
	f.pos = i
	if i-f.start > limit {
		return f.start, i, TooLarge
	}
	return 0, 0, NeedMore
}

// complete ends the current value at end and resets the scan state.
func (f *Framer) complete(end, limit int) (int, int, Status) {
	start := f.start
	*f = Framer{MaxSize: f.MaxSize}
	if end-start > limit {
		return start, end, TooLarge
	}
	return start, end, Complete
}

func isScalarByte(c byte) bool {
	return isDigit(c) || c == '-' || c == '+' || c == '.' || (c|0x20)-'a' < 26
}

// quoteOrBackslash returns the offset of the first '"' or '\\' at or after
// i, or len(b).
func quoteOrBackslash(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		if ((q-ones)&^q|(s-ones)&^s)&highs != 0 {
			break
		}
		i += 8
	}
	for i < len(b) && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}
