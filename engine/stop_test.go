package engine_test

// Tests of Run and Stop (engine.go): draining the requests in flight,
// idle connections, the stop deadline.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// TestRun_cleanStopIsNil: Run returns nil when its context ends and the
// stop is clean, so that the documented main — if err := e.Run(ctx); err
// != nil { log.Fatal(err) } — exits 0 on SIGTERM (log.Fatal(e.Run(ctx))
// exited 1 printing <nil>).
func TestRun_cleanStopIsNil(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for e.Addrs() == nil {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after a clean stop: %v", err)
	}
}

// TestRun_stopTimeout: Options.StopTimeout bounds how long Run waits for
// the requests in flight (it was a fixed 10 s); past it Run returns the
// deadline's error.
func TestRun_stopTimeout(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 1)
	handler.Register(tab, "stuck", func(context.Context, struct{}) (int, error) {
		started <- struct{}{}
		<-release // ignores its context
		return 1, nil
	})
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()),
		engine.WithStopTimeout(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for e.Addrs() == nil {
		time.Sleep(time.Millisecond)
	}
	s := dialStream(t, "tcp", e.Addrs()[0].String())
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"stuck","id":1}`+"\n"))
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run with a stuck request: %v, want the deadline", err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("Run did not return within 8 s with a stop timeout of 100 ms")
	}
}

// TestStop_inFlight: Stop with requests in flight loses none of their
// replies.
func TestStop_inFlight(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	const n = 20
	conns := make([]*streamClient, n)
	for i := range conns {
		conns[i] = dialStream(t, "tcp", tcp)
		conns[i].send(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":%d}`, i)))
	}
	hc, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	io.WriteString(hc, post(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":"h"}`, ""))
	time.Sleep(50 * time.Millisecond) // let them reach the workers
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(ctx) }()
	for i, s := range conns {
		if got := string(s.line(t)); got != fmt.Sprintf(`{"jsonrpc":"2.0","result":200,"id":%d}`+"\n", i) {
			t.Fatalf("conn %d: %q", i, got)
		}
	}
	_ = hc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(hc), nil)
	if err != nil || bodyOf(resp) != `{"jsonrpc":"2.0","result":200,"id":"h"}` {
		t.Fatalf("http: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", tcp); err == nil {
		t.Fatal("still accepting after Stop")
	}
}

// TestStop_idleConnections: Stop of a running engine with idle keep-alive
// connections returns without waiting for them.
//
// One of gnet's traps listed in ../shared/research/gnet-sonic.md.
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

// Stop(ctx) returns when ctx ends even if a handler ignores its
// cancelled context.
//
// Stop did not return at its deadline while a handler ignored its context (found in a review).
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

// A keep-alive HTTP request answered while the engine stops is told
// "Connection: close", so that the client does not send its next request
// on a connection about to close.
//
// HTTP replies sent while the engine stopped did not say Connection: close.
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
//
// When Stop's context ended, the -32001 replies of cancelled handlers were lost (found in a review).
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
