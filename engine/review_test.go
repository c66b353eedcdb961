package engine_test

// Regressions found by an adversarial review of the HTTP/1.1 and stream
// paths. Each test failed before its fix.

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

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

// RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with two,
// gets 400; HTTP/1.0 may omit it.
func TestHTTP_hostHeaderRequired(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	body := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	cl := "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	for _, c := range []struct{ name, req, want string }{
		{"1.1 without Host", "POST / HTTP/1.1\r\nConnection: close\r\n" + cl, "HTTP/1.1 400"},
		{"1.1 with two", "POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n" + cl, "HTTP/1.1 400"},
		{"1.0 with two", "POST / HTTP/1.0\r\nHost: a\r\nhost: b\r\n" + cl, "HTTP/1.1 400"},
		{"1.0 without Host", "POST / HTTP/1.0\r\n" + cl, "HTTP/1.1 200"},
		{"1.1 with one", "POST / HTTP/1.1\r\nhOST: a\r\nConnection: close\r\n" + cl, "HTTP/1.1 200"},
	} {
		if got := rawExchange(t, tcp, c.req); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %q, want %s", c.name, got, c.want)
		}
	}
}

// RFC 9110 10.1.1: a 100-continue expectation of an HTTP/1.0 request is
// ignored: no interim response (the 1.1 case is in engine_test.go).
func TestHTTP_10IgnoresExpect100(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 100)
	if n, _ := c.Read(buf); n > 0 {
		t.Fatalf("HTTP/1.0 client got an interim response: %q", buf[:n])
	}
	// The body then arrives and is answered.
	_, _ = io.WriteString(c, `{"id":1}  `)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(got), "HTTP/1.1 200") {
		t.Fatalf("reply %q", got)
	}
}

// A method's own -32700 error is a reply like any other: the stream stays
// open and the next request is answered.
func TestStream_methodParseErrorKeepsConnection(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "parseInner", func(context.Context, [1]string) (int, error) {
		return 0, &handler.Error{Code: handler.CodeParseError, Message: "inner document is not JSON"}
	}, handler.Inline())
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"parseInner","params":["{"],"id":1}`))
	if got := string(s.line(t)); !strings.Contains(got, `-32700`) || !strings.Contains(got, `"id":1`) {
		t.Fatalf("reply 1: %s", got)
	}
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`))
	if got := strings.TrimSpace(string(s.line(t))); got != `{"jsonrpc":"2.0","result":3,"id":2}` {
		t.Fatalf("reply 2: %s", got)
	}
}

// While a connection may start no message (an HTTP request on a worker,
// or MaxInFlight stream messages on workers), what the client goes on
// sending is bounded: past one message and one head it is disconnected,
// and the server's heap does not grow with what it sent.
func TestLimits_inputBoundedWhileHeldBack(t *testing.T) {
	for _, mode := range []string{"http", "stream"} {
		t.Run(mode, func(t *testing.T) {
			_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1<<20), engine.WithMaxInFlight(1))
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			slow := `{"jsonrpc":"2.0","method":"sleep","params":[3000],"id":1}`
			junk := bytes.Repeat([]byte(" "), 1<<20) // whitespace between stream messages
			if mode == "http" {
				_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(slow))+"\r\n\r\n"+slow)
				junk = bytes.Repeat([]byte("\r\n"), 1<<19) // empty lines before a request line
			} else {
				_, _ = io.WriteString(c, slow+"\n")
			}
			time.Sleep(100 * time.Millisecond) // the request is on a worker
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.HeapInuse
			_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			sent := 0
			var werr error
			for sent < 64<<20 && werr == nil {
				var n int
				n, werr = c.Write(junk)
				sent += n
			}
			runtime.ReadMemStats(&ms)
			grown := int64(ms.HeapInuse) - int64(before)
			t.Logf("client wrote %d MiB (%v); server heap grew %d KiB", sent>>20, werr, grown>>10)
			if grown > 16<<20 {
				t.Errorf("server buffered %d MiB for one held-back connection (message limit 1 MiB)", grown>>20)
			}
			if werr == nil {
				t.Errorf("the client wrote %d MiB without being disconnected", sent>>20)
			}
		})
	}
}

// Stop(ctx) returns when ctx ends even if a handler ignores its
// cancelled context.
func TestStop_deadlineHoldsWithStuckHandler(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	release := make(chan struct{})
	defer close(release)
	handler.Register(tab, "stuck", func(context.Context, [0]int) (int, error) {
		<-release // ignores ctx, like a driver call without one
		return 0, nil
	})
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", e.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, `{"jsonrpc":"2.0","method":"stuck","params":[],"id":1}`+"\n")
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Stop(ctx) }()
	select {
	case err := <-done:
		if err != context.DeadlineExceeded {
			t.Fatalf("Stop: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Stop with a 200 ms deadline has not returned after 3 s")
	}
}

// A unix:// socket that a live server listens on is not taken over; a
// stale one (nobody listening) is replaced.
func TestListen_liveUnixSocketIsNotTakenOver(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rpc.sock")
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	a := engine.New(tab, engine.WithAddrs("unix://"+sock), engine.WithLogger(quiet()))
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	b := engine.New(tab, engine.WithAddrs("unix://"+sock), engine.WithLogger(quiet()))
	if err := b.Start(); err == nil {
		_ = b.Stop(context.Background())
		t.Fatalf("a second engine started on %s while the first serves it", sock)
	}
	// a still serves.
	s := dialStream(t, "unix", sock)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
	if got := strings.TrimSpace(string(s.line(t))); got != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Fatalf("first engine: %s", got)
	}
	s.c.Close()
	_ = a.Stop(context.Background())
	// A stale socket file: a listener closed without removing it.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	c := engine.New(tab, engine.WithAddrs("unix://"+sock), engine.WithLogger(quiet()))
	if err := c.Start(); err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	_ = c.Stop(context.Background())
}

// The write timeout counts from the last progress of the output: a client
// that reads steadily, if slower than it asks, is not cut off.
func TestLimits_writeTimeoutSparesSteadyReader(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithTimeouts(time.Minute, time.Minute, 500*time.Millisecond),
		engine.WithMaxPendingOutput(256<<20), engine.WithMaxMessageSize(4<<20))
	c, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("w", 2<<20) + `"],"id":1}` + "\n"
	reply := len(`{"jsonrpc":"2.0","result":["`+`"],"id":1}`+"\n") + 2<<20
	go func() {
		for range 8 {
			if _, err := io.WriteString(c, msg); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 256<<10)
	total := 0
	start := time.Now()
	for total < 8*reply {
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := io.ReadAtLeast(c, buf, min(len(buf), 8*reply-total))
		total += n
		if err != nil {
			t.Fatalf("closed after %v having read %d KiB at ~5 MB/s: %v", time.Since(start).Round(time.Millisecond), total>>10, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
