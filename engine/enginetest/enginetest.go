// Package enginetest starts an engine for a test and talks HTTP to it:
// what the tests of the packages built on the engine (and programs'
// own tests) need again and again.
package enginetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// Start starts an engine serving tab on a free loopback TCP port, with
// opts (a logger that discards, unless opts give one), and stops it
// when the test ends. It returns the engine and its address
// ("127.0.0.1:PORT").
func Start(t testing.TB, tab *handler.Table, opts ...engine.Option) (*engine.Engine, string) {
	t.Helper()
	opts = append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	e := engine.New(tab, opts...)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e, e.Addrs()[0].String()
}

// Post sends body to url as a JSON-RPC POST (Content-Type:
// application/json) with the header lines given ("Name: value"), and
// returns the response, its body read and closed.
func Post(t testing.TB, url, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range header {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			t.Fatalf("enginetest.Post: header %q is not Name: value", h)
		}
		req.Header.Add(name, strings.TrimSpace(value))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
