package engine_test

// NOTE: the helpers shared by the engine's external tests. startEngine
// serves on a TCP and a Unix listener on loopback; the clients speak each
// protocol: a newline-delimited stream (dialStream), raw HTTP bytes
// (rawHTTP, rawExchange, post, bodyOf), WebSocket through gorilla (dialWS,
// wsCall, wsRead) and by hand for frames no library would send (rawWS,
// frame, readFrame, expectClose); waits on the server (waitClosed,
// waitConns); and a dialer whose replies back up quickly
// (smallReceiveBuffer).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// bigReplies is the demo table with replies up to 32 MiB, for tests of
// messages larger than the default reply limit.
func bigReplies() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithMaxResponseSize(32<<20, 0))
	demo.Register(tab)
	return tab
}

// startEngine serves the demo methods on a TCP and a Unix listener.
func startEngine(t testing.TB, tab *handler.Table, opts ...engine.Option) (*engine.Engine, string, string) {
	t.Helper()
	if tab == nil {
		tab = handler.NewTable(handler.WithLogger(quiet()))
		demo.Register(tab)
	}
	sock := filepath.Join(t.TempDir(), "rpc.sock")
	e, _ := enginetest.Start(t, tab, append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0", "unix://"+sock)}, opts...)...)
	addrs := e.Addrs()
	return e, addrs[0].String(), addrs[1].String()
}

// streamClient is a newline-delimited JSON client.
type streamClient struct {
	c net.Conn
	r *bufio.Reader
}

func dialStream(t testing.TB, network, addr string) *streamClient {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &streamClient{c: c, r: bufio.NewReaderSize(c, 1<<16)}
}

func (s *streamClient) send(t testing.TB, msg []byte) {
	t.Helper()
	if _, err := s.c.Write(append(append([]byte(nil), msg...), '\n')); err != nil {
		t.Fatal(err)
	}
}

func (s *streamClient) line(t testing.TB) []byte {
	t.Helper()
	_ = s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := s.r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading a reply: %v (got %q)", err, l)
	}
	return l
}

const sentinel = `{"jsonrpc":"2.0","method":"add","params":[20,22],"id":"sentinel"}`

// rawHTTP sends raw bytes on a new connection and reads all responses
// until the server closes or n responses were read.
func rawHTTP(t testing.TB, addr string, req string, n int) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var out []*http.Response
	for len(out) < n {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		out = append(out, resp)
	}
	return out
}

func bodyOf(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

func post(body string, extra string) string {
	return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra + "Content-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
}

// rawExchange writes req on a fresh connection and returns all it reads
// until the server closes or one second passes.
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, req)
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	got, _ := io.ReadAll(c)
	return string(got)
}

// waitClosed reports whether the server closes c within d.
func waitClosed(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 1<<16)
	for {
		if _, err := c.Read(buf); err != nil {
			return err == io.EOF || strings.Contains(err.Error(), "reset")
		}
	}
}

// waitConns waits until e has n connections open.
func waitConns(t *testing.T, e *engine.Engine, n int) {
	t.Helper()
	for i := 0; e.Conns() != n; i++ {
		if i == 300 {
			t.Fatalf("%d connections open, want %d", e.Conns(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// smallReceiveBuffer dials with a 4 KiB receive buffer set before the
// handshake (shrinking it afterwards confuses TCP's window and stalls the
// connection in zero-window probes), so that replies back up quickly.
func smallReceiveBuffer() *net.Dialer {
	return &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
}

// dialWS opens a WebSocket with gorilla/websocket, a client the engine
// does not share code with.
func dialWS(t testing.TB, addr string, d *websocket.Dialer) *websocket.Conn {
	t.Helper()
	if d == nil {
		d = &websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	}
	c, resp, err := d.Dial("ws://"+addr+"/", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wsCall(t testing.TB, c *websocket.Conn, msg string) []byte {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	return wsRead(t, c)
}

func wsRead(t testing.TB, c *websocket.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	return b
}

// rawWS handshakes by hand and returns the connection, for frames that
// no library would send.
func rawWS(t testing.TB, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("handshake: %v %+v", err, resp)
	}
	return c, r
}

// frame builds a client frame; masked with a fixed key when mask is set.
func frame(fin bool, op byte, payload []byte, mask bool) []byte {
	b := []byte{op}
	if fin {
		b[0] |= 0x80
	}
	var m byte
	if mask {
		m = 0x80
	}
	switch l := len(payload); {
	case l < 126:
		b = append(b, m|byte(l))
	case l <= 0xffff:
		b = append(b, m|126, byte(l>>8), byte(l))
	default:
		b = append(b, m|127)
		b = binary.BigEndian.AppendUint64(b, uint64(l))
	}
	if !mask {
		return append(b, payload...)
	}
	key := [4]byte{1, 2, 3, 4}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i%4])
	}
	return b
}

// readFrame reads one server frame, which must be unmasked.
func readFrame(r *bufio.Reader, c net.Conn) (op byte, payload []byte, err error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var h [2]byte
	if _, err = io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	if h[1]&0x80 != 0 {
		return 0, nil, fmt.Errorf("a masked server frame")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var x [2]byte
		_, err = io.ReadFull(r, x[:])
		n = uint64(binary.BigEndian.Uint16(x[:]))
	case 127:
		var x [8]byte
		_, err = io.ReadFull(r, x[:])
		n = binary.BigEndian.Uint64(x[:])
	}
	if err != nil {
		return 0, nil, err
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(r, payload)
	return h[0] & 0x0f, payload, err
}

// expectClose reads frames until a close frame and checks its code.
func expectClose(t *testing.T, r *bufio.Reader, c net.Conn, code uint16) {
	t.Helper()
	for {
		op, p, err := readFrame(r, c)
		if err != nil {
			t.Fatalf("want close %d: %v", code, err)
		}
		if op != 0x8 {
			continue
		}
		if len(p) < 2 || binary.BigEndian.Uint16(p) != code {
			t.Fatalf("close frame %q, want code %d", p, code)
		}
		if !waitClosed(c, 10*time.Second) {
			t.Fatal("connection left open after the close frame")
		}
		return
	}
}

// dialSending opens n connections to addr with small receive buffers,
// sends req on each, and returns them, closed when the test ends: n
// clients that asked and read nothing.
func dialSending(t *testing.T, addr string, n int, req string) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := smallReceiveBuffer().Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}
