package mcp_test

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
)

// TestCheckProtocolVersion_unsupportedVersionRefusedAfterACachedAcceptance:
// on a keep-alive connection, after a first request without
// MCP-Protocol-Version accepted by an Authorizer whose answer holds
// (AuthorizedUntil), a second with the same Authorization and an
// unsupported revision is refused 400, not answered from the engine's
// cache of acceptances.
//
// It was served 200 from the cache (found in a review).
func TestCheckProtocolVersion_unsupportedVersionRefusedAfterACachedAcceptance(t *testing.T) {
	tab := handler.NewTable()
	mcp.Register(tab)
	next := func(m *handler.Meta) (handler.Grants, error) {
		if m.Header("Authorization") != "Bearer k" {
			return nil, handler.ErrUnauthenticated
		}
		m.AuthorizedUntil = math.MaxInt64 // good for this key
		return handler.Grants{"*"}, nil
	}
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(mcp.CheckProtocolVersion(next)))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	exchange := func(extra string) (int, string) {
		body := `{"jsonrpc":"2.0","method":"ping","id":1}`
		req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer k\r\n%sContent-Length: %d\r\n\r\n%s", mcp.Path, extra, len(body), body)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if status, body := exchange(""); status != http.StatusOK {
		t.Fatalf("without the header: %d %s", status, body)
	}
	status, body := exchange("MCP-Protocol-Version: 2024-11-05\r\n")
	if status != http.StatusBadRequest || !strings.Contains(body, "Unsupported protocol version") {
		t.Errorf("an unsupported MCP-Protocol-Version after a cached acceptance: %d %q, want 400 Unsupported protocol version", status, body)
	}
}

// TestCheckProtocolVersion_refusalIsNotAdmittedAnonymously: under
// AuthOptional, the 400 of an unsupported revision is not turned into
// an anonymous caller (only ErrNoCredentials is).
func TestCheckProtocolVersion_refusalIsNotAdmittedAnonymously(t *testing.T) {
	tab := handler.NewTable()
	mcp.Register(tab)
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(mcp.CheckProtocolVersion(nil)), engine.WithAuthOptional(true))
	resp, b := enginetest.Post(t, "http://"+addr+mcp.Path, `{"jsonrpc":"2.0","method":"ping","id":1}`,
		"Accept: application/json, text/event-stream", "MCP-Protocol-Version: 1999-01-01")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("%d %s, want 400", resp.StatusCode, b)
	}
}

// TestHTTPRefusal_statusOutside4xxIsForbidden: an HTTPRefusal whose
// Status is not 4xx is answered 403 with the 403 text, not its own.
func TestHTTPRefusal_statusOutside4xxIsForbidden(t *testing.T) {
	for _, s := range []int{0, 200, 399, 500} {
		err := &handler.HTTPRefusal{Status: s, Text: "mine"}
		if handler.AuthStatus(err) != http.StatusForbidden || handler.AuthText(err) == "mine" {
			t.Errorf("status %d: %d %q", s, handler.AuthStatus(err), handler.AuthText(err))
		}
		wrapped := fmt.Errorf("w: %w", &handler.HTTPRefusal{Status: 429, Text: "slow"})
		if handler.AuthStatus(wrapped) != 429 || handler.AuthText(wrapped) != "slow" {
			t.Errorf("wrapped: %d %q", handler.AuthStatus(wrapped), handler.AuthText(wrapped))
		}
	}
}

// TestCheckProtocolVersion_webSocketUpgradeIsNotChecked: a WebSocket
// upgrade naming an unsupported revision opens, as the doc says.
//
// It was refused 400 (found in a review).
func TestCheckProtocolVersion_webSocketUpgradeIsNotChecked(t *testing.T) {
	tab := handler.NewTable()
	mcp.Register(tab)
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(mcp.CheckProtocolVersion(nil)))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nMCP-Protocol-Version: 2024-11-05\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("upgrade naming 2024-11-05: %d %s, want 101", resp.StatusCode, b)
	}
}

// TestHTTPRefusal_nilRefusalDoesNotPanic: an Authorizer error wrapping
// a nil *HTTPRefusal is answered 403.
//
// AuthStatus dereferenced it (found in a review).
func TestHTTPRefusal_nilRefusalDoesNotPanic(t *testing.T) {
	var r *handler.HTTPRefusal
	var err error = fmt.Errorf("wrapped: %w", r)
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("AuthStatus of a nil *HTTPRefusal panics: %v", p)
		}
	}()
	if s := handler.AuthStatus(err); s != http.StatusForbidden {
		t.Errorf("%d, want 403", s)
	}
}
