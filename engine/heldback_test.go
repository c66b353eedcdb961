package engine

// Held-back connections (TCP back-pressure, the output budget) over real
// sockets on 127.0.0.1: what happens when their clients read again, send
// meanwhile, half-close or leave.

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/panjf2000/gnet/v2"
)

// startInternal starts an engine of the demo table on 127.0.0.1 with
// opts; stopped (10 s at most) when the test ends.
func startInternal(t *testing.T, opts ...Option) (*Engine, string) {
	t.Helper()
	opts = append([]Option{WithAddrs("tcp://127.0.0.1:0"), WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	e := New(demoTable(), opts...)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e, e.Addrs()[0].String()
}

// startHeldBack is startInternal with 16 KiB kernel buffers on the
// sockets the engine accepts, so that unsent replies reach gnet's
// outbound buffer (and the pause) quickly instead of the megabytes
// loopback autotuning allows.
func startHeldBack(t *testing.T, opts ...Option) (*Engine, string) {
	t.Helper()
	e, addr := startInternal(t, opts...)
	setServerBufs(t, e, 16<<10)
	return e, addr
}

// setServerBufs gives the sockets e accepts from now on kernel buffers
// of size bytes each way (accepted sockets inherit the listener's).
func setServerBufs(t *testing.T, e *Engine, size int) {
	t.Helper()
	for _, ln := range e.listeners {
		rc, err := ln.(syscall.Conn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		_ = rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, size)
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
		})
	}
}

// dialSmall dials addr with 4 KiB kernel buffers (smallBufs); closed when
// the test ends.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := smallBufs.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// gateState reports, from the loops, whether each server connection's
// socket is left unread (the gate is off).
func gateState(e *Engine) []bool {
	e.mu.Lock()
	cs := make([]*conn, 0, len(e.conns))
	for c := range e.conns {
		cs = append(cs, c)
	}
	e.mu.Unlock()
	got := make(chan bool, len(cs))
	for _, c := range cs {
		if c.gc.Wake(func(gnet.Conn, error) error { got <- c.gate.off; return nil }) != nil {
			got <- false
		}
	}
	var out []bool
	for range cs {
		select {
		case off := <-got:
			out = append(out, off)
		case <-time.After(5 * time.Second):
			return out
		}
	}
	return out
}

// waitGated waits until the server's only connection is held back in the
// kernel (its gate off).
func waitGated(t *testing.T, e *Engine) {
	t.Helper()
	for i := 0; ; i++ {
		if s := gateState(e); len(s) == 1 && s[0] {
			return
		}
		if i == 500 {
			t.Fatal("the connection was never held back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sleepMsg(id, ms int) string {
	return `{"jsonrpc":"2.0","method":"sleep","params":[` + strconv.Itoa(ms) + `],"id":` + strconv.Itoa(id) + `}`
}

func addMsg(id int) string {
	return `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":` + strconv.Itoa(id) + `}`
}

// TestHeldBack_halfClosedClientGetsItsLastReply: a client that half-closes
// after a request it sent while held back gets that request's reply.
//
// The pause of the call before skipped the request that came with the flush, and the EOF then dropped it (found in a review).
func TestHeldBack_halfClosedClientGetsItsLastReply(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("z", 200<<10) + `"],"id":"big"}`
	for _, proto := range []string{"stream", "http"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			e, addr := startHeldBack(t, WithMaxPendingOutput(16<<10))
			c := dialSmall(t, addr)
			frame := func(m string) string { return m + "\n" }
			if proto == "http" {
				frame = httpPost
			}
			_, _ = io.WriteString(c, frame(big))
			waitGated(t, e) // the reply backs up: held back
			_, _ = io.WriteString(c, frame(addMsg(7)))
			_ = c.(*net.TCPConn).CloseWrite()
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(c)
			if !strings.Contains(string(got), `"id":"big"`) || !strings.Contains(string(got), `"result":3`) {
				t.Errorf("%s: the server closed after %d bytes without the reply to the request sent while held back (read error %v)", proto, len(got), err)
			}
		})
	}
}

// TestHeldBack_webSocketClientGoneIsClosed: a WebSocket client that
// leaves while its connection is held back (at MaxInFlight) is closed,
// and its calls' context cancelled: EPOLLRDHUP stays polled.
//
// A held-back socket polled for nothing never saw the FIN (found in a review).
func TestHeldBack_webSocketClientGoneIsClosed(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	e, addr := startInternal(t, WithMaxInFlight(1), WithPingInterval(-1))
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.Dial("ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for i := range 2 {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(sleepMsg(i, 8000))); err != nil {
			t.Fatal(err)
		}
	}
	waitGated(t, e) // the second sleep is buffered behind the first: held back
	_ = ws.NetConn().Close()
	deadline := time.Now().Add(4 * time.Second)
	for e.Conns() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := e.Conns(); n != 0 {
		t.Errorf("the WebSocket whose client went away is still open 4 s later (%d connections); its calls' context is not cancelled", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = e.Stop(ctx) // cancel the sleeps: the test ends quickly
}

// TestHeldBack_pipeliningClientIsNotClosed: with the gate, a client that
// pipelines past a message and a head while held back is held by TCP,
// not disconnected, and gets every reply.
//
// The bound counted what gnet read before the gate closed (found in a review).
func TestHeldBack_pipeliningClientIsNotClosed(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	e, addr := startInternal(t, WithMaxInFlight(1), WithMaxMessageSize(4<<10))
	_ = e
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 300 // ~16 KiB of add requests behind one sleep: a third of one read
	var req strings.Builder
	req.WriteString(sleepMsg(-1, 200) + "\n")
	for i := range n {
		req.WriteString(addMsg(i) + "\n")
	}
	if _, err := io.WriteString(c, req.String()); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	for i := range n + 1 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatalf("reply %d of %d: %v (the server closed a client that the gate was holding back)", i, n+1, err)
		}
	}
}

// TestHeldBack_readAgainAfterWork: a connection held back at MaxInFlight
// (a slow call and a buffered request) is read again once the work is
// answered, with no new input.
func TestHeldBack_readAgainAfterWork(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	t.Run("stream", func(t *testing.T) {
		e, addr := startInternal(t, WithMaxInFlight(1))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, sleepMsg(1, 300)+"\n"+sleepMsg(2, 300)+"\n")
		waitGated(t, e)
		r := bufio.NewReader(c)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for i := range 2 {
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatalf("reply %d: %v", i, err)
			}
		}
		if s := gateState(e); len(s) != 1 || s[0] {
			t.Fatalf("gate after the work: %v", s)
		}
		_, _ = io.WriteString(c, addMsg(3)+"\n")
		if l, err := r.ReadString('\n'); err != nil || !strings.Contains(l, `"result":3`) {
			t.Fatalf("after the gate: %q %v", l, err)
		}
	})
	t.Run("http", func(t *testing.T) {
		e, addr := startInternal(t, WithMaxInFlight(1))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, httpPost(sleepMsg(1, 300))+httpPost(sleepMsg(2, 300)))
		waitGated(t, e)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		readBody := func() string {
			t.Helper()
			var clen int
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("head: %v", err)
				}
				if v, ok := strings.CutPrefix(strings.ToLower(l), "content-length: "); ok {
					clen, _ = strconv.Atoi(strings.TrimSpace(v))
				}
				if l == "\r\n" {
					break
				}
			}
			b := make([]byte, clen)
			if _, err := io.ReadFull(r, b); err != nil {
				t.Fatalf("body: %v", err)
			}
			return string(b)
		}
		readBody()
		readBody()
		_, _ = io.WriteString(c, httpPost(addMsg(3)))
		if b := readBody(); !strings.Contains(b, `"result":3`) {
			t.Fatalf("after the gate: %q", b)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		e, addr := startInternal(t, WithMaxInFlight(1))
		ws, _, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial("ws://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		for i := range 2 {
			_ = ws.WriteMessage(websocket.TextMessage, []byte(sleepMsg(i, 300)))
		}
		waitGated(t, e)
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		for i := range 2 {
			if _, _, err := ws.ReadMessage(); err != nil {
				t.Fatalf("reply %d: %v", i, err)
			}
		}
		_ = ws.WriteMessage(websocket.TextMessage, []byte(addMsg(3)))
		if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"result":3`) {
			t.Fatalf("after the gate: %q %v", b, err)
		}
	})
}

// TestBudget_accountReturnsToZero: the budget's account and holders
// return to zero once every connection has left, clients that reset
// while held back included.
func TestBudget_accountReturnsToZero(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	e, addr := startHeldBack(t, WithMaxPendingOutput(16<<10), WithMaxOutputBudget(4<<20))
	batch := strings.Repeat(`{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("y", 8000)+`"],"id":1}`+"\n", 64)
	var conns []net.Conn
	for range 20 {
		c, err := smallBufs.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		go func() {
			_ = c.SetWriteDeadline(time.Now().Add(3 * time.Second))
			for {
				if _, err := io.WriteString(c, batch); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if e.budget.used.Load() == 0 {
		t.Fatal("the attack held nothing")
	}
	for i, c := range conns {
		if i%2 == 0 {
			_ = c.(*net.TCPConn).SetLinger(0) // a reset
		}
		_ = c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for (e.Conns() != 0 || e.budget.used.Load() != 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if e.Conns() != 0 || e.budget.used.Load() != 0 || e.budget.holders.Load() != 0 {
		t.Fatalf("after every client left: %d connections, used %d, holders %d", e.Conns(), e.budget.used.Load(), e.budget.holders.Load())
	}
}

// TestHeldBack_requestSentMeanwhileIsServed: a request a client sent
// while its connection was held back (its replies unread) is answered
// once it reads them, over streams, HTTP and WebSocket.
//
// The pause was judged before serving from the call before, and nothing called back (found in a review).
func TestHeldBack_requestSentMeanwhileIsServed(t *testing.T) {
	if !gateSupported {
		t.Skip("no TCP back-pressure on this system")
	}
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("z", 200<<10) + `"],"id":"big"}`
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		e, addr := startHeldBack(t, WithMaxPendingOutput(16<<10))
		c := dialSmall(t, addr)
		_, _ = io.WriteString(c, big+"\n")
		waitGated(t, e) // the reply backs up: held back
		_, _ = io.WriteString(c, addMsg(7)+"\n")
		r := bufio.NewReaderSize(c, 1<<16)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if l, err := r.ReadString('\n'); err != nil || !strings.Contains(l, `"id":"big"`) {
			t.Fatalf("big reply: %v", err)
		}
		if l, err := r.ReadString('\n'); err != nil || !strings.Contains(l, `"result":3`) {
			t.Fatalf("the request sent while held back got no reply in 5 s: %q %v", l, err)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		e, addr := startHeldBack(t, WithMaxPendingOutput(16<<10))
		c := dialSmall(t, addr)
		_, _ = io.WriteString(c, httpPost(big))
		waitGated(t, e)
		_, _ = io.WriteString(c, httpPost(addMsg(7)))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReaderSize(c, 1<<16)
		for i, want := range []string{`"id":"big"`, `"result":3`} {
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("response %d: no reply in 5 s to the request sent while held back: %v", i, err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || !strings.Contains(string(b), want) {
				t.Fatalf("response %d: %v", i, err)
			}
		}
	})
	t.Run("websocket", func(t *testing.T) {
		t.Parallel()
		e, addr := startHeldBack(t, WithMaxPendingOutput(16<<10))
		d := &websocket.Dialer{NetDialContext: smallBufs.DialContext, HandshakeTimeout: 10 * time.Second}
		ws, _, err := d.Dial("ws://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		_ = ws.WriteMessage(websocket.TextMessage, []byte(big))
		waitGated(t, e)
		_ = ws.WriteMessage(websocket.TextMessage, []byte(addMsg(7)))
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"id":"big"`) {
			t.Fatalf("big reply: %v", err)
		}
		if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"result":3`) {
			t.Fatalf("the message sent while held back got no reply in 5 s: %q %v", b, err)
		}
	})
}
