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

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
)

// waiter is a blocking method that reports when it starts and waits for
// its context to be done, or for release.
type waiter struct {
	started chan string     // the method's "n" param, once it runs
	done    chan error      // ctx.Err() once the context is done
	release chan struct{}   // closed: the method returns "ok"
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
// cancel notifications, while the connection is held back (requests
// buffered behind the one that runs), and for a request whose reply
// would be held for order behind it.
func TestCancel_HTTPClientGoneCancelsItsCalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []handler.Option
		behind string // more requests sent after the blocking one
	}{
		{name: "plain"},
		{name: "cancel notifications on", opts: []handler.Option{handler.WithCancel(handler.CancelReplyError, handler.LSPCancel)}},
		{name: "requests buffered behind", behind: strings.Repeat(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`, ""), 3)},
		{name: "cancel notifications on, requests behind", opts: []handler.Option{handler.WithCancel(handler.CancelReplyNone, handler.MCPCancel)},
			behind: post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"2"},"id":2}`, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWaiter()
			tab := w.table(tc.opts...)
			e, tcp, _ := startEngine(t, tab)
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte(post(`{"jsonrpc":"2.0","method":"wait","params":{"n":"1"},"id":1}`, "") + tc.behind)); err != nil {
				t.Fatal(err)
			}
			w.awaitStart(t)
			w.notDone(t)
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
