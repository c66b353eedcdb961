package engine_test

// Tests of the limits and timeouts (options.go): messages in flight,
// clients that do not read, input held back, and the idle, read and
// write timeouts.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// TestLimit_inFlight: a stream runs at most MaxInFlight messages on
// workers at once; the rest wait, unread, and are all answered later.
func TestLimit_inFlight(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var running, peak atomic.Int32
	release := make(chan struct{})
	handler.Register(tab, "hold", func(context.Context, struct{}) (int, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		return 1, nil
	})
	_, tcp, _ := startEngine(t, tab, engine.WithMaxInFlight(2))
	s := dialStream(t, "tcp", tcp)
	for i := range 6 {
		s.send(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"hold","id":%d}`, i)))
	}
	for i := 0; running.Load() < 2; i++ {
		if i > 500 {
			t.Fatalf("%d running, want 2", running.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // room for a third to start, if the limit failed
	if got := running.Load(); got != 2 {
		t.Fatalf("%d running, want 2", got)
	}
	close(release)
	for range 6 {
		s.line(t)
	}
	if peak.Load() != 2 {
		t.Fatalf("peak %d", peak.Load())
	}
}

// TestLimit_slowReader: a client that sends but never reads is no
// longer read once its unsent replies pass the limit (on Linux its
// socket is not polled: TCP holds its writes back), and is closed by the
// write timeout; others are served meanwhile.
func TestLimit_slowReader(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxPendingOutput(256<<10), engine.WithMaxMessageSize(64<<10),
		engine.WithTimeouts(0, 0, 2*time.Second))
	c, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := []byte(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("z", 32<<10) + `"],"id":1}` + "\n")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		for range 100000 {
			if _, err := c.Write(msg); err != nil {
				return // the server closed us
			}
		}
	}()
	other := dialStream(t, "tcp", tcp)
	other.send(t, []byte(sentinel))
	if got := other.line(t); !strings.Contains(string(got), "sentinel") {
		t.Fatal(string(got))
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("a client that does not read was never closed")
	}
}

// While a connection may start no message (an HTTP request on a worker,
// or MaxInFlight stream messages on workers), what the client goes on
// sending is bounded: past one message and one head it is disconnected,
// and the server's heap does not grow with what it sent.
//
// Input held back by MaxInFlight or a request on a worker was buffered without bound (found in a review).
func TestLimit_inputBoundedWhileHeldBack(t *testing.T) {
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

// TestLimit_timeouts: idle connections and incomplete messages are closed
// after their timeouts.
func TestLimit_timeouts(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithTimeouts(300*time.Millisecond, 300*time.Millisecond, time.Second))
	idle, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	slow, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, _ = slow.Write([]byte(`{"jsonrpc":"2.0","method":`)) // and never the rest
	if !waitClosed(idle, 10*time.Second) {
		t.Fatal("idle connection not closed")
	}
	if !waitClosed(slow, 10*time.Second) {
		t.Fatal("incomplete message not timed out")
	}
}

// TestLimit_writeTimeout: a client that stops reading its replies is
// closed after the write timeout, even with output pending.
func TestLimit_writeTimeout(t *testing.T) {
	e, tcp, _ := startEngine(t, nil, engine.WithTimeouts(time.Minute, time.Minute, 300*time.Millisecond),
		engine.WithMaxPendingOutput(256<<20), engine.WithMaxMessageSize(4<<20))
	c, err := smallReceiveBuffer().Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := []byte(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("w", 2<<20) + `"],"id":1}` + "\n")
	for range 8 { // 16 MiB of replies: more than the socket buffers hold
		if _, err := c.Write(msg); err != nil {
			break // already closed by the server: fine
		}
	}
	// The server closes it after the timeout and the once-a-second sweep.
	// (The client cannot tell soon: the replies still in the kernel's
	// buffers trickle into its tiny window.)
	for i := 0; e.Conns() != 0; i++ {
		if i > 1000 {
			t.Fatal("a client that stopped reading was not closed after the write timeout")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The write timeout counts from the last progress of the output: a client
// that reads steadily, if slower than it asks, is not cut off.
//
// The write timeout did not count from the last progress and cut off steady readers (found in a review).
func TestLimit_writeTimeoutSparesSteadyReader(t *testing.T) {
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

// TestLimit_firstByteTimeout: a connection that sends nothing after it
// is accepted is closed after FirstByteTimeout (counted idle), long
// before the idle timeout, while one that has spoken stays open past it;
// negative leaves silent connections to the idle timeout. The field has
// no With setter: an Option of one's own sets it.
func TestLimit_firstByteTimeout(t *testing.T) {
	firstByte := func(d time.Duration) engine.Option {
		return func(o *engine.Options) { o.FirstByteTimeout = d }
	}
	e, tcp, _ := startEngine(t, nil, firstByte(300*time.Millisecond))
	silent, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	talker := dialStream(t, "tcp", tcp)
	talker.send(t, []byte(`{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}`))
	talker.line(t)
	start := time.Now()
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := silent.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the silent connection: read %d, %v; want EOF", n, err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Fatalf("closed after %v, want about the timeout and the once-a-second sweep", waited)
	}
	talker.send(t, []byte(`{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}`))
	if got := talker.line(t); !bytes.Contains(got, []byte(`"id":2`)) {
		t.Fatalf("the connection that spoke: %s", got)
	}
	if got := e.Stats().Closed.Idle; got != 1 {
		t.Fatalf("Stats.Closed.Idle = %d, want 1", got)
	}

	_, tcp, _ = startEngine(t, nil, firstByte(-1))
	quiet, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	_ = quiet.SetReadDeadline(time.Now().Add(1500 * time.Millisecond)) // past a sweep
	if _, err := quiet.Read(make([]byte, 1)); !os.IsTimeout(err) {
		t.Fatalf("with FirstByteTimeout -1, the silent connection: %v; want it open until the idle timeout", err)
	}
}
