package engine_test

// Tests of the last reply: whenever the server decides to close a
// connection (Drain, Stop, a limit), the reply that says so is the last
// one, and nothing the client sent after it is run (RFC 9112 9.6). A
// client that obeys Connection: close sends again elsewhere what it
// pipelined behind, so a call run there too would run twice.

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// countingTable is the demo table with "count" (inline) and
// "count_blocking", which add one to *n and return it.
func countingTable(n *atomic.Int64) *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	handler.RegisterNoParams(tab, "count", func(context.Context) (int64, error) { return n.Add(1), nil }, handler.Inline())
	handler.RegisterNoParams(tab, "count_blocking", func(context.Context) (int64, error) { return n.Add(1), nil })
	return tab
}

// expectEOF fails unless the server closes c with nothing more sent.
func expectEOF(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if rest, err := io.ReadAll(r); err != nil || len(rest) > 0 {
		t.Fatalf("after the last reply: %d bytes (%q…), %v; want the connection closed", len(rest), rest[:min(len(rest), 160)], err)
	}
}

// waitStopping waits until Stop has begun (the engine is no longer
// ready).
func waitStopping(t *testing.T, e *engine.Engine) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); e.Ready(); {
		if time.Now().After(deadline) {
			t.Fatal("Stop did not begin")
		}
		time.Sleep(time.Millisecond)
	}
}

// dialWithCallInFlight opens an HTTP connection to addr and sends it
// sleep [200] (id 1), on a worker when it returns.
func dialWithCallInFlight(t *testing.T, e *engine.Engine, addr string) *pageConn {
	t.Helper()
	pc := dialPage(t, addr)
	pc.write(t, rpcCall("sleep", "[200]", 1))
	waitInFlight(t, e, 1)
	return pc
}

// Draining, an HTTP connection's next reply says Connection: close and
// is its last: of 20 calls pipelined in one write, one runs.
func TestDrain_nothingRunsAfterConnectionClose(t *testing.T) {
	for _, method := range []string{"count", "count_blocking"} {
		t.Run(method, func(t *testing.T) {
			var n atomic.Int64
			e, addr, _ := startEngine(t, countingTable(&n))
			e.Drain()
			pc := dialPage(t, addr)
			var b strings.Builder
			for i := range 20 {
				b.WriteString(rpcCall(method, "[]", i))
			}
			pc.write(t, b.String())
			resp, body := pc.read(t, "POST")
			if resp.StatusCode != 200 || !resp.Close || body != `{"jsonrpc":"2.0","result":1,"id":0}` {
				t.Fatalf("first reply: %s, close %v, %s", resp.Status, resp.Close, body)
			}
			pc.expectClosed(t)
			if got := n.Load(); got != 1 {
				t.Fatalf("%d calls ran; want 1: those behind Connection: close must not", got)
			}
		})
	}
}

// A call on a worker when Drain comes keeps its keep-alive reply (more
// follow); of the calls read after, the first is answered with
// Connection: close and the rest never run.
func TestDrain_callsReadBehindAHeldReply(t *testing.T) {
	var n atomic.Int64
	e, addr, _ := startEngine(t, countingTable(&n))
	c := dialWithCallInFlight(t, e, addr)
	e.Drain()
	c.write(t, rpcCall("count", "[]", 2)+rpcCall("count", "[]", 3)+rpcCall("count_blocking", "[]", 4))
	first, body := c.read(t, "POST")
	if first.Close || body != `{"jsonrpc":"2.0","result":200,"id":1}` {
		t.Fatalf("the held reply: close %v, %s; want keep-alive, a reply follows", first.Close, body)
	}
	last, body := c.read(t, "POST")
	if !last.Close || body != `{"jsonrpc":"2.0","result":1,"id":2}` {
		t.Fatalf("the next reply: close %v, %s; want Connection: close", last.Close, body)
	}
	c.expectClosed(t)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d calls ran; want 1", got)
	}
}

// Stopping, an HTTP connection with a call in flight answers it and the
// next request it reads, that one with Connection: close; nothing after
// runs.
func TestStop_httpRunsNothingAfterTheLastReply(t *testing.T) {
	var n atomic.Int64
	e, addr, _ := startEngine(t, countingTable(&n))
	c := dialWithCallInFlight(t, e, addr)
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	waitStopping(t, e)
	c.write(t, rpcCall("count", "[]", 2)+rpcCall("count", "[]", 3))
	first, _ := c.read(t, "POST")
	second, body := c.read(t, "POST")
	if first.Close || !second.Close || body != `{"jsonrpc":"2.0","result":1,"id":2}` {
		t.Fatalf("close %v then %v (%s); want keep-alive, then close on the last", first.Close, second.Close, body)
	}
	c.expectClosed(t)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("%d calls ran; want 1", got)
	}
}

// Stopping, a stream or WebSocket connection answers its calls in
// flight, runs nothing it reads after Stop began, and closes.
func TestStop_streamAndWebSocketRunNothingReadAfter(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		var n atomic.Int64
		e, addr, _ := startEngine(t, countingTable(&n))
		s := dialStream(t, "tcp", addr)
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":1}`))
		waitInFlight(t, e, 1)
		stopped := make(chan error, 1)
		go func() { stopped <- e.Stop(context.Background()) }()
		waitStopping(t, e)
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"count","id":2}`))
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"count_blocking","id":3}`))
		if got := strings.TrimSpace(string(s.line(t))); got != `{"jsonrpc":"2.0","result":200,"id":1}` {
			t.Fatalf("in-flight reply: %s", got)
		}
		expectEOF(t, s.c, s.r)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 0 {
			t.Fatalf("%d calls read after Stop ran; want 0", got)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		var n atomic.Int64
		e, addr, _ := startEngine(t, countingTable(&n))
		ws := dialWS(t, addr, nil)
		if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":1}`)); err != nil {
			t.Fatal(err)
		}
		waitInFlight(t, e, 1)
		stopped := make(chan error, 1)
		go func() { stopped <- e.Stop(context.Background()) }()
		waitStopping(t, e)
		if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"count","id":2}`)); err != nil {
			t.Fatal(err)
		}
		if got := wsRead(t, ws); string(got) != `{"jsonrpc":"2.0","result":200,"id":1}` {
			t.Fatalf("in-flight reply: %s", got)
		}
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, msg, err := ws.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Fatalf("after the in-flight reply: %q, %v; want close 1001", msg, err)
		}
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if got := n.Load(); got != 0 {
			t.Fatalf("%d calls read after Stop ran; want 0", got)
		}
	})
}

// A limit that closes the connection (a body over MaxMessageSize: 413,
// Connection: close) runs nothing pipelined behind it.
func TestLimit_nothingRunsAfterA413(t *testing.T) {
	var n atomic.Int64
	_, addr, _ := startEngine(t, countingTable(&n), engine.WithMaxMessageSize(64))
	c := dialPage(t, addr)
	big := rpcCall("echo", `["`+strings.Repeat("x", 100)+`"]`, 1)
	c.write(t, rpcCall("count", "[]", 0)+big+rpcCall("count", "[]", 2)+rpcCall("count_blocking", "[]", 3))
	if ok, _ := c.read(t, "POST"); ok.StatusCode != 200 || ok.Close {
		t.Fatalf("the first call: %s, close %v", ok.Status, ok.Close)
	}
	if resp, _ := c.read(t, "POST"); resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Fatalf("the large body: %s, close %v; want 413 and close", resp.Status, resp.Close)
	}
	c.expectClosed(t)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d calls ran; want 1 (the one before the 413)", got)
	}
}
