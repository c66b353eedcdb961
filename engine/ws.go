package engine

// NOTE: the WebSocket codec (RFC 6455). The HTTP codec hands a GET with
// "Upgrade: websocket" on the WebSocket path, exactly its head bytes, to
// upgradeWS: gobwas/ws's Upgrader checks it and writes the 101 (or the
// refusal) into the loop's output, and the upgrade returns this codec.
// From then on the connection is a sequence of frames read straight from
// gnet's input buffer: the header parsed from the peeked bytes, its
// length checked against the message limit before a byte of payload is
// waited for, the payload unmasked in place (ws.Cipher) and served where
// it lies — no copy, no allocation. Only a fragmented message is gathered
// into a pooled buffer. Every reply and every push goes out as an
// unmasked text frame, whatever the opcode of the request: JSON is UTF-8,
// and a browser hands a binary message to onmessage as a Blob. With
// Options.WSCompression, permessage-deflate is negotiated at the upgrade
// and messages are inflated and compressed as wsdeflate.go says.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"sync"
	"unicode/utf8"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// wsCodec is the state of a WebSocket connection.
type wsCodec struct {
	fragOp ws.OpCode    // opcode of the fragmented message being gathered, or 0
	frag   *pool.Buffer // its payload so far
	want   int          // the size of a frame still arriving
	closed bool         // a close frame went out: nothing may follow
	// deflate: permessage-deflate was negotiated (wsdeflate.go); set at
	// the upgrade. fragZ: the fragmented message being gathered is
	// compressed. Both in the padding after closed: no byte more per
	// connection.
	deflate, fragZ bool
	head           []byte // the upgrade request's head: the call metadata of the connection's calls
}

var wsCodecs = sync.Pool{New: func() any { return new(wsCodec) }}

// isWSUpgrade reports whether the head r asks for a WebSocket on the
// engine's WebSocket path.
func isWSUpgrade(c *conn, r *http1.Request) bool {
	return string(r.Method) == "GET" && len(r.Upgrade) > 0 && string(r.Path()) == c.e.opts.WSPath &&
		http1.HasToken(r.Upgrade, "websocket")
}

// sliceWriter appends what is written to a byte slice.
type sliceWriter struct{ b *[]byte }

func (w sliceWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// upgradeWS answers the WebSocket handshake whose head is head (parsed
// as r). On success it appends the 101 and returns the WebSocket codec;
// otherwise it appends the refusal, sets the connection to close and
// returns nil.
func upgradeWS(c *conn, out, head []byte, r *http1.Request) ([]byte, codec) {
	rw := struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(head), sliceWriter{&out}}
	var u ws.Upgrader
	if offered := http1.Header(head, "sec-websocket-protocol"); offered != nil {
		if pick := pickProtocol(offered); pick != "" {
			u.Protocol = func(p []byte) bool { return string(p) == pick }
		}
	}
	var offer deflateOffer
	if c.e.opts.WSCompression {
		u.Negotiate = offer.negotiate
	}
	if _, err := u.Upgrade(rw); err != nil {
		c.refusedUpgrade(err)
		return c.closeAfterFlush(out, closeProtocol), nil // gobwas wrote the refusal (400, 426)
	}
	w := wsCodecs.Get().(*wsCodec)
	w.deflate = offer.accepted
	w.head = append(w.head[:0], head...) // the upgrade's head is the connection's call metadata
	var scan http1.HeadScan
	var copied http1.Request                                                    // the Meta keeps views of w.head, not the Request: nothing more per connection
	if http1.ParseHead(w.head, &scan, len(w.head), &copied) == http1.StatusOK { // the copy of a head parsed already: once per connection
		c.call.Meta.SetHTTPHeadParsed(w.head, &copied)
	} else {
		c.call.Meta.SetHTTPHead(w.head)
	}
	c.loop.stats.upgrades.Add(1)
	return out, w
}

// pickProtocol chooses the subprotocol to answer among those a client
// offers (Sec-WebSocket-Protocol): the first that does not carry a token
// (auth.ProtocolPrefix, "bearer.", a browser's way to send one), or none
// — a token is never echoed back. A browser that offers subprotocols
// fails a handshake answered with none of them: it offers "jsonrpc"
// beside its token.
func pickProtocol(offered []byte) string {
	for len(offered) > 0 {
		var p []byte
		if k := bytes.IndexByte(offered, ','); k >= 0 {
			p, offered = offered[:k], offered[k+1:]
		} else {
			p, offered = offered, nil
		}
		if p = http1.TrimOWS(p); len(p) > 0 && !bytes.HasPrefix(p, []byte("bearer.")) {
			return string(p)
		}
	}
	return ""
}

func (w *wsCodec) open(c *conn) {
	c.timer.lastInput.Store(c.e.now.Load())
	c.timer.pings.Store(true)
	c.mail.textOnly.Store(true)
	c.mail.deflate.Store(w.deflate)
	c.mail.pushable.Store(true)
}

// maxControl is the payload limit of control frames.
const maxControl = 125

func (w *wsCodec) serve(c *conn, in, out []byte) ([]byte, int, codec) {
	e := c.e
	off := 0
	for off < len(in) && c.canRun() {
		b := in[off:]
		h, hl, err := readWSHeader(b)
		if err == errWSIncomplete {
			c.markPartial()
			return out, off, nil
		}
		if err != nil { // a 64-bit length with its most significant bit set
			return w.close(c, out, ws.StatusProtocolError, err.Error(), closeProtocol), len(in), nil
		}
		state := ws.StateServerSide
		if w.fragOp != 0 {
			state |= ws.StateFragmented
		}
		compressed := false
		if w.deflate {
			// RSV1 marks a compressed message, on its first frame only
			// (RFC 7692 6): never on a continuation or a control frame.
			state |= ws.StateExtended
			if h.Rsv != 0 {
				if h.Rsv != 4 || h.OpCode != ws.OpText && h.OpCode != ws.OpBinary {
					return w.close(c, out, ws.StatusProtocolError, "unexpected RSV bits", closeProtocol), len(in), nil
				}
				compressed = true
			}
		}
		if err := ws.CheckHeader(h, state); err != nil {
			return w.close(c, out, ws.StatusProtocolError, err.Error(), closeProtocol), len(in), nil
		}
		if h.OpCode.IsData() || h.OpCode == ws.OpContinuation {
			have := 0
			if w.frag != nil {
				have = len(w.frag.B)
			}
			if h.Length > int64(e.opts.MaxMessageSize-have) {
				// Checked from the header: the payload is never buffered.
				e.stats.tooLarge.Add(1)
				c.refused(0, httprules.ReasonMessageTooLarge)
				return w.close(c, out, ws.StatusMessageTooBig, "message exceeds the size limit", closeProtocol), len(in), nil
			}
		}
		n := hl + int(h.Length)
		if len(b) < n {
			w.want = n
			c.markPartial()
			return out, off, nil
		}
		w.want = 0
		c.clearPartial()
		payload := b[hl:n]
		ws.Cipher(payload, h.Mask, 0) // in place: this frame is consumed now
		off += n
		switch h.OpCode {
		case ws.OpPing:
			out = appendWSFrame(out, ws.OpPong, false, payload)
		case ws.OpPong:
			// Input: the timers already saw it.
		case ws.OpClose:
			code, reason := ws.StatusNormalClosure, ""
			switch {
			case len(payload) == 1:
				code = ws.StatusProtocolError
			case len(payload) >= 2:
				cc, rr := ws.ParseCloseFrameDataUnsafe(payload)
				if err := ws.CheckCloseFrameData(cc, rr); err != nil {
					code, reason = ws.StatusProtocolError, err.Error()
				} else {
					code = cc
				}
			}
			why := closeByClient // the client's close, answered in kind
			if code == ws.StatusProtocolError {
				why = closeProtocol
			}
			return w.close(c, out, code, reason, why), len(in), nil
		case ws.OpText, ws.OpBinary:
			if !h.Fin {
				w.fragOp, w.fragZ = h.OpCode, compressed
				w.frag = pool.Requests.Get()
				w.frag.B = append(w.frag.B, payload...)
				continue
			}
			if compressed {
				out = w.inflated(c, out, h.OpCode, payload)
			} else {
				out = w.message(c, out, h.OpCode, payload)
			}
			if c.closing != notClosing {
				return out, len(in), nil
			}
		case ws.OpContinuation:
			w.frag.B = append(w.frag.B, payload...)
			if !h.Fin {
				continue
			}
			op, msg, z := w.fragOp, w.frag, w.fragZ
			w.fragOp, w.frag, w.fragZ = 0, nil, false
			if z {
				out = w.inflated(c, out, op, msg.B)
			} else {
				out = w.message(c, out, op, msg.B)
			}
			pool.Requests.Put(msg)
			if c.closing != notClosing {
				return out, len(in), nil
			}
		}
	}
	return out, off, nil
}

// inflated serves one complete compressed message, z: inflated into the
// loop's inflate buffer, never past the message limit (the connection is
// closed 1009 as soon as it would pass it, 1007 for data that is not
// deflate). The message is served from there before anything else
// inflates, as one read in place is from gnet's buffer.
func (w *wsCodec) inflated(c *conn, out []byte, op ws.OpCode, z []byte) []byte {
	e := c.e
	msg, err := c.loop.comp.inflateMessage(z, e.opts.MaxMessageSize)
	switch {
	case err == errInflatedTooLarge:
		e.stats.tooLarge.Add(1)
		c.refused(0, httprules.ReasonMessageTooLarge)
		return w.close(c, out, ws.StatusMessageTooBig, "message exceeds the size limit", closeProtocol)
	case err != nil:
		return w.close(c, out, ws.StatusInvalidFramePayloadData, "compressed message is not valid deflate", closeProtocol)
	}
	return w.message(c, out, op, msg)
}

// message serves one complete WebSocket message; its reply is a text
// frame, written in place behind a header reserved for it.
func (w *wsCodec) message(c *conn, out []byte, op ws.OpCode, msg []byte) []byte {
	if op == ws.OpText && !utf8.Valid(msg) {
		return w.close(c, out, ws.StatusInvalidFramePayloadData, "text message is not valid UTF-8", closeProtocol)
	}
	mark := len(out)
	hl := wsHeaderLen(c.loop.guess.n)
	out = append(out, "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"[:hl]...)
	start := len(out)
	out, j, _ := c.run(out, msg, 0)
	switch n := len(out) - start; {
	case j != nil || n == 0:
		out = out[:mark] // on a worker, or a notification
	default:
		c.loop.guess.note(n)
		if w.deflate && n >= c.e.opts.CompressionMinSize {
			if z := c.loop.comp.deflateMessage(out[start:]); len(z) < n {
				out = appendWSFrame(out[:mark], ws.OpText, true, z)
				break
			}
		}
		if real := wsHeaderLen(n); real != hl {
			out = moveBody(out, start, mark+real)
			hl = real
		}
		putWSHeader(out[mark:mark+hl], ws.OpText, n)
	}
	if j == nil {
		out = c.directFirst(out, mark) // what an inline method sent goes first
	}
	if c.strm != nil && len(out) > mark {
		out = c.holdBehind(out, mark) // a streamed reply is going
	}
	if c.mail.queued.Load() > 0 {
		// Server messages queued while this one ran go before the replies
		// to later messages.
		out = c.drainPushes(out)
	}
	return out
}

// close sends a close frame (once) and sets the connection to close, for
// why, once it is flushed; further input is dropped, Send fails, and the
// connection's subscriptions end.
func (w *wsCodec) close(c *conn, out []byte, code ws.StatusCode, reason string, why closeReason) []byte {
	if !w.closed {
		w.closed = true
		var p [maxControl]byte
		if len(reason) > maxControl-2 {
			reason = reason[:maxControl-2]
		}
		binary.BigEndian.PutUint16(p[:2], uint16(code))
		n := 2 + copy(p[2:], reason)
		out = appendWSFrame(out, ws.OpClose, false, p[:n])
		c.mail.shut.Store(true)
		c.cancel()
	}
	return c.closeAfterFlush(out, why)
}

func (w *wsCodec) ready(c *conn) bool { return w.want == 0 || c.gc.InboundBuffered() >= w.want }

func (w *wsCodec) blocked(*conn) bool { return false }

func (w *wsCodec) reply(c *conn, out []byte, j *job) []byte {
	if len(j.out) > 0 && !w.closed {
		out = w.appendText(c, out, j.out)
	}
	j.release()
	return out
}

func (w *wsCodec) swap(_, _ *job) {} // replies go as they come

func (w *wsCodec) push(c *conn, out, msg []byte) []byte {
	if w.closed {
		return out // nothing follows a close frame: dropped
	}
	return w.appendText(c, out, msg) // Send made sure it is UTF-8
}

// pushPrepared appends a server message sent with SendPrepared: prefix,
// z (a Prepared's Deflated bytes) and suffix as one compressed text
// message of size bytes (preparedSize). Event loop only.
func (w *wsCodec) pushPrepared(out, prefix, z, suffix []byte, size int) []byte {
	if w.closed {
		return out // nothing follows a close frame: dropped
	}
	var h [10]byte
	hl := wsHeaderLen(size)
	putWSHeader(h[:hl], ws.OpText, size)
	h[0] |= 0x40 // RSV1: compressed
	return appendPreparedPayload(append(out, h[:hl]...), prefix, z, suffix)
}

// appendText appends msg as a text message: compressed, with RSV1 set,
// when the connection negotiated permessage-deflate, msg is at least
// Options.CompressionMinSize long and compressing makes it smaller; raw
// otherwise. Event loop only.
func (w *wsCodec) appendText(c *conn, out, msg []byte) []byte {
	if w.deflate && len(msg) >= c.e.opts.CompressionMinSize {
		if z := c.loop.comp.deflateMessage(msg); len(z) < len(msg) {
			return appendWSFrame(out, ws.OpText, true, z)
		}
	}
	return appendWSFrame(out, ws.OpText, false, msg)
}

func (w *wsCodec) ping(out []byte) []byte { return appendWSFrame(out, ws.OpPing, false, nil) }

func (w *wsCodec) goodbye(c *conn, out []byte, why closeReason) []byte {
	switch why {
	case closeIdle:
		return w.close(c, out, ws.StatusGoingAway, "idle timeout", why)
	case closeReadTimeout:
		return w.close(c, out, ws.StatusPolicyViolation, "incomplete frame timed out", why)
	case closeStopping:
		return w.close(c, out, ws.StatusGoingAway, "server stopping", why)
	}
	return out
}

func (w *wsCodec) transport() transport { return transportWebSocket }

func (w *wsCodec) release() {
	if w.frag != nil {
		pool.Requests.Put(w.frag)
	}
	*w = wsCodec{} // head too: a job still on a worker may read it

	wsCodecs.Put(w)
}

// errWSIncomplete: the buffer does not hold a whole frame header yet.
var errWSIncomplete = errors.New("jetrpc: incomplete frame header")

// readWSHeader parses a frame header at the start of b and returns its
// length n. The error is errWSIncomplete when b does not hold all of it
// yet, and ws.ErrHeaderLengthMSB for a 64-bit length with its most
// significant bit set (as gobwas/ws's ReadHeader says).
func readWSHeader(b []byte) (h ws.Header, n int, err error) {
	if len(b) < 2 {
		return h, 0, errWSIncomplete
	}
	h.Fin = b[0]&0x80 != 0
	h.Rsv = (b[0] & 0x70) >> 4
	h.OpCode = ws.OpCode(b[0] & 0x0f)
	h.Masked = b[1]&0x80 != 0
	n = 2
	switch l := b[1] & 0x7f; l {
	case 126:
		if len(b) < 4 {
			return h, 0, errWSIncomplete
		}
		h.Length = int64(binary.BigEndian.Uint16(b[2:4]))
		n = 4
	case 127:
		if len(b) < 10 {
			return h, 0, errWSIncomplete
		}
		v := binary.BigEndian.Uint64(b[2:10])
		if v > math.MaxInt64 {
			return h, 0, ws.ErrHeaderLengthMSB
		}
		h.Length = int64(v)
		n = 10
	default:
		h.Length = int64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return h, 0, errWSIncomplete
		}
		copy(h.Mask[:], b[n:n+4])
		n += 4
	}
	return h, n, nil
}

// wsHeaderLen returns the length of the header of an unmasked frame with
// a payload of n bytes.
func wsHeaderLen(n int) int {
	switch {
	case n < 126:
		return 2
	case n <= 0xffff:
		return 4
	}
	return 10
}

// putWSHeader writes the header of an unmasked final frame into h, which
// is wsHeaderLen(n) long.
func putWSHeader(h []byte, op ws.OpCode, n int) {
	h[0] = 0x80 | byte(op)
	switch len(h) {
	case 2:
		h[1] = byte(n)
	case 4:
		h[1] = 126
		binary.BigEndian.PutUint16(h[2:], uint16(n))
	default:
		h[1] = 127
		binary.BigEndian.PutUint64(h[2:], uint64(n))
	}
}

// appendWSFrame appends an unmasked final frame, with RSV1 set when
// compressed (a permessage-deflate message).
func appendWSFrame(out []byte, op ws.OpCode, compressed bool, payload []byte) []byte {
	var h [10]byte
	hl := wsHeaderLen(len(payload))
	putWSHeader(h[:hl], op, len(payload))
	if compressed {
		h[0] |= 0x40
	}
	out = append(out, h[:hl]...)
	return append(out, payload...)
}
