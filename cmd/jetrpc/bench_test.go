package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jetrpc/jetrpc/bench"
)

// writeSecret writes a JWT secret file as geth does (0x, 64 hex digits,
// a newline) and returns its path and the secret.
func writeSecret(t *testing.T) (path string, secret []byte) {
	t.Helper()
	const hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	path = filepath.Join(t.TempDir(), "jwt.hex")
	if err := os.WriteFile(path, []byte("0x"+hex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		secret = append(secret, byte(i))
	}
	return path, secret
}

// TestBench_authFlags: -header is repeatable and adds canonical names;
// -jwt-secret reads the file when parsed.
func TestBench_authFlags(t *testing.T) {
	path, secret := writeSecret(t)
	var cfg bench.Config
	fs, _ := newBenchFlags(&cfg)
	err := fs.Parse([]string{"-header", "X-Api-Key: abc", "--header", "x-multi:a", "-header", "X-Multi:  b c ", "--jwt-secret", path})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-Api-Key": {"abc"}, "X-Multi": {"a", "b c"}}
	if !reflect.DeepEqual(cfg.Header, want) {
		t.Errorf("header %v, want %v", cfg.Header, want)
	}
	if !reflect.DeepEqual(cfg.JWTSecret, secret) {
		t.Errorf("secret %x, want %x", cfg.JWTSecret, secret)
	}
	if err := checkAuthFlags(&cfg, "ws://127.0.0.1:1/"); err != nil {
		t.Errorf("a ws:// target: %v", err)
	}
	if err := checkAuthFlags(&cfg, ""); err != nil { // the in-process server, over HTTP
		t.Errorf("no target: %v", err)
	}
}

// TestBench_authFlagErrors: a bad -header or -jwt-secret, or one with a
// raw stream target, is a usage error printed before anything is dialed.
func TestBench_authFlagErrors(t *testing.T) {
	secret, _ := writeSecret(t)
	short := filepath.Join(t.TempDir(), "short.hex")
	if err := os.WriteFile(short, []byte("0x0102\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // in stderr's first line
	}{
		{[]string{"-header", "NoColon", "http://127.0.0.1:1/"}, `invalid value "NoColon" for flag -header: header "NoColon": want 'Name: Value'`},
		{[]string{"-header", "Bad Name: x", "http://127.0.0.1:1/"}, `header name "Bad Name": not an HTTP token`},
		{[]string{"-header", ": x", "http://127.0.0.1:1/"}, "a header without a name"},
		{[]string{"-header", "X-A: a\r\nX-B: b", "http://127.0.0.1:1/"}, "header X-A: its value holds a control character"},
		{[]string{"-header", "X-A: a\nb", "http://127.0.0.1:1/"}, "control character"},
		{[]string{"-header", "Host: example.com", "http://127.0.0.1:1/"}, "header Host is the tool's own; it cannot be set"},
		{[]string{"-header", "content-type: text/plain", "http://127.0.0.1:1/"}, "header content-type is the tool's own"},
		{[]string{"-header", "Transfer-Encoding: chunked", "http://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Connection: close", "http://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Upgrade: h2c", "ws://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Content-Length: 3", "http://127.0.0.1:1/"}, "the tool's own"},
		{[]string{"-header", "Sec-WebSocket-Protocol: x", "ws://127.0.0.1:1/"}, "Sec-WebSocket-* headers are the tool's own"},
		{[]string{"-jwt-secret", filepath.Join(t.TempDir(), "none"), "http://127.0.0.1:1/"}, "for flag -jwt-secret: open"},
		{[]string{"-jwt-secret", short, "http://127.0.0.1:1/"}, "the JWT secret is 2 bytes; want 32"},
		{[]string{"-header", "X-A: 1", "tcp://127.0.0.1:1"}, "need an http:// or ws:// target; tcp://127.0.0.1:1 is a raw stream"},
		{[]string{"-jwt-secret", secret, "unix:///tmp/jetrpc.sock"}, "need an http:// or ws:// target"},
		{[]string{"-header", "Authorization: Basic eA==", "-jwt-secret", secret, "http://127.0.0.1:1/"}, "the JWT is sent as the Authorization header"},
	} {
		args := append([]string{"bench", "-q"}, c.args...)
		var out, errOut syncBuffer
		err := run(context.Background(), args, &out, &errOut)
		if !errors.As(err, new(errUsage)) {
			t.Errorf("%q: err %v, want an errUsage", c.args, err)
			continue
		}
		first, rest, _ := strings.Cut(errOut.String(), "\n")
		if !strings.Contains(first, c.want) || first != "jetrpc bench: "+err.Error() {
			t.Errorf("%q: stderr starts %q; want it to hold %q", c.args, first, c.want)
		}
		if !strings.Contains(rest, "usage: jetrpc bench") || out.String() != "" {
			t.Errorf("%q: stdout %q, stderr %q", c.args, out.String(), errOut.String())
		}
	}
}

// TestBench_auth: jetrpc bench -header -jwt-secret against a server that
// answers 401 unless the header and a valid JWT (HS256, iat within 60 s,
// as geth checks it) come with the request.
func TestBench_auth(t *testing.T) {
	path, secret := writeSecret(t)
	var good, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return secret, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuedAt())
		iat, _ := claims.GetIssuedAt()
		if err != nil || iat == nil || time.Since(iat.Time).Abs() > 60*time.Second || r.Header.Get("X-Api-Key") != "k1" {
			bad.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		good.Add(1)
		_, id, _ := strings.Cut(string(b), `"id":`)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","result":3,"id":`+strings.TrimSuffix(id, "}")+`}`)
	}))
	defer srv.Close()
	args := []string{"bench", "-q", "-json", "-c", "2", "-n", "100", "-warmup", "0", "-header", "X-Api-Key: k1", "-jwt-secret", path, srv.URL + "/"}
	if err := run(context.Background(), args, io.Discard, io.Discard); err != nil || bad.Load() != 0 || good.Load() < 100 {
		t.Fatalf("err %v; %d requests let in, %d refused", err, good.Load(), bad.Load())
	}
	// Without the JWT, the server's refusals are the run's errors.
	args = []string{"bench", "-q", "-json", "-c", "1", "-n", "10", "-warmup", "0", "-header", "X-Api-Key: k1", srv.URL + "/"}
	if err := run(context.Background(), args, io.Discard, io.Discard); err == nil || bad.Load() == 0 {
		t.Fatalf("no JWT: err %v, %d refused", err, bad.Load())
	}
}
