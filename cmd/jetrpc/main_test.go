package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
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

// -h prints the usage to stdout and is not an error, for both commands.
func TestHelpIsNotAnError(t *testing.T) {
	for _, cmd := range []string{"serve", "bench"} {
		var out, errOut syncBuffer
		if err := run(context.Background(), []string{cmd, "-h"}, &out, &errOut); err != nil {
			t.Errorf("%s -h: %v", cmd, err)
		}
		if !strings.Contains(out.String(), "-max") && !strings.Contains(out.String(), "-pipeline") {
			t.Errorf("%s -h printed no flags: %q", cmd, out.String())
		}
		if errOut.String() != "" {
			t.Errorf("%s -h wrote to stderr: %q", cmd, errOut.String())
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

// oneLine joins a wrapped text's words with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestServe_help: -h, --help, help and jetrpc help serve print the usage
// to stdout, with the default listener and the aliases of --listen, and
// are not an error.
func TestServe_help(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "-h"},
		{"serve", "--help"},
		{"serve", "-help"},
		{"serve", "help"},
		{"help", "serve"},
		{"serve", "--listen", "127.0.0.1:0", "-h"}, // -h wins: nothing listens
	} {
		var out, errOut syncBuffer
		if err := run(context.Background(), args, &out, &errOut); err != nil {
			t.Errorf("%q: %v", args, err)
		}
		text := oneLine(out.String())
		for _, want := range []string{
			"usage: jetrpc serve [--listen ADDR]... [flags]",
			"With no --listen it listens on 127.0.0.1:8080",
			"--http, --tcp and --ws are aliases of --listen",
			"--http ADDR, --tcp ADDR, --ws ADDR aliases of --listen",
			"--unix PATH the same as --listen unix://PATH",
			"--max-message BYTES",
			"examples:",
			"jetrpc serve --listen 127.0.0.1:0",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%q: the usage lacks %q:\n%s", args, want, out.String())
			}
		}
		if strings.Contains(out.String(), "serving") || errOut.String() != "" {
			t.Errorf("%q: stdout %q, stderr %q", args, out.String(), errOut.String())
		}
	}
}

// TestBench_help: the same for bench, which tells what it does without a
// target.
func TestBench_help(t *testing.T) {
	for _, args := range [][]string{{"bench", "-h"}, {"bench", "--help"}, {"bench", "help"}, {"help", "bench"}} {
		var out, errOut syncBuffer
		if err := run(context.Background(), args, &out, &errOut); err != nil {
			t.Errorf("%q: %v", args, err)
		}
		text := oneLine(out.String())
		for _, want := range []string{
			"usage: jetrpc bench [flags] [target]",
			"With no target it starts the bundled server in-process",
			"-pipeline N",
			"-c N connections (default 64)",
			"examples:",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%q: the usage lacks %q:\n%s", args, want, out.String())
			}
		}
		if errOut.String() != "" {
			t.Errorf("%q: stderr %q", args, errOut.String())
		}
	}
}

// TestRun_help: jetrpc -h lists the commands on stdout; no command or an
// unknown one prints the error first, then the commands, to stderr.
func TestRun_help(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errOut syncBuffer
		if err := run(context.Background(), args, &out, &errOut); err != nil || errOut.String() != "" {
			t.Errorf("%q: %v, stderr %q", args, err, errOut.String())
		}
		for _, want := range []string{"serve", "bench", "help"} {
			if !strings.Contains(out.String(), "\n  "+want+" ") {
				t.Errorf("%q: %q not listed: %q", args, want, out.String())
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "jetrpc: no command\n"},
		{[]string{"bogus"}, `jetrpc: unknown command "bogus"` + "\n"},
		{[]string{"help", "bogus"}, `jetrpc: help: unknown command "bogus"` + "\n"},
	} {
		var out, errOut syncBuffer
		err := run(context.Background(), c.args, &out, &errOut)
		if !errors.As(err, new(errUsage)) {
			t.Errorf("%q: err %v, want an errUsage", c.args, err)
		}
		if !strings.HasPrefix(errOut.String(), c.want) || !strings.Contains(errOut.String(), "usage: jetrpc <command>") || out.String() != "" {
			t.Errorf("%q: stdout %q, stderr %q", c.args, out.String(), errOut.String())
		}
	}
}

// TestRun_flagError: a bad flag or argument prints the error first, then
// the command's usage, to stderr, returns the error as an errUsage (main
// does not print it again), and serves nothing.
func TestRun_flagError(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // stderr's first line
	}{
		{[]string{"serve", "--bogus"}, "jetrpc serve: flag provided but not defined: -bogus"},
		{[]string{"serve", "--listen"}, "jetrpc serve: flag needs an argument: -listen"},
		{[]string{"serve", "--listen", "8080"}, `jetrpc serve: invalid value "8080" for flag -listen: want host:port`},
		{[]string{"serve", "--listen", "udp://127.0.0.1:0"}, `jetrpc serve: invalid value "udp://127.0.0.1:0" for flag -listen: unsupported address`},
		{[]string{"serve", "--listen", "/tmp/x.sock"}, `jetrpc serve: invalid value "/tmp/x.sock" for flag -listen: a Unix socket is written unix:///tmp/x.sock`},
		{[]string{"serve", "--listen", "unix://"}, `jetrpc serve: invalid value "unix://" for flag -listen: empty path`},
		{[]string{"serve", "--unix", "tcp://127.0.0.1:0"}, `jetrpc serve: invalid value "tcp://127.0.0.1:0" for flag -unix: --unix takes a socket path`},
		{[]string{"serve", "--loops", "many"}, `jetrpc serve: invalid value "many" for flag -loops`},
		{[]string{"serve", "--listen", "127.0.0.1:0", "127.0.0.1:9999"}, `jetrpc serve: unexpected argument "127.0.0.1:9999"`},
		{[]string{"bench", "-bogus"}, "jetrpc bench: flag provided but not defined: -bogus"},
		{[]string{"bench", "-c", "x"}, `jetrpc bench: invalid value "x" for flag -c`},
		{[]string{"bench", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2"}, "jetrpc bench: one target at most"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var out, errOut syncBuffer
		err := run(ctx, c.args, &out, &errOut)
		cancel()
		if !errors.As(err, new(errUsage)) {
			t.Errorf("%q: err %v, want an errUsage", c.args, err)
			continue
		}
		first, rest, _ := strings.Cut(errOut.String(), "\n")
		if !strings.HasPrefix(first, c.want) || first != "jetrpc "+c.args[0]+": "+err.Error() {
			t.Errorf("%q: stderr starts %q, err %v; want %q", c.args, first, err, c.want)
		}
		if !strings.Contains(rest, "usage: jetrpc "+c.args[0]) || !strings.Contains(rest, "examples:") {
			t.Errorf("%q: no usage after the error: %q", c.args, rest)
		}
		if out.String() != "" {
			t.Errorf("%q: stdout %q", c.args, out.String())
		}
	}
}

// TestListenAddr: the forms --listen and --unix take, and the engine
// addresses they become.
func TestListenAddr(t *testing.T) {
	for _, c := range []struct {
		in      string
		unix    bool
		want    string // "" for an error
		wantErr string
	}{
		{in: "127.0.0.1:8080", want: "tcp://127.0.0.1:8080"},
		{in: ":0", want: "tcp://:0"},
		{in: "localhost:9000", want: "tcp://localhost:9000"},
		{in: "[::1]:0", want: "tcp://[::1]:0"},
		{in: "tcp://127.0.0.1:0", want: "tcp://127.0.0.1:0"},
		{in: "tcp4://0.0.0.0:0", want: "tcp4://0.0.0.0:0"},
		{in: "tcp6://[::1]:0", want: "tcp6://[::1]:0"},
		{in: "unix:///run/rpc.sock", want: "unix:///run/rpc.sock"},
		{in: "unix://rel.sock", want: "unix://rel.sock"},
		{in: "/run/rpc.sock", unix: true, want: "unix:///run/rpc.sock"},
		{in: "unix:///run/rpc.sock", unix: true, want: "unix:///run/rpc.sock"},
		{in: "", wantErr: "empty address"},
		{in: "8080", wantErr: "want host:port"},
		{in: "tcp://", wantErr: "want host:port"},
		{in: "tcp://8080", wantErr: "want host:port"},
		{in: "http://127.0.0.1:0", wantErr: "unsupported address"},
		{in: "ws://127.0.0.1:0/", wantErr: "unsupported address"},
		{in: "unix://", wantErr: "empty path"},
		{in: "/run/rpc.sock", wantErr: "unix:///run/rpc.sock"},
		{in: "./rpc.sock", wantErr: "unix://./rpc.sock"},
		{in: "", unix: true, wantErr: "empty path"},
		{in: "unix://", unix: true, wantErr: "empty path"},
		{in: "tcp://127.0.0.1:0", unix: true, wantErr: "--unix takes a socket path"},
	} {
		got, err := listenAddr(c.in, c.unix)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("listenAddr(%q, %v) = %q, %v; want an error with %q", c.in, c.unix, got, err, c.wantErr)
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("listenAddr(%q, %v) = %q, %v; want %q", c.in, c.unix, got, err, c.want)
		}
	}
}

// startServe runs jetrpc serve with args until the test ends, and returns
// the lines "jetrpc: serving JSON-RPC on …" it printed, once there are n.
func startServe(t *testing.T, n int, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), &out, &errOut) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve %q: %v", args, err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("serve %q did not stop", args)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var lines []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "jetrpc: serving JSON-RPC on ") {
				lines = append(lines, l)
			}
		}
		if len(lines) == n {
			return lines
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve %q: %v; stdout %q, stderr %q", args, err, out.String(), errOut.String())
		default:
		}
	}
	t.Fatalf("serve %q: want %d listeners, stdout %q, stderr %q", args, n, out.String(), errOut.String())
	return nil
}

// urlsIn returns the URLs of a startup line, by scheme.
func urlsIn(line string) map[string]string {
	urls := map[string]string{}
	for _, f := range strings.Fields(line) {
		f = strings.TrimSuffix(f, ",")
		if scheme, _, ok := strings.Cut(f, "://"); ok {
			urls[scheme] = f
		}
	}
	return urls
}

const (
	addCall  = `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	addReply = `{"jsonrpc":"2.0","result":3,"id":1}`
)

// callStream sends addCall over a stream connection to network, address
// and checks the reply line.
func callStream(t *testing.T, network, address string) {
	t.Helper()
	c, err := net.DialTimeout(network, address, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, addCall+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != addReply+"\n" {
		t.Fatalf("%s %s: got %q, %v; want %s", network, address, line, err, addReply)
	}
}

// callHTTP posts addCall to url and checks the reply.
func callHTTP(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(addCall))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(body) != addReply {
		t.Fatalf("POST %s: %d %q %v; want 200 %s", url, resp.StatusCode, body, err, addReply)
	}
}

// TestServe_listen: --listen with port 0 binds a free port, prints its
// http://, ws:// and tcp:// URLs, and serves a call over HTTP and over a
// raw TCP stream on it.
func TestServe_listen(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "tcp://127.0.0.1:0"} {
		t.Run(addr, func(t *testing.T) {
			lines := startServe(t, 1, "--listen", addr)
			urls := urlsIn(lines[0])
			if !strings.HasPrefix(urls["http"], "http://127.0.0.1:") || strings.HasSuffix(urls["http"], ":0/") ||
				urls["ws"] != "ws"+strings.TrimPrefix(urls["http"], "http") ||
				urls["tcp"] != "tcp://"+strings.TrimSuffix(strings.TrimPrefix(urls["http"], "http://"), "/") {
				t.Fatalf("startup line %q: URLs %v", lines[0], urls)
			}
			callHTTP(t, urls["http"])
			callStream(t, "tcp", strings.TrimPrefix(urls["tcp"], "tcp://"))
		})
	}
}

// TestServe_listenAliases: --http, --tcp and --ws are --listen under other
// names (each serves HTTP and streams), --unix PATH is --listen
// unix://PATH, and they mix with --listen, one startup line per listener,
// in order.
func TestServe_listenAliases(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix sockets")
	}
	dir, err := os.MkdirTemp("", "jetrpc") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock1, sock2 := filepath.Join(dir, "a.sock"), filepath.Join(dir, "b.sock")
	lines := startServe(t, 6,
		"--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--ws", "127.0.0.1:0",
		"--unix", sock1, "--listen", "unix://"+sock2)
	for i, line := range lines[:4] {
		urls := urlsIn(line)
		if urls["http"] == "" || urls["ws"] == "" || urls["tcp"] == "" {
			t.Fatalf("line %d %q: URLs %v", i, line, urls)
		}
		callHTTP(t, urls["http"])
		callStream(t, "tcp", strings.TrimPrefix(urls["tcp"], "tcp://"))
	}
	for i, sock := range []string{sock1, sock2} {
		if want := fmt.Sprintf("jetrpc: serving JSON-RPC on unix://%s ", sock); !strings.HasPrefix(lines[4+i], want) {
			t.Errorf("line %d %q, want %q…", 4+i, lines[4+i], want)
		}
		callStream(t, "unix", sock)
	}
}

// Errors are printed with one "jetrpc" prefix: a command's error, whose
// text has none, gets the command's; another gets "jetrpc: " unless its
// text starts with it.
func TestErrorLine_onePrefix(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{commandErr{"bench", errors.New(`target "ftp://x" must start with http://`)}, `jetrpc bench: target "ftp://x" must start with http://`},
		{fmt.Errorf("wrapped: %w", commandErr{"bench", errors.New("lost")}), "jetrpc bench: wrapped: lost"},
		{errors.New("jetrpc: serve: bad"), "jetrpc: serve: bad"},
		{errors.New("open /x: no such file or directory"), "jetrpc: open /x: no such file or directory"},
		{errors.New("jetrpcx is not a prefix of its own"), "jetrpc: jetrpcx is not a prefix of its own"},
		{errors.New("jetrpc bench: is no longer taken as a prefix"), "jetrpc: jetrpc bench: is no longer taken as a prefix"},
	} {
		if got := errorLine(c.err); got != c.want {
			t.Errorf("%q: %q, want %q", c.err, got, c.want)
		}
	}
}

// A failing jetrpc serve prints one prefix, its command's: its errors
// carry none of their own (they read "serve: ..." inside "jetrpc: ").
func TestServe_errorOnePrefix(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--api-keys", "/nonexistent/keys"},
		{"serve", "--metrics", "bogus:addr:x"},
		{"serve", "--max-conns", "-1"},
	} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		if err == nil {
			t.Errorf("%q: no error", args)
			continue
		}
		line := errorLine(err)
		if !strings.HasPrefix(line, "jetrpc serve: ") || strings.Count(line, "serve:") != 1 {
			t.Errorf("%q: %q, want one prefix \"jetrpc serve: \"", args, line)
		}
	}
}
