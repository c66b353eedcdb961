package http1

// NOTE: the byte-class scans of parseLines, a word (8 bytes) at a time
// where a run of bytes is long enough to pay, and the recognition of the
// field names it reads. A field value and a request target are searched
// for the first byte that may not stand in them with the SWAR tests of
// ctlMask and targetMask. A known field name is recognised with its
// colon, ignoring case, by scanName: the colon's offset and the first
// byte pick one name of knownNames (a perfect hash, nameSlot), compared
// as three words; any other name is scanned byte by byte
// (scanNameSlow). Every scan reads within its slice: a word is loaded
// only where 8 bytes remain, the rest byte by byte.

import (
	"encoding/binary"
	"math/bits"
)

// Words of a byte repeated: lsb has 0x01 in every byte, msb 0x80.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// ctlMask returns x, eight bytes in little-endian order, with the high
// bit set in every byte below 0x20 (a control character, HTAB
// included) or equal to 0x7f (DEL), and clear in every other byte below
// the first such byte: the lowest set bit marks the first. Bytes from
// 0x80 on (obs-text) are not marked. Bits above the first marked byte
// may be set spuriously (a borrow carries on). Kept inlinable.
func ctlMask(x uint64) uint64 {
	return ((x - 0x20*lsb) | ((x ^ 0x7f*lsb) - lsb)) &^ x & msb
}

// targetMask is ctlMask for a request target: it marks the bytes up to
// and including the space (0x20), and DEL. Kept inlinable.
func targetMask(x uint64) uint64 {
	return ((x - 0x21*lsb) | ((x ^ 0x7f*lsb) - lsb)) &^ x & msb
}

// scanValue returns the offset of the first byte of b from i on that a
// field value may not hold (a control character other than HTAB, or
// DEL: RFC 9110 5.5), or len(b) when there is none. 0 ≤ i ≤ len(b).
func scanValue(b []byte, i int) int {
	for i+8 <= len(b) {
		m := ctlMask(binary.LittleEndian.Uint64(b[i : i+8]))
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		if b[i] != '\t' {
			return i
		}
		i++ // a tab: the value goes on
	}
	for i < len(b) && fieldChar[b[i]] {
		i++
	}
	return i
}

// scanTarget returns the offset of the first byte of b from i on that a
// request target may not hold (a control character, a space or DEL), or
// len(b) when there is none. 0 ≤ i ≤ len(b).
func scanTarget(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := targetMask(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] > ' ' && b[i] != 0x7f {
		i++
	}
	return i
}

// field names a header field that parseLines reads.
type field uint8

const (
	fieldOther field = iota // a field parseLines does not read
	fieldHost
	fieldContentLength
	fieldContentType
	fieldTransferEncoding
	fieldConnection
	fieldExpect
	fieldUpgrade
	fieldWSKey
	fieldWSVersion
	fieldOrigin
	fieldAuthorization
	fieldTraceparent
	fieldAcceptEncoding
	fieldContentEncoding
	fieldAccept
)

// knownName is a field name recognised a word at a time: the name in
// lower case and its colon, n bytes in all, compared as words of 8 bytes
// in little-endian order.
type knownName struct {
	want [3]uint64 // the lower-case name and its colon, zero-padded
	fold [3]uint64 // 0x20 in the bytes of letters: ORed in, a byte equals a lower-case letter only if it is that letter in either case
	keep [3]uint64 // 0xff in the bytes compared, 0 in those past the colon
	n    int       // len(name) + 1; 0 in an empty slot of knownNames
	f    field
}

// newKnownName builds the knownName of name (lower-case ASCII, a token
// of at most 23 bytes).
func newKnownName(name string, f field) knownName {
	k := knownName{n: len(name) + 1, f: f}
	for i, c := range []byte(name + ":") {
		w, sh := i/8, uint(i%8)*8
		k.want[w] |= uint64(c) << sh
		k.keep[w] |= 0xff << sh
		if c >= 'a' && c <= 'z' {
			k.fold[w] |= 0x20 << sh
		}
	}
	return k
}

// knownNames are the names recognised a word at a time: those
// parseLines reads, and one it does not that clients commonly send
// (User-Agent), recognised only to skip the byte-by-byte scan of its
// name. Each is at knownNames[nameSlot(first, len(name))]; the
// other slots are zero, and match any bytes with n == 0, which scanName
// returns as no match.
var knownNames = func() (t [64]knownName) {
	for _, k := range []knownName{
		newKnownName("host", fieldHost),
		newKnownName("content-type", fieldContentType),
		newKnownName("content-length", fieldContentLength),
		newKnownName("connection", fieldConnection),
		newKnownName("transfer-encoding", fieldTransferEncoding),
		newKnownName("expect", fieldExpect),
		newKnownName("upgrade", fieldUpgrade),
		newKnownName("sec-websocket-key", fieldWSKey),
		newKnownName("sec-websocket-version", fieldWSVersion),
		newKnownName("origin", fieldOrigin),
		newKnownName("authorization", fieldAuthorization),
		newKnownName("traceparent", fieldTraceparent),
		newKnownName("accept-encoding", fieldAcceptEncoding),
		newKnownName("content-encoding", fieldContentEncoding),
		newKnownName("user-agent", fieldOther),
		newKnownName("accept", fieldAccept),
	} {
		slot := &t[nameSlot(byte(k.want[0]), k.n-1)]
		if slot.n != 0 {
			panic("http1: two known field names in one slot")
		}
		*slot = k
	}
	return t
}()

// nameSlot returns the slot in knownNames of a name of length n whose
// first byte is first (in either case). It is a perfect hash of the
// known names (newKnownName checks), and names a slot for any name.
// Kept inlinable.
func nameSlot(first byte, n int) int { return (int(first|0x20) + n<<3) & 63 }

// scanName returns the known field name at b[i:] and the bytes of the
// name and its colon, or 0 bytes when b[i:] does not start with one, or
// is too short to compare it a word at a time: the caller then scans the
// name byte by byte (scanNameSlow). The name's length is the offset of
// the first colon, found a word at a time; it and the first byte pick
// the one known name to compare, as three words without a loop. Where
// fewer than 24 bytes are left (the last field of a head without a body)
// the words past them are taken as zero, so that a name longer than the
// bytes left fails the compare: its colon, in a zero word, differs. 0 ≤
// i ≤ len(b). Not inlinable (it costs about 210 where the budget is 80):
// one call per field line.
func scanName(b []byte, i int) (field, int) {
	var w0, w1, w2 uint64
	switch c := b[i:]; {
	case len(c) >= 24:
		w0, w1, w2 = binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(c[8:]), binary.LittleEndian.Uint64(c[16:])
	case len(c) >= 16:
		w0, w1 = binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(c[8:])
	case len(c) >= 8:
		w0 = binary.LittleEndian.Uint64(c)
	default:
		return fieldOther, 0
	}
	var n int // the offset of the first colon, or more than 23
	if m := colonMask(w0); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
	} else if m := colonMask(w1); m != 0 {
		n = 8 + bits.TrailingZeros64(m)>>3
	} else {
		n = 16 + bits.TrailingZeros64(colonMask(w2))>>3
	}
	k := &knownNames[nameSlot(byte(w0), n)]
	if ((w0|k.fold[0])&k.keep[0]^k.want[0])|((w1|k.fold[1])&k.keep[1]^k.want[1])|((w2|k.fold[2])&k.keep[2]^k.want[2]) != 0 {
		return fieldOther, 0 // (^ and | bind alike: each word's difference is parenthesised)
	}
	return k.f, k.n
}

// colonMask returns x, eight bytes in little-endian order, with the high
// bit set in every colon and clear in every other byte below the first
// colon. Kept inlinable.
func colonMask(x uint64) uint64 {
	x ^= ':' * lsb
	return (x - lsb) &^ x & msb
}

// scanNameSlow is scanName's slow path: it returns the field whose name
// (a token) starts at b[i:]
// and the offset of the byte after the name: a colon if b holds a field
// line there. It scans byte by byte; the name is then matched by its
// length and, ignoring case, its bytes. 0 ≤ i ≤ len(b).
func scanNameSlow(b []byte, i int) (field, int) {
	start := i
	for i < len(b) && tchar[b[i]] {
		i++
	}
	return lookupField(b[start:i]), i
}

// lookupField returns the field of name, ignoring ASCII case, or
// fieldOther.
func lookupField(name []byte) field {
	switch len(name) {
	case len("host"):
		if EqualFold(name, "host") {
			return fieldHost
		}
	case len("expect"): // and origin, and accept
		switch {
		case EqualFold(name, "expect"):
			return fieldExpect
		case EqualFold(name, "origin"):
			return fieldOrigin
		case EqualFold(name, "accept"):
			return fieldAccept
		}
	case len("upgrade"):
		if EqualFold(name, "upgrade") {
			return fieldUpgrade
		}
	case len("connection"):
		if EqualFold(name, "connection") {
			return fieldConnection
		}
	case len("content-type"):
		if EqualFold(name, "content-type") {
			return fieldContentType
		}
	case len("authorization"):
		if EqualFold(name, "authorization") {
			return fieldAuthorization
		}
	case len("traceparent"):
		if EqualFold(name, "traceparent") {
			return fieldTraceparent
		}
	case len("content-length"):
		if EqualFold(name, "content-length") {
			return fieldContentLength
		}
	case len("accept-encoding"):
		if EqualFold(name, "accept-encoding") {
			return fieldAcceptEncoding
		}
	case len("content-encoding"):
		if EqualFold(name, "content-encoding") {
			return fieldContentEncoding
		}
	case len("transfer-encoding"): // and sec-websocket-key
		switch {
		case EqualFold(name, "transfer-encoding"):
			return fieldTransferEncoding
		case EqualFold(name, "sec-websocket-key"):
			return fieldWSKey
		}
	case len("sec-websocket-version"):
		if EqualFold(name, "sec-websocket-version") {
			return fieldWSVersion
		}
	}
	return fieldOther
}
