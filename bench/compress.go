package bench

// NOTE: compressed replies. With Config.Compression an HTTP request asks
// for the codings in its Accept-Encoding (put in the request head once,
// header.go), and a reply whose head says Content-Encoding gzip or zstd
// is decoded (contentCoding finds it in the head, decoder.decode
// inflates the body) before its checks. With Config.WSCompression the
// WebSocket upgrade offers permessage-deflate (RFC 7692) without context
// takeover either way (wsDeflateOffer), and a message with RSV1 set is
// inflated (decoder.inflate) before its checks; the client's own
// messages are sent raw, which RFC 7692 allows (RSV1 is per message).
// Each worker, and each event loop of the fan-out's subscribers, keeps
// one decoder: its coders are made on first use and reset per body, its
// output buffer reused, so that a compressed reply costs no allocation
// in steady state. Wire bytes (worker.wireIn and wireOut) are counted
// where the connections are read and written.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws/wsflate"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/parser/pmdeflate"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// The content codings Config.Compression may ask for.
const (
	CodingGzip = "gzip"
	CodingZstd = "zstd"
)

// coding is a reply's content coding.
type coding int8

const (
	codingNone  coding = iota // no Content-Encoding, or identity
	codingGzip                // gzip
	codingZstd                // zstd
	codingOther               // one the tool cannot decode
)

// ParseCompression reads a list of content codings for
// Config.Compression: names joined by commas, "gzip", "zstd",
// "gzip,zstd" or "zstd,gzip" (spaces around a name are dropped), each
// at most once. The returned slice is new.
func ParseCompression(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(name))
	}
	if err := checkCodings(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkCodings checks a list of codings: gzip and zstd, each once.
func checkCodings(codings []string) error {
	for i, name := range codings {
		if name != CodingGzip && name != CodingZstd {
			return fmt.Errorf("compression %q: want %s or %s", name, CodingGzip, CodingZstd)
		}
		if slices.Contains(codings[:i], name) {
			return fmt.Errorf("compression %s named twice", name)
		}
	}
	return nil
}

// checkCompression checks Config.Compression and WSCompression against
// the target t.
func (c *Config) checkCompression(t *target) error {
	if err := checkCodings(c.Compression); err != nil {
		return err
	}
	if len(c.Compression) > 0 {
		if !t.http {
			return fmt.Errorf("target %q: HTTP compression (Accept-Encoding) is for http:// and https:// targets; a ws:// target has WSCompression", c.Target)
		}
		for name := range c.Header {
			if strings.EqualFold(name, "Accept-Encoding") {
				return errors.New("an Accept-Encoding header and compression: the compression setting writes Accept-Encoding")
			}
		}
	}
	if c.WSCompression && !t.ws {
		return fmt.Errorf("target %q: WebSocket compression is for ws:// and wss:// targets", c.Target)
	}
	return nil
}

// decodes reports whether the replies of a run with cfg may come
// compressed: Compression is set, or Header asks for a coding itself.
func decodes(cfg *Config) bool {
	if len(cfg.Compression) > 0 {
		return true
	}
	for name := range cfg.Header {
		if strings.EqualFold(name, "Accept-Encoding") {
			return true
		}
	}
	return false
}

// appendAcceptEncoding appends the Accept-Encoding header line of
// codings, the first preferred: "Accept-Encoding: zstd, gzip;q=0.9"
// (the second of two has q 0.9, so that a server picks by the client's
// order, not its own); nothing for none.
func appendAcceptEncoding(dst []byte, codings []string) []byte {
	if len(codings) == 0 {
		return dst
	}
	dst = append(dst, "Accept-Encoding: "...)
	for i, name := range codings {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = append(dst, name...)
		if i > 0 {
			dst = append(dst, ";q=0.9"...)
		}
	}
	return append(dst, "\r\n"...)
}

// contentCoding returns the Content-Encoding of the response at the
// start of resp (a whole response, framed): codingNone without one. It
// allocates nothing.
func contentCoding(resp []byte) coding {
	end := bytes.Index(resp, []byte("\r\n\r\n"))
	if end < 0 {
		return codingNone
	}
	head := resp[:end]
	if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
		head = head[i+2:] // past the status line
	} else {
		return codingNone
	}
	for len(head) > 0 {
		line := head
		if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
			line, head = head[:i], head[i+2:]
		} else {
			head = nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 || !http1.EqualFold(line[:colon], "content-encoding") {
			continue
		}
		v := http1.TrimOWS(line[colon+1:])
		switch {
		case len(v) == 0, http1.EqualFold(v, "identity"):
			return codingNone
		case http1.EqualFold(v, CodingGzip), http1.EqualFold(v, "x-gzip"):
			return codingGzip
		case http1.EqualFold(v, CodingZstd):
			return codingZstd
		}
		return codingOther // a coding not asked for, or several stacked
	}
	return codingNone
}

// errInflatedTooLarge is the cause of an inflated reply over maxMessage.
var errInflatedTooLarge = errors.New("an inflated reply over 64 MiB")

// decoder inflates compressed replies; its coders are made on first use
// and reused. Not safe for concurrent use: one per worker (its
// goroutine or event loop), or per event loop.
type decoder struct {
	src  bytes.Reader         // the body being decoded
	tail pmdeflate.TailReader // a permessage-deflate message, its tail put back
	gz   *gzip.Reader         // nil until the first gzip reply
	zs   *zstd.Decoder        // nil until the first zstd reply
	fl   io.ReadCloser        // a flate.Resetter; nil until the first compressed message
	out  []byte               // the decoded body; reused
	max  int                  // the largest decoded size allowed; maxMessage unless a test sets it
	zerr error                // the zstd decoder's creation error, if any
}

// limit returns the largest decoded size allowed.
func (d *decoder) limit() int {
	if d.max > 0 {
		return d.max
	}
	return maxMessage
}

// decode returns body decoded from coding k, which is codingGzip or
// codingZstd. The returned body is valid until the next call of d and
// must not be modified; copy it to keep it.
func (d *decoder) decode(k coding, body []byte) ([]byte, error) {
	switch k {
	case codingGzip:
		d.src.Reset(body)
		if d.gz == nil {
			gz, err := gzip.NewReader(&d.src)
			if err != nil {
				return nil, err
			}
			d.gz = gz
		} else if err := d.gz.Reset(&d.src); err != nil {
			return nil, err
		}
		return d.readAll(d.gz)
	case codingZstd:
		if d.zs == nil && d.zerr == nil {
			d.zs, d.zerr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(d.limit())))
		}
		if d.zerr != nil {
			return nil, d.zerr
		}
		out, err := d.zs.DecodeAll(body, d.out[:0])
		if err != nil {
			return nil, err
		}
		d.out = out
		if len(out) > d.limit() {
			return nil, errInflatedTooLarge
		}
		return out, nil
	}
	return nil, errUnknownCoding
}

// errUnknownCoding is the cause of an ErrEncoding error for a reply in a
// coding other than gzip and zstd.
var errUnknownCoding = errors.New("a Content-Encoding other than gzip and zstd (or several stacked)")

// inflate returns the permessage-deflate message msg inflated (RFC 7692
// 7.2.2: its tail put back). The returned body is valid until the next
// call of d and must not be modified; copy it to keep it.
func (d *decoder) inflate(msg []byte) ([]byte, error) {
	d.tail.Reset(msg)
	if d.fl == nil {
		d.fl = flate.NewReader(&d.tail)
	} else if err := d.fl.(flate.Resetter).Reset(&d.tail, nil); err != nil {
		return nil, err
	}
	return d.readAll(d.fl)
}

// readAll reads r to its end into d.out, at most limit bytes.
func (d *decoder) readAll(r io.Reader) ([]byte, error) {
	out := d.out[:0]
	limit := d.limit()
	for {
		if len(out) == cap(out) {
			if len(out) >= limit {
				return nil, errInflatedTooLarge
			}
			out = append(out, 0)[:len(out)]
		}
		n, err := r.Read(out[len(out):min(cap(out), limit+1)])
		out = out[:len(out)+n]
		if len(out) > limit {
			return nil, errInflatedTooLarge
		}
		if err == io.EOF {
			d.out = out
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// wsDeflateOffer is the permessage-deflate offer of the tool's WebSocket
// upgrades: no context takeover either way, so that neither side keeps a
// window between messages (what jetrpc serve --ws-compression answers).
var wsDeflateOffer = wsflate.Parameters{ServerNoContextTakeover: true, ClientNoContextTakeover: true}.Option()

// deflateAccepted reports whether the extensions a server accepted
// include permessage-deflate; it is an error when the server keeps its
// compression context between messages (it did not meet the offer's
// server_no_context_takeover), which this client cannot inflate.
func deflateAccepted(exts []httphead.Option) (bool, error) {
	for _, opt := range exts {
		if !bytes.Equal(opt.Name, wsflate.ExtensionNameBytes) {
			continue
		}
		var p wsflate.Parameters
		if err := p.Parse(opt); err != nil {
			return false, fmt.Errorf("websocket: the server's permessage-deflate answer: %w", err)
		}
		if !p.ServerNoContextTakeover {
			return false, errors.New("websocket: the server's permessage-deflate answer keeps its context between messages (no server_no_context_takeover)")
		}
		return true, nil
	}
	return false, nil
}
