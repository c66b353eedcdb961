package engine

// NOTE: WebSocket permessage-deflate (RFC 7692), the compression of the
// WebSocket codec (ws.go). With Options.WSCompression on, the upgrade
// answers a client's first acceptable permessage-deflate offer
// (deflateOffer.negotiate, parsed by gobwas/ws's wsflate) with both
// server_no_context_takeover and client_no_context_takeover: every
// message is compressed and inflated on its own, with no window kept
// between messages, so a connection that negotiated it holds no memory
// for it — its wsCodec has a flag, in padding it already had. The coders
// are the event loop's (compressor, compress.go: a flate.Writer and a
// flate reader made on first use and reset per message). A message with
// RSV1 set is inflated, its tail (0x00 0x00 0xff 0xff, RFC 7692 7.2.2)
// put back by pmdeflate.TailReader, into the loop's inflate buffer (kept up to
// 1 MiB, as the compressed reply's is), bounded by
// Options.MaxMessageSize while it inflates (readLimited); a text reply or
// server message of at least Options.CompressionMinSize bytes goes out
// compressed, with RSV1 set and the tail removed, when that makes it
// smaller, and raw otherwise.

import (
	"bytes"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws/wsflate"
	"github.com/klauspost/compress/flate"
)

// wsDeflateLevel is the level replies are compressed at: the fastest,
// as for gzip (compress.go's gzipLevel, measured there on the same
// deflate): as small as the slower levels within a few per cent.
const wsDeflateLevel = flate.BestSpeed

// wsDeflateResponse is the extension the engine answers an accepted
// offer with. RFC 7692 7.1.1.1 and 7.1.1.2: a server may declare
// client_no_context_takeover whether or not the client offered it.
var wsDeflateResponse = wsflate.Parameters{ServerNoContextTakeover: true, ClientNoContextTakeover: true}.Option()

// deflateOffer is the state of one handshake's permessage-deflate
// negotiation: whether an offer was accepted.
type deflateOffer struct{ accepted bool }

// negotiate is ws.Upgrader's Negotiate: it accepts the first
// permessage-deflate offer it can meet and declines (a zero option, no
// error: the handshake goes on without it) any other. An offer with a
// parameter it does not know, or a malformed or repeated one, is
// declined (RFC 7692 7.1); so is one with server_max_window_bits under
// 15 (flate's window is 32 KiB, and a reply may refer that far back in
// itself). client_max_window_bits, in any form, is met: the engine's
// inflater takes any window, so it is not answered.
func (d *deflateOffer) negotiate(opt httphead.Option) (httphead.Option, error) {
	if d.accepted || !bytes.Equal(opt.Name, wsflate.ExtensionNameBytes) {
		return httphead.Option{}, nil
	}
	var p wsflate.Parameters
	if p.Parse(opt) != nil {
		return httphead.Option{}, nil
	}
	if p.ServerMaxWindowBits.Defined() && p.ServerMaxWindowBits < 15 {
		return httphead.Option{}, nil
	}
	d.accepted = true
	return wsDeflateResponse, nil
}

// deflateMessage returns msg compressed as a permessage-deflate message
// without context takeover: a fresh stream, flushed, its tail removed.
// The returned bytes are valid until the next compress or deflateMessage
// and must not be modified; copy them to keep them. Event loop only.
func (z *compressor) deflateMessage(msg []byte) []byte {
	return z.deflatePart(msg, true) // a message is its own one part
}

// inflateMessage returns msg, a permessage-deflate message whose tail
// was removed, inflated into the compressor's inflate buffer, reading no
// further than limit bytes of it: errInflatedTooLarge as soon as it would
// pass limit (the buffer then holds at most limit+1 bytes), or flate's
// error for data that is not deflate. msg is not kept. The returned bytes
// are valid until the next inflateMessage and must not be modified; copy
// them to keep them. Event loop only.
func (z *compressor) inflateMessage(msg []byte, limit int) ([]byte, error) {
	z.tail.Reset(msg)
	if z.fr == nil {
		z.fr = flate.NewReader(&z.tail)
	} else {
		_ = z.fr.(flate.Resetter).Reset(&z.tail, nil) // never fails
	}
	if cap(z.in) > maxCompressBuf {
		z.in = nil // a large message's buffer is not kept
	}
	var err error
	z.in, err = readLimited(z.in[:0], z.fr, limit)
	z.tail.Reset(nil) // not kept: msg may be gnet's buffer
	return z.in, err
}
