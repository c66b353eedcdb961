package http1

// NOTE: the chunked transfer coding (RFC 9112 7.1), decoded
// incrementally. A line (a chunk size with its extensions, or a trailer
// field) is scanned byte by byte from where the previous call stopped
// (ChunkedDecoder.line), and each byte is judged once, in order: first
// whether it may stand there, then whether it is one non-data byte too
// many. So the verdict and the status do not depend on how the bytes
// were split across reads, and a line arriving a byte at a time costs no
// more than one arriving whole. Non-data (extensions and trailer fields)
// is bounded in total, as Go fixed in CVE-2023-39326 and Node in
// CVE-2024-22019: otherwise a client could make a server read megabytes
// of it for a tiny body.

// ChunkedDecoder decodes one chunked body at a time, across as many
// reads as it takes. The zero value is ready; after a body ends (done)
// it is ready for the next one. After a non-zero status its state is
// undefined: call Reset before using it again. A ChunkedDecoder is not
// safe for concurrent use; keep one per connection.
type ChunkedDecoder struct {
	remain    int64 // data bytes left in the current chunk (phaseData)
	body      int64 // data bytes of this body decoded so far
	size      int64 // the chunk size read so far (phaseSize)
	overhead  int   // extension and trailer bytes of this body counted so far
	line      int   // bytes of the pending line scanned so far; it starts at the b of the next call
	phase     uint8 // phaseSize, phaseData, phaseDataEnd, phaseTrailer
	at        uint8 // where in the pending line: atStart, atAfterSize, atExt (size line); atStart, atValue (trailer)
	digits    uint8 // hex digits of size so far
	maxDigits uint8 // most hex digits a chunk size may have; 0 means 15 (ResponseReader sets 8)
}

const (
	phaseSize = iota
	phaseData
	phaseDataEnd
	phaseTrailer
)

const (
	atStart     = iota // a size line's digits, or a trailer field's name
	atAfterSize        // after the digits: whitespace, or ';'
	atExt              // in the extensions, after the first ';'
	atValue            // a trailer field's value, after the colon
)

// Reset makes d ready for a new body.
func (d *ChunkedDecoder) Reset() { *d = ChunkedDecoder{maxDigits: d.maxDigits} }

// Decode decodes the chunked-body bytes at the start of b, appending the
// chunk data to dst. It returns the extended dst as out, how many bytes
// of b it consumed, and whether the body ended (the last chunk and the
// trailer section, up to its blank line, are in; the next message starts
// at b[consumed:]). Bytes of a line not yet complete are left unconsumed:
// the next call's b must start with b[consumed:], more bytes after them.
//
// status is non-zero when the body must be refused (the connection must
// then be closed):
//
//   - StatusBadRequest for a malformed body: a chunk size that is empty,
//     not hex, or of more than 15 digits; a byte that may not stand in an
//     extension (a control character other than tab) or in a trailer
//     field (RFC 9110 5.5); a bare LF or a stray CR; chunk data not
//     followed by CRLF;
//   - StatusPayloadTooLarge when the data would exceed maxBody bytes, or
//     when chunk extensions bring the non-data over maxOverhead;
//   - StatusHeaderTooLarge when trailer fields bring it over maxOverhead.
//
// Non-data is what a size line holds after the chunk size (whitespace
// and extensions, which are ignored) and the trailer field lines, CRLFs
// included; it is counted against maxOverhead for the whole body, and
// refused at the byte that goes over, whether its line is complete or
// not, so the verdict is the same however the body is split. A server
// passes its head limit. maxBody ≤ 0 admits only an empty body;
// maxOverhead ≤ 0 admits no extension and no trailer. Pass the same
// limits on every call for one body.
//
// It allocates only when dst must grow. It may run on any goroutine, one
// call at a time per d.
func (d *ChunkedDecoder) Decode(dst, b []byte, maxBody int64, maxOverhead int) (out []byte, consumed int, done bool, status int) {
	i := 0
	for i < len(b) {
		switch d.phase {
		case phaseSize:
			n, st := d.sizeLine(b[i:], maxOverhead)
			if n == 0 {
				return dst, i, false, st
			}
			i += n
			size := d.size
			d.size, d.digits, d.line, d.at = 0, 0, 0, atStart
			if size == 0 {
				d.phase = phaseTrailer
				continue
			}
			if size > maxBody-d.body {
				return dst, i, false, StatusPayloadTooLarge
			}
			d.phase, d.remain = phaseData, size
		case phaseData:
			n := int(min(int64(len(b)-i), d.remain))
			dst = append(dst, b[i:i+n]...)
			i += n
			d.body += int64(n)
			if d.remain -= int64(n); d.remain == 0 {
				d.phase = phaseDataEnd
			}
		case phaseDataEnd:
			if b[i] != '\r' {
				return dst, i, false, StatusBadRequest
			}
			if len(b)-i < 2 {
				return dst, i, false, 0
			}
			if b[i+1] != '\n' {
				return dst, i, false, StatusBadRequest
			}
			i += 2
			d.phase = phaseSize
		case phaseTrailer:
			n, blank, st := d.trailerLine(b[i:], maxOverhead)
			if n == 0 {
				return dst, i, false, st
			}
			i += n
			d.line, d.at = 0, atStart
			if blank { // the blank line ends the trailer section and the body
				d.Reset()
				return dst, i, true, 0
			}
		}
	}
	return dst, i, false, 0
}

// sizeLine scans the chunk-size line at the start of b (chunk-size
// [ chunk-ext ] CRLF), resuming at d.line, into d.size. It returns the
// line's length, CRLF included, once it is complete and well-formed; 0
// with status 0 when more bytes are needed; 0 and the status to answer
// when it must be refused.
func (d *ChunkedDecoder) sizeLine(b []byte, maxOverhead int) (n, status int) {
	maxDigits := d.maxDigits
	if maxDigits == 0 {
		maxDigits = 15 // 16^15 fits an int64
	}
	j := d.line
	for ; j < len(b); j++ {
		c := b[j]
		if d.at == atStart {
			if v := unhex[c]; v != 0xff {
				if d.digits == maxDigits {
					return 0, StatusBadRequest
				}
				d.size = d.size<<4 | int64(v)
				d.digits++
				continue
			}
			if d.digits == 0 {
				return 0, StatusBadRequest // no size: empty, or not hex
			}
			d.at = atAfterSize
		}
		switch {
		case c == '\r':
			if j+1 == len(b) {
				d.line = j
				return 0, 0
			}
			if b[j+1] != '\n' {
				return 0, StatusBadRequest // a stray CR
			}
			return j + 2, 0
		case d.at == atAfterSize && (c == ' ' || c == '\t'):
			// BWS before ';' (RFC 9112 7.1.1), or trailing whitespace
		case d.at == atAfterSize && c == ';':
			d.at = atExt
		case d.at == atExt && fieldChar[c]:
			// an extension: ignored, only counted
		default:
			return 0, StatusBadRequest // a bare LF, a control character, or junk after the size
		}
		if d.overhead++; d.overhead > maxOverhead {
			return 0, StatusPayloadTooLarge
		}
	}
	d.line = j
	return 0, 0
}

// trailerLine scans the trailer line at the start of b, resuming at
// d.line: a field (a token, a colon, a value without control
// characters, CRLF) or the blank line that ends the trailer section
// (blank). It returns the line's length, CRLF included, once it is
// complete and well-formed; 0 with status 0 when more bytes are needed;
// 0 and the status to answer when it must be refused.
func (d *ChunkedDecoder) trailerLine(b []byte, maxOverhead int) (n int, blank bool, status int) {
	j := d.line
	for ; j < len(b); j++ {
		c := b[j]
		switch {
		case d.at == atStart && tchar[c]:
		case d.at == atStart && c == ':' && j > 0:
			d.at = atValue
		case d.at == atStart && c == '\r' && j == 0:
			if len(b) < 2 {
				return 0, false, 0
			}
			if b[1] != '\n' {
				return 0, false, StatusBadRequest
			}
			return 2, true, 0
		case d.at == atValue && c == '\r':
			if j+1 == len(b) {
				d.line = j
				return 0, false, 0
			}
			if b[j+1] != '\n' {
				return 0, false, StatusBadRequest // a stray CR
			}
			if d.overhead += 2; d.overhead > maxOverhead {
				return 0, false, StatusHeaderTooLarge
			}
			return j + 2, false, 0
		case d.at == atValue && fieldChar[c]:
		default:
			return 0, false, StatusBadRequest // obs-fold, a bare LF, a control character, no colon
		}
		if d.overhead++; d.overhead > maxOverhead {
			return 0, false, StatusHeaderTooLarge
		}
	}
	d.line = j
	return 0, false, 0
}
