package main

// NOTE: streamed results and event streams from the outside: curl,
// plain and --compressed, against jetrpc serve's range method, whose
// result [0,1,…,n-1] the server writes as it goes (HTTP chunked
// transfer), and curl -N against countdown, whose progress comes as
// events before its reply.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jetrpc/jetrpc/engine/enginetest"
)

// checkRange checks that reply is a JSON-RPC reply with id 1 whose
// result is [0,1,…,n-1].
func checkRange(t *testing.T, what string, reply []byte, n int) {
	t.Helper()
	if id := enginetest.CheckRangeReply(t, what, reply, n); string(id) != "1" {
		t.Fatalf("%s: id %s, want 1", what, id)
	}
}

// TestServe_curlRangeStreamed: curl gets range's million numbers from
// jetrpc serve --compression gzip,zstd: plain, a chunked reply whose
// result is [0,…,999999] value for value; with --compressed, the same
// bytes once curl has decompressed them.
func TestServe_curlRangeStreamed(t *testing.T) {
	curl := needCurl(t)
	// The reply's 6.9 MB pass --max-response (5 MiB): a streamed result is
	// bounded by --max-streamed-response instead.
	srv := serveOperate(t, false, "--listen", "127.0.0.1:0", "--compression", "gzip,zstd")
	t.Run("range", func(t *testing.T) {
		enginetest.NeedRange(t, srv.rpc)
		const n = 1_000_000
		dir := t.TempDir()
		call := func(args ...string) (head, reply []byte) {
			t.Helper()
			hf := filepath.Join(dir, "head")
			args = append([]string{"-sS", "--fail", "-D", hf, "-H", "Content-Type: application/json",
				"--data-binary", `{"jsonrpc":"2.0","method":"range","params":{"n":1000000},"id":1}`}, args...)
			out, err := exec.Command(curl, append(args, srv.rpc)...).Output()
			if err != nil {
				t.Fatalf("curl %q: %v", args, err)
			}
			head, _ = os.ReadFile(hf)
			return head, out
		}
		head, raw := call()
		t.Logf("plain: %d bytes; head:\n%s", len(raw), head)
		lower := bytes.ToLower(head)
		if !bytes.Contains(lower, []byte("transfer-encoding: chunked\r\n")) || bytes.Contains(lower, []byte("content-encoding")) {
			t.Errorf("plain: want a chunked reply, not compressed; head:\n%s", head)
		}
		checkRange(t, "plain", raw, n)
		head, got := call("--compressed")
		t.Logf("--compressed: head:\n%s", head)
		if !bytes.Equal(got, raw) {
			t.Errorf("--compressed: %d bytes decompressed, want the plain reply's %d", len(got), len(raw))
		}
	})
}

// TestServe_curlEventStream: curl -N asking for text/event-stream gets
// countdown's progress as events, in order, then its reply, from
// jetrpc serve (--sse is on by default); asking for JSON alone, the
// reply only.
func TestServe_curlEventStream(t *testing.T) {
	curl := needCurl(t)
	srv := serveOperate(t, false, "--listen", "127.0.0.1:0")
	call := func(accept string) string {
		t.Helper()
		out, err := exec.Command(curl, "-sS", "-N", "--fail", "-H", "Content-Type: application/json", "-H", "Accept: "+accept,
			"--data-binary", `{"jsonrpc":"2.0","method":"countdown","params":{"from":3,"interval_ms":20},"id":"c"}`, srv.rpc).Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		return string(out)
	}
	want := "data: {\"jsonrpc\":\"2.0\",\"method\":\"countdown_progress\",\"params\":{\"left\":2}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"countdown_progress\",\"params\":{\"left\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"countdown_progress\",\"params\":{\"left\":0}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"result\":\"done\",\"id\":\"c\"}\n\n"
	if got := call("application/json, text/event-stream"); got != want {
		t.Errorf("event stream:\n%q\nwant\n%q", got, want)
	}
	if got := call("application/json"); got != `{"jsonrpc":"2.0","result":"done","id":"c"}` {
		t.Errorf("JSON: %q", got)
	}
}
