package engine_test

// Tests of draining for rolling deploys (engine.go: Drain, DrainFor, Run
// with Options.DrainGrace) and of the close notice (Options.CloseNotice):
// the health check says 503 while calls go on, WebSocket clients get
// 1001, no call is lost.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// health GETs the health path on a new connection and returns the
// status and body.
func health(t *testing.T, addr string) (int, string) {
	t.Helper()
	resps := rawHTTP(t, addr, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 1)
	if len(resps) != 1 {
		t.Fatal("no answer to GET /health")
	}
	return resps[0].StatusCode, bodyOf(resps[0])
}

// callHTTP posts add [a, b] on a new connection and returns the body.
func callHTTP(t *testing.T, addr string, a int) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":%d}`, a, a)
	resps := rawHTTP(t, addr, post(body, ""), 1)
	if len(resps) != 1 {
		t.Fatal("no answer to a call")
	}
	return bodyOf(resps[0])
}

func TestDrain_healthSays503WhileCallsGoOn(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	if code, body := health(t, tcp); code != 200 || body != httprules.HealthBody || !e.Ready() {
		t.Fatalf("before Drain: %d %s ready=%v", code, body, e.Ready())
	}
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`, ""), 1); len(r) != 1 || r[0].Close {
		t.Fatalf("an HTTP reply before the drain with Connection: close: %+v", r)
	}
	keep := dialStream(t, "tcp", tcp) // a connection opened before the drain
	e.Drain()
	e.Drain() // twice: the same
	if e.Ready() {
		t.Fatal("Ready after Drain")
	}
	if code, body := health(t, tcp); code != 503 || body != engine.DrainingBody {
		t.Fatalf("health while draining: %d %s, want 503 %s", code, body, engine.DrainingBody)
	}
	// New connections and calls are still served, on every transport;
	// HTTP replies ask the client not to reuse the connection.
	if got := callHTTP(t, tcp, 41); got != `{"jsonrpc":"2.0","result":42,"id":41}` {
		t.Fatalf("HTTP call while draining: %s", got)
	}
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`, ""), 1); len(r) != 1 || !r[0].Close {
		t.Fatalf("an HTTP reply while draining without Connection: close: %+v", r)
	}
	keep.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
	if got := strings.TrimSpace(string(keep.line(t))); got != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Fatalf("stream call while draining: %s", got)
	}
	ws := dialWS(t, tcp, nil)
	if got := wsCall(t, ws, `{"jsonrpc":"2.0","method":"add","params":[2,2],"id":2}`); string(got) != `{"jsonrpc":"2.0","result":4,"id":2}` {
		t.Fatalf("WebSocket call while draining: %s", got)
	}
}

// TestRun_drainGrace: with DrainGrace, Run keeps serving new connections
// and calls for the grace once its context is done, the health check
// answering 503, then stops; a client calling all along loses no call.
func TestRun_drainGrace(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	const grace = 600 * time.Millisecond
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()), engine.WithDrainGrace(grace))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for e.Addrs() == nil {
		time.Sleep(time.Millisecond)
	}
	addr := e.Addrs()[0].String()

	// A client on one keep-alive connection calling until the server
	// closes it: every call written is answered.
	var sent, answered atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for i := 0; ; i++ {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":%d}`, i, i)
			if _, err := io.WriteString(c, post(body, "")); err != nil {
				t.Errorf("call %d: %v (the server closed without saying Connection: close)", i, err)
				return
			}
			sent.Add(1)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Errorf("call %d lost: %v", i, err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, i+1, i); string(b) != want {
				t.Errorf("reply %s, want %s", b, want)
				return
			}
			answered.Add(1)
			if resp.Close {
				return // the server said this is the last
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	for answered.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	start := time.Now()
	for e.Ready() {
		time.Sleep(time.Millisecond)
	}
	// During the grace: 503 health, new connections served.
	if code, _ := health(t, addr); code != 503 {
		t.Fatalf("health during the grace: %d", code)
	}
	if got := callHTTP(t, addr, 7); got != `{"jsonrpc":"2.0","result":8,"id":7}` {
		t.Fatalf("a new connection's call during the grace: %s", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < grace/2 {
		t.Fatalf("Run returned %v after its context ended, before the grace of %v", took, grace)
	}
	wg.Wait()
	if sent.Load() != answered.Load() || answered.Load() < 5 {
		t.Fatalf("%d calls written, %d answered", sent.Load(), answered.Load())
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatal("a connection accepted after Run returned")
	}
}

// TestDrainFor_cut: closing cut ends the grace early.
func TestDrainFor_cut(t *testing.T) {
	e, _, _ := startEngine(t, nil)
	cut := make(chan struct{})
	close(cut)
	start := time.Now()
	e.DrainFor(time.Hour, cut)
	if time.Since(start) > 10*time.Second || e.Ready() {
		t.Fatalf("DrainFor with a closed cut: %v, ready=%v", time.Since(start), e.Ready())
	}
	e2, _, _ := startEngine(t, nil)
	e2.DrainFor(0, nil) // no grace: no drain either (Stop makes it)
	if !e2.Ready() {
		t.Fatal("DrainFor(0) drained")
	}
	if err := e2.Stop(context.Background()); err != nil || e2.Ready() {
		t.Fatalf("after Stop: %v, ready=%v", err, e2.Ready())
	}
}

// TestStop_closeNotice: with CloseNotice, a WebSocket and a stream client
// get the notification after their replies in flight, then the WebSocket
// the close 1001; without it, only the close.
func TestStop_closeNotice(t *testing.T) {
	const want = `{"jsonrpc":"2.0","method":"server_closing","params":{"reason":"server stopping"}}`
	e, tcp, unix := startEngine(t, nil, engine.WithCloseNotice(engine.DefaultCloseNotice))
	ws := dialWS(t, tcp, nil)
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[100],"id":1}`)); err != nil {
		t.Fatal(err)
	}
	s := dialStream(t, "unix", unix)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[100],"id":2}`))
	waitInFlight(t, e, 2)
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	if got := wsRead(t, ws); string(got) != `{"jsonrpc":"2.0","result":100,"id":1}` {
		t.Fatalf("WebSocket in-flight reply: %s", got)
	}
	if got := wsRead(t, ws); string(got) != want {
		t.Fatalf("WebSocket close notice: %s, want %s", got, want)
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ws.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("want close 1001 after the notice, got %v", err)
	}
	if got := strings.TrimSpace(string(s.line(t))); got != `{"jsonrpc":"2.0","result":100,"id":2}` {
		t.Fatalf("stream in-flight reply: %s", got)
	}
	if got := strings.TrimSpace(string(s.line(t))); got != want {
		t.Fatalf("stream close notice: %s, want %s", got, want)
	}
	if !waitClosed(s.c, 10*time.Second) {
		t.Fatal("stream left open")
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// waitInFlight waits until e has n messages on workers.
func waitInFlight(t *testing.T, e *engine.Engine, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats().InFlight < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d messages in flight, want %d", e.Stats().InFlight, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Wait is Run after a Start of one's own: it serves until its context is
// done, drains for DrainGrace and stops; calls are answered meanwhile.
func TestWait_afterStart(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()), engine.WithDrainGrace(200*time.Millisecond))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	addr := e.Addrs()[0].String() // known between Start and Wait
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Wait(ctx) }()
	if got := callHTTP(t, addr, 1); got != `{"jsonrpc":"2.0","result":2,"id":1}` {
		t.Fatalf("before the context ends: %s", got)
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); e.Ready(); {
		if time.Now().After(deadline) {
			t.Fatal("not draining after the context ended")
		}
		time.Sleep(time.Millisecond)
	}
	if code, _ := health(t, addr); code != 503 {
		t.Errorf("health while draining: %d", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("still accepting after Wait returned")
	}
}

// TestReady_healthFollowsCheckAndSwitch: the health check answers 503
// {"status":"not_ready","reason":...} while Options.Ready fails and
// after SetNotReady until SetReady — calls served and keep-alive
// connections kept all the while — and 200 again once both agree; a
// drain is not undone by SetReady.
func TestReady_healthFollowsCheckAndSwitch(t *testing.T) {
	var failing atomic.Pointer[error]
	check := func() error {
		if p := failing.Load(); p != nil {
			return *p
		}
		return nil
	}
	e, tcp, _ := startEngine(t, nil, engine.WithReady(check))
	want := func(what string, code int, body string, ready bool) {
		t.Helper()
		if c, b := health(t, tcp); c != code || b != body || e.Ready() != ready {
			t.Errorf("%s: health %d %s, Ready %v; want %d %s, %v", what, c, b, e.Ready(), code, body, ready)
		}
	}
	want("ready", 200, httprules.HealthBody, true)
	err := fmt.Errorf(`database "main" unreachable`)
	failing.Store(&err)
	want("check failing", 503, `{"status":"not_ready","reason":"database \"main\" unreachable"}`, false)
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`, ""), 1); len(r) != 1 || r[0].Close || bodyOf(r[0]) != `{"jsonrpc":"2.0","result":2,"id":1}` {
		t.Errorf("a call while not ready: %+v", r)
	}
	failing.Store(nil)
	want("check passing", 200, httprules.HealthBody, true)

	e.SetNotReady("warming caches")
	e.SetNotReady("loading snapshot") // the last one wins
	want("SetNotReady", 503, `{"status":"not_ready","reason":"loading snapshot"}`, false)
	if got := callHTTP(t, tcp, 41); got != `{"jsonrpc":"2.0","result":42,"id":41}` {
		t.Errorf("a call after SetNotReady: %s", got)
	}
	e.SetReady()
	want("SetReady", 200, httprules.HealthBody, true)
	e.SetNotReady("")
	want(`SetNotReady("")`, 503, `{"status":"not_ready","reason":"not ready"}`, false)

	e.SetReady()
	e.Drain()
	e.SetReady() // does not undo the drain
	want("drained", 503, engine.DrainingBody, false)
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`, ""), 1); len(r) != 1 || !r[0].Close {
		t.Errorf("a call while drained: %+v, want its connection's last (Connection: close)", r)
	}
	if !e.Undrain() || e.Undrain() {
		t.Error("Undrain: want true once (it drained), then false")
	}
	want("undrained", 200, httprules.HealthBody, true)
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1}`, ""), 1); len(r) != 1 || r[0].Close {
		t.Errorf("a call after Undrain: %+v, want keep-alive again", r)
	}
}

// Undrain does not undo the drain of a stop sequence (DrainFor, whose
// drain leads to Stop): the health check stays 503 during the grace.
func TestUndrain_doesNotUndoTheStopSequencesDrain(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	cut, ended := make(chan struct{}), make(chan struct{})
	go func() { e.DrainFor(time.Minute, cut); close(ended) }()
	defer func() { close(cut); <-ended }()
	for !func() bool { c, _ := health(t, tcp); return c == 503 }() {
		time.Sleep(time.Millisecond)
	}
	if e.Undrain() {
		t.Error("Undrain undid the drain of a stop sequence")
	}
	if c, b := health(t, tcp); c != 503 || b != engine.DrainingBody {
		t.Errorf("health %d %s after Undrain in the grace, want 503 draining", c, b)
	}
}

// Undrain does not undo a stop: the health check of a stopping engine
// stays 503 whatever the application does.
func TestUndrain_doesNotUndoStop(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	e.Drain()
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	e.Undrain()
	if e.Ready() {
		t.Error("Ready after Stop and Undrain")
	}
	if c, err := net.Dial("tcp", tcp); err == nil {
		c.Close()
		t.Error("a stopped engine accepted a connection after Undrain")
	}
}
