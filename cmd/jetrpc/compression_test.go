package main

// NOTE: jetrpc serve's HTTP compression from the outside: the flags
// (--compression, --compression-min) bound to the engine's options, and
// curl --compressed against a server started with --compression gzip.
// Without curl the curl test skips, unless JETRPC_REQUIRE_CURL=1.

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
)

// TestServeFlags_compression: --compression takes a list of codings in
// order (off by default, "off" turning it off), refuses one it does not
// know, and --compression-min sets the minimum size.
func TestServeFlags_compression(t *testing.T) {
	c, err := parseServe(t)
	if err != nil || c.engine.Compression != nil || c.engine.CompressionMinSize != engine.DefaultCompressionMinSize {
		t.Fatalf("defaults: %v %q %d", err, c.engine.Compression, c.engine.CompressionMinSize)
	}
	c, err = parseServe(t, "--compression", "zstd, GZIP", "--compression-min", "200")
	if err != nil || !reflect.DeepEqual(c.engine.Compression, []string{"zstd", "gzip"}) || c.engine.CompressionMinSize != 200 {
		t.Fatalf("set: %v %q %d", err, c.engine.Compression, c.engine.CompressionMinSize)
	}
	if c, _ = parseServe(t, "--compression", "gzip", "--compression", "off"); len(c.engine.Compression) != 0 {
		t.Errorf("off: %q", c.engine.Compression)
	}
	fs, _ := newServeFlags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse([]string{"--compression", "gzip,br"}); err == nil || !strings.Contains(err.Error(), `"br"`) {
		t.Errorf("br: %v", err)
	}
	if _, err := parseServe(t, "--compression-min", "-1"); err == nil {
		t.Error("--compression-min -1 was taken")
	}
}

// requireCurl turns a missing curl into a failure.
const requireCurl = "JETRPC_REQUIRE_CURL"

// needCurl returns curl's path, or skips the test (fails it with
// JETRPC_REQUIRE_CURL=1) where it is not installed.
func needCurl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("curl")
	if err == nil {
		return path
	}
	if os.Getenv(requireCurl) == "1" {
		t.Fatalf("curl is not installed (Debian: apt-get install curl): %v, and %s=1", err, requireCurl)
	}
	t.Skipf("curl is not installed: %v; set %s=1 to make this a failure", err, requireCurl)
	return ""
}

// TestServe_curlCompressed: curl --compressed against jetrpc serve
// --compression gzip gets a gzip reply (Content-Encoding, Vary) that it
// decompresses to the raw reply byte for byte, and sends a gzipped body
// the server inflates.
func TestServe_curlCompressed(t *testing.T) {
	curl := needCurl(t)
	srv := serveOperate(t, false, "--listen", "127.0.0.1:0", "--compression", "gzip")
	dir := t.TempDir()
	req := filepath.Join(dir, "req.json")
	body := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("all work and no play ", 500) + `"],"id":1}`
	if err := os.WriteFile(req, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(args ...string) (head, reply []byte) {
		t.Helper()
		hf := filepath.Join(dir, "head")
		args = append([]string{"-sS", "--fail", "-D", hf, "-H", "Content-Type: application/json", "--data-binary", "@" + req}, args...)
		out, err := exec.Command(curl, append(args, srv.rpc)...).Output()
		if err != nil {
			t.Fatalf("curl %q: %v", args, err)
		}
		head, _ = os.ReadFile(hf)
		return head, out
	}
	rawHead, raw := call()
	if bytes.Contains(bytes.ToLower(rawHead), []byte("content-encoding")) || !bytes.HasPrefix(raw, []byte(`{"jsonrpc":"2.0","result":["all work`)) {
		t.Fatalf("raw: %s%.80s", rawHead, raw)
	}
	head, got := call("--compressed")
	lower := bytes.ToLower(head)
	if !bytes.Contains(lower, []byte("content-encoding: gzip\r\n")) || !bytes.Contains(lower, []byte("vary: accept-encoding\r\n")) {
		t.Errorf("--compressed: head %s", head)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("--compressed: %d bytes decompressed, want the raw reply's %d", len(got), len(raw))
	}
	// A gzipped request body (curl sends it as given).
	gz, err := exec.Command("gzip", "-c", req).Output()
	if err != nil {
		t.Skipf("gzip: %v", err)
	}
	if err := os.WriteFile(req, gz, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, got := call("-H", "Content-Encoding: gzip"); !bytes.Equal(got, raw) {
		t.Errorf("gzipped body: reply %.80q", got)
	}
}
