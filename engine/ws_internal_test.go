package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/gobwas/ws"
)

const wsHandshake = "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

// clientFrame builds a masked client frame.
func clientFrame(fin bool, op ws.OpCode, payload []byte) []byte {
	b := []byte{byte(op)}
	if fin {
		b[0] |= 0x80
	}
	switch l := len(payload); {
	case l < 126:
		b = append(b, 0x80|byte(l))
	case l <= 0xffff:
		b = append(b, 0x80|126, byte(l>>8), byte(l))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(l))
	}
	mask := [4]byte{0x11, 0x22, 0x33, 0x44}
	b = append(b, mask[:]...)
	start := len(b)
	b = append(b, payload...)
	ws.Cipher(b[start:], mask, 0)
	return b
}

// wsFakeConn is a fake connection past the WebSocket handshake.
func wsFakeConn(t testing.TB) (*conn, *fakeConn) {
	cs, fc := newFakeConn(t)
	fc.in = []byte(wsHandshake)
	cs.traffic()
	if cs.codec == nil || cs.codec.transport() != transportWebSocket || !bytes.HasPrefix(fc.out, []byte("HTTP/1.1 101 ")) {
		t.Fatalf("handshake: codec %T, out %q", cs.codec, fc.out)
	}
	fc.out = fc.out[:0]
	return cs, fc
}

// serverFrames splits server output into frames, checking each header.
func serverFrames(t testing.TB, out []byte) (ops []ws.OpCode, payloads [][]byte) {
	for len(out) > 0 {
		h, n, err := readWSHeader(out)
		if err != nil || h.Masked || !h.Fin || h.Rsv != 0 || len(out) < n+int(h.Length) {
			t.Fatalf("bad server frame at %q", out)
		}
		ops = append(ops, h.OpCode)
		payloads = append(payloads, out[n:n+int(h.Length)])
		out = out[n+int(h.Length):]
	}
	return ops, payloads
}

// TestWS_pushFramed: server messages go out as text frames after the
// replies already due, and Send on HTTP is refused.
func TestWS_pushFramed(t *testing.T) {
	cs, fc := wsFakeConn(t)
	if err := cs.Send([]byte(`{"jsonrpc":"2.0","method":"n","params":[1]}`)); err != nil {
		t.Fatal(err)
	}
	if fc.wakes != 1 {
		t.Fatalf("%d wakes", fc.wakes)
	}
	fc.in = clientFrame(true, ws.OpText, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`))
	cs.traffic()
	ops, ps := serverFrames(t, fc.out)
	if len(ops) != 2 || ops[0] != ws.OpText || string(ps[0]) != `{"jsonrpc":"2.0","method":"n","params":[1]}` || string(ps[1]) != `{"jsonrpc":"2.0","result":2,"id":1}` {
		t.Fatalf("%v %q", ops, ps)
	}
	h, _ := newFakeConn(t)
	h.use(newHTTPCodec())
	if err := h.Send([]byte(`{}`)); err == nil {
		t.Fatal("Send on HTTP accepted")
	}
}

// FuzzWSFrames feeds arbitrary bytes, in two reads, to a WebSocket
// connection past its handshake: the server never panics, consumes what
// it reads, writes only well-formed unmasked frames, and parses every
// complete frame header exactly as gobwas/ws does.
func FuzzWSFrames(f *testing.F) {
	add := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	f.Add(clientFrame(true, ws.OpText, add), 3)
	f.Add(append(clientFrame(false, ws.OpText, add[:7]), clientFrame(true, ws.OpContinuation, add[7:])...), 9)
	f.Add(clientFrame(true, ws.OpPing, []byte("x")), 1)
	f.Add(clientFrame(true, ws.OpClose, []byte{3, 232, 'b'}), 0)
	f.Add([]byte{0x81, 0xff, 0, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 4}, 5)
	f.Add(clientFrame(true, ws.OpText, []byte("\xff")), 2)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		// Differential: the header parser against gobwas/ws.
		switch h, n, err := readWSHeader(data); err {
		case nil:
			if g, gerr := ws.ReadHeader(bytes.NewReader(data[:n])); gerr != nil || g != h {
				t.Fatalf("header %+v, gobwas %+v %v", h, g, gerr)
			}
		case ws.ErrHeaderLengthMSB:
			// Refused as soon as the length is read; gobwas wants the mask
			// key too before it says so.
			full := append(append([]byte(nil), data[:10]...), 0, 0, 0, 0)
			if _, gerr := ws.ReadHeader(bytes.NewReader(full)); !errors.Is(gerr, ws.ErrHeaderLengthMSB) {
				t.Fatalf("MSB set for us, gobwas says %v", gerr)
			}
		default:
			if len(data) >= 14 {
				t.Fatalf("a 14-byte prefix not read as a header: %x", data[:14])
			}
			if _, gerr := ws.ReadHeader(bytes.NewReader(data)); gerr == nil {
				t.Fatalf("gobwas read a header we call incomplete: %x", data)
			}
		}

		cs, fc := wsFakeConn(t)
		cs.e.opts.MaxMessageSize = 1 << 16
		if split < 0 || split > len(data) {
			split = len(data) / 2
		}
		fc.in = append([]byte(nil), data[:split]...)
		cs.traffic()
		rest := append(append([]byte(nil), fc.in...), data[split:]...)
		if cs.closing != notClosing {
			rest = nil
		}
		fc.in = rest
		cs.traffic()
		serverFrames(t, fc.out)
		cs.release()
	})
}
