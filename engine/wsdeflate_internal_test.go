package engine

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/klauspost/compress/flate"
)

// wsDeflateFakeConn is a fake connection of an engine with
// WSCompression on, past a handshake that offered offer ("" none).
func wsDeflateFakeConn(t testing.TB, offer string, opts ...Option) (*conn, *fakeConn) {
	tab := handler.NewTable()
	demo.Register(tab)
	return wsDeflateFakeConnOf(t, tab, offer, opts...)
}

// wsDeflateFakeConnOf is wsDeflateFakeConn over tab.
func wsDeflateFakeConnOf(t testing.TB, tab *handler.Table, offer string, opts ...Option) (*conn, *fakeConn) {
	cs, fc := newFakeConnOf(t, tab, append([]Option{WithWSCompression(true)}, opts...)...)
	hs := wsHandshake
	if offer != "" {
		hs = strings.Replace(hs, "\r\n\r\n", "\r\nSec-WebSocket-Extensions: "+offer+"\r\n\r\n", 1)
	}
	fc.in = []byte(hs)
	cs.traffic()
	if cs.codec == nil || cs.codec.transport() != transportWebSocket || !bytes.HasPrefix(fc.out, []byte("HTTP/1.1 101 ")) {
		t.Fatalf("handshake: codec %T, out %q", cs.codec, fc.out)
	}
	if got := cs.codec.(*wsCodec).deflate; got != (offer != "") {
		t.Fatalf("deflate negotiated: %v, out %q", got, fc.out)
	}
	fc.out = fc.out[:0]
	return cs, fc
}

// compressedFrame builds a masked client frame of msg compressed, RSV1
// set; split > 0 fragments it there.
func compressedFrame(t testing.TB, msg []byte, split int) []byte {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestSpeed)
	_, _ = fw.Write(msg)
	_ = fw.Flush()
	z := bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
	if split <= 0 || split >= len(z) {
		f := clientFrame(true, ws.OpText, z)
		f[0] |= 0x40
		return f
	}
	f := clientFrame(false, ws.OpText, z[:split])
	f[0] |= 0x40
	return append(f, clientFrame(true, ws.OpContinuation, z[split:])...)
}

// deflateFrames splits server output into frames, inflating those with
// RSV1 set; compressed reports which were.
func deflateFrames(t testing.TB, out []byte) (payloads [][]byte, compressed []bool) {
	var z compressor
	for len(out) > 0 {
		h, n, err := readWSHeader(out)
		if err != nil || h.Masked || !h.Fin || h.Rsv&^4 != 0 || len(out) < n+int(h.Length) {
			t.Fatalf("bad server frame at %q", out)
		}
		p := out[n : n+int(h.Length)]
		if h.Rsv == 4 {
			var err error
			if p, err = z.inflateMessage(p, 1<<30); err != nil {
				t.Fatalf("inflating: %v", err)
			}
			p = bytes.Clone(p)
		}
		payloads, compressed = append(payloads, p), append(compressed, h.Rsv == 4)
		out = out[n+int(h.Length):]
	}
	return payloads, compressed
}

// TestWSCodec_sizeUnchanged: permessage-deflate's flags live in padding
// the codec had; a WebSocket connection is no larger for it.
func TestWSCodec_sizeUnchanged(t *testing.T) {
	if n := unsafe.Sizeof(wsCodec{}); n != 56 {
		t.Fatalf("wsCodec is %d bytes, was 56", n)
	}
}

// TestWSDeflate_bombBounded: inflating a message never holds more than
// the limit and one byte, however far it would inflate.
func TestWSDeflate_bombBounded(t *testing.T) {
	var z compressor
	bomb := deflateMessageOf(make([]byte, 64<<20))
	for _, limit := range []int{1, 1000, 1 << 20} {
		dst, err := z.inflateMessage(bomb, limit)
		if err != errInflatedTooLarge || len(dst) > limit+1 || cap(dst) > 2*limit+4<<10 {
			t.Fatalf("limit %d: err %v, len %d cap %d", limit, err, len(dst), cap(dst))
		}
	}
	msg := []byte(strings.Repeat("jetrpc ", 1000))
	if dst, err := z.inflateMessage(deflateMessageOf(msg), len(msg)); err != nil || !bytes.Equal(dst, msg) {
		t.Fatalf("at the limit: %v, %d bytes", err, len(dst))
	}
	if _, err := z.inflateMessage(deflateMessageOf(msg), len(msg)-1); err != errInflatedTooLarge {
		t.Fatalf("one byte over the limit: %v", err)
	}
}

// deflateMessageOf compresses msg with a compressor of its own.
func deflateMessageOf(msg []byte) []byte {
	var z compressor
	return bytes.Clone(z.deflateMessage(msg))
}

// TestWSDeflate_workerRepliesAndPushes: a worker's reply and a server
// message of at least CompressionMinSize go out compressed, and a
// smaller one raw.
func TestWSDeflate_workerRepliesAndPushes(t *testing.T) {
	cs, fc := wsDeflateFakeConn(t, "permessage-deflate", WithCompressionMinSize(64))
	long := []byte(`{"jsonrpc":"2.0","method":"tick","params":["` + strings.Repeat("abcd", 100) + `"]}`)
	short := []byte(`{"jsonrpc":"2.0","method":"tick","params":[1]}`)
	for _, m := range [][]byte{long, short} {
		if err := cs.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	cs.traffic()
	ps, zs := deflateFrames(t, fc.out)
	if len(ps) != 2 || !bytes.Equal(ps[0], long) || !zs[0] || !bytes.Equal(ps[1], short) || zs[1] {
		t.Fatalf("%q %v", ps, zs)
	}
	fc.out = fc.out[:0]
	j := &job{out: bytes.Clone(long)} // the job owns it: release pools it
	fc.out = cs.codec.reply(cs, fc.out, j)
	if ps, zs := deflateFrames(t, fc.out); len(ps) != 1 || !bytes.Equal(ps[0], long) || !zs[0] {
		t.Fatalf("worker reply %q %v", ps, zs)
	}
}

// FuzzWSDeflateFrames feeds arbitrary bytes to a WebSocket connection
// that negotiated permessage-deflate: the server never panics and writes only well-formed unmasked frames, those with
// RSV1 set inflating.
func FuzzWSDeflateFrames(f *testing.F) {
	add := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	f.Add(compressedFrame(f, add, 0))
	f.Add(compressedFrame(f, add, 5))
	f.Add(compressedFrame(f, bytes.Repeat(add, 40), 0))
	f.Add(compressedFrame(f, make([]byte, 1<<20), 0))
	f.Add(append(clientFrame(true, ws.OpPing, []byte("x")), compressedFrame(f, add, 0)...))
	f.Add([]byte{0xc1, 0x83, 0, 0, 0, 0, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, fc := wsDeflateFakeConn(t, "permessage-deflate")
		cs.e.opts.MaxMessageSize = 1 << 16
		fc.in = append([]byte(nil), data...)
		cs.traffic()
		deflateFrames(t, fc.out)
		cs.release()
	})
}
