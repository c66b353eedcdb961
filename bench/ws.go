package bench

// NOTE: the WebSocket client side of a load test. The handshake is done
// on the blocking net.Conn right after dialing (connection setup is not
// measured); requests then go out as masked text frames, appended to the
// write buffer like any other request, and replies are read as frames
// from the read buffer — no allocation per request.

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/gobwas/ws"
)

// handshakeWS upgrades nc to a WebSocket at the target's path.
func handshakeWS(nc net.Conn, t *target, timeout time.Duration) error {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := "GET " + t.path + " HTTP/1.1\r\nHost: " + t.host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	_ = nc.SetDeadline(time.Now().Add(timeout))
	defer nc.SetDeadline(time.Time{})
	if _, err := nc.Write([]byte(req)); err != nil {
		return err
	}
	// Read the response byte by byte up to its blank line, so that no
	// frame behind it is swallowed.
	br := bufio.NewReaderSize(oneByteReader{nc}, 16)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		return errors.New("websocket handshake refused: " + resp.Status)
	}
	return nil
}

// oneByteReader reads at most one byte per call.
type oneByteReader struct{ c net.Conn }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.c.Read(p)
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

// consumeWS reads the server frames in rbuf: replies are checked, pings
// answered (into wbuf), a close ends the connection. It returns the bytes
// used; bad is set when the connection must be dropped.
func (w *worker) consumeWS(in []byte) (used int, bad bool) {
	for used < len(in) {
		b := in[used:]
		if len(b) < 2 {
			return used, false
		}
		fin, op := b[0]&0x80 != 0, ws.OpCode(b[0]&0x0f)
		if b[1]&0x80 != 0 || b[0]&0x70 != 0 {
			return used, true // servers never mask, nor use RSV bits unasked
		}
		n, hl := int64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return used, false
			}
			n, hl = int64(binary.BigEndian.Uint16(b[2:4])), 4
		case 127:
			if len(b) < 10 {
				return used, false
			}
			n, hl = int64(binary.BigEndian.Uint64(b[2:10])), 10
			if n < 0 || n > 64<<20 {
				return used, true
			}
		}
		if int64(len(b)-hl) < n {
			return used, false
		}
		payload := b[hl : hl+int(n)]
		used += hl + int(n)
		switch op {
		case ws.OpText, ws.OpBinary, ws.OpContinuation:
			if op != ws.OpContinuation {
				w.chunk = w.chunk[:0]
			}
			if fin && op != ws.OpContinuation {
				w.checkStream(payload)
				continue
			}
			w.chunk = append(w.chunk, payload...)
			if fin {
				w.checkStream(w.chunk)
			}
		case ws.OpPing:
			w.pong = append(w.pong, 0x8a, 0x80|byte(len(payload)))
			w.pong = append(w.pong, wsMask[:]...)
			start := len(w.pong)
			w.pong = append(w.pong, payload...)
			ws.Cipher(w.pong[start:], wsMask, 0)
		case ws.OpPong:
		default: // close, or anything else
			return used, true
		}
	}
	return used, false
}
