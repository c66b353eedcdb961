package engine_test

// Tests of the limits and of the gnet traps listed in
// ../shared/research/gnet-sonic.md: Peek lifetimes, Discard(0), close
// truncation, EMFILE, Stop, and the cost of writing back from workers.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

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

// TestTrap_peekLifetime: a message run on a worker is copied first, so
// the loop reusing its read buffer for other connections does not change
// it (gnet's Peek slices die when OnTraffic returns).
func TestTrap_peekLifetime(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "slowecho", func(_ context.Context, p handler.Raw) (handler.Raw, error) {
		time.Sleep(50 * time.Millisecond)
		return p, nil
	})
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab, engine.WithLoops(1))
	a := dialStream(t, "tcp", tcp)
	payload := `["` + strings.Repeat("A", 30000) + `"]`
	a.send(t, []byte(`{"jsonrpc":"2.0","method":"slowecho","params":`+payload+`,"id":1}`))
	// Meanwhile other connections of the same loop fill its read buffer.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := dialStream(t, "tcp", tcp)
			for range 20 {
				b.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"`+strings.Repeat("B", 3000)+`"}`))
				b.line(t)
			}
		}()
	}
	wg.Wait()
	if got := string(a.line(t)); got != `{"jsonrpc":"2.0","result":`+payload+`,"id":1}`+"\n" {
		t.Fatalf("the worker's message changed under it: %.80s...", got)
	}
}

// TestTrap_partialNotDiscarded: a complete message followed by the first
// half of the next one in one write; the half must stay buffered
// (gnet's Discard(0) would drop everything).
func TestTrap_partialNotDiscarded(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	second := `{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}`
	_, _ = s.c.Write([]byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}` + "\n" + second[:20]))
	if got := string(s.line(t)); !strings.Contains(got, `"id":1`) {
		t.Fatal(got)
	}
	time.Sleep(20 * time.Millisecond)
	_, _ = s.c.Write([]byte(second[20:] + "\n"))
	if got := string(s.line(t)); got != `{"jsonrpc":"2.0","result":7,"id":2}`+"\n" {
		t.Fatal(got)
	}
}

// TestTrap_closeAfterFlush: closing never truncates a pending reply
// (returning gnet.Close with output pending does).
func TestTrap_closeAfterFlush(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(16<<20))
	big := strings.Repeat("y", 8<<20)
	msg := `{"jsonrpc":"2.0","method":"echo","params":["` + big + `"],"id":1}`
	want := `{"jsonrpc":"2.0","result":["` + big + `"],"id":1}`
	resps := rawHTTP(t, tcp, post(msg, "Connection: close\r\n"), 1)
	if len(resps) != 1 || bodyOf(resps[0]) != want {
		t.Fatalf("HTTP with Connection: close: %d responses", len(resps))
	}
	// On a stream: a big reply, then bad JSON: the reply arrives whole,
	// then the -32700, then the close.
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write([]byte(msg + "\n}\n")) }()
	time.Sleep(300 * time.Millisecond) // let the server write and close before we read
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	all, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(all), want+"\n") || !strings.Contains(string(all[len(want):]), `"code":-32700`) {
		t.Fatalf("stream: %d bytes received, want %d and an error", len(all), len(want))
	}
}

// TestTrap_wakeOncePerBurst: replies of blocking methods come back with
// one Wake per burst, not one AsyncWrite per reply. Shown on the wire:
// 200 pipelined blocking requests on one stream are all answered.
func TestTrap_workerReplies(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"sleep","params":[0],"id":%d}`+"\n", i)
	}
	_, _ = s.c.Write([]byte(b.String()))
	seen := map[string]bool{}
	for range 200 {
		seen[string(s.line(t))] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d distinct replies", len(seen))
	}
}

// TestLimit_maxConns: connections over the limit are closed at once; the
// others are served, and a slot freed is usable again.
func TestLimit_maxConns(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxConns(5))
	var kept []*streamClient
	for range 5 {
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(sentinel))
		s.line(t)
		kept = append(kept, s)
	}
	extra, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	if !waitClosed(extra, 10*time.Second) {
		t.Fatal("the 6th connection was not refused")
	}
	kept[0].c.Close()
	for i := 0; ; i++ {
		time.Sleep(20 * time.Millisecond)
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(sentinel + "\n"))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err == nil && strings.Contains(line, "sentinel") {
			break
		}
		if i > 100 {
			t.Fatal("a freed slot was never reused")
		}
	}
}

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

// TestLimit_slowReader: a client that sends but never reads is closed
// once its unsent replies pass the limit; others are served meanwhile.
func TestLimit_slowReader(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxPendingOutput(256<<10), engine.WithMaxMessageSize(64<<10))
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

// TestReusePort: with SO_REUSEPORT two engines share one port.
func TestReusePort(t *testing.T) {
	e1, tcp, _ := startEngine(t, nil, engine.WithReusePort(true))
	_ = e1
	_, tcp2, _ := startEngine(t, nil, engine.WithReusePort(true), engine.WithAddrs("tcp://"+tcp, "unix://"+filepath.Join(t.TempDir(), "b.sock")))
	if tcp2 != tcp {
		t.Fatalf("second engine on %s, want %s", tcp2, tcp)
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(sentinel))
	s.line(t)
}

// TestStop_idleAndHealth: Stop of a running engine with idle keep-alive
// connections returns without waiting for them.
func TestStop_idleConnections(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	var conns []net.Conn
	for range 50 {
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, c := range conns {
		if !waitClosed(c, 5*time.Second) {
			t.Fatal("a connection outlived Stop")
		}
	}
	if err := e.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

// TestTrap_emfile runs the engine in a child process whose descriptors
// run out while this process connects: accepting fails with EMFILE and
// pauses, the engine does not stop, and once descriptors are free again
// the waiting connections are served.
func TestTrap_emfile(t *testing.T) {
	if os.Getenv("JETRPC_EMFILE_CHILD") == "1" {
		emfileChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrap_emfile$", "-test.v")
	cmd.Env = append(os.Environ(), "JETRPC_EMFILE_CHILD=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var addr string
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "READY "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatalf("child did not start: %s", stderr.String())
	}
	// The kernel completes these handshakes; the child cannot accept them.
	var waiting []*streamClient
	for range 3 {
		s := dialStream(t, "tcp", addr)
		s.send(t, []byte(sentinel))
		waiting = append(waiting, s)
	}
	time.Sleep(300 * time.Millisecond)
	_, _ = io.WriteString(stdin, "release\n")
	for _, s := range waiting {
		if got := s.line(t); !strings.Contains(string(got), "sentinel") {
			t.Fatalf("after EMFILE: %s", got)
		}
	}
	s := dialStream(t, "tcp", addr)
	s.send(t, []byte(sentinel))
	s.line(t)
	_, _ = io.WriteString(stdin, "exit\n")
	_ = cmd.Wait()
	if !strings.Contains(stderr.String(), "too many open files") {
		t.Fatalf("the child never hit EMFILE:\n%s", stderr.String())
	}
}

// emfileChild serves, exhausts its descriptors, and frees them when told.
func emfileChild(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		files = append(files, f)
	}
	fmt.Printf("READY %s\n", e.Addrs()[0])
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "release":
			for _, f := range files {
				f.Close()
			}
		case "exit":
			return
		}
	}
}
