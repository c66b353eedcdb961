package peers

// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// pinned in testdata/mcpclient/package.json) on Node.js, over Streamable
// HTTP, against `jetrpc serve --mcp`: testdata/mcpclient/client.mjs does
// what the Go SDK's test does and prints what it saw.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const mcpClientDir = "testdata/mcpclient"

// mcpNodeSummary is the line client.mjs prints.
type mcpNodeSummary struct {
	OK              bool      `json:"ok"`
	Error           string    `json:"error"`
	Node            string    `json:"node"`
	SDK             string    `json:"sdk"`
	Server          string    `json:"server"`
	ProtocolVersion string    `json:"protocolVersion"`
	SessionID       *string   `json:"sessionId"`
	Tools           []string  `json:"tools"`
	Add             string    `json:"add"`
	AddIsError      bool      `json:"addIsError"`
	UnknownTool     any       `json:"unknownTool"`
	Progress        []float64 `json:"progress"`
	Countdown       string    `json:"countdown"`
	Cancelled       string    `json:"cancelled"`
	CancelMs        int64     `json:"cancelMs"`
	AddAfterCancel  string    `json:"addAfterCancel"`
	ResourceBytes   int       `json:"resourceBytes"`
}

// pinnedNPM returns the exact version of pkg that dir's package.json pins.
func pinnedNPM(t *testing.T, dir, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s/package.json: %v", dir, err)
	}
	v := p.Dependencies[pkg]
	if v == "" || strings.ContainsAny(v, "^~<>=* ") {
		t.Fatalf("%s/package.json must pin %s to an exact version, has %q", dir, pkg, v)
	}
	return v
}

// installedNPM returns the version of pkg in dir's node_modules, "" if none.
func installedNPM(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Version
}

// findNodeNPM returns the paths of node and npm, or skips the test
// (named what) where either is not on PATH.
func findNodeNPM(t *testing.T, what string) (node, npm string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: %s needs node on PATH: %v", what, err)
	}
	npm, err = exec.LookPath("npm")
	if err != nil {
		t.Skipf("SKIPPED: %s needs npm on PATH: %v", what, err)
	}
	return node, npm
}

// nodeWithMCPSDK returns node's path and the SDK version package.json
// pins, installed in testdata/mcpclient/node_modules (npm ci where it is
// not), or skips the test where node or npm is not on PATH.
func nodeWithMCPSDK(t *testing.T) (node, sdk string) {
	t.Helper()
	node, npm := findNodeNPM(t, "the MCP TypeScript SDK interop test")
	const pkg = "@modelcontextprotocol/sdk"
	want := pinnedNPM(t, mcpClientDir, pkg)
	if got := installedNPM(mcpClientDir, pkg); got != want {
		t.Logf("%s/node_modules has %s %q, package.json pins %s: running npm ci", mcpClientDir, pkg, got, want)
		out, errOut, err := runTool(t, 3*time.Minute, mcpClientDir, npm, "ci", "--no-audit", "--no-fund")
		if err != nil {
			t.Fatalf("npm ci: %v\n%s%s", err, out, errOut)
		}
		if got := installedNPM(mcpClientDir, pkg); got != want {
			t.Fatalf("after npm ci, node_modules has %s %q, want %s", pkg, got, want)
		}
	}
	return node, want
}

func TestMCPNode_toolsOverStreamableHTTP(t *testing.T) {
	node, want := nodeWithMCPSDK(t)
	bin := buildJetrpc(t)
	// A call timeout that ends the cancelled countdown before the server
	// is stopped, where its method is not told of the cancel.
	httpURL, _ := startJetrpc(t, bin, "--mcp", "--call-timeout", "3s")
	url := strings.TrimSuffix(httpURL, "/") + "/mcp"
	out, errOut, err := runTool(t, 60*time.Second, mcpClientDir, node, "client.mjs", url)
	var s mcpNodeSummary
	last := nodeSummary(t, url, out, errOut, err, &s)
	t.Logf("node %s, %s: %s", s.Node, s.SDK, last)
	if !s.OK || s.SDK != want {
		t.Fatalf("the client failed: %s", last)
	}

	t.Run("connect, list, add, read", func(t *testing.T) {
		if s.Server != "jetrpc-mcp-example" || s.ProtocolVersion != "2025-11-25" || s.SessionID != nil {
			t.Errorf("initialize: server %q, revision %q, session %v", s.Server, s.ProtocolVersion, s.SessionID)
		}
		if !slices.Equal(s.Tools, []string{"add", "countdown"}) {
			t.Errorf("tools %q", s.Tools)
		}
		if s.Add != "42.5" || !s.AddIsError || s.UnknownTool != float64(-32602) {
			t.Errorf("add %q, add without b isError %v, unknown tool %v", s.Add, s.AddIsError, s.UnknownTool)
		}
		if s.ResourceBytes != 1<<20 {
			t.Errorf("read %d bytes of the resource", s.ResourceBytes)
		}
	})
	t.Run("countdown answers done", func(t *testing.T) {
		if s.Countdown != "done" {
			t.Errorf("countdown answered %q", s.Countdown)
		}
	})
	t.Run("countdown progress in order", func(t *testing.T) {
		if want := []float64{1, 2, 3, 4, 5}; !slices.Equal(s.Progress, want) {
			if len(s.Progress) == 0 {
				t.Fatalf("no progress notification arrived: progress needs the engine to answer a POST whose Accept has " +
					"text/event-stream with an event stream carrying the method's notifications before its reply")
			}
			t.Fatalf("progress %v, want %v", s.Progress, want)
		}
	})
	t.Run("cancel ends the call", func(t *testing.T) {
		if s.Cancelled != "aborted" || s.CancelMs > 5000 || s.AddAfterCancel != "3" {
			t.Errorf("cancelled countdown: %q after %d ms; add after it %q", s.Cancelled, s.CancelMs, s.AddAfterCancel)
		}
	})
}
