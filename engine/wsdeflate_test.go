package engine_test

// Tests of WebSocket permessage-deflate (wsdeflate.go) over loopback
// sockets: gorilla/websocket with compression on, and frames written and
// read by hand to see RSV1 and the compressed bytes on the wire.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gorilla/websocket"
	"github.com/klauspost/compress/flate"

	"github.com/jetrpc/jetrpc/engine"
)

// deflateClient is a WebSocket client over a plain socket: it writes masked
// frames as told and reads frames with their RSV bits.
type deflateClient struct {
	c net.Conn
	r *bufio.Reader
}

// dialDeflateClient upgrades a connection to addr, offering ext (none when "")
// as Sec-WebSocket-Extensions; it returns the client and the extension
// the server answered.
func dialDeflateClient(t *testing.T, addr, ext string) (*deflateClient, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	if ext != "" {
		req += "Sec-WebSocket-Extensions: " + ext + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return &deflateClient{c, r}, resp.Header.Get("Sec-WebSocket-Extensions")
}

// send writes one masked frame, RSV1 set when rsv1.
func (w *deflateClient) send(t *testing.T, fin, rsv1 bool, op ws.OpCode, payload []byte) {
	t.Helper()
	h := ws.Header{Fin: fin, OpCode: op, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: int64(len(payload))}
	if rsv1 {
		h.Rsv = 4
	}
	var b bytes.Buffer
	_ = ws.WriteHeader(&b, h)
	p := append([]byte(nil), payload...)
	ws.Cipher(p, h.Mask, 0)
	b.Write(p)
	if _, err := w.c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// read reads one frame.
func (w *deflateClient) read(t *testing.T) (ws.Header, []byte) {
	t.Helper()
	_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	h, err := ws.ReadHeader(w.r)
	if err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(w.r, p); err != nil {
		t.Fatal(err)
	}
	return h, p
}

// readClose reads frames up to a close frame and returns its code.
func (w *deflateClient) readClose(t *testing.T) ws.StatusCode {
	t.Helper()
	for {
		h, p := w.read(t)
		if h.OpCode == ws.OpClose {
			code, _ := ws.ParseCloseFrameData(p)
			return code
		}
	}
}

// deflateMsg compresses msg as a permessage-deflate message.
func deflateMsg(t testing.TB, msg []byte) []byte {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestCompression)
	_, _ = fw.Write(msg)
	_ = fw.Flush()
	z := b.Bytes()
	if !bytes.HasSuffix(z, []byte{0, 0, 0xff, 0xff}) {
		t.Fatalf("no sync tail: %x", z[len(z)-4:])
	}
	return z[:len(z)-4]
}

// inflateMsg inflates a permessage-deflate message.
func inflateMsg(t testing.TB, z []byte) []byte {
	t.Helper()
	b, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(z), strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff"))))
	if err != nil {
		t.Fatalf("inflating: %v", err)
	}
	return b
}

const wsDeflateAnswer = "permessage-deflate;server_no_context_takeover;client_no_context_takeover"

// TestWSDeflate_negotiation: an offer the engine can meet is answered
// with both no_context_takeover parameters; one it cannot (a server
// window under 15 bits, an unknown parameter, another extension) is
// declined and the next one tried; with the option off nothing is.
func TestWSDeflate_negotiation(t *testing.T) {
	_, on, _ := startEngine(t, nil, engine.WithWSCompression(true))
	_, off, _ := startEngine(t, nil)
	cases := []struct {
		addr, offer, want string
	}{
		{on, "permessage-deflate", wsDeflateAnswer},
		{on, "permessage-deflate; client_max_window_bits", wsDeflateAnswer},
		{on, "permessage-deflate; client_max_window_bits=10; client_no_context_takeover", wsDeflateAnswer},
		{on, "permessage-deflate; server_max_window_bits=15; server_no_context_takeover", wsDeflateAnswer},
		{on, "permessage-deflate; server_max_window_bits=10", ""},
		{on, "permessage-deflate; server_max_window_bits=10, permessage-deflate; client_max_window_bits", wsDeflateAnswer},
		{on, "permessage-deflate; mystery=1", ""},
		{on, "permessage-deflate; server_max_window_bits=99", ""},
		{on, "x-webkit-deflate-frame", ""},
		{on, "", ""},
		{off, "permessage-deflate", ""},
		{off, "permessage-deflate; client_max_window_bits", ""},
	}
	for _, c := range cases {
		_, got := dialDeflateClient(t, c.addr, c.offer)
		if strings.ReplaceAll(got, " ", "") != c.want {
			t.Errorf("offer %q (on: %v): answered %q, want %q", c.offer, c.addr == on, got, c.want)
		}
	}
}

// TestWSDeflate_gorillaRoundTrips: gorilla/websocket with compression
// negotiates it, and calls, a batch and a 300 KB reply round-trip with
// its messages compressed both ways.
func TestWSDeflate_gorillaRoundTrips(t *testing.T) {
	_, addr, _ := startEngine(t, nil, engine.WithWSCompression(true))
	c := dialWS(t, addr, &websocket.Dialer{EnableCompression: true, HandshakeTimeout: 10 * time.Second})
	c.EnableWriteCompression(true)
	if got := wsCall(t, c, `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`); string(got) != `{"jsonrpc":"2.0","result":42,"id":1}` {
		t.Fatalf("add: %s", got)
	}
	batch := `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"echo","params":["x"],"id":2}]`
	if got := wsCall(t, c, batch); string(got) != `[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","result":["x"],"id":2}]` {
		t.Fatalf("batch: %s", got)
	}
	big := strings.Repeat(`{"block":12345,"hash":"0xabcdef0123456789"},`, 7000)
	msg := `{"jsonrpc":"2.0","method":"echo","params":[` + big + `1],"id":3}`
	want := `{"jsonrpc":"2.0","result":[` + big + `1],"id":3}`
	if got := wsCall(t, c, msg); string(got) != want {
		t.Fatalf("large echo: %d bytes, want %d", len(got), len(want))
	}
}

// TestWSDeflate_onTheWire: a reply of at least CompressionMinSize goes
// out with RSV1 set and inflates to the reply; a small one goes raw; a
// compressed request, in one frame or fragmented, is served.
func TestWSDeflate_onTheWire(t *testing.T) {
	_, addr, _ := startEngine(t, nil, engine.WithWSCompression(true))
	w, ext := dialDeflateClient(t, addr, "permessage-deflate; client_max_window_bits")
	if ext == "" {
		t.Fatal("not negotiated")
	}
	small := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	w.send(t, true, true, ws.OpText, deflateMsg(t, small))
	if h, p := w.read(t); h.Rsv != 0 || string(p) != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Fatalf("small reply: rsv %d %q", h.Rsv, p)
	}
	big := strings.Repeat("0123456789abcdef", 6400) // 100 KiB
	req := []byte(`{"jsonrpc":"2.0","method":"echo","params":["` + big + `"],"id":2}`)
	want := `{"jsonrpc":"2.0","result":["` + big + `"],"id":2}`
	z := deflateMsg(t, req)
	w.send(t, false, true, ws.OpText, z[:len(z)/2])
	w.send(t, true, false, ws.OpContinuation, z[len(z)/2:])
	h, p := w.read(t)
	if h.Rsv != 4 || h.OpCode != ws.OpText || len(p) >= len(want)/10 {
		t.Fatalf("large reply: rsv %d op %v, %d bytes on the wire", h.Rsv, h.OpCode, len(p))
	}
	if got := inflateMsg(t, p); string(got) != want {
		t.Fatalf("large reply inflates to %d bytes, want %d", len(got), len(want))
	}
	w.send(t, true, false, ws.OpText, req) // uncompressed, on the same connection
	if h, p := w.read(t); h.Rsv != 4 || string(inflateMsg(t, p)) != want {
		t.Fatalf("reply to a raw request: rsv %d", h.Rsv)
	}
}

// TestWSDeflate_pushesCompressed: subscription notifications of at least
// CompressionMinSize go out compressed.
func TestWSDeflate_pushesCompressed(t *testing.T) {
	_, addr, _ := startEngine(t, nil, engine.WithWSCompression(true), engine.WithCompressionMinSize(16))
	w, _ := dialDeflateClient(t, addr, "permessage-deflate")
	w.send(t, true, false, ws.OpText, []byte(`{"jsonrpc":"2.0","method":"clock_subscribe","params":[5],"id":1}`))
	seen := 0
	for seen < 3 {
		h, p := w.read(t)
		if h.Rsv == 0 && bytes.Contains(p, []byte(`"id":1}`)) {
			continue // the subscription's id: too short to shrink
		}
		if h.Rsv != 4 {
			t.Fatalf("raw message %q", p)
		}
		var m struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal(inflateMsg(t, p), &m); err != nil || m.Method != "clock_subscription" {
			t.Fatalf("%s: %v", inflateMsg(t, p), err)
		}
		seen++
	}
}

// TestWSDeflate_bomb: a 40 KB message that inflates to 40 MB closes the
// connection 1009 at the message limit.
func TestWSDeflate_bomb(t *testing.T) {
	e, addr, _ := startEngine(t, nil, engine.WithWSCompression(true), engine.WithMaxMessageSize(1<<20))
	w, _ := dialDeflateClient(t, addr, "permessage-deflate")
	bomb := deflateMsg(t, make([]byte, 40<<20))
	w.send(t, true, true, ws.OpText, bomb)
	if code := w.readClose(t); code != ws.StatusMessageTooBig {
		t.Fatalf("closed %d, want 1009", code)
	}
	if !waitClosed(w.c, 5*time.Second) {
		t.Fatal("connection left open")
	}
	if n := e.Stats().TooLarge; n == 0 {
		t.Fatal("not counted as too large")
	}
}

// TestWSDeflate_protocolErrors: RSV1 where it may not be — a connection
// that did not negotiate (the option on or off), a continuation frame, a
// control frame — closes 1002, and data that is not deflate 1007.
func TestWSDeflate_protocolErrors(t *testing.T) {
	_, on, _ := startEngine(t, nil, engine.WithWSCompression(true))
	_, off, _ := startEngine(t, nil)
	z := deflateMsg(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
	cases := []struct {
		name   string
		addr   string
		offer  string
		frames func(w *deflateClient)
		want   ws.StatusCode
	}{
		{"option off", off, "permessage-deflate", func(w *deflateClient) { w.send(t, true, true, ws.OpText, z) }, ws.StatusProtocolError},
		{"not offered", on, "", func(w *deflateClient) { w.send(t, true, true, ws.OpText, z) }, ws.StatusProtocolError},
		{"continuation", on, "permessage-deflate", func(w *deflateClient) {
			w.send(t, false, true, ws.OpText, z[:3])
			w.send(t, true, true, ws.OpContinuation, z[3:])
		}, ws.StatusProtocolError},
		{"ping", on, "permessage-deflate", func(w *deflateClient) { w.send(t, true, true, ws.OpPing, nil) }, ws.StatusProtocolError},
		{"rsv2", on, "permessage-deflate", func(w *deflateClient) {
			h := ws.Header{Fin: true, Rsv: 2, OpCode: ws.OpText, Masked: true, Length: 0}
			_ = ws.WriteHeader(w.c, h)
		}, ws.StatusProtocolError},
		{"not deflate", on, "permessage-deflate", func(w *deflateClient) { w.send(t, true, true, ws.OpText, []byte{0xff, 0xff, 0xff}) }, ws.StatusInvalidFramePayloadData},
	}
	for _, c := range cases {
		w, _ := dialDeflateClient(t, c.addr, c.offer)
		c.frames(w)
		if code := w.readClose(t); code != c.want {
			t.Errorf("%s: closed %d, want %d", c.name, code, c.want)
		}
	}
}
