package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/auth"
)

// postAs posts body to url with the given headers and returns the status
// and the body of the reply.
func postAs(t *testing.T, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServe_apiKeysAndAdmin: with --api-keys a call needs a key, and
// admin_stats needs a key that grants admin; a raw stream, which cannot
// carry a key, is refused.
func TestServe_apiKeysAndAdmin(t *testing.T) {
	const admin, user = "admin-key-0123456789abcdef", "user-key-0123456789abcdef"
	keys := writeFile(t, "keys", "# demo keys\n"+admin+" admin\n"+user+"\n")
	urls := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--api-keys", keys)[0])
	stats := `{"jsonrpc":"2.0","method":"admin_stats","id":1}`
	if st, body := postAs(t, urls["http"], addCall); st != 401 {
		t.Errorf("no key: %d %q", st, body)
	}
	if st, body := postAs(t, urls["http"], addCall, "Authorization", "Bearer "+user); st != 200 || body != addReply {
		t.Errorf("user key: %d %q", st, body)
	}
	if st, body := postAs(t, urls["http"], stats, "Authorization", "Bearer "+user); st != 200 || !strings.Contains(body, `"code":-32003`) {
		t.Errorf("user key, admin_stats: %d %q", st, body)
	}
	if st, body := postAs(t, urls["http"], stats, "Authorization", "Bearer "+admin); st != 200 || !strings.Contains(body, `"connections":`) || !strings.Contains(body, `"transport":"http"`) {
		t.Errorf("admin key, admin_stats: %d %q", st, body)
	}
	addr := strings.TrimPrefix(urls["tcp"], "tcp://")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, addCall+"\n")
	if got, _ := io.ReadAll(c); !strings.Contains(string(got), `"code":-32003`) {
		t.Errorf("stream: %q", got)
	}
}

// TestServe_authOptional: jetrpc serve --api-keys F --auth-optional
// answers an anonymous add, refuses an anonymous admin_stats -32003 (not
// 401), answers a key with the admin grant, and refuses a wrong key
// 401; a stream, which cannot carry a key, is anonymous.
func TestServe_authOptional(t *testing.T) {
	const admin = "admin-key-0123456789abcdef"
	keys := writeFile(t, "keys", admin+" admin\n")
	urls := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--api-keys", keys, "--auth-optional")[0])
	stats := `{"jsonrpc":"2.0","method":"admin_stats","id":1}`
	if st, body := postAs(t, urls["http"], addCall); st != 200 || body != addReply {
		t.Errorf("anonymous add: %d %q", st, body)
	}
	if st, body := postAs(t, urls["http"], stats); st != 200 || !strings.Contains(body, `"code":-32003`) {
		t.Errorf("anonymous admin_stats: %d %q; want -32003", st, body)
	}
	if st, body := postAs(t, urls["http"], stats, "Authorization", "Bearer "+admin); st != 200 || !strings.Contains(body, `"connections":`) {
		t.Errorf("admin key, admin_stats: %d %q", st, body)
	}
	if st, body := postAs(t, urls["http"], addCall, "Authorization", "Bearer wrong-key-0123456789abcdef"); st != 401 {
		t.Errorf("wrong key: %d %q; want 401", st, body)
	}
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(urls["tcp"], "tcp://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, addCall+"\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || strings.TrimSpace(line) != addReply {
		t.Errorf("anonymous stream add: %q %v", line, err)
	}
}

// TestServe_jwtSecret: --jwt-secret accepts a fresh token signed with the
// secret, and refuses a stale one or one signed with another secret.
func TestServe_jwtSecret(t *testing.T) {
	secret := strings.Repeat("ab", 32)
	file := writeFile(t, "jwt.hex", "0x"+secret+"\n")
	urls := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--jwt-secret", file)[0])
	key, err := auth.LoadJWTSecret(file)
	if err != nil {
		t.Fatal(err)
	}
	token := func(secret []byte, iat time.Time) string {
		tok, err := auth.NewJWTToken(secret, iat)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	stats := `{"jsonrpc":"2.0","method":"admin_stats","id":1}`
	if st, body := postAs(t, urls["http"], stats, "Authorization", token(key, time.Now())); st != 200 || !strings.Contains(body, `"connections":`) {
		t.Errorf("fresh token: %d %q", st, body)
	}
	if st, _ := postAs(t, urls["http"], stats, "Authorization", token(key, time.Now().Add(-2*time.Minute))); st != 401 {
		t.Errorf("stale token: %d", st)
	}
	other := []byte(strings.Repeat("cd", 32))
	if st, _ := postAs(t, urls["http"], stats, "Authorization", token(other, time.Now())); st != 401 {
		t.Errorf("wrong secret: %d", st)
	}
}

// TestServe_corsAndVHosts: --cors answers preflights and marks replies;
// the default --vhosts refuses names other than localhost but lets IP
// addresses through.
func TestServe_corsAndVHosts(t *testing.T) {
	urls := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--cors", "https://app.example,https://other.example")[0])
	req, _ := http.NewRequest("OPTIONS", urls["http"], nil)
	req.Header.Set("Origin", "https://other.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://other.example" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if st, body := postAs(t, urls["http"], addCall, "Host", "evil.example"); st != 403 || body != "invalid host specified\n" {
		t.Errorf("evil host: %d %q", st, body)
	}
	if st, _ := postAs(t, urls["http"], addCall, "Host", "localhost:1"); st != 200 {
		t.Errorf("localhost: %d", st)
	}
	_ = startServe(t, 1, "--listen", "127.0.0.1:0", "--vhosts", "*")
}

// The whole HTTP policy has flags: --cors-headers and --cors-max-age
// shape the preflight's answer, --health-path moves the health check
// ("-" turns it off), --vhosts-strict refuses an address not listed, and
// a call from an Origin not allowed gets 403.
func TestServe_httpPolicyFlags(t *testing.T) {
	urls := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--cors", "https://app.example",
		"--cors-headers", "Content-Type,X-Trace", "--cors-max-age", "90s", "--health-path", "/ready")[0])
	req, _ := http.NewRequest("OPTIONS", urls["http"], nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header; resp.StatusCode != 204 || h.Get("Access-Control-Allow-Headers") != "Content-Type, X-Trace" || h.Get("Access-Control-Max-Age") != "90" {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
	get := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get(urls["http"] + "ready"); st != 200 {
		t.Errorf("GET /ready: %d", st)
	}
	if st := get(urls["http"] + "health"); st != 405 {
		t.Errorf("GET /health with --health-path /ready: %d", st)
	}
	if st, body := postAs(t, urls["http"], addCall, "Origin", "https://evil.example"); st != 403 || body != "origin not allowed\n" {
		t.Errorf("a call from another origin: %d %q", st, body)
	}
	off := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--health-path", "-", "--vhosts", "rpc.example", "--vhosts-strict")[0])
	if st, body := postAs(t, off["http"], addCall); st != 403 || body != "invalid host specified\n" {
		t.Errorf("--vhosts-strict, a call to the address: %d %q", st, body)
	}
	if st, _ := postAs(t, off["http"], addCall, "Host", "rpc.example"); st != 200 {
		t.Errorf("--vhosts-strict, a call to the name: %d", st)
	}
	req, _ = http.NewRequest("GET", off["http"]+"health", nil)
	req.Host = "rpc.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("--health-path -: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestServe_corsHeaderFlags: --cors-header is repeatable, and adds to
// the one list --cors-headers (its alias) fills; the preflight's
// Access-Control-Allow-Headers names them all, and --cors-max-age -1s
// sends no Access-Control-Max-Age.
func TestServe_corsHeaderFlags(t *testing.T) {
	urls := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--cors", "https://app.example",
		"--cors-header", "Content-Type", "--cors-header", "X-Trace", "--cors-headers", "X-Api-Key,Authorization", "--cors-max-age", "-1s")[0])
	req, _ := http.NewRequest("OPTIONS", urls["http"], nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, age := resp.Header["Access-Control-Max-Age"]
	if h := resp.Header; resp.StatusCode != 204 || h.Get("Access-Control-Allow-Headers") != "Content-Type, X-Trace, X-Api-Key, Authorization" || age {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
}

// TestServe_ipFilter: --deny-ip refuses loopback connections before
// they are read; --allow-ip admits them.
func TestServe_ipFilter(t *testing.T) {
	denied := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--deny-ip", "127.0.0.0/8")[0])
	if _, err := http.Post(denied["http"], "application/json", strings.NewReader(addCall)); err == nil {
		t.Error("denied address was served")
	}
	allowed := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--allow-ip", "127.0.0.1", "--allow-ip", "::1")[0])
	callHTTP(t, allowed["http"])
}

// TestServe_accessFlagErrors: a bad file or CIDR fails before serving.
func TestServe_accessFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--api-keys", filepath.Join(t.TempDir(), "missing")},
		{"--api-keys", writeFile(t, "short", "short\n")},
		{"--api-keys", writeFile(t, "empty", "# nothing\n")},
		{"--jwt-secret", writeFile(t, "bad", "not hex\n")},
		{"--allow-ip", "10.0.0.0/33"},
		{"--deny-ip", "nope"},
		{"--auth-optional"}, // nothing to make optional
	} {
		var out, errOut syncBuffer
		if err := run(t.Context(), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &out, &errOut); err == nil {
			t.Errorf("%q: no error", args)
		}
		if strings.Contains(out.String(), "serving") {
			t.Errorf("%q: served", args)
		}
	}
}

// TestServe_logSlow: --log-slow logs the calls slower than its duration,
// and only those.
func TestServe_logSlow(t *testing.T) {
	srv := serveOperate(t, false, "--listen", "127.0.0.1:0", "--log-slow", "20ms")
	urls, errOut := srv.urls, srv.errOut
	postAs(t, urls["http"], addCall)
	postAs(t, urls["http"], `{"jsonrpc":"2.0","method":"sleep","params":{"ms":50},"id":2}`)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(errOut.String(), "slow call") && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	logs := errOut.String()
	if !strings.Contains(logs, "method=sleep") || strings.Contains(logs, "method=add") || !strings.Contains(logs, "transport=http") {
		t.Errorf("logs: %q", logs)
	}
}
