package engine_test

// Tests of the WebSocket codec (ws.go) over loopback sockets, with
// gorilla/websocket and with frames written by hand.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// TestWS_fragmented: a message sent in many frames (gorilla's writer
// flushes a frame each time its small buffer fills) is gathered; a
// binary message is answered too (with a text message: TestWS_repliesAreText).
func TestWS_fragmented(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c := dialWS(t, tcp, &websocket.Dialer{WriteBufferSize: 64, HandshakeTimeout: 10 * time.Second})
	long := strings.Repeat("é", 5000) // multi-byte runes cut across frames
	msg := `{"jsonrpc":"2.0","method":"echo","params":["` + long + `"],"id":7}`
	got := wsCall(t, c, msg)
	if want := `{"jsonrpc":"2.0","result":["` + long + `"],"id":7}`; string(got) != want {
		t.Fatalf("got %.80s…", got)
	}
	// 1 MiB each way: 64-bit frame lengths.
	big := strings.Repeat("z", 1<<20)
	if got := wsCall(t, c, `{"jsonrpc":"2.0","method":"echo","params":["`+big+`"],"id":8}`); len(got) != len(big)+38 || !bytes.HasSuffix(got, []byte(`"],"id":8}`)) {
		t.Fatalf("1 MiB echo: %d bytes", len(got))
	}
	if err := c.WriteMessage(websocket.BinaryMessage, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, b, err := c.ReadMessage()
	if err != nil || typ != websocket.TextMessage || string(b) != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Fatalf("binary: %v %d %s", err, typ, b)
	}
}

// TestWS_repliesAreText: every reply and every push is a text message,
// whatever the opcode of the request — inline, on a worker, a batch, a
// busy answer — and a push that is not UTF-8 is refused by Send, not
// sent. Browsers hand a binary message to onmessage as a Blob, so that
// JSON.parse(ev.data) failed on the binary replies jetrpc used to send.
func TestWS_repliesAreText(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	sendErr := make(chan error, 1)
	handler.Register(tab, "pushbad", func(ctx context.Context, _ struct{}) (bool, error) {
		c := handler.ConnFrom(ctx)
		sendErr <- c.Send([]byte("\"\xff\""))
		return true, c.Send([]byte(`{"jsonrpc":"2.0","method":"ok"}`))
	}, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	c := dialWS(t, tcp, nil)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,   // inline
		`{"jsonrpc":"2.0","method":"sleep","params":[0],"id":2}`,   // on a worker
		`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}]`, // a batch
		`{"jsonrpc":"2.0","method":"nope","id":4}`,                 // an error
		`{"jsonrpc":"2.0","method":"pushbad","id":5}`,              // a push, then the reply
	} {
		for _, op := range []int{websocket.BinaryMessage, websocket.TextMessage} {
			if err := c.WriteMessage(op, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			want := 1
			if strings.Contains(msg, "pushbad") {
				want = 2
				if err := <-sendErr; !errors.Is(err, handler.ErrNotUTF8) {
					t.Fatalf("Send of a non-UTF-8 push: %v, want ErrNotUTF8", err)
				}
			}
			for range want {
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				typ, b, err := c.ReadMessage()
				if err != nil || typ != websocket.TextMessage || !utf8.Valid(b) {
					t.Fatalf("%s sent as %d: reply %v %d %q", msg, op, err, typ, b)
				}
			}
		}
	}
}

// TestWS_pingPong: the server answers pings with their payload, and pings
// a silent client.
func TestWS_pingPong(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithPingInterval(100*time.Millisecond))
	c := dialWS(t, tcp, nil)
	pong := make(chan string, 1)
	c.SetPongHandler(func(data string) error { pong <- data; return nil })
	pinged := make(chan struct{}, 10)
	c.SetPingHandler(func(data string) error {
		pinged <- struct{}{}
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	if err := c.WriteControl(websocket.PingMessage, []byte("hello"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	go func() { // control frames are handled while reading
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	select {
	case got := <-pong:
		if got != "hello" {
			t.Fatalf("pong payload %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no pong")
	}
	select {
	case <-pinged:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never pinged a silent client")
	}
}

// TestWS_idleWithoutPong: a client that answers nothing is pinged, then
// closed after the idle timeout with a close frame 1001. (Timeouts are
// checked once a second.)
func TestWS_idleWithoutPong(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithPingInterval(50*time.Millisecond),
		engine.WithTimeouts(2500*time.Millisecond, time.Minute, time.Minute))
	c, r := rawWS(t, tcp)
	var pings int
	for {
		op, payload, err := readFrame(r, c)
		if err != nil {
			t.Fatalf("after %d pings: %v", pings, err)
		}
		if op == 0x9 {
			pings++
			continue
		}
		if op != 0x8 || binary.BigEndian.Uint16(payload) != 1001 || pings == 0 {
			t.Fatalf("op %d payload %q after %d pings", op, payload, pings)
		}
		break
	}
	if !waitClosed(c, 10*time.Second) {
		t.Fatal("not closed after the close frame")
	}
}

// TestWS_closeHandshake: the server echoes the client's close code and
// closes the connection.
func TestWS_closeHandshake(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c := dialWS(t, tcp, nil)
	wsCall(t, c, sentinel)
	if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "bye")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := c.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4001 {
		t.Fatalf("want the close echoed with 4001, got %v", err)
	}
}

// TestWS_noPingAfterCloseFrame: no ping goes out after the close frame,
// even with a job still in flight.
//
// A ping went out after the close frame while a job was still in flight (found in a review).
func TestWS_noPingAfterCloseFrame(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "stubborn", func(context.Context, []int) (int, error) {
		time.Sleep(2500 * time.Millisecond) // deaf to the cancelled context: stays in flight
		return 0, nil
	})
	_, tcp, _ := startEngine(t, tab, engine.WithPingInterval(100*time.Millisecond))
	c, r := rawWS(t, tcp)
	var w []byte
	w = append(w, frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"stubborn","params":[],"id":1}`), true)...)
	w = append(w, frame(true, 8, []byte{0x03, 0xe8}, true)...)
	if _, err := c.Write(w); err != nil {
		t.Fatal(err)
	}
	var ops []byte
	for {
		op, _, err := readFrame(r, c)
		if err != nil {
			break
		}
		ops = append(ops, op)
	}
	if len(ops) != 1 || ops[0] != 0x8 {
		t.Fatalf("want only the close frame, got opcodes %x", ops)
	}
}

// TestWS_sendAfterCloseFrameFails: once a WebSocket's close frame is
// out, Send fails with ErrConnClosed and the connection's context is done.
//
// Send returned nil on a WebSocket whose close frame had gone out, and the message was dropped (found in a review).
func TestWS_sendAfterCloseFrameFails(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	conns := make(chan handler.Conn, 1)
	handler.Register(tab, "hold", func(ctx context.Context, _ []int) (int, error) {
		conns <- handler.ConnFrom(ctx)
		time.Sleep(500 * time.Millisecond)
		return 0, nil
	})
	_, tcp, _ := startEngine(t, tab)
	c, r := rawWS(t, tcp)
	_, _ = c.Write(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"hold","params":[],"id":1}`), true))
	hc := <-conns
	_, _ = c.Write(frame(true, 8, []byte{0x03, 0xe8}, true))
	if op, _, err := readFrame(r, c); err != nil || op != 8 {
		t.Fatalf("want close frame: %v %x", err, op)
	}
	if err := hc.Send([]byte(`{"jsonrpc":"2.0","method":"x"}`)); !errors.Is(err, handler.ErrConnClosed) {
		t.Fatalf("Send after the close frame: %v", err)
	}
	if hc.Context().Err() == nil {
		t.Fatal("the connection's context (and its subscriptions) outlived the close frame")
	}
}

// TestWS_protocolErrors: frames a server must refuse, each answered by
// the right close code.
func TestWS_protocolErrors(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1<<10))
	add := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	cases := []struct {
		name  string
		bytes []byte
		code  uint16
	}{
		{"unmasked", frame(true, 0x1, add, false), 1002},
		{"bad-utf8", frame(true, 0x1, []byte("{\"x\":\"\xff\xfe\"}"), true), 1007},
		{"rsv-bits", append([]byte{0xC1}, frame(true, 0x1, add, true)[1:]...), 1002},
		{"reserved-opcode", frame(true, 0x3, add, true), 1002},
		{"continuation-first", frame(true, 0x0, add, true), 1002},
		{"fragmented-ping", frame(false, 0x9, nil, true), 1002},
		{"long-ping", frame(true, 0x9, make([]byte, 126), true), 1002},
		{"bad-close-code", frame(true, 0x8, []byte{0x03, 0xed}, true), 1002}, // 1005 may not be sent
		{"close-1-byte", frame(true, 0x8, []byte{0x03}, true), 1002},
		{"new-message-inside-fragments", append(frame(false, 0x1, add[:10], true), frame(true, 0x1, add, true)...), 1002},
		// Only a header: a 10 MiB frame is refused before its payload.
		{"too-big-header-only", frame(true, 0x1, nil, true)[:0:0], 1009},
		{"too-big-fragments", append(frame(false, 0x1, make([]byte, 600), true), frame(true, 0x0, make([]byte, 600), true)...), 1009},
	}
	big := []byte{0x81, 0x80 | 127}
	big = binary.BigEndian.AppendUint64(big, 10<<20)
	big = append(big, 1, 2, 3, 4)
	cases[10].bytes = big
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, r := rawWS(t, tcp)
			if _, err := c.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			expectClose(t, r, c, tc.code)
		})
	}
}

// TestWS_controlInsideFragments: a ping between the fragments of a
// message is answered, and the message still arrives whole.
func TestWS_controlInsideFragments(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c, r := rawWS(t, tcp)
	msg := []byte(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":9}`)
	var b []byte
	b = append(b, frame(false, 0x1, msg[:5], true)...)
	b = append(b, frame(true, 0x9, []byte("p"), true)...)
	b = append(b, frame(false, 0x0, msg[5:20], true)...)
	b = append(b, frame(true, 0x0, msg[20:], true)...)
	// One byte at a time: every header and payload is split.
	for i := range b {
		if _, err := c.Write(b[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	op, p, err := readFrame(r, c)
	if err != nil || op != 0xA || string(p) != "p" {
		t.Fatalf("pong: %v %d %q", err, op, p)
	}
	op, p, err = readFrame(r, c)
	if err != nil || op != 0x1 || string(p) != `{"jsonrpc":"2.0","result":42,"id":9}` {
		t.Fatalf("reply: %v %d %q", err, op, p)
	}
}

// TestWS_handshakeRefusals: the wrong path, a bad version, a forbidden
// origin.
func TestWS_handshakeRefusals(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithCORS("https://good.example"))
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	if _, resp, err := d.Dial("ws://"+tcp+"/", http.Header{"Origin": {"https://evil.example"}}); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("forbidden origin: %v %v", err, resp)
	}
	c, _, err := d.Dial("ws://"+tcp+"/", http.Header{"Origin": {"https://GOOD.example"}})
	if err != nil {
		t.Fatalf("allowed origin: %v", err)
	}
	c.Close()
	if _, resp, err := d.Dial("ws://"+tcp+"/elsewhere", nil); err == nil || resp == nil || resp.StatusCode != 405 {
		t.Fatalf("other path: %v %v", err, resp)
	}
	resps := rawHTTP(t, tcp, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n", 1)
	if len(resps) != 1 || resps[0].StatusCode != 426 {
		t.Fatalf("bad version: %v", resps)
	}
}

// TestWS_manyConnections: 1,000 WebSocket connections open at once, each
// making calls.
func TestWS_manyConnections(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	const n = 1000
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		conns[i] = dialWS(t, tcp, nil)
	}
	if got := e.Conns(); got < n {
		t.Fatalf("%d connections open, want %d", got, n)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":%d}`, i, i)
			if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				errs <- err
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, b, err := c.ReadMessage()
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, i+1, i); err != nil || string(b) != want {
				errs <- fmt.Errorf("conn %d: %v %s", i, err, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestWS_blockingAndPipelined: messages on workers and inline ones on
// one WebSocket; every reply arrives.
func TestWS_blockingAndPipelined(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c := dialWS(t, tcp, nil)
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":"slow"}`)); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"add","params":[%d,0],"id":%d}`, i, i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for i := range 21 {
		var r struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(wsRead(t, c), &r); err != nil {
			t.Fatal(err)
		}
		seen[string(r.ID)] = true
		if string(r.ID) == `"slow"` && i != 20 {
			t.Fatalf("the slow reply came at %d: the inline ones waited for it", i)
		}
	}
	if len(seen) != 21 {
		t.Fatalf("replies %v", seen)
	}
}

// TestWS_stop: Stop sends WebSocket clients a close frame 1001 after the
// replies in flight, and closes the connections.
func TestWS_stop(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	c := dialWS(t, tcp, nil)
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[100],"id":1}`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let it reach a worker
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- e.Stop(ctx)
	}()
	if got := wsRead(t, c); string(got) != `{"jsonrpc":"2.0","result":100,"id":1}` {
		t.Fatalf("in-flight reply: %s", got)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := c.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("want close 1001, got %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// TestWS_incompleteFrame: a frame left incomplete past the read timeout
// is answered with close 1008 and the connection closed.
func TestWS_incompleteFrame(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithTimeouts(time.Minute, 300*time.Millisecond, time.Minute))
	c, r := rawWS(t, tcp)
	f := frame(true, 0x1, []byte(sentinel), true)
	if _, err := c.Write(f[:len(f)-5]); err != nil {
		t.Fatal(err)
	}
	expectClose(t, r, c, 1008)
}

// TestWS_replyHeadersInPlace: an inline reply is written behind a frame
// header reserved from the loop's last reply length and moved only when
// its length needs another header size (2, 4 or 10 bytes): replies that
// grow and shrink across the 125/126 and 65535/65536 boundaries all
// frame right.
func TestWS_replyHeadersInPlace(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c := dialWS(t, tcp, nil)
	const overhead = len(`{"jsonrpc":"2.0","result":[""],"id":1}`)
	for _, n := range []int{1, 125, 126, 1, 65535, 65536, 70000, 125, 65536, 2, 126} {
		s := strings.Repeat("y", max(0, n-overhead)) // a reply of n bytes, or the smallest
		got := wsCall(t, c, `{"jsonrpc":"2.0","method":"echo","params":["`+s+`"],"id":1}`)
		if want := `{"jsonrpc":"2.0","result":["` + s + `"],"id":1}`; string(got) != want {
			t.Fatalf("reply of %d bytes: got %d bytes %.40q…", len(want), len(got), got)
		}
	}
}
