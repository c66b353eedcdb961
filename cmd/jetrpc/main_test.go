package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/jetrpc/jetrpc/bench"
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

// TestBench_flagErrors: counts that bench.Config would take as "the
// default", and NaN or infinite rates and shares, are refused with a
// clear error before anything is dialed.
func TestBench_flagErrors(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"-c 0", "-c 0"},
		{"-c -3", "-c -3"},
		{"-pipeline 0", "-pipeline 0"},
		{"-pipeline -1", "-pipeline -1"},
		{"-batch -1", "-batch -1"},
		{"-rate NaN", "-rate NaN"},
		{"-rate Inf", "-rate +Inf"},
		{"-notify NaN", "-notify NaN"},
		{"-notify 1.5", "-notify 1.5"},
	} {
		args := append([]string{"bench", "-q"}, strings.Fields(c.args)...)
		args = append(args, "tcp://127.0.0.1:1")
		err := run(context.Background(), args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one naming %q", c.args, err, c.want)
		}
	}
	err := run(context.Background(), []string{"bench", "-q", "http://:8080/"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no host") {
		t.Errorf("a target without a host: err %v", err)
	}
}

// TestBench_warmupZero: an explicit -warmup 0 means none, where
// bench.Config's zero means the default.
func TestBench_warmupZero(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, bench.DefaultWarmup},
		{[]string{"-warmup", "0"}, -1},
		{[]string{"-warmup", "300ms"}, 300 * time.Millisecond},
	} {
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		cfg := bench.Config{Conns: 1, Pipeline: 1}
		fs.DurationVar(&cfg.Warmup, "warmup", bench.DefaultWarmup, "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := checkBenchFlags(fs, &cfg); err != nil || cfg.Warmup != c.want {
			t.Errorf("%v: warmup %v, err %v; want %v", c.args, cfg.Warmup, err, c.want)
		}
	}
}

// -h prints the usage and is not an error, for both commands.
func TestHelpIsNotAnError(t *testing.T) {
	for _, cmd := range []string{"serve", "bench"} {
		var errOut syncBuffer
		if err := run(context.Background(), []string{cmd, "-h"}, io.Discard, &errOut); err != nil {
			t.Errorf("%s -h: %v", cmd, err)
		}
		if !strings.Contains(errOut.String(), "-max") && !strings.Contains(errOut.String(), "-pipeline") {
			t.Errorf("%s -h printed no flags: %q", cmd, errOut.String())
		}
	}
}

// serve refuses bad arguments before it listens.
func TestServe_rejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"--http", "127.0.0.1:0", "127.0.0.1:9999"},
		{"--http", "127.0.0.1:0", "--ws-path", "ws"},
		{"--http", "127.0.0.1:0", "--cpuprofile", "/nonexistent/dir/x.prof"},
		{"--http", ""},
		{"--unix", ""},
		{"--http", "127.0.0.1:0", "--loops", "-3"},
		{"--http", "127.0.0.1:0", "--max-message", "-1"},
		{"--http", "127.0.0.1:0", "--stop-timeout", "0s"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		var out syncBuffer
		err := run(ctx, append([]string{"serve"}, args...), &out, io.Discard)
		cancel()
		if err == nil || strings.Contains(out.String(), "serving") {
			t.Errorf("%q: err %v, stdout %q: want an error before serving", args, err, out.String())
		}
	}
}
