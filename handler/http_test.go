package handler_test

// Tests of the net/http adapter (http.go).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

func TestHTTPHandler_transportRules(t *testing.T) {
	h := handler.NewHTTPHandler(demoTable(t))
	h.MaxBodySize = 64
	srv := httptest.NewServer(h)
	defer srv.Close()
	add := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		wantBody                        string
		header                          string // "Key: value" expected
	}{
		{"call", "POST", "/", "application/json", add, 200, `{"jsonrpc":"2.0","result":3,"id":1}`, "Content-Type: application/json"},
		{"charset", "POST", "/", "application/json; charset=utf-8", add, 200, `{"jsonrpc":"2.0","result":3,"id":1}`, ""},
		{"json-rpc type", "POST", "/", "application/json-rpc", add, 200, `{"jsonrpc":"2.0","result":3,"id":1}`, ""},
		{"jsonrequest type", "POST", "/", "application/jsonrequest", add, 200, `{"jsonrpc":"2.0","result":3,"id":1}`, ""},
		{"no type", "POST", "/", "", add, 200, `{"jsonrpc":"2.0","result":3,"id":1}`, ""},
		{"other type", "POST", "/", "text/plain", add, 415, "", ""},
		{"notification", "POST", "/", "application/json", `{"jsonrpc":"2.0","method":"add","params":[1,2]}`, 204, "", ""},
		{"parse error is 200", "POST", "/", "application/json", `{`, 200, "", ""},
		{"too large", "POST", "/", "application/json", `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 100) + `"],"id":1}`, 413, "", ""},
		{"get", "GET", "/", "", "", 405, "", "Allow: POST"},
		{"put", "PUT", "/", "application/json", add, 405, "", "Allow: POST"},
		{"health", "GET", "/health", "", "", 200, `{"status":"ok"}`, ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, resp.StatusCode, c.status, body)
		}
		if c.wantBody != "" && string(body) != c.wantBody {
			t.Errorf("%s: body %s, want %s", c.name, body, c.wantBody)
		}
		if c.header != "" {
			k, v, _ := strings.Cut(c.header, ": ")
			if resp.Header.Get(k) != v {
				t.Errorf("%s: header %s = %q, want %q", c.name, k, resp.Header.Get(k), v)
			}
		}
	}
}

// Regression from a review of the net/http adapter: a body cut by http.MaxBytesHandler was not answered 413.
//
// A body cut off by an outer limit (http.MaxBytesHandler) is 413, as the
// adapter's own limit is.
func TestHTTPHandler_outerBodyLimitIs413(t *testing.T) {
	srv := httptest.NewServer(http.MaxBytesHandler(handler.NewHTTPHandler(demoTable(t)), 50))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("x", 100)+`"],"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
}

// TestHTTPHandler_access: the adapter has the engine's access features —
// Host allow list, CORS preflights and marked replies, an Authorizer
// answering 401/403 and giving grants — and methods and interceptors see
// the request's metadata.
func TestHTTPHandler_access(t *testing.T) {
	tab := handler.NewTable()
	type seen struct {
		Transport, Remote, Agent, Target string
	}
	handler.RegisterNoParams(tab, "who", func(ctx context.Context) (seen, error) {
		m := handler.MetaFrom(ctx)
		return seen{m.Transport.String(), m.Remote.String(), m.Header("User-Agent"), m.Target()}, nil
	})
	handler.RegisterNoParams(tab, "secret", func(context.Context) (int, error) { return 42, nil }, handler.Require("admin"))
	var calls atomic.Int32
	tab.Use(func(ctx context.Context, call *handler.Call) error {
		if handler.MetaFrom(ctx).Transport == handler.TransportHTTP {
			calls.Add(1)
		}
		return nil
	})
	h := handler.NewHTTPHandler(tab)
	h.Hosts = []string{"rpc.example"}
	h.CORS = httprules.CORS{Origins: []string{"https://app.example"}}
	h.Authorize = func(m *handler.Meta) (handler.Grants, error) {
		switch m.Header("Authorization") {
		case "Bearer admin":
			return handler.Grants{"admin"}, nil
		case "Bearer user":
			return nil, nil
		case "Bearer banned":
			return nil, handler.ErrAccessDenied
		}
		return nil, handler.ErrUnauthenticated
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, body string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/rpc?x=1", strings.NewReader(body))
		req.Host = "rpc.example"
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
			} else {
				req.Header.Set(hdr[i], hdr[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	who := `{"jsonrpc":"2.0","method":"who","id":1}`
	secret := `{"jsonrpc":"2.0","method":"secret","id":1}`
	if r, body := do("POST", who); r.StatusCode != 401 || r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("no credentials: %d %v %q", r.StatusCode, r.Header, body)
	}
	if r, _ := do("POST", who, "Authorization", "Bearer banned"); r.StatusCode != 403 {
		t.Errorf("denied: %d", r.StatusCode)
	}
	if r, body := do("POST", who, "Authorization", "Bearer user", "Host", "evil.example"); r.StatusCode != 403 || body != httprules.TextHostNotAllowed {
		t.Errorf("other host: %d %q", r.StatusCode, body)
	}
	r, body := do("POST", who, "Authorization", "Bearer user", "User-Agent", "tester/1", "Origin", "https://app.example")
	if r.StatusCode != 200 || !strings.Contains(body, `"Transport":"http"`) || !strings.Contains(body, `"Agent":"tester/1"`) ||
		!strings.Contains(body, `"Remote":"127.0.0.1:`) || !strings.Contains(body, `"Target":"/rpc?x=1"`) {
		t.Errorf("who: %d %q", r.StatusCode, body)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("reply to an allowed origin: %v", r.Header)
	}
	if _, body := do("POST", secret, "Authorization", "Bearer user"); !strings.Contains(body, `"code":-32003`) {
		t.Errorf("secret as user: %q", body)
	}
	if _, body := do("POST", secret, "Authorization", "Bearer admin"); body != `{"jsonrpc":"2.0","result":42,"id":1}` {
		t.Errorf("secret as admin: %q", body)
	}
	r, _ = do("OPTIONS", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	if r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization" || r.Header.Get("Access-Control-Max-Age") != "600" {
		t.Errorf("preflight: %d %v", r.StatusCode, r.Header)
	}
	if r, body := do("OPTIONS", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST"); r.StatusCode != 403 || body != httprules.TextOriginNotAllowed {
		t.Errorf("preflight from another origin: %d %q", r.StatusCode, body)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("interceptor saw %d HTTP calls, want 3", got)
	}
}

// HTTPHandler applies the same Host checks as the engine: a bracketed
// name is no IPv6 address, and StrictHosts refuses addresses it does not
// name.
func TestHTTPHandler_strictHosts(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	for _, strict := range []bool{false, true} {
		h := handler.NewHTTPHandler(tab)
		h.Hosts, h.StrictHosts = []string{"rpc.example"}, strict
		srv := httptest.NewServer(h)
		for host, want := range map[string]int{"rpc.example": 200, "[evil.com]": 403, "127.0.0.1": map[bool]int{false: 200, true: 403}[strict]} {
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
			req.Host = host
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("strict %v, Host %s: %d, want %d", strict, host, resp.StatusCode, want)
			}
		}
		srv.Close()
	}
}

// HTTPHandler refuses a call from a page of an origin its CORS does not
// allow with 403 before the call runs, as the engine does.
func TestHTTPHandler_refusedOriginRunsNothing(t *testing.T) {
	tab := handler.NewTable()
	var n atomic.Int32
	handler.RegisterNoParams(tab, "count", func(context.Context) (int32, error) { return n.Add(1), nil })
	h := handler.NewHTTPHandler(tab)
	h.CORS = httprules.CORS{Origins: []string{"https://app.example"}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for origin, want := range map[string]int{"https://evil.example": 403, "https://app.example": 200, "": 200} {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"count","id":1}`))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == 403 && string(b) != httprules.TextOriginNotAllowed {
			t.Errorf("Origin %q: %d %q, want %d", origin, resp.StatusCode, b, want)
		}
	}
	if n.Load() != 2 {
		t.Errorf("%d calls ran, want 2", n.Load())
	}
}

// TestHTTPHandler_readiness: the health check answers 503
// {"status":"not_ready","reason":...} while the policy's Ready fails and
// after SetNotReady until SetReady; calls are served all the while.
func TestHTTPHandler_readiness(t *testing.T) {
	var failing atomic.Bool
	tab := handler.NewTable()
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	h := &handler.HTTPHandler{Table: tab, HTTPPolicy: handler.HTTPPolicy{Ready: func() error {
		if failing.Load() {
			return errors.New("cache cold")
		}
		return nil
	}}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	want := func(what string, code int, body string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code || string(b) != body || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %v; want %d %s", what, resp.StatusCode, b, resp.Header, code, body)
		}
		resp, err = http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != `{"jsonrpc":"2.0","result":3,"id":1}` {
			t.Errorf("%s: a call: %d %s", what, resp.StatusCode, b)
		}
	}
	want("ready", 200, httprules.HealthBody)
	failing.Store(true)
	want("Ready failing", 503, `{"status":"not_ready","reason":"cache cold"}`)
	failing.Store(false)
	h.SetNotReady("maintenance")
	want("SetNotReady", 503, `{"status":"not_ready","reason":"maintenance"}`)
	h.SetReady()
	want("SetReady", 200, httprules.HealthBody)
}

// HTTPHandler gave an anonymous caller (AuthOptional) the grants and the
// principal its Authorizer returned or set along with ErrNoCredentials,
// where the engine gives none: "anonymous, with no grants".
func TestHTTPHandler_anonymousHasNoGrants(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "who", func(ctx context.Context, _ struct{}) (string, error) {
		return handler.MetaFrom(ctx).Principal + "|" + strings.Join(handler.GrantsFrom(ctx), ","), nil
	})
	handler.Register(tab, "admin", func(context.Context, struct{}) (bool, error) { return true, nil }, handler.Require("admin"))
	h := handler.NewHTTPHandler(tab)
	h.AuthOptional = true
	h.Authorize = func(m *handler.Meta) (handler.Grants, error) {
		m.Principal = "guest" // a careless Authorizer: names a caller and gives grants, yet refuses
		return handler.Grants{"admin"}, handler.ErrNoCredentials
	}
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"who","id":1}`:   `{"jsonrpc":"2.0","result":"|","id":1}`,
		`{"jsonrpc":"2.0","method":"admin","id":2}`: `"code":-32003`,
	} {
		req := httptest.NewRequest("POST", "/", strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Body.String(); rec.Code != 200 || !strings.Contains(got, want) {
			t.Errorf("%s: %d %s, want 200 with %s", msg, rec.Code, got, want)
		}
	}
}
