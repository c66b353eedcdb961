package main

// A real HAProxy in front of two jetrpc serve processes (Linux; skipped
// where HAProxy is not installed, a failure with JETRPC_REQUIRE_HAPROXY=1
// as in CI): deploy/haproxy.cfg as shipped, with its active health
// check, which takes a draining node out before it stops.

import (
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// requireHAProxy turns a missing HAProxy into a failure (CI installs it).
const requireHAProxy = "JETRPC_REQUIRE_HAPROXY"

// needHAProxy returns haproxy's path, or skips the test (fails it with
// JETRPC_REQUIRE_HAPROXY=1) where it is not installed.
func needHAProxy(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the HAProxy test runs on Linux")
	}
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy", "/usr/local/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "haproxy is not installed (Debian: apt-get install haproxy)"
	if os.Getenv(requireHAProxy) == "1" {
		t.Fatalf("%s, and %s=1", msg, requireHAProxy)
	}
	t.Skipf("%s; set %s=1 to make this a failure", msg, requireHAProxy)
	return ""
}

// startHAProxy runs haproxy with deploy/haproxy.cfg in front of the
// nodes, on a free port, its health check every 100 ms, and returns the
// port once HAProxy answers.
func startHAProxy(t *testing.T, haproxy string, roots *x509.CertPool, cert, key string, nodes ...*node) int {
	t.Helper()
	dir := t.TempDir()
	example, err := os.ReadFile("deploy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle.pem") // HAProxy wants both in one file
	if err := os.WriteFile(bundle, append(certPEM, keyPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := string(example)
	for old, repl := range map[string]string{
		"server node1 127.0.0.1:8081":                 "server node1 " + nodes[0].addr,
		"server node2 127.0.0.1:8082":                 "server node2 " + nodes[1].addr,
		"bind :443 ssl":                               "bind 127.0.0.1:" + strconv.Itoa(port) + " ssl",
		"/etc/haproxy/certs/rpc.example.com.pem":      bundle,
		"default-server check inter 2s fall 1 rise 2": "default-server check inter 100ms fall 1 rise 2",
	} {
		if !strings.Contains(conf, old) {
			t.Fatalf("deploy/haproxy.cfg no longer holds %q", old)
		}
		conf = strings.ReplaceAll(conf, old, repl)
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	exited := startProcess(t, &out, haproxy, "-db", "-f", cfg) // -db: in the foreground
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	client := httpsClient(roots)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("haproxy exited: %s", out.String())
		default:
		}
		if resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/health", port)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return port
			}
		}
	}
	t.Fatalf("haproxy did not answer: %s", out.String())
	return 0
}

// HAProxy in front of two nodes, as nginx is (testTwoNodesBehind), and
// its health check takes the draining node out while it still serves.
func TestHAProxy_twoNodesTLSWebSocketAndDrain(t *testing.T) {
	haproxy := needHAProxy(t)
	testTwoNodesBehind(t, frontProxy{name: "haproxy", healthChecks: true, start: func(t *testing.T, roots *x509.CertPool, cert, key string, nodes ...*node) int {
		return startHAProxy(t, haproxy, roots, cert, key, nodes...)
	}})
}
