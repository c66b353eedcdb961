package parser

import "encoding/binary"

// DefaultMaxSize is the default limit, in bytes, on one message in a
// stream, leading whitespace included.
const DefaultMaxSize = 5 << 20

// Status is the outcome of Framer.Next.
type Status uint8

const (
	// NeedMore means no complete value is buffered yet. end is the number
	// of leading whitespace bytes the caller must consume (0 once a value
	// has begun); call Next again with the rest and more appended.
	NeedMore Status = iota
	// Complete means buf[start:end] is one complete value; the caller
	// consumes buf[:end] and passes what follows to the next call.
	Complete
	// Malformed means the stream cannot be framed: end is the offset of a
	// byte that cannot begin a value. The stream is unusable afterwards.
	Malformed
	// TooLarge means the value exceeds MaxSize; it is reported as soon as MaxSize bytes are scanned, before
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
// newline-delimited JSON. It tracks strings and brackets (a closing
// bracket of the wrong kind is Malformed at once); the rest of the text of
// each value is validated later by Parse. Its state carries over
// between calls, so that a large value arriving in many pieces is scanned
// once, in O(n).
//
// The zero Framer is ready to use. A Framer must not be used by two
// goroutines at once.
type Framer struct {
	// MaxSize limits one value; 0 means DefaultMaxSize.
	MaxSize int

	pos     int      // offset in buf where scanning resumes
	start   int      // offset of the value's first byte, when inValue
	depth   int      // open brackets
	low     uint64   // a bit per open bracket of the first 64 levels: set for an object
	kinds   []uint64 // the same for deeper levels
	inValue bool     // a value has started
	inStr   bool     // inside a string
	esc     bool     // after a backslash inside a string
	scalar  bool     // the value is a top-level number or literal
}

// Reset forgets any partial value, for use on a new stream.
func (f *Framer) Reset() { *f = Framer{MaxSize: f.MaxSize, kinds: f.kinds[:0]} }

// word returns the bit word of level lvl.
func (f *Framer) word(lvl int) *uint64 {
	if lvl < 64 {
		return &f.low
	}
	for (lvl>>6)-1 >= len(f.kinds) {
		f.kinds = append(f.kinds, 0)
	}
	return &f.kinds[(lvl>>6)-1]
}

// push records an opening bracket at depth f.depth (after increment).
func (f *Framer) push(obj bool) {
	lvl := f.depth - 1
	if w := f.word(lvl); obj {
		*w |= 1 << (lvl & 63)
	} else {
		*w &^= 1 << (lvl & 63)
	}
}

// matches reports whether a closing bracket c matches the innermost open
// one.
func (f *Framer) matches(c byte) bool {
	lvl := f.depth - 1
	obj := *f.word(lvl)&(1<<(lvl&63)) != 0
	return obj == (c == '}')
}

// Partial reports whether a value has begun and is not complete yet.
func (f *Framer) Partial() bool { return f.inValue }

func (f *Framer) maxSize() int {
	if f.MaxSize > 0 {
		return f.MaxSize
	}
	return DefaultMaxSize
}

// Next scans buf, which must begin where the bytes consumed by the
// previous call ended (or at the start of the stream), and holds the
// unconsumed bytes of earlier NeedMore calls unchanged followed by new
// ones. See Status for the results. A
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
			// Only whitespace so far: the caller consumes it.
			f.pos = 0
			return 0, i, NeedMore
		}
		switch c := buf[i]; {
		case c == '{' || c == '[':
			f.depth = 1
			f.push(c == '{')
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
			switch c := buf[i]; c {
			case '"':
				f.inStr = true
			case '{', '[':
				f.depth++
				f.push(c == '{')
			case '}', ']':
				if !f.matches(c) {
					f.pos = i
					return 0, i, Malformed
				}
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
	*f = Framer{MaxSize: f.MaxSize, kinds: f.kinds[:0]}
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
