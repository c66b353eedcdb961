package engine

// NOTE: a server message sent to many WebSocket clients with its
// payload compressed once (handler.Prepared, handler.PreparedSender):
// the fan-out of package handler/topics. Every client's message is
// {prefix}{payload}{suffix} where only the prefix differs (the
// subscription id). Under permessage-deflate without context takeover
// (wsdeflate.go) a message is a DEFLATE stream on its own (RFC 1951),
// and a stream is a sequence of blocks: a block made by a fresh
// compressor refers to nothing before it, and a stored block (BTYPE 00)
// is its header bits, padding to a byte boundary, LEN and NLEN
// (little-endian 16-bit, NLEN = ^LEN) and LEN bytes as they are. So a
// client's compressed message is assembled, never compressed, by its
// event loop:
//
//	0x00 LEN NLEN prefix    a stored block (BFINAL 0), split every 65,535 bytes
//	Deflated                the payload compressed once by a fresh writer and sync
//	                        flushed, less the flush's LEN and NLEN (0x00 0x00 0xff 0xff):
//	                        it ends with the header bits of a stored block, on a byte boundary
//	LEN NLEN suffix         that stored block, holding the suffix
//	0x00                    the header of an empty stored block
//
// and the client appends 0x00 0x00 0xff ff (RFC 7692 7.2.2), the LEN
// and NLEN of that empty block: the message ends as a sync-flushed one
// does, with its tail removed (RFC 7692 7.2.1). With an empty suffix the
// message ends with Deflated, already in that form. A push of it holds
// its prefix and suffix in a pooled buffer and a reference to the
// Prepared; it is counted, in the push queue and the output, at the size
// of the compressed message it writes (preparedSize). A connection
// without permessage-deflate, a stream, a message under
// CompressionMinSize, and one that compressing would not make smaller,
// get the plain message, copied as Send copies it.

import (
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

var _ handler.PreparedSender = (*conn)(nil)

// maxStored is the most a stored block holds (LEN is 16 bits).
const maxStored = 0xffff

// SendPrepared implements handler.PreparedSender: on a WebSocket
// connection that negotiated permessage-deflate, a message of at least
// CompressionMinSize bytes shares msg's compressed bytes (computed by
// the first connection that needs them) when that makes it smaller than
// the plain message; any other gets the plain message, as Send. Safe
// from any goroutine.
func (c *conn) SendPrepared(prefix []byte, msg *handler.Prepared, suffix []byte) error {
	return c.sendPrepared(prefix, msg, suffix, true)
}

// sendPrepared is SendPrepared, ordered as send.
func (c *conn) sendPrepared(prefix []byte, msg *handler.Prepared, suffix []byte, ordered bool) error {
	m := &c.mail
	if !m.pushable.Load() {
		if c.ctx.Err() != nil {
			return handler.ErrConnClosed
		}
		return handler.ErrPushUnsupported
	}
	payload := msg.Payload()
	if m.textOnly.Load() && !(msg.ValidUTF8() && utf8.Valid(prefix) && utf8.Valid(suffix)) {
		return handler.ErrNotUTF8
	}
	plain := len(prefix) + len(payload) + len(suffix)
	p := pushes.Get().(*push)
	p.buf = pool.Responses.Get()
	if m.deflate.Load() && plain >= c.e.opts.CompressionMinSize {
		if size := preparedSize(len(prefix), len(msg.Deflated()), len(suffix)); size < plain {
			msg.Retain()
			p.buf.B = append(append(p.buf.B, prefix...), suffix...)
			p.prep, p.split, p.size = msg, len(prefix), size
			return c.enqueue(p, ordered)
		}
	}
	p.buf.B = append(append(append(p.buf.B, prefix...), payload...), suffix...)
	p.size = plain
	return c.enqueue(p, ordered)
}

// pushPrepared appends the message of p, a push with a Prepared. Event
// loop only.
func (c *conn) pushPrepared(out []byte, p *push) []byte {
	prefix, suffix := p.buf.B[:p.split], p.buf.B[p.split:]
	if w, ok := c.codec.(*wsCodec); ok {
		return w.pushPrepared(out, prefix, p.prep.Deflated(), suffix, p.size)
	}
	// Not reached: only a WebSocket connection shares compressed bytes.
	b := pool.Responses.Get()
	b.B = append(append(append(b.B, prefix...), p.prep.Payload()...), suffix...)
	out = c.codec.push(c, out, b.B)
	pool.Responses.Put(b)
	return out
}

// storedSize returns the bytes of n bytes in stored blocks: 5 bytes of
// header per block of up to maxStored bytes.
func storedSize(n int) int { return n + 5*((n+maxStored-1)/maxStored) }

// preparedSize returns the size of the compressed message of a prefix
// of prefix bytes, a Deflated of z bytes and a suffix of suffix bytes
// (appendPreparedPayload). The suffix's first block has no header byte
// (Deflated ends with it) and the message one more (the empty block's),
// so both parts count as storedSize says.
func preparedSize(prefix, z, suffix int) int {
	return storedSize(prefix) + z + storedSize(suffix)
}

// appendStored appends b in stored blocks (BFINAL 0), each beginning on
// a byte boundary.
func appendStored(out, b []byte) []byte {
	for len(b) > 0 {
		k := min(len(b), maxStored)
		out = append(out, 0x00)
		out = appendStoredLen(out, k)
		out = append(out, b[:k]...)
		b = b[k:]
	}
	return out
}

// appendStoredLen appends a stored block's LEN and NLEN for k bytes.
func appendStoredLen(out []byte, k int) []byte {
	return append(out, byte(k), byte(k>>8), ^byte(k), ^byte(k>>8))
}

// appendPreparedPayload appends the payload of the compressed message
// of prefix, z (a Prepared's Deflated bytes) and suffix, as the NOTE
// lays it out: preparedSize bytes.
func appendPreparedPayload(out, prefix, z, suffix []byte) []byte {
	out = appendStored(out, prefix)
	out = append(out, z...)
	if len(suffix) == 0 {
		return out // z ends as a message does
	}
	k := min(len(suffix), maxStored)
	out = appendStoredLen(out, k) // the block whose header bits end z
	out = append(out, suffix[:k]...)
	out = appendStored(out, suffix[k:])
	return append(out, 0x00) // an empty stored block's header: the client appends its LEN and NLEN
}
