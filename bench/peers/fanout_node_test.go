package peers

// A topic's fan-out compressed once (package engine's prepared.go), read
// by a real client that inflates: Node.js and the npm ws package, through
// testdata/wsclient/fanout.mjs.

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// fanoutLine is a line fanout.mjs prints.
type fanoutLine struct {
	Subscription string `json:"subscription"`
	Extensions   string `json:"extensions"`
	Data         string `json:"data"`
}

// TestNodeWS_topicFanOutCompressedOnce: two ws clients subscribe to one
// topic, one with permessage-deflate (its messages compressed once for
// all subscribers, behind its own uncompressed head) and one without;
// each inflates or reads every published message — 2 KB, 200 KB, and
// one with non-ASCII text — as its own notification, byte for byte.
func TestNodeWS_topicFanOutCompressedOnce(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: the Node.js fan-out test needs node on PATH: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("SKIPPED: the Node.js fan-out test needs npm on PATH: %v", err)
	}
	if want := pinnedWS(t); installedWS() != want {
		out, errOut, err := runTool(t, 3*time.Minute, wsClientDir, npm, "ci", "--no-audit", "--no-fund")
		if err != nil || installedWS() != want {
			t.Fatalf("npm ci: %v\n%s%s", err, out, errOut)
		}
	}
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	hub := topics.New(nil, quiet)
	topics.Register(tab, "topic", hub)
	_, addr := enginetest.Start(t, tab, engine.WithWSCompression(true))
	url := "ws://" + addr + "/"
	messages := []string{
		`{"book":[` + strings.Repeat(`{"price":101.25,"size":300,"side":"bid"},`, 50) + `{}]}`,
		`{"rows":[` + strings.Repeat(`{"id":12345,"name":"row","tags":["a","b"]},`, 4700) + `{}]}`,
		`{"text":"` + strings.Repeat("Grüße, 世界 — ", 200) + `"}`,
	}
	type client struct {
		cmd   *exec.Cmd
		lines *bufio.Scanner
		id    string
	}
	var clients []*client
	for _, flag := range []string{"--deflate", ""} {
		args := []string{"fanout.mjs", url, "3"}
		if flag != "" {
			args = append(args, flag)
		}
		cmd := exec.Command(node, args...)
		cmd.Dir = wsClientDir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if stderr.Len() > 0 {
				t.Logf("fanout.mjs %s stderr: %s", flag, stderr.String())
			}
		})
		c := &client{cmd: cmd, lines: bufio.NewScanner(out)}
		c.lines.Buffer(nil, 1<<20)
		var l fanoutLine
		if !c.lines.Scan() || json.Unmarshal(c.lines.Bytes(), &l) != nil || l.Subscription == "" {
			t.Fatalf("fanout.mjs %s: no subscription: %q %v", flag, c.lines.Text(), c.lines.Err())
		}
		if got := strings.Contains(l.Extensions, "permessage-deflate"); got != (flag != "") {
			t.Fatalf("fanout.mjs %s: extensions %q", flag, l.Extensions)
		}
		c.id = l.Subscription
		clients = append(clients, c)
	}
	for _, m := range messages {
		if n, err := hub.PublishRaw("t", []byte(m)); err != nil || n != len(clients) {
			t.Fatalf("published to %d: %v", n, err)
		}
	}
	for i, c := range clients {
		for k, m := range messages {
			var l fanoutLine
			if !c.lines.Scan() {
				t.Fatalf("client %d, message %d: none: %v", i, k, c.lines.Err())
			}
			if err := json.Unmarshal(c.lines.Bytes(), &l); err != nil {
				t.Fatalf("client %d, message %d: %v in %d bytes: %.200q", i, k, err, len(c.lines.Bytes()), c.lines.Text())
			}
			want := `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"` + c.id + `","result":` + m + `}}`
			if l.Data != want {
				t.Fatalf("client %d, message %d: got %d bytes %.200q, want %d bytes", i, k, len(l.Data), l.Data, len(want))
			}
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
}
