package peers

// Interoperability with a browser-style WebSocket client: Node.js and the
// npm ws package (pinned in testdata/wsclient/package.json), through its
// browser API, running testdata/wsclient/client.mjs.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
)

const wsClientDir = "testdata/wsclient"

// wsClientSummary is the line client.mjs prints on success.
type wsClientSummary struct {
	OK            bool    `json:"ok"`
	WS            string  `json:"ws"`
	Node          string  `json:"node"`
	Add           int     `json:"add"`
	Batch         int     `json:"batch"`
	Subscription  string  `json:"subscription"`
	Notifications []int64 `json:"notifications"`
	Late          int     `json:"late"`
	Unsubscribed  bool    `json:"unsubscribed"`
	Extensions    string  `json:"extensions"`
	Large         int     `json:"large"`
}

// pinnedWS returns the exact ws version that package.json pins.
func pinnedWS(t *testing.T) string { return pinnedNPM(t, wsClientDir, "ws") }

// installedWS returns the version of ws in node_modules, "" if none.
func installedWS() string {
	b, err := os.ReadFile(filepath.Join(wsClientDir, "node_modules", "ws", "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &pkg)
	return pkg.Version
}

func runTool(t *testing.T, timeout time.Duration, dir string, name string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(c, name, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if c.Err() != nil {
		err = c.Err()
	}
	return out.Bytes(), errOut.Bytes(), err
}

func TestNodeWS_client(t *testing.T) { runNodeWSClient(t, false) }

// TestNodeWS_deflate: the same client against an engine with
// WSCompression: ws negotiates permessage-deflate (its ws.extensions
// names it), compresses every message it sends, and a
// 200 KB echo comes back compressed, byte for byte.
func TestNodeWS_deflate(t *testing.T) { runNodeWSClient(t, true) }

// nodeWithWS returns the path of node and the ws version package.json
// pins, installed in testdata/wsclient/node_modules (npm ci where it is
// not), or skips the test where node or npm is not on PATH.
func nodeWithWS(t *testing.T) (node, ws string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: the Node.js WebSocket interop test needs node on PATH: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("SKIPPED: the Node.js WebSocket interop test needs npm on PATH: %v", err)
	}
	want := pinnedWS(t)
	if got := installedWS(); got != want {
		t.Logf("%s/node_modules has ws %q, package.json pins %s: running npm ci", wsClientDir, got, want)
		out, errOut, err := runTool(t, 3*time.Minute, wsClientDir, npm, "ci", "--no-audit", "--no-fund")
		if err != nil {
			t.Fatalf("npm ci: %v\n%s%s", err, out, errOut)
		}
		if got := installedWS(); got != want {
			t.Fatalf("after npm ci, node_modules has ws %q, want %s", got, want)
		}
	}
	return node, want
}

// runNodeWSClient runs testdata/wsclient/client.mjs, with --deflate
// against an engine with WSCompression when deflate.
func runNodeWSClient(t *testing.T, deflate bool) {
	node, want := nodeWithWS(t)
	var opts []engine.Option
	args := []string{"client.mjs"}
	if deflate {
		opts = append(opts, engine.WithWSCompression(true))
	}
	tab, tcp, _ := serveTable(t, opts...)
	url := "ws://" + tcp + "/"
	args = append(args, url)
	if deflate {
		args = append(args, "--deflate")
	}
	out, errOut, err := runTool(t, 30*time.Second, wsClientDir, node, args...)
	var s wsClientSummary
	last := nodeSummary(t, url, out, errOut, err, &s)
	if !s.OK || s.WS != want || s.Add != 3 || s.Batch != 3 ||
		!strings.HasPrefix(s.Subscription, "0x") || len(s.Subscription) != 34 ||
		!slices.Equal(s.Notifications, []int64{1, 2, 3}) || !s.Unsubscribed ||
		deflate != (s.Extensions == "permessage-deflate") || deflate && s.Large < 200_000 {
		t.Fatalf("summary: %s", last)
	}
	t.Logf("node %s, ws %s: %s", s.Node, s.WS, last)
	deadline := time.Now().Add(10 * time.Second)
	for tab.Subscriptions("clock") != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := tab.Subscriptions("clock"); n != 0 {
		t.Fatalf("%d clock subscriptions live on the server after the client left", n)
	}
}

// nodeSummary reads a Node client's run: it fails the test when the
// client failed, logs its stderr, and decodes its last line of stdout,
// its JSON summary, into v; it returns that line.
func nodeSummary(t *testing.T, url string, out, errOut []byte, err error, v any) string {
	t.Helper()
	if err != nil {
		t.Fatalf("node client.mjs %s: %v\nstdout: %s\nstderr: %s", url, err, out, errOut)
	}
	if len(errOut) > 0 {
		t.Logf("stderr: %s", errOut)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if err := json.Unmarshal([]byte(last), v); err != nil {
		t.Fatalf("summary line %q: %v", last, err)
	}
	return last
}
