package engine_test

// Tests of cancellation (cancel.go): a client that goes cancels its
// calls in flight; a cancel notification cancels the call with its id
// on the same connection.

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
)

// waiter is a blocking method that reports when it starts and waits for
// its context to be done, or for release.
type waiter struct {
	started chan string   // the method's "n" param, once it runs
	done    chan error    // ctx.Err() once the context is done
	release chan struct{} // closed: the method returns "ok"
}

func newWaiter() *waiter {
	return &waiter{started: make(chan string, 16), done: make(chan error, 16), release: make(chan struct{})}
}

// table returns a table with the methods wait (blocks until its context
// is done or release) and the options opts.
func (w *waiter) table(opts ...handler.Option) *handler.Table {
	tab := handler.NewTable(append([]handler.Option{handler.WithLogger(quiet()), func(o *handler.Options) { o.Metrics = true }}, opts...)...)
	handler.Register(tab, "wait", func(ctx context.Context, p struct {
		N string `json:"n"`
	}) (string, error) {
		w.started <- p.N
		select {
		case <-ctx.Done():
			w.done <- ctx.Err()
			return "", ctx.Err()
		case <-w.release:
			return "ok", nil
		}
	})
	handler.Register(tab, "quick", func(context.Context, []int) (int, error) { return 1, nil }) // blocking class, returns at once
	return tab
}

// seesDone waits (generously) for the method to see its context done.
func (w *waiter) seesDone(t *testing.T) {
	t.Helper()
	select {
	case err := <-w.done:
		if err != context.Canceled {
			t.Errorf("ctx.Err() = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the method never saw its context done")
	}
}

// notDone checks that the method's context stays live a while.
func (w *waiter) notDone(t *testing.T) {
	t.Helper()
	select {
	case err := <-w.done:
		t.Fatalf("the method's context was done (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
}

func (w *waiter) awaitStart(t *testing.T) string {
	t.Helper()
	select {
	case n := <-w.started:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("the method never started")
	}
	return ""
}

// handled returns how many calls of method ended with code.
func handled(t *testing.T, tab *handler.Table, method string, code parser.Code) uint64 {
	t.Helper()
	var n uint64
	tab.Metrics(func(m *stats.Method) {
		if m.Method != method {
			return
		}
		for _, c := range m.Handled {
			if c.Code == code {
				n = c.Count
			}
		}
	})
	return n
}

// waitHandled waits for a call of method to be counted with code.
func waitHandled(t *testing.T, tab *handler.Table, method string, code parser.Code) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if handled(t, tab, method, code) > 0 {
			return
		}
	}
	t.Fatalf("no call of %s counted with code %d", method, code)
}

// An HTTP client that closes its socket while its call runs cancels the
// call's context, and the call is counted as cancelled: with and without
// cancel notifications, with requests buffered behind the one that runs,
// and with a reply held for order behind it. While its connection is
// held back (MaxInFlight reached: its socket is not read) a client's
// reset cancels at once; its FIN is read once the gate opens (see
// pause_linux.go: a half-closed client held back still gets its
// replies), so those cases reset.
func TestCancel_HTTPClientGoneCancelsItsCalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []handler.Option
		behind string // more requests sent after the blocking one
		eopts  []engine.Option
		reset  bool // the client resets its connection rather than close it
	}{
		{name: "held back, MaxInFlight 1", behind: strings.Repeat(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`, ""), 3),
			eopts: []engine.Option{engine.WithMaxInFlight(1)}, reset: true},
		{name: "held back, cancel notifications on", opts: []handler.Option{handler.WithCancel(handler.CancelReplyError, handler.LSPCancel)},
			behind: strings.Repeat(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`, ""), 3), eopts: []engine.Option{engine.WithMaxInFlight(1)}, reset: true},
		{name: "plain"},
		{name: "a reply held for order behind it", behind: post(`{"jsonrpc":"2.0","method":"quick","params":[1],"id":2}`, "")},
		{name: "cancel notifications on", opts: []handler.Option{handler.WithCancel(handler.CancelReplyError, handler.LSPCancel)}},
		{name: "requests buffered behind", behind: strings.Repeat(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`, ""), 3)},
		{name: "cancel notifications on, requests behind", opts: []handler.Option{handler.WithCancel(handler.CancelReplyNone, handler.MCPCancel)},
			behind: post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWaiter()
			tab := w.table(tc.opts...)
			e, tcp, _ := startEngine(t, tab, tc.eopts...)
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":1}`, "") + tc.behind)); err != nil {
				t.Fatal(err)
			}
			w.awaitStart(t)
			w.notDone(t)
			if tc.reset {
				_ = c.(*net.TCPConn).SetLinger(0)
			}
			_ = c.Close()
			w.seesDone(t)
			waitHandled(t, tab, "wait", parser.CodeCancelled)
			waitConns(t, e, 0)
		})
	}
}

// A stream client that resets its connection while its calls run
// cancels them, with cancel notifications on (its calls have contexts of
// their own). (A stream client's EOF is a half-close: its calls finish,
// TestHalfClose_repliesStillDelivered.)
func TestCancel_streamClientResetCancelsItsCalls(t *testing.T) {
	w := newWaiter()
	tab := w.table(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
	e, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":1}`))
	w.awaitStart(t)
	_ = s.c.(*net.TCPConn).SetLinger(0)
	_ = s.c.Close()
	w.seesDone(t)
	waitConns(t, e, 0)
}

// A cancel notification cancels the call with its id on the same
// connection: the method sees its context done, and the call answers
// per CancelReply — -32800 by default, nothing with CancelReplyNone —
// on a stream and on a WebSocket.
func TestCancel_notificationCancelsTheCallWithItsID(t *testing.T) {
	call := `{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":"a-1"}`
	lsp := `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a-1"}}`
	mcp := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a-1","reason":"user"}}`
	after := `{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`
	wantErr := `{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"a-1"}`
	t.Run("stream, LSP, error reply", func(t *testing.T) {
		w := newWaiter()
		tab := w.table(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel, handler.MCPCancel))
		_, tcp, _ := startEngine(t, tab)
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(call))
		w.awaitStart(t)
		s.send(t, []byte(lsp))
		w.seesDone(t)
		if got := strings.TrimSpace(string(s.line(t))); got != wantErr {
			t.Errorf("reply %s, want %s", got, wantErr)
		}
		waitHandled(t, tab, "wait", parser.CodeCancelled)
	})
	t.Run("WebSocket, MCP, no reply", func(t *testing.T) {
		w := newWaiter()
		tab := w.table(handler.WithCancel(handler.CancelReplyNone, handler.MCPCancel))
		_, tcp, _ := startEngine(t, tab)
		c := dialWS(t, tcp, nil)
		if err := c.WriteMessage(websocket.TextMessage, []byte(call)); err != nil {
			t.Fatal(err)
		}
		w.awaitStart(t)
		if err := c.WriteMessage(websocket.TextMessage, []byte(mcp)); err != nil {
			t.Fatal(err)
		}
		w.seesDone(t)
		// The next call's reply is the first the client reads.
		if err := c.WriteMessage(websocket.TextMessage, []byte(after)); err != nil {
			t.Fatal(err)
		}
		w.awaitStart(t)
		close(w.release)
		if got, want := string(wsRead(t, c)), `{"jsonrpc":"2.0","result":"ok","id":2}`; got != want {
			t.Errorf("reply %s, want %s", got, want)
		}
	})
	t.Run("WebSocket, LSP, error reply", func(t *testing.T) {
		w := newWaiter()
		tab := w.table(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
		_, tcp, _ := startEngine(t, tab)
		c := dialWS(t, tcp, nil)
		if err := c.WriteMessage(websocket.TextMessage, []byte(call)); err != nil {
			t.Fatal(err)
		}
		w.awaitStart(t)
		if got := string(wsCall(t, c, lsp[:len(lsp)-1]+`,"id":"c"}`)); got != `{"jsonrpc":"2.0","result":null,"id":"c"}` {
			t.Errorf("the cancel request's reply: %s", got) // sent as a request, it gets a null result
		}
		w.seesDone(t)
		if got := string(wsRead(t, c)); got != wantErr {
			t.Errorf("reply %s, want %s", got, wantErr)
		}
	})
}

// A cancel whose id matches no call in flight of its connection does
// nothing: an unknown id, an id of another type (1 and "1" differ), the
// id of a call on another connection, the id of a finished call, and
// params without the id member; the call goes on and answers its result.
func TestCancel_unknownOrForeignIDIsHarmless(t *testing.T) {
	w := newWaiter()
	tab := w.table(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	other := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":1}`))
	w.awaitStart(t)
	for _, c := range []struct {
		s   *streamClient
		msg string
	}{
		{s, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`},
		{s, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"1"}}`},
		{s, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"requestId":1}}`},
		{s, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":[1]}`},
		{s, `{"jsonrpc":"2.0","method":"$/cancelRequest"}`},
		{other, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`},
	} {
		c.s.send(t, []byte(c.msg))
	}
	w.notDone(t)
	close(w.release)
	if got, want := strings.TrimSpace(string(s.line(t))), `{"jsonrpc":"2.0","result":"ok","id":1}`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
	// Finished: a cancel of its id now does nothing either.
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`))
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`))
	w.awaitStart(t)
	if got, want := strings.TrimSpace(string(s.line(t))), `{"jsonrpc":"2.0","result":"ok","id":2}`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
}

// A method that returns its result although a cancel notification came
// while it ran is answered as cancelled all the same; the next call on
// the same (pooled) job is not.
func TestCancel_cancelledCallIgnoresItsResult(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
	gate := make(chan struct{})
	handler.Register(tab, "stubborn", func(ctx context.Context, p []int) (int, error) {
		if p[0] == 1 {
			<-ctx.Done()
			<-gate
		}
		return p[0], nil
	})
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"stubborn","params":[1],"id":1}`)) // read before the cancel: on a worker when it comes
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`))
	close(gate)
	if got, want := strings.TrimSpace(string(s.line(t))), `{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1}`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
	for range 3 {
		s.send(t, []byte(`{"jsonrpc":"2.0","method":"stubborn","params":[2],"id":2}`))
		if got, want := strings.TrimSpace(string(s.line(t))), `{"jsonrpc":"2.0","result":2,"id":2}`; got != want {
			t.Errorf("reply %s, want %s", got, want)
		}
	}
}

// A batch's elements are not reached by a cancel notification: the batch
// runs to its end.
func TestCancel_batchElementsAreNotCancelled(t *testing.T) {
	w := newWaiter()
	tab := w.table(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
	_, tcp, _ := startEngine(t, tab)
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`[{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":1}]`))
	w.awaitStart(t)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`))
	w.notDone(t)
	close(w.release)
	if got, want := strings.TrimSpace(string(s.line(t))), `[{"jsonrpc":"2.0","result":"ok","id":1}]`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
}

// BenchmarkCancel_clientGoneToDone measures how long a method waits,
// after its HTTP client closes its connection, to see its context done:
// close-to-done/op is the mean, max-close-to-done the longest (the
// tests assert no time; this is where it is measured).
func BenchmarkCancel_clientGoneToDone(b *testing.B) {
	w := newWaiter()
	_, tcp, _ := startEngine(b, w.table())
	msg := []byte(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":1}`, ""))
	var total, longest time.Duration
	for b.Loop() {
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		<-w.started
		start := time.Now()
		_ = c.Close()
		if err := <-w.done; err != context.Canceled {
			b.Fatal(err)
		}
		d := time.Since(start)
		total += d
		longest = max(longest, d)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "close-to-done-ns/op")
	b.ReportMetric(float64(longest.Nanoseconds()), "max-close-to-done-ns")
}
