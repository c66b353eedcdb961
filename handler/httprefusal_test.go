package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// TestHTTPHandler_refusalsLogged: the net/http adapter's refusals before
// JSON-RPC reach the access log as the engine's do — a Host not allowed,
// a method not allowed, a body over the limit, a caller the Authorizer
// refuses, a preflight from an Origin not allowed — with status, reason
// and the caller's fields.
func TestHTTPHandler_refusalsLogged(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	tab := handler.NewTable(handler.WithAccessLog(handler.AccessLog{Logger: logger, Sample: 1}))
	handler.RegisterNoParams(tab, "ok", func(context.Context) (int, error) { return 1, nil })
	h := handler.NewHTTPHandler(tab)
	h.Hosts = []string{"rpc.example"}
	h.MaxBodySize = 64
	h.CORS = httprules.CORS{Origins: []string{"https://app.example"}}
	h.Authorize = func(m *handler.Meta) (handler.Grants, error) {
		if m.Header("Authorization") == "Bearer good" {
			m.Principal = "good"
			return nil, nil
		}
		return nil, handler.ErrUnauthenticated
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		method, host, body string
		hdr                []string
		status             int
		reason             string
	}{
		{"POST", "evil.example", `{"jsonrpc":"2.0","method":"ok","id":1}`, nil, 403, "forbidden_host"},
		{"GET", "rpc.example", "", nil, 405, "method_not_allowed"},
		{"POST", "rpc.example", `{"jsonrpc":"2.0","method":"ok","params":["` + strings.Repeat("x", 100) + `"],"id":1}`, []string{"Authorization", "Bearer good"}, 413, "body_too_large"},
		{"POST", "rpc.example", `{"jsonrpc":"2.0","method":"ok","id":1}`, nil, 401, "unauthorized"},
		{"OPTIONS", "rpc.example", "", []string{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"}, 403, "forbidden_origin"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL, strings.NewReader(c.body))
		req.Host = c.host
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(c.hdr); i += 2 {
			req.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.reason, resp.StatusCode, c.status)
		}
		mu.Lock()
		var rec map[string]any
		err = json.Unmarshal(buf.Bytes(), &rec)
		buf.Reset()
		mu.Unlock()
		if err != nil {
			t.Errorf("%s: not one record: %v", c.reason, err)
			continue
		}
		if rec["msg"] != "jetrpc: refused" || rec["status"] != float64(c.status) || rec["reason"] != c.reason ||
			rec["transport"] != "http" || !strings.HasPrefix(rec["remote"].(string), "127.0.0.1:") {
			t.Errorf("%s: record %v", c.reason, rec)
		}
		if _, ok := rec["principal"]; ok {
			t.Errorf("%s: a principal before the Authorizer named one: %v", c.reason, rec)
		}
	}
}

// writerFunc is an io.Writer of a func.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
