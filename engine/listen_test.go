package engine_test

// Tests of listeners and accepting (listen.go): Unix sockets,
// SO_REUSEPORT, MaxConns, and running out of file descriptors.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// A unix:// socket that a live server listens on is not taken over; a
// stale one (nobody listening) is replaced.
//
// A second engine took over the unix socket of a live server (found in a review).
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

// TestListen_reusePort: with SO_REUSEPORT two engines share one port.
func TestListen_reusePort(t *testing.T) {
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

// TestListen_maxConns: connections over the limit are closed at once; the
// others are served, and a slot freed is usable again.
func TestListen_maxConns(t *testing.T) {
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

// TestListen_emfile runs the engine in a child process whose descriptors
// run out while this process connects: accepting fails with EMFILE and
// pauses, the engine does not stop, and once descriptors are free again
// the waiting connections are served.
//
// One of gnet's traps listed in ../shared/research/gnet-sonic.md.
func TestListen_emfile(t *testing.T) {
	if os.Getenv("JETRPC_EMFILE_CHILD") == "1" {
		emfileChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestListen_emfile$", "-test.v")
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
