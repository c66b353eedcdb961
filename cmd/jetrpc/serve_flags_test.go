package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// parseServe parses args with serve's flags and checks them.
func parseServe(t *testing.T, args ...string) (*serveFlags, error) {
	t.Helper()
	fs, c := newServeFlags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return c, c.check(fs)
}

// TestServeFlags_bind: each flag sets its field of the engine's or the
// table's Options, an alias the same field, and a flag not given leaves
// the library's default there.
func TestServeFlags_bind(t *testing.T) {
	c, err := parseServe(t, "--max-conns", "7", "--http", "127.0.0.1:1", "--unix", "/tmp/s", "--cors", "https://a",
		"--ws-origin", "https://b", "--log-slow", "2s", "--rate", "1.5", "--max-batch", "3", "--idle-timeout", "-1s",
		"--health-path", "-", "--vhosts-strict", "--loops", "2", "--close-notice", "bye")
	if err != nil {
		t.Fatal(err)
	}
	e, tab := &c.engine, &c.table
	for _, g := range []struct {
		name      string
		got, want any
	}{
		{"MaxConns", e.MaxConns, 7},
		{"Addrs", strings.Join(e.Addrs, " "), "tcp://127.0.0.1:1 unix:///tmp/s"},
		{"CORS.Origins", strings.Join(e.CORS.Origins, " "), "https://a https://b"},
		{"AccessLog.Slow", tab.AccessLog.Slow, 2 * time.Second},
		{"RateLimit.Rate", tab.RateLimit.Rate, 1.5},
		{"MaxBatch", tab.MaxBatch, 3},
		{"IdleTimeout", e.IdleTimeout, -time.Second},
		{"HealthPath", e.HealthPath, "-"},
		{"StrictHosts", e.StrictHosts, true},
		{"Loops", e.Loops, 2},
		{"CloseNotice", e.CloseNotice, "bye"},
		// Not given: the library's defaults.
		{"MaxMessageSize", e.MaxMessageSize, parser.DefaultMaxSize},
		{"MaxInFlight", e.MaxInFlight, engine.DefaultMaxInFlight},
		{"StopTimeout", e.StopTimeout, engine.DefaultStopTimeout},
		{"WSPath", e.WSPath, engine.DefaultWSPath},
		{"MaxResponseSize", tab.MaxResponseSize, parser.DefaultMaxSize},
		{"CallTimeout", tab.CallTimeout, defaultCallTimeout},
	} {
		if g.got != g.want {
			t.Errorf("%s = %v, want %v", g.name, g.got, g.want)
		}
	}
}

// TestServeFlags_rules: every flag whose row says so refuses a negative
// value (or zero, or a share past 1), naming itself, and takes zero.
func TestServeFlags_rules(t *testing.T) {
	checked := 0
	fs, c := newServeFlags()
	for _, r := range c.rows() {
		name, _, _ := strings.Cut(r.names, ",")
		var bad, good string
		switch r.rule {
		case anyValue:
			continue
		case nonNegative:
			bad, good = "-1", "0"
			if _, d := fs.Lookup(name).Value.(flag.Getter).Get().(time.Duration); d {
				bad, good = "-1s", "0s"
			}
		case positive:
			bad, good = "0s", "1s"
		case share:
			bad, good = "1.5", "0"
		case urlPath:
			bad, good = "rpc", "/rpc"
		case headerName:
			bad, good = "Mcp Method", "Mcp-Method"
		}
		checked++
		if _, err := parseServe(t, "--"+name, bad); err == nil || !strings.HasPrefix(err.Error(), "--"+name+" ") {
			t.Errorf("--%s %s: err %v, want one naming the flag", name, bad, err)
		}
		if _, err := parseServe(t, "--"+name, good); err != nil {
			t.Errorf("--%s %s: %v", name, good, err)
		}
	}
	if checked < 20 {
		t.Errorf("%d flags with a rule, want at least 20", checked)
	}
}

// TestServeFlags_cancel: --cancel-method takes lsp, mcp, their method
// names and method:member, repeatable; --cancel-reply error or none;
// neither given, cancellation is off.
func TestServeFlags_cancel(t *testing.T) {
	c, err := parseServe(t, "--cancel-method", "lsp,notifications/cancelled", "--cancel-method", "my/cancel:callId", "--cancel-reply", "none")
	if err != nil {
		t.Fatal(err)
	}
	want := []handler.CancelMethod{handler.LSPCancel, handler.MCPCancel, {Method: "my/cancel", IDMember: "callId"}}
	if !slices.Equal(c.table.Cancel, want) || c.table.CancelReply != handler.CancelReplyNone {
		t.Errorf("Cancel = %v, CancelReply = %v", c.table.Cancel, c.table.CancelReply)
	}
	if c, _ := parseServe(t); c.table.Cancel != nil || c.table.CancelReply != handler.CancelReplyError {
		t.Errorf("default: Cancel = %v, CancelReply = %v", c.table.Cancel, c.table.CancelReply)
	}
	for _, bad := range [][]string{{"--cancel-method", "nomember"}, {"--cancel-method", "x:"}, {"--cancel-reply", "maybe"}} {
		fs, _ := newServeFlags()
		fs.SetOutput(io.Discard)
		if fs.Parse(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
