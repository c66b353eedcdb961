package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
)

// conn is a handler.Conn that keeps what is sent to it.
type conn struct {
	ctx  context.Context
	push bool // CanPush
	mu   sync.Mutex
	sent []string // guarded by mu
}

func (c *conn) Send(msg []byte) error {
	if !c.push {
		return handler.ErrPushUnsupported
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, string(msg))
	return nil
}

func (c *conn) CanPush() bool            { return c.push }
func (c *conn) Context() context.Context { return c.ctx }

func (c *conn) messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}

func newTable(t *testing.T) *handler.Table {
	t.Helper()
	tab := handler.NewTable()
	mcp.Register(tab)
	return tab
}

// call dispatches msg on tab and returns the reply.
func call(ctx context.Context, tab *handler.Table, msg string) string {
	return string(tab.Dispatch(ctx, nil, []byte(msg)))
}

func TestInitialize_answersTheRevisionAskedWhenServed(t *testing.T) {
	tab := newTable(t)
	for _, tc := range []struct{ asked, want string }{
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"2025-11-25", "2025-11-25"},
		{"2024-11-05", mcp.LatestVersion}, // not served: the newest served
		{"2026-07-28", mcp.LatestVersion},
	} {
		reply := call(context.Background(), tab, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tc.asked+
			`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
		var r struct {
			Result struct {
				ProtocolVersion string
				Capabilities    map[string]json.RawMessage
				ServerInfo      struct{ Name, Version string }
			}
		}
		if err := json.Unmarshal([]byte(reply), &r); err != nil {
			t.Fatalf("%s: %v: %s", tc.asked, err, reply)
		}
		if r.Result.ProtocolVersion != tc.want || r.Result.ServerInfo.Name != mcp.ServerName ||
			r.Result.Capabilities["tools"] == nil || r.Result.Capabilities["resources"] == nil {
			t.Errorf("asked %s: %s", tc.asked, reply)
		}
	}
}

func TestNotifications_getNoReply(t *testing.T) {
	tab := newTable(t)
	for _, m := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"gone"}}`,
	} {
		if got := call(context.Background(), tab, m); got != "" {
			t.Errorf("%s answered %s", m, got)
		}
	}
}

func TestPing_answersEmptyObject(t *testing.T) {
	got := call(context.Background(), newTable(t), `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if want := `{"jsonrpc":"2.0","result":{},"id":"p"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestToolsList_listsAddAndCountdownWithObjectSchemas(t *testing.T) {
	reply := call(context.Background(), newTable(t), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	var r struct {
		Result struct {
			Tools []struct {
				Name        string
				InputSchema struct{ Type string }
			}
		}
	}
	if err := json.Unmarshal([]byte(reply), &r); err != nil {
		t.Fatal(err, reply)
	}
	if len(r.Result.Tools) != 2 || r.Result.Tools[0].Name != "add" || r.Result.Tools[1].Name != "countdown" ||
		r.Result.Tools[0].InputSchema.Type != "object" || r.Result.Tools[1].InputSchema.Type != "object" {
		t.Errorf("%s", reply)
	}
}

func TestToolsCall(t *testing.T) {
	tab := newTable(t)
	for _, tc := range []struct{ name, msg, want string }{
		{"add answers the sum as text",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"3"}]},"id":1}`},
		{"add of fractions",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":0.5,"b":-2.25}}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"-1.75"}]},"id":1}`},
		{"add without b is a tool error",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"add takes {\"a\":number,\"b\":number}"}],"isError":true},"id":1}`},
		{"add of a string is a tool error",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"1","b":2}}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"add takes {\"a\":number,\"b\":number}"}],"isError":true},"id":1}`},
		{"countdown past its limit is a tool error",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"countdown","arguments":{"from":-1}}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"countdown: from must be 0 to 100000, interval_ms 0 to 60000"}],"isError":true},"id":1}`},
		{"an unknown tool is -32602",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
			`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Unknown tool","data":{"tool":"nope"}},"id":1}`},
		{"a name with escapes is read unescaped",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0061dd","arguments":{"b":2,"a":-1e1}}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"-8"}]},"id":1}`},
		{"a name that is not a string is -32602",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`,
			`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: name: want a string"},"id":1}`},
		{"a call without a name is -32602",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
			`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: name: missing required param"},"id":1}`},
	} {
		if got := call(context.Background(), tab, tc.msg); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestCountdown_sendsOneProgressPerStepInOrder(t *testing.T) {
	tab := newTable(t)
	c := &conn{ctx: context.Background(), push: true}
	ctx := handler.ContextWithConn(context.Background(), c)
	got := call(ctx, tab, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"countdown","arguments":{"from":3,"interval_ms":1},"_meta":{"progressToken":"tok"}}}`)
	if want := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"done"}]},"id":7}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":3,"message":"2 left"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":3,"message":"1 left"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":3,"total":3,"message":"0 left"}}`,
	}
	if sent := c.messages(); strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
	// A number as token; and no token, no notifications.
	c2 := &conn{ctx: context.Background(), push: true}
	ctx2 := handler.ContextWithConn(context.Background(), c2)
	call(ctx2, tab, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"countdown","arguments":{"from":1,"interval_ms":0},"_meta":{"progressToken":42}}}`)
	call(ctx2, tab, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"countdown","arguments":{"from":2,"interval_ms":0}}}`)
	if sent := c2.messages(); len(sent) != 1 || !strings.Contains(sent[0], `"progressToken":42,`) {
		t.Errorf("sent %q", sent)
	}
}

func TestCountdown_runsWithoutProgressWhereTheTransportCannotPush(t *testing.T) {
	tab := newTable(t)
	c := &conn{ctx: context.Background(), push: false}
	for _, ctx := range []context.Context{context.Background(), handler.ContextWithConn(context.Background(), c)} {
		got := call(ctx, tab, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"countdown","arguments":{"from":2,"interval_ms":1},"_meta":{"progressToken":1}}}`)
		if want := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"done"}]},"id":1}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestCountdown_stopsWhenItsContextIsDone(t *testing.T) {
	tab := newTable(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := call(ctx, tab, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"countdown","arguments":{"from":1000,"interval_ms":100}}}`)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if !strings.Contains(got, `"error":{"code":-32002`) {
		t.Errorf("got %s, want the deadline's error", got)
	}
}

func TestResources_listAndReadTheLargeText(t *testing.T) {
	tab := newTable(t)
	var list struct {
		Result struct {
			Resources []struct {
				URI  string
				Size int
			}
		}
	}
	reply := call(context.Background(), tab, `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	if err := json.Unmarshal([]byte(reply), &list); err != nil || len(list.Result.Resources) != 1 ||
		list.Result.Resources[0].URI != mcp.LargeResourceURI || list.Result.Resources[0].Size != mcp.LargeResourceSize {
		t.Fatalf("%s: %v", reply, err)
	}
	var read struct {
		Result struct {
			Contents []struct{ URI, MimeType, Text string }
		}
	}
	reply = call(context.Background(), tab, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"`+mcp.LargeResourceURI+`"}}`)
	if err := json.Unmarshal([]byte(reply), &read); err != nil || len(read.Result.Contents) != 1 {
		t.Fatalf("%.200s: %v", reply, err)
	}
	c := read.Result.Contents[0]
	if c.URI != mcp.LargeResourceURI || c.MimeType != "text/plain" || len(c.Text) != mcp.LargeResourceSize || c.Text != mcp.LargeResourceText() {
		t.Errorf("read %s, %s, %d bytes", c.URI, c.MimeType, len(c.Text))
	}
	if !strings.HasPrefix(c.Text, "line 00000 ....") || !strings.Contains(c.Text, "\nline 16383 ....") || !strings.HasSuffix(c.Text, ".\n") {
		t.Errorf("text begins %q, ends %q", c.Text[:20], c.Text[len(c.Text)-20:])
	}
	escaped := strings.ReplaceAll(mcp.LargeResourceURI, "/", `\/`)
	reply = call(context.Background(), tab, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"`+escaped+`"}}`)
	if !strings.HasPrefix(reply, `{"jsonrpc":"2.0","result":{"contents":[{"uri":"`+mcp.LargeResourceURI) {
		t.Errorf("read %s: %.100s", escaped, reply)
	}
	got := call(context.Background(), tab, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"jetrpc://nope"}}`)
	if want := `{"jsonrpc":"2.0","error":{"code":-32002,"message":"Resource not found","data":{"uri":"jetrpc://nope"}},"id":3}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
