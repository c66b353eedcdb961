package engine

// NOTE: WebSocket (RFC 6455) on the event loop. An HTTP GET with
// "Upgrade: websocket" on the WebSocket path is handed, exactly its head
// bytes, to gobwas/ws's Upgrader, which checks it and writes the 101 (or
// the refusal) into the loop's output. From then on the connection is a
// sequence of frames read straight from gnet's input buffer: the header
// parsed from the peeked bytes, its length checked against the message
// limit before a byte of payload is waited for, the payload unmasked in
// place (ws.Cipher) and served where it lies — no copy, no allocation.
// Only a fragmented message is gathered into a pooled buffer. Replies go
// out as unmasked frames, appended to the loop's output with the others.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"unicode/utf8"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

const statusForbidden = 403

// isWSUpgrade reports whether the parsed head asks for a WebSocket on the
// engine's WebSocket path. Event loop only.
func (cs *conn) isWSUpgrade() bool {
	r := &cs.req
	if string(r.method) != "GET" || len(r.upgrade) == 0 || pathOf(r.target) != cs.e.opts.WSPath {
		return false
	}
	found := false
	forEachToken(r.upgrade, func(tok []byte) {
		if equalFold(tok, "websocket") {
			found = true
		}
	})
	return found
}

// originAllowed applies Options.WSOrigins to the request's Origin. Event
// loop only.
func (cs *conn) originAllowed() bool {
	allow := cs.e.opts.WSOrigins
	o := cs.req.origin
	if len(allow) == 0 || len(o) == 0 {
		return true // no list, or not a browser
	}
	for _, a := range allow {
		if a == "*" || bytes.EqualFold(o, []byte(a)) {
			return true
		}
	}
	return false
}

// sliceWriter appends what is written to a byte slice.
type sliceWriter struct{ b *[]byte }

func (w sliceWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// upgradeWS answers the WebSocket handshake whose head is head, switching
// the connection to WebSocket on success; on failure the refusal is
// appended and the connection set to close. Event loop only.
func (cs *conn) upgradeWS(out, head []byte) []byte {
	if !cs.originAllowed() {
		out = appendHeadStart(out, "HTTP/1.1 403 Forbidden\r\n", false, cs.req.minor)
		out = append(out, "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\n\r\norigin not allowed\n"...)
		cs.closing = true
		return out
	}
	rw := struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(head), sliceWriter{&out}}
	if _, err := (ws.Upgrader{}).Upgrade(rw); err != nil {
		cs.closing = true // gobwas wrote the refusal (400, 426)
		return out
	}
	cs.proto = protoWS
	cs.lastInput.Store(cs.e.now.Load())
	cs.isWS.Store(true)
	cs.pushable.Store(true)
	return out
}

// maxControl is the payload limit of control frames.
const maxControl = 125

// serveWS reads and serves the frames buffered in in, unmasking them in
// place, and returns the bytes consumed. Event loop only.
func (cs *conn) serveWS(in, out []byte) ([]byte, int) {
	e := cs.e
	off := 0
	for off < len(in) && cs.canRun() {
		b := in[off:]
		h, hl, err := readWSHeader(b)
		if err == errWSIncomplete {
			cs.markPartial()
			return out, off
		}
		if err != nil { // a 64-bit length with its most significant bit set
			out = cs.closeWS(out, ws.StatusProtocolError, err.Error())
			return out, len(in)
		}
		state := ws.StateServerSide
		if cs.wsFragOp != 0 {
			state |= ws.StateFragmented
		}
		if err := ws.CheckHeader(h, state); err != nil {
			out = cs.closeWS(out, ws.StatusProtocolError, err.Error())
			return out, len(in)
		}
		if h.OpCode.IsData() || h.OpCode == ws.OpContinuation {
			have := 0
			if cs.wsFrag != nil {
				have = len(cs.wsFrag.B)
			}
			if h.Length > int64(e.opts.MaxMessageSize-have) {
				// Checked from the header: the payload is never buffered.
				out = cs.closeWS(out, ws.StatusMessageTooBig, "message exceeds the size limit")
				return out, len(in)
			}
		}
		n := hl + int(h.Length)
		if len(b) < n {
			cs.need = n
			cs.markPartial()
			return out, off
		}
		cs.need = 0
		cs.partial.Store(0)
		payload := b[hl:n]
		ws.Cipher(payload, h.Mask, 0) // in place: this frame is consumed now
		off += n
		switch h.OpCode {
		case ws.OpPing:
			out = appendWSFrame(out, ws.OpPong, payload)
		case ws.OpPong:
			// Input: lastInput is already fresh.
		case ws.OpClose:
			code, reason := ws.StatusNormalClosure, ""
			switch {
			case len(payload) == 1:
				code = ws.StatusProtocolError
			case len(payload) >= 2:
				c, r := ws.ParseCloseFrameDataUnsafe(payload)
				if err := ws.CheckCloseFrameData(c, r); err != nil {
					code, reason = ws.StatusProtocolError, err.Error()
				} else {
					code = c
				}
			}
			out = cs.closeWS(out, code, reason)
			return out, len(in)
		case ws.OpText, ws.OpBinary:
			if !h.Fin {
				cs.wsFragOp = h.OpCode
				cs.wsFrag = pool.Requests.Get()
				cs.wsFrag.B = append(cs.wsFrag.B, payload...)
				continue
			}
			var bad bool
			if out, bad = cs.wsMessage(out, h.OpCode, payload); bad {
				return out, len(in)
			}
		case ws.OpContinuation:
			cs.wsFrag.B = append(cs.wsFrag.B, payload...)
			if !h.Fin {
				continue
			}
			op, msg := cs.wsFragOp, cs.wsFrag
			cs.wsFragOp, cs.wsFrag = 0, nil
			var bad bool
			out, bad = cs.wsMessage(out, op, msg.B)
			pool.Requests.Put(msg)
			if bad {
				return out, len(in)
			}
		}
	}
	return out, off
}

// wsMessage serves one complete WebSocket message. bad reports that the
// connection is closing (the text was not UTF-8). Event loop only.
func (cs *conn) wsMessage(out []byte, op ws.OpCode, msg []byte) (o []byte, bad bool) {
	if op == ws.OpText && !utf8.Valid(msg) {
		return cs.closeWS(out, ws.StatusInvalidFramePayloadData, "text message is not valid UTF-8"), true
	}
	e, ls := cs.e, cs.loop
	body, oc := e.table.Serve(cs.ctx, ls.body[:0], msg, true)
	if oc == handler.Deferred {
		if cs.submit(msg, kindWS, op) {
			ls.body = body[:0]
			return out, false
		}
		body = e.table.AppendBusy(body, msg)
	}
	ls.body = body[:0]
	if len(body) > 0 {
		out = appendWSFrame(out, op, body)
	}
	if cs.queued.Load() > 0 {
		// Server messages queued while this one ran go before the replies
		// to later messages.
		out = cs.drainPushes(out)
	}
	return out, false
}

// closeWS sends a close frame and sets the connection to close once it
// is flushed; further input is dropped. Event loop only.
func (cs *conn) closeWS(out []byte, code ws.StatusCode, reason string) []byte {
	var p [maxControl]byte
	if len(reason) > maxControl-2 {
		reason = reason[:maxControl-2]
	}
	binary.BigEndian.PutUint16(p[:2], uint16(code))
	n := 2 + copy(p[2:], reason)
	out = appendWSFrame(out, ws.OpClose, p[:n])
	cs.closing = true
	cs.shut.Store(true) // Send now fails
	cs.cancel()         // and the connection's subscriptions end
	return out
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

// appendWSFrame appends an unmasked final frame.
func appendWSFrame(out []byte, op ws.OpCode, payload []byte) []byte {
	out = append(out, 0x80|byte(op))
	switch l := len(payload); {
	case l < 126:
		out = append(out, byte(l))
	case l <= 0xffff:
		out = append(out, 126, byte(l>>8), byte(l))
	default:
		out = append(out, 127)
		out = binary.BigEndian.AppendUint64(out, uint64(l))
	}
	return append(out, payload...)
}
