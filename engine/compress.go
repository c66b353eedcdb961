package engine

// NOTE: HTTP compression (RFC 9110 8.4, 12.5.3). Options.Compression lists
// the content codings the engine speaks, in preference order; New turns
// it into a compression (immutable). A request's codings are decided from
// its head (httpCodec.serve): the reply's from its Accept-Encoding
// (negotiate), the body's from its Content-Encoding (bodyCoding). A reply
// body of at least Options.CompressionMinSize bytes is compressed on the
// event loop that sends it, inline replies and workers' alike, into the
// loop's scratch (compressor, one per loop, made on first use and reused:
// gzip.Writer.Reset, zstd.Encoder.EncodeAll), so that a compressed reply
// allocates nothing in the steady state. A compressed body is inflated,
// also on the loop, into a pooled buffer through a reader that stops at
// Options.MaxMessageSize (inflate): the server never holds more than the
// limit of a body, however far it would inflate.

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/parser/pmdeflate"
)

// DefaultCompressionMinSize is the default of Options.CompressionMinSize:
// a reply body smaller than this goes out raw. Measured
// (BenchmarkCompressionSizes, gzip level 1 on JSON): a 1 KiB body
// shrinks by about 750 bytes for about 3 µs, a 256-byte one by 130
// bytes for 2 µs — the fixed cost of a gzip stream. A raw reply under
// 1 KiB already fits one TCP segment, so compressing it saves no packet
// and would double the server's CPU per call of a small inline method.
const DefaultCompressionMinSize = 1 << 10

// The names of the content codings Options.Compression may list.
const (
	CodingGzip = "gzip"
	CodingZstd = "zstd"
)

// The levels the engine compresses at, chosen by measurement
// (BenchmarkCompressionLevels, one core). On a 100 KB JSON reply of
// records, gzip's level 1 compresses to 22.0 KB in 125 µs, where level 2
// takes 148 µs for 21.7 KB, level 6 338 µs for 22.1 KB and level 9 2.7
// ms for 21.7 KB; zstd's fastest gives 18.9 KB in 149 µs, its default
// 20.6 KB in 223 µs. On 32 KiB of consecutive numbers (a part of
// range's result: no repeated strings, only digits) gzip-1 saves 21.6 KB
// in 91 µs, zstd's default 29.5 KB in 129 µs — and zstd's fastest
// nothing: finding no matches it stores the block raw. So gzip at its
// fastest, and zstd at its default, which compresses every kind of reply
// at 1.5 times the fastest's CPU on records.
const (
	gzipLevel = gzip.BestSpeed
	zstdLevel = zstd.SpeedDefault
)

// coding is a content coding: codingIdentity (none), or one the engine
// compresses with.
type coding uint8

const (
	codingIdentity coding = iota
	codingGzip
	codingZstd
)

// name returns the coding's Content-Encoding name.
func (k coding) name() string {
	switch k {
	case codingGzip:
		return CodingGzip
	case codingZstd:
		return CodingZstd
	}
	return "identity"
}

// codingOf returns the coding named name, ignoring case (x-gzip is gzip,
// RFC 9110 8.4.1.3), or false.
func codingOf(name []byte) (coding, bool) {
	switch {
	case http1.EqualFold(name, "gzip"), http1.EqualFold(name, "x-gzip"):
		return codingGzip, true
	case http1.EqualFold(name, "zstd"):
		return codingZstd, true
	}
	return codingIdentity, false
}

// compression is the engine's compression configuration; immutable after
// New. The zero value is off.
type compression struct {
	prefer  [2]coding // the codings configured, in preference order
	n       int       // how many of prefer are set; 0: off
	allowed uint8     // 1<<coding for each of prefer
	min     int       // Options.CompressionMinSize
}

// newCompression builds the compression of Options.Compression (already
// checked by fill) and min.
func newCompression(names []string, min int) compression {
	z := compression{min: min}
	for _, name := range names {
		k, _ := codingOf([]byte(name))
		if z.allowed&(1<<k) != 0 {
			continue
		}
		z.prefer[z.n] = k
		z.n++
		z.allowed |= 1 << k
	}
	return z
}

// on reports whether any coding is configured. Kept inlinable.
func (z *compression) on() bool { return z.n > 0 }

// negotiate returns the coding of a reply to a request whose
// Accept-Encoding value is ae: of the configured codings the client
// accepts (q > 0, named or by "*"), the one with the highest q, the
// engine's preference breaking ties; codingIdentity when there is none,
// when ae is nil (a client that says nothing gets the body raw, as most
// servers send it) or when compression is off. It allocates nothing.
func (z *compression) negotiate(ae []byte) coding {
	if z.n == 0 || len(ae) == 0 {
		return codingIdentity
	}
	var q [3]int // by coding: the q the client gave it, in thousandths; -1 when unnamed
	q[codingGzip], q[codingZstd] = -1, -1
	star := 0
	for list := ae; len(list) > 0; {
		var elem []byte
		if k := bytes.IndexByte(list, ','); k >= 0 {
			elem, list = list[:k], list[k+1:]
		} else {
			elem, list = list, nil
		}
		name, qv := elem, 1000
		if k := bytes.IndexByte(elem, ';'); k >= 0 {
			name, qv = elem[:k], qValue(elem[k+1:])
		}
		name = http1.TrimOWS(name)
		if len(name) == 1 && name[0] == '*' {
			star = qv
			continue
		}
		if k, ok := codingOf(name); ok && q[k] < 0 {
			q[k] = qv
		}
	}
	best, bestQ := codingIdentity, 0
	for _, k := range z.prefer[:z.n] {
		v := q[k]
		if v < 0 {
			v = star
		}
		if v > bestQ {
			best, bestQ = k, v
		}
	}
	return best
}

// qValue returns the q of an element's parameters (what follows its
// first ';'), in thousandths: 1000 when it has none, 0 for a malformed
// one (a client that cannot spell it is not sent a coding on its word).
func qValue(params []byte) int {
	for len(params) > 0 {
		var p []byte
		if k := bytes.IndexByte(params, ';'); k >= 0 {
			p, params = params[:k], params[k+1:]
		} else {
			p, params = params, nil
		}
		p = http1.TrimOWS(p)
		if len(p) < 2 || p[0]|0x20 != 'q' || p[1] != '=' {
			continue
		}
		q, _ := http1.ParseQ(p[2:]) // 0 when malformed
		return q
	}
	return 1000
}

// bodyCoding returns the coding of a request body whose Content-Encoding
// value is ce, and whether the engine takes it: an absent or identity
// body always, a gzip or zstd one when Options.Compression lists that
// coding, any other (a list of codings among them) never.
func (z *compression) bodyCoding(ce []byte) (coding, bool) {
	ce = http1.TrimOWS(ce)
	if len(ce) == 0 || http1.EqualFold(ce, "identity") {
		return codingIdentity, true
	}
	k, ok := codingOf(ce)
	return k, ok && z.allowed&(1<<k) != 0
}

// compressor is an event loop's compression scratch: its encoders and
// decoders, made on first use and reused, and the buffer a reply is
// compressed into. Event loop only.
type compressor struct {
	gz   *gzip.Writer
	zw   *zstd.Encoder
	gr   *gzip.Reader
	zr   *zstd.Decoder
	zrW  int                  // the window zr was made for
	src  bytes.Reader         // the body being inflated
	out  appendWriter         // the compressed reply; valid until the next compress
	grOK bool                 // gr has been given a first stream (gzip.NewReader needs one)
	fw   *flate.Writer        // permessage-deflate's compressor (wsdeflate.go)
	fr   io.ReadCloser        // permessage-deflate's decompressor, a flate.Resetter
	tail pmdeflate.TailReader // the message being inflated, with its tail put back
	in   []byte               // the inflated message; valid until the next inflateMessage
}

// maxCompressBuf: a compressor keeps a reply buffer, and an inflated
// WebSocket message's, up to this size; a larger one is dropped after
// use.
const maxCompressBuf = 1 << 20

// resetOut empties the buffer a reply is compressed into, dropping one
// grown past maxCompressBuf.
func (z *compressor) resetOut() {
	if cap(z.out.b) > maxCompressBuf {
		z.out.b = nil
	}
	z.out.b = z.out.b[:0]
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// compress returns body compressed with k (gzip or zstd). The returned
// bytes are valid until the next compress and must not be modified; copy
// them to keep them.
func (z *compressor) compress(k coding, body []byte) []byte {
	z.resetOut()
	switch k {
	case codingGzip:
		if z.gz == nil {
			z.gz, _ = gzip.NewWriterLevel(&z.out, gzipLevel) // the level is valid
		} else {
			z.gz.Reset(&z.out)
		}
		_, _ = z.gz.Write(body) // appendWriter never fails
		_ = z.gz.Close()
	case codingZstd:
		if z.zw == nil {
			z.zw, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstdLevel), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		}
		z.out.b = z.zw.EncodeAll(body, z.out.b)
	}
	return z.out.b
}

// errInflatedTooLarge: a body inflates past the message limit.
var errInflatedTooLarge = errors.New("jetrpc: request body inflates past the message limit")

// inflate appends body, compressed with k, inflated, to dst, reading no
// further than limit bytes of its inflated form: it returns
// errInflatedTooLarge as soon as the body would pass limit (dst then holds
// at most limit+1 bytes), or the decoder's error for a body that is not
// valid k.
func (z *compressor) inflate(dst []byte, k coding, body []byte, limit int) ([]byte, error) {
	z.src.Reset(body)
	var r io.Reader
	switch k {
	case codingGzip:
		if !z.grOK {
			gr, err := gzip.NewReader(&z.src)
			if err != nil {
				return dst, err
			}
			z.gr, z.grOK = gr, true
		} else if err := z.gr.Reset(&z.src); err != nil {
			return dst, err
		}
		r = z.gr
	case codingZstd:
		// The window a frame may ask for is bounded too: a decoder holds
		// its window whatever the frame inflates to.
		w := min(max(limit, zstd.MinWindowSize), zstd.MaxWindowSize)
		if z.zr == nil || z.zrW != w {
			if z.zr != nil {
				z.zr.Close()
			}
			zr, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(uint64(w)), zstd.WithDecoderMaxMemory(uint64(limit)+1))
			if err != nil {
				return dst, err
			}
			z.zr, z.zrW = zr, w
		}
		if err := z.zr.Reset(&z.src); err != nil {
			return dst, err
		}
		r = z.zr
	default:
		return append(dst, body...), nil
	}
	return readLimited(dst, r, limit)
}

// readLimited appends what r yields to dst until io.EOF, reading no
// further than limit bytes: it returns errInflatedTooLarge as soon as r
// yields more (dst then holds at most limit+1 bytes of it), or r's error.
func readLimited(dst []byte, r io.Reader, limit int) ([]byte, error) {
	start := len(dst)
	for {
		end := min(cap(dst), start+limit+1) // a read stops one byte past the limit
		if len(dst) == end {
			if len(dst)-start > limit {
				return dst, errInflatedTooLarge
			}
			dst = slices.Grow(dst, min(max(len(dst)-start, 4<<10), start+limit+1-len(dst)))
			end = min(cap(dst), start+limit+1)
		}
		n, err := r.Read(dst[len(dst):end])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, errInflatedTooLarge
		}
		switch {
		case err == io.EOF:
			return dst, nil
		case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
			return dst, errInflatedTooLarge
		case err != nil:
			return dst, err
		}
	}
}
