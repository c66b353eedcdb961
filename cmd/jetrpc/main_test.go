package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe starts the server on a free port, calls it over HTTP, and
// stops it by cancelling its context.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0"}, &out, io.Discard) }()
	var url, wsURL string
	for deadline := time.Now().Add(10 * time.Second); wsURL == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			for _, f := range strings.Fields(sc.Text()) {
				f = strings.TrimSuffix(f, ",")
				switch {
				case strings.HasPrefix(f, "http://"):
					url = f
				case strings.HasPrefix(f, "ws://"):
					wsURL = f
				}
			}
		}
	}
	if url == "" || wsURL == "" {
		t.Fatalf("no address printed: %q", out.String())
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`[{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":1},{"jsonrpc":"2.0","method":"sleep","params":[1],"id":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `[{"jsonrpc":"2.0","result":19,"id":1},{"jsonrpc":"2.0","result":1,"id":2}]`; string(body) != want {
		t.Fatalf("got %s, want %s", body, want)
	}
	// The demo subscription over WebSocket.
	c, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"clock_subscribe","params":{"interval_ms":5},"id":1}`)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i, want := range []string{`"result":"0x`, `"method":"clock_subscription","params":{"subscription":"0x`} {
		_, msg, err := c.ReadMessage()
		if err != nil || !strings.Contains(string(msg), want) {
			t.Fatalf("message %d: %v %s", i, err, msg)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestRun_usage(t *testing.T) {
	if err := run(context.Background(), nil, io.Discard, io.Discard); err == nil {
		t.Fatal("no command accepted")
	}
	if err := run(context.Background(), []string{"bogus"}, io.Discard, io.Discard); err == nil {
		t.Fatal("unknown command accepted")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "serve") {
		t.Fatalf("help: %v %q", err, out.String())
	}
}
