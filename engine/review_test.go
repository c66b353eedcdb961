package engine_test

// Regressions found by an adversarial review of the HTTP/1.1 and stream
// paths. Each test failed before its fix.

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
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
	for _, mode := range []string{"http", "stream", "websocket"} {
		t.Run(mode, func(t *testing.T) {
			_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1<<20), engine.WithMaxInFlight(1))
			var c net.Conn
			if mode == "websocket" {
				c, _ = rawWS(t, tcp)
			} else {
				var err error
				if c, err = net.Dial("tcp", tcp); err != nil {
					t.Fatal(err)
				}
			}
			defer c.Close()
			slow := `{"jsonrpc":"2.0","method":"sleep","params":[3000],"id":1}`
			junk := bytes.Repeat([]byte(" "), 1<<20) // whitespace between stream messages
			switch mode {
			case "http":
				_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(slow))+"\r\n\r\n"+slow)
				junk = bytes.Repeat([]byte("\r\n"), 1<<19) // empty lines before a request line
			case "websocket":
				_, _ = c.Write(frame(true, 0x1, []byte(slow), true))
				junk = bytes.Repeat(frame(true, 0x9, []byte("ping"), true), 1<<20/10) // pings, each served once it may
			default:
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
	e, tcp, _ := startEngine(t, tab)
	c, err := net.Dial("tcp", tcp)
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

// A client that half-closes after its requests (nc -N, socat, printf |
// ...) gets every reply: to the ones on workers when the EOF came, and to
// the ones still buffered behind them (MaxInFlight; HTTP's one request on
// a worker at a time), in order for HTTP.
func TestHalfClose_repliesStillDelivered(t *testing.T) {
	sleep := func(id int) string {
		return `{"jsonrpc":"2.0","method":"sleep","params":[30],"id":` + strconv.Itoa(id) + `}`
	}
	add := func(id int) string {
		return `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":` + strconv.Itoa(id) + `}`
	}
	exchange := func(t *testing.T, addr, req string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, req)
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, got)
		}
		return string(got)
	}
	t.Run("stream", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil, engine.WithMaxInFlight(1))
		got := exchange(t, tcp, sleep(1)+"\n"+sleep(2)+"\n"+add(3)+"\n"+sleep(4)+"\n"+`{"jsonrpc":"2.0","method":"sleep","params":[1]}`+"\n"+`{"incomplete":`)
		for _, id := range []string{`"id":1}`, `"id":2}`, `"result":3,"id":3}`, `"id":4}`} {
			if !strings.Contains(got, id) {
				t.Errorf("no reply with %s in %q", id, got)
			}
		}
		if n := strings.Count(got, "\n"); n != 4 {
			t.Errorf("%d replies, want 4 (the notification gets none): %q", n, got)
		}
		waitConns(t, e, 0)
	})
	t.Run("http", func(t *testing.T) {
		e, tcp, _ := startEngine(t, nil)
		post := func(body string) string {
			return "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		}
		got := exchange(t, tcp, post(sleep(1))+post(add(2))+post(sleep(3)))
		i1, i2, i3 := strings.Index(got, `"id":1}`), strings.Index(got, `"result":3,"id":2}`), strings.Index(got, `"id":3}`)
		if i1 < 0 || i2 < i1 || i3 < i2 || strings.Count(got, "HTTP/1.1 200") != 3 {
			t.Errorf("want 3 replies in order, got %q", got)
		}
		waitConns(t, e, 0)
	})
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

// Large stream messages are gathered in the connection's own buffer
// (not re-copied by gnet at every read): a mix of large and small
// messages, inline and blocking, split at odd places, is answered in full
// and in order for the inline ones.
func TestStream_largeMessagesGathered(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(8<<20))
	big := func(id int, n int) string {
		return `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("z", n) + `"],"id":` + strconv.Itoa(id) + `}`
	}
	msgs := []string{
		big(1, 3<<20),
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`,
		big(3, 200<<10),
		`{"jsonrpc":"2.0","method":"sleep","params":[5],"id":4}`,
		big(5, 5<<20),
		`{"jsonrpc":"2.0","method":"add","params":[2,2],"id":6}`,
	}
	stream := []byte(strings.Join(msgs, "\n") + "\n")
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		// Pieces of odd sizes, so that messages end mid-read.
		for off, k := 0, 0; off < len(stream); k++ {
			n := min(len(stream)-off, 70001+k*3)
			if _, err := c.Write(stream[off : off+n]); err != nil {
				return
			}
			off += n
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReaderSize(c, 1<<20)
	got := map[string]int{}
	for i := range len(msgs) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		id := line[strings.LastIndex(line, `"id":`)+5 : len(line)-2]
		got[id] = len(line)
	}
	for id, want := range map[string]int{"1": 3<<20 + 39, "2": 36, "3": 200<<10 + 39, "4": 0, "5": 5<<20 + 39, "6": 36} {
		if n, ok := got[id]; !ok || want > 0 && n != want {
			t.Errorf("reply to %s: %d bytes (present %v), want %d", id, n, ok, want)
		}
	}
}

// BenchmarkLargeMessage: one 4 MiB message over a stream and over HTTP,
// to the reply; a stream message used to cost time quadratic in its size.
func BenchmarkLargeMessage(b *testing.B) {
	_, tcp, _ := startEngine(b, nil, engine.WithMaxMessageSize(64<<20))
	msg := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1,"pad":"` + strings.Repeat("x", 4<<20) + `"}`
	for _, mode := range []string{"stream", "http"} {
		req := msg + "\n"
		if mode == "http" {
			req = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg
		}
		b.Run(mode, func(b *testing.B) {
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			r := bufio.NewReader(c)
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				go func() { _, _ = io.WriteString(c, req) }()
				if mode == "http" {
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				} else if _, err := r.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A keep-alive HTTP request answered while the engine stops is told
// "Connection: close", so that the client does not send its next request
// on a connection about to close.
func TestStop_httpReplyClosesConnection(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"jsonrpc":"2.0","method":"sleep","params":[200],"id":1}`
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	time.Sleep(50 * time.Millisecond) // on a worker
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("status %d, Connection: close %v; want 200 and close", resp.StatusCode, resp.Close)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// When Stop's context ends first, a handler that returns on its
// cancelled context still gets its reply (-32001) to the client, over a
// stream and over HTTP.
func TestStop_cancelledHandlersStillReply(t *testing.T) {
	e, addr, _ := startEngine(t, nil)
	sleep := `{"jsonrpc":"2.0","method":"sleep","params":[30000],"id":7}`
	var conns []net.Conn
	for _, req := range []string{sleep + "\n", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(sleep)) + "\r\n\r\n" + sleep} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, req)
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond) // both on workers
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := e.Stop(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Stop: %v", err)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		got, _ := io.ReadAll(c)
		if !strings.Contains(string(got), `"code":-32001`) || !strings.Contains(string(got), `"id":7`) {
			t.Errorf("connection %d: got %q, want a -32001 reply", i, got)
		}
	}
}
