package bench

// NOTE: the WebSocket client side of a load test. The handshake is done
// on the blocking net.Conn right after dialing (connection setup is not
// measured); requests then go out as masked text frames, appended to the
// write buffer like any other request, and replies are read as frames
// from the read buffer — no allocation per request.

import (
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
)

// handshakeWS upgrades nc to a WebSocket at the target's URL, with
// gobwas/ws's client handshake (it checks the 101 and the accept key),
// sending the extra headers h (nil for none) with the upgrade request,
// and offering permessage-deflate when deflate is set (wsDeflateOffer).
// It reports whether the server accepted the offer.
func handshakeWS(nc net.Conn, t *target, h http.Header, deflate bool, timeout time.Duration) (deflated bool, err error) {
	_ = nc.SetDeadline(time.Now().Add(timeout))
	defer nc.SetDeadline(time.Time{})
	d := ws.Dialer{}
	if h != nil {
		d.Header = ws.HandshakeHeaderHTTP(h)
	}
	if deflate {
		d.Extensions = []httphead.Option{wsDeflateOffer}
	}
	br, hs, err := d.Upgrade(nc, t.wsURL)
	if err != nil {
		return false, err
	}
	if br != nil {
		// Frames before any request: no JSON-RPC server sends those, and
		// they would be lost with gobwas's reader.
		ws.PutReader(br)
		return false, errors.New("websocket: the server sent data right after the handshake")
	}
	return deflateAccepted(hs.Extensions)
}

// wsMask is the mask of the client's frames; RFC 6455 wants it
// unpredictable, which matters for proxies, not for a load test.
var wsMask = [4]byte{0x5a, 0x17, 0xc3, 0x8e}

// appendWSHeader appends the header of a masked final text frame of n
// payload bytes.
func appendWSHeader(dst []byte, n int) []byte {
	dst = append(dst, 0x81)
	switch {
	case n < 126:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xffff:
		dst = append(dst, 0x80|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	return append(dst, wsMask[:]...)
}

// consumeWS reads the server frames in rbuf: replies are checked (those
// with RSV1 set inflated first, when the connection negotiated
// permessage-deflate), pings answered (into wbuf), a close ends the
// connection. It returns the bytes used; bad, when the connection must
// be dropped, is the kind of error that counts for what it had in flight
// (ErrWebSocket, or ErrEncoding for a message that does not inflate).
func (w *worker) consumeWS(in []byte) (used int, bad string) {
	for used < len(in) {
		b := in[used:]
		if len(b) < 2 {
			return used, ""
		}
		fin, op := b[0]&0x80 != 0, ws.OpCode(b[0]&0x0f)
		rsv1 := b[0]&0x40 != 0
		if b[1]&0x80 != 0 || b[0]&0x30 != 0 {
			return used, ErrWebSocket // servers never mask, nor use RSV2 or RSV3 unasked
		}
		if rsv1 && (!w.deflate || (op != ws.OpText && op != ws.OpBinary)) {
			return used, ErrWebSocket // RSV1: only a data message's first frame, once negotiated (RFC 7692 6)
		}
		n, hl := int64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return used, ""
			}
			n, hl = int64(binary.BigEndian.Uint16(b[2:4])), 4
		case 127:
			if len(b) < 10 {
				return used, ""
			}
			n, hl = int64(binary.BigEndian.Uint64(b[2:10])), 10
			if n < 0 || n > maxMessage {
				return used, ErrWebSocket
			}
		}
		if int64(len(b)-hl) < n {
			return used, ""
		}
		if op.IsControl() && (n > 125 || !fin) {
			return used, ErrWebSocket // RFC 6455 5.5: control frames are short and whole
		}
		payload := b[hl : hl+int(n)]
		used += hl + int(n)
		switch op {
		case ws.OpText, ws.OpBinary, ws.OpContinuation:
			if op != ws.OpContinuation {
				w.chunk = w.chunk[:0]
				w.chunkDeflated = rsv1
			}
			if fin && op != ws.OpContinuation {
				if !w.checkWS(payload, rsv1) {
					return used, ErrEncoding
				}
				continue
			}
			w.chunk = append(w.chunk, payload...)
			if len(w.chunk) > maxMessage {
				return used, ErrWebSocket
			}
			if fin && !w.checkWS(w.chunk, w.chunkDeflated) {
				return used, ErrEncoding
			}
		case ws.OpPing:
			w.pong = append(w.pong, 0x8a, 0x80|byte(len(payload)))
			w.pong = append(w.pong, wsMask[:]...)
			start := len(w.pong)
			w.pong = append(w.pong, payload...)
			ws.Cipher(w.pong[start:], wsMask, 0)
		case ws.OpPong:
		default: // close, or anything else
			return used, ErrWebSocket
		}
	}
	return used, ""
}

// checkWS checks one whole message, inflating it first when deflated;
// false when it does not inflate (its cause noted as ErrEncoding's): the
// connection must then be dropped.
func (w *worker) checkWS(msg []byte, deflated bool) bool {
	if deflated {
		var err error
		if msg, err = w.dec.inflate(msg); err != nil {
			w.note(ErrEncoding, err)
			return false
		}
		w.compressed++
	}
	w.checkStream(msg)
	return true
}
