package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// routedTable has count (each call counted in ran), admin_count (needs
// the admin grant), and a rate limit of burst calls per client.
func routedTable(ran *atomic.Int32, burst int) *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithRateLimit(ratelimit.Limits{Rate: 0.001, Burst: burst}))
	handler.Register(tab, "count", func(_ context.Context, p [1]int) (int, error) { ran.Add(1); return p[0], nil }, handler.Inline())
	handler.Register(tab, "tools/call", func(_ context.Context, p [1]int) (int, error) { ran.Add(1); return p[0], nil })
	handler.Register(tab, "admin_count", func(_ context.Context, p [1]int) (int, error) { ran.Add(1); return p[0], nil }, handler.Inline(), handler.Require("admin"))
	return tab
}

func postWith(header, body string) string {
	return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + header + "Content-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
}

// A call whose header names its method runs once and is charged once;
// one whose body disagrees, or a batch, is refused 400 -32600 without
// running, and the connection goes on.
func TestMethodHeader_bodyMustMatch(t *testing.T) {
	ran := new(atomic.Int32)
	_, addr, _ := startEngine(t, routedTable(ran, 100), engine.WithMethodHeader("Mcp-Method"))
	req := postWith("Mcp-Method: count\r\n", `{"jsonrpc":"2.0","method":"count","params":[1],"id":1}`) +
		postWith("mcp-method: tools/call\r\n", `{"jsonrpc":"2.0","method":"tools\/call","params":[2],"id":2}`) +
		postWith("Mcp-Method: count\r\n", `{"jsonrpc":"2.0","method":"tools/call","params":[3],"id":3}`) +
		postWith("Mcp-Method: count\r\n", `[{"jsonrpc":"2.0","method":"count","params":[4],"id":4}]`) +
		postWith("Mcp-Method: count\r\n", `{"jsonrpc":"2.0","params":[5],"id":5}`) +
		postWith("", `{"jsonrpc":"2.0","method":"count","params":[6],"id":6}`)
	rs := rawHTTP(t, addr, req, 6)
	if len(rs) != 6 {
		t.Fatalf("%d responses", len(rs))
	}
	want := []struct {
		status int
		body   string
	}{
		{200, `{"jsonrpc":"2.0","result":1,"id":1}`},
		{200, `{"jsonrpc":"2.0","result":2,"id":2}`},
		{400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the method differs from the Mcp-Method header"},"id":3}`},
		{400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: a batch cannot be routed by the Mcp-Method header"},"id":null}`},
		{400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the body names no method for the Mcp-Method header"},"id":5}`},
		{200, `{"jsonrpc":"2.0","result":6,"id":6}`},
	}
	for i, w := range want {
		if b := bodyOf(rs[i]); rs[i].StatusCode != w.status || b != w.body {
			t.Errorf("reply %d: %d %s, want %d %s", i, rs[i].StatusCode, b, w.status, w.body)
		}
	}
	if n := ran.Load(); n != 3 {
		t.Errorf("%d calls ran, want 3", n)
	}
}

// With a burst of 2, two routed calls run — each charged once, by the
// header — and the third is refused 429 from its head.
func TestMethodHeader_chargedOnce(t *testing.T) {
	ran := new(atomic.Int32)
	_, addr, _ := startEngine(t, routedTable(ran, 2), engine.WithMethodHeader("Mcp-Method"))
	one := postWith("Mcp-Method: count\r\n", `{"jsonrpc":"2.0","method":"count","params":[1],"id":1}`)
	rs := rawHTTP(t, addr, one+one+one, 3)
	if len(rs) != 3 {
		t.Fatalf("%d responses", len(rs))
	}
	for i, w := range []int{200, 200, 429} {
		if rs[i].StatusCode != w {
			t.Errorf("reply %d: %d %s, want %d", i, rs[i].StatusCode, bodyOf(rs[i]), w)
		}
	}
	if b := bodyOf(rs[2]); !strings.Contains(b, `"code":-32005`) || !strings.Contains(b, `"id":null`) {
		t.Errorf("429 body %s", b)
	}
	if n := ran.Load(); n != 2 {
		t.Errorf("%d calls ran, want 2", n)
	}
}

// Refusals from the head: an unknown method 404, a missing grant 403,
// malformed values 400 — each with a JSON-RPC error, the body unread and
// the connection closed (a body follows).
func TestMethodHeader_refusedBeforeBody(t *testing.T) {
	ran := new(atomic.Int32)
	_, addr, _ := startEngine(t, routedTable(ran, 100), engine.WithMethodHeader("Mcp-Method"))
	body := `{"jsonrpc":"2.0","method":"count","params":[1],"id":1}`
	for _, tc := range []struct {
		header string
		status int
		want   string
	}{
		{"Mcp-Method: nosuch\r\n", 404, `"code":-32601`},
		{"Mcp-Method: admin_count\r\n", 403, `"code":-32003,"message":"Forbidden: requires permission admin"`},
		{"Mcp-Method: \r\n", 400, "Mcp-Method header is empty"},
		{"Mcp-Method: a b\r\n", 400, "not a method name"},
		{"Mcp-Method: caf\xc3\xa9\r\n", 400, "not a method name"},
		{"Mcp-Method: " + strings.Repeat("m", engine.MaxMethodHeaderLen+1) + "\r\n", 400, "longer than 256 bytes"},
		{"Mcp-Method: count\r\nMcp-Method: count\r\n", 400, "given twice"},
	} {
		rs := rawHTTP(t, addr, postWith(tc.header, body)+postWith("", body), 2)
		if len(rs) != 1 {
			t.Fatalf("%q: %d responses, want 1 and the connection closed", tc.header, len(rs))
		}
		r := rs[0]
		if b := bodyOf(r); r.StatusCode != tc.status || !strings.Contains(b, tc.want) || !strings.Contains(b, `"id":null`) || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%q: %d %s, want %d with %s", tc.header, r.StatusCode, b, tc.status, tc.want)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d calls ran, want 0", n)
	}
	// Without a body to skip, the connection persists after a refusal.
	rs := rawHTTP(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nMcp-Method: nosuch\r\nContent-Length: 0\r\n\r\n"+postWith("", body), 2)
	if len(rs) != 2 || rs[0].StatusCode != 404 || rs[1].StatusCode != 200 {
		t.Errorf("%d responses", len(rs))
	}
}

// A name that is not a header field name is a programming error.
func TestMethodHeader_badNamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	engine.New(handler.NewTable(), engine.WithMethodHeader("Mcp Method"))
}
