package idempotency_test

// The Store over real sockets: the engine on loopback, HTTP and
// WebSocket clients whose connection drops while the first call runs,
// and whose retry on a new connection gets the stored result, the method
// having run once.

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/idempotency"
)

// engineServer serves a pay method that waits for gate, behind a Store
// keyed by header or param, with callers named by their X-User header.
func engineServer(t *testing.T) (addr string, runs *atomic.Int32, started, gate chan struct{}) {
	t.Helper()
	runs = new(atomic.Int32)
	started, gate = make(chan struct{}, 4), make(chan struct{})
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	handler.Register(tab, "pay", func(ctx context.Context, p struct {
		Amount int    `json:"amount"`
		Key    string `json:"key,omitempty"`
	}) (string, error) {
		n := runs.Add(1)
		started <- struct{}{}
		<-gate
		return fmt.Sprintf("receipt-%d", n), nil
	})
	tab.Use(idempotency.New(idempotency.Options{Key: idempotency.HeaderOrParamKey(idempotency.DefaultHeader, "key")}).Intercept)
	_, addr = enginetest.Start(t, tab, engine.WithAuthorize(func(m *handler.Meta) (handler.Grants, error) {
		m.Principal = strings.Clone(m.Header("X-User"))
		return nil, nil
	}))
	return addr, runs, started, gate
}

func waitStarted(t *testing.T, started chan struct{}) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the method did not start")
	}
}

func TestStore_engineHTTPRetryAfterDrop(t *testing.T) {
	addr, runs, started, gate := engineServer(t)
	body := `{"jsonrpc":"2.0","method":"pay","params":{"amount":100},"id":%d}`
	req := func(id int) string {
		b := fmt.Sprintf(body, id)
		return fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-User: ann\r\nIdempotency-Key: pay-1\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte(req(1))); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, started)
	c.Close() // the connection drops while the payment runs
	close(gate)
	// The retry, on a new connection, gets the first call's result: kept,
	// or awaited if the first has not quite finished.
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.Write([]byte(req(2))); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&sb)
	if got, want := strings.TrimSpace(sb.String()), `{"jsonrpc":"2.0","result":"receipt-1","id":2}`; got != want {
		t.Fatalf("retry: %s, want %s", got, want)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("pay ran %d times, want 1", n)
	}
}

func TestStore_engineWebSocketRetryAfterDrop(t *testing.T) {
	addr, runs, started, gate := engineServer(t)
	d := ws.Dialer{Header: ws.HandshakeHeaderHTTP(http.Header{"X-User": []string{"bob"}}), Timeout: 10 * time.Second}
	dial := func() net.Conn {
		c, _, _, err := d.Dial(context.Background(), "ws://"+addr+"/")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	msg := `{"jsonrpc":"2.0","method":"pay","params":{"amount":7,"key":"ws-1"},"id":%d}`
	c := dial()
	if err := wsutil.WriteClientText(c, []byte(fmt.Sprintf(msg, 1))); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, started)
	c.Close() // dropped while the payment runs
	close(gate)
	c = dial()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	if err := wsutil.WriteClientText(c, []byte(fmt.Sprintf(msg, 2))); err != nil {
		t.Fatal(err)
	}
	reply, err := wsutil.ReadServerText(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(reply), `{"jsonrpc":"2.0","result":"receipt-1","id":2}`; got != want {
		t.Fatalf("retry: %s, want %s", got, want)
	}
	// Another caller's key of the same name is its own.
	d.Header = ws.HandshakeHeaderHTTP(http.Header{"X-User": []string{"eve"}})
	c2 := dial()
	defer c2.Close()
	_ = c2.SetDeadline(time.Now().Add(15 * time.Second))
	if err := wsutil.WriteClientText(c2, []byte(fmt.Sprintf(msg, 3))); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, started)
	if reply, err = wsutil.ReadServerText(c2); err != nil || string(reply) != `{"jsonrpc":"2.0","result":"receipt-2","id":3}` {
		t.Fatalf("eve: %s %v", reply, err)
	}
	if n := runs.Load(); n != 2 {
		t.Fatalf("pay ran %d times, want 2 (bob once, eve once)", n)
	}
}
