package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
)

// TestCheckProtocolVersion_asksNextAboutSupportedRevisions: a supported
// revision, a stateless one (2026-07-28 and later) and no header go on
// to next, whose acceptance is never kept for the next requests; an
// unsupported revision is refused 400 without asking next.
func TestCheckProtocolVersion_asksNextAboutSupportedRevisions(t *testing.T) {
	asked := 0
	next := func(m *handler.Meta) (handler.Grants, error) {
		asked++
		m.AuthorizedUntil = 1 << 40
		return handler.Grants{"*"}, nil
	}
	check := mcp.CheckProtocolVersion(next)
	for _, c := range []struct {
		header string
		ok     bool
		until  int64 // AuthorizedUntil after
	}{
		{"", true, 0},
		{"MCP-Protocol-Version: 2025-06-18\r\n", true, 0},
		{"mcp-protocol-version: 2025-11-25\r\n", true, 0},
		{"MCP-Protocol-Version: 2026-07-28\r\n", true, 0},
		{"MCP-Protocol-Version: 2024-11-05\r\n", false, 0},
		{"MCP-Protocol-Version: junk\r\n", false, 0},
		{"MCP-Protocol-Version: 2099-1-1\r\n", false, 0},
		{"MCP-Protocol-Version: 2027-01-01\r\n", true, 0},
	} {
		var m handler.Meta
		m.SetHTTPHead([]byte("POST /mcp HTTP/1.1\r\nHost: h\r\n" + c.header + "\r\n"))
		before := asked
		g, err := check(&m)
		if c.ok != (err == nil) || c.ok != (asked == before+1) || c.ok && (len(g) != 1 || m.AuthorizedUntil != c.until) {
			t.Errorf("%q: grants %v err %v, next asked %v, until %d", c.header, g, err, asked > before, m.AuthorizedUntil)
		}
		if !c.ok && (handler.AuthStatus(err) != http.StatusBadRequest || !strings.Contains(handler.AuthText(err), "2025-06-18")) {
			t.Errorf("%q: refused %d %q", c.header, handler.AuthStatus(err), handler.AuthText(err))
		}
	}
	if g, err := mcp.CheckProtocolVersion(nil)(&handler.Meta{}); g != nil || err != nil {
		t.Errorf("nil next: %v %v", g, err)
	}
}

// TestCheckProtocolVersion_overHTTP: the engine answers an unsupported
// MCP-Protocol-Version 400 with the supported revisions, and serves the
// supported ones and requests without the header.
func TestCheckProtocolVersion_overHTTP(t *testing.T) {
	tab := handler.NewTable()
	mcp.Register(tab)
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(mcp.CheckProtocolVersion(nil)))
	url := "http://" + addr + mcp.Path
	for version, want := range map[string]string{
		"":           `{"jsonrpc":"2.0","result":{},"id":1}`,
		"2025-06-18": `{"jsonrpc":"2.0","result":{},"id":1}`,
		"2024-11-05": "Bad Request: Unsupported protocol version (supported versions: 2025-11-25,2025-06-18,2025-03-26)",
	} {
		header := []string{"Accept: application/json, text/event-stream"}
		if version != "" {
			header = append(header, "MCP-Protocol-Version: "+version)
		}
		resp, b := enginetest.Post(t, url, `{"jsonrpc":"2.0","method":"ping","id":1}`, header...)
		status := http.StatusOK
		if strings.HasPrefix(want, "Bad") {
			status = http.StatusBadRequest
		}
		if resp.StatusCode != status || string(b) != want {
			t.Errorf("version %q: %d %q, want %d %q", version, resp.StatusCode, b, status, want)
		}
	}
}

// TestCheckProtocolVersion_zeroAllocs: the check, accepting or refusing,
// allocates nothing.
func TestCheckProtocolVersion_zeroAllocs(t *testing.T) {
	check := mcp.CheckProtocolVersion(nil)
	for _, h := range []string{"MCP-Protocol-Version: 2025-11-25\r\n", "MCP-Protocol-Version: 2024-11-05\r\n", ""} {
		var m handler.Meta
		m.SetHTTPHead([]byte("POST /mcp HTTP/1.1\r\nHost: h\r\n" + h + "\r\n"))
		if n := testing.AllocsPerRun(100, func() { _, _ = check(&m) }); n != 0 {
			t.Errorf("%q: %v allocs", h, n)
		}
	}
}

// BenchmarkCheckProtocolVersion: the check on an MCP client's head, its
// revision supported, with no Authorizer behind it.
func BenchmarkCheckProtocolVersion(b *testing.B) {
	check := mcp.CheckProtocolVersion(nil)
	var m handler.Meta
	m.SetHTTPHead([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 120\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Method: tools/call\r\nMCP-Protocol-Version: 2025-11-25\r\nAccept-Encoding: gzip\r\n\r\n"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := check(&m); err != nil {
			b.Fatal(err)
		}
	}
}
