package engine_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// One handler.HTTPPolicy given to the engine and to HTTPHandler answers
// the same requests the same way: the health check off ("-", which only
// HTTPHandler honoured before they shared the type), a Host not listed,
// an address under a strict list, an Origin not allowed, a call without
// a key, an allowed call.
func TestHTTPPolicy_engineAndHandlerAgree(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	keys := auth.NewKeys(map[string]handler.Grants{key: nil})
	p := handler.HTTPPolicy{
		HealthPath:  "-",
		CORS:        httprules.CORS{Origins: []string{"https://app.example"}},
		Hosts:       []string{"rpc.example"},
		StrictHosts: true,
		Authorize:   keys.Authorize,
	}
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	_, addr, _ := startEngine(t, tab, engine.WithHTTPPolicy(p))
	srv := httptest.NewServer(&handler.HTTPHandler{Table: tab, HTTPPolicy: p})
	defer srv.Close()
	call := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	for _, c := range []struct {
		name, method, target, host, body string
		header                           http.Header
		want                             int
	}{
		{"health off", "GET", "/health", "rpc.example", "", nil, 405},
		{"another Host", "POST", "/", "evil.example", call, http.Header{"Authorization": {"Bearer " + key}}, 403},
		{"an address, strict", "POST", "/", "127.0.0.1", call, http.Header{"Authorization": {"Bearer " + key}}, 403},
		{"an Origin not allowed", "POST", "/", "rpc.example", call, http.Header{"Authorization": {"Bearer " + key}, "Origin": {"https://evil.example"}}, 403},
		{"no key", "POST", "/", "rpc.example", call, nil, 401},
		{"allowed", "POST", "/", "rpc.example", call, http.Header{"Authorization": {"Bearer " + key}, "Origin": {"https://app.example"}}, 200},
	} {
		var got [2]int
		var bodies [2]string
		for i, base := range []string{"http://" + addr, srv.URL} {
			req, _ := http.NewRequest(c.method, base+c.target, strings.NewReader(c.body))
			req.Host = c.host
			req.Header.Set("Content-Type", "application/json")
			for k, v := range c.header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got[i], bodies[i] = resp.StatusCode, string(b)
		}
		if got[0] != c.want || got[1] != c.want || bodies[0] != bodies[1] {
			t.Errorf("%s: engine %d %q, HTTPHandler %d %q; want %d from both, the same body", c.name, got[0], bodies[0], got[1], bodies[1], c.want)
		}
	}
}

// With AuthOptional, the engine and HTTPHandler let the same callers in
// anonymous: a call without credentials is answered, a method needing
// a grant refuses it -32003, a wrong key and another scheme get 401.
func TestHTTPPolicy_authOptionalAgree(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
	p := handler.HTTPPolicy{Authorize: keys.Authorize, AuthOptional: true}
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	handler.RegisterNoParams(tab, "admin_only", func(context.Context) (string, error) { return "secret", nil }, handler.Require("admin"))
	_, addr, _ := startEngine(t, tab, engine.WithHTTPPolicy(p))
	srv := httptest.NewServer(&handler.HTTPHandler{Table: tab, HTTPPolicy: p})
	defer srv.Close()
	add, admin := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, `{"jsonrpc":"2.0","method":"admin_only","id":1}`
	for _, c := range []struct {
		name, body, auth string
		want             int
		reply            string
	}{
		{"anonymous add", add, "", 200, `{"jsonrpc":"2.0","result":3,"id":1}`},
		{"anonymous admin_only", admin, "", 200, `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}`},
		{"keyed admin_only", admin, "Bearer " + key, 200, `{"jsonrpc":"2.0","result":"secret","id":1}`},
		{"wrong key", add, "Bearer nope", 401, "missing or invalid credentials\n"},
		{"another scheme", add, "Basic dXNlcjpwYXNz", 401, "missing or invalid credentials\n"},
	} {
		for _, base := range []string{"http://" + addr, srv.URL} {
			req, _ := http.NewRequest("POST", base+"/", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want || string(b) != c.reply {
				t.Errorf("%s from %s: %d %q; want %d %q", c.name, base, resp.StatusCode, b, c.want, c.reply)
			}
		}
	}
}

// Every field of httprules.CORS reaches a preflight's answer, the same
// from the engine (set with WithCORS, WithCORSHeaders, WithCORSMaxAge)
// and from HTTPHandler (its CORS field): the allowed headers and the max
// age follow the settings, a negative max age sends none.
func TestHTTPPolicy_corsPreflightAgree(t *testing.T) {
	for _, c := range []struct {
		name            string
		cors            httprules.CORS
		headers, maxAge string
	}{
		{"defaults", httprules.CORS{Origins: []string{"https://app.example"}}, "Content-Type, Authorization", "600"},
		{"set", httprules.CORS{Origins: []string{"https://app.example"}, Headers: []string{"Content-Type", "X-Trace", "X-Api-Key"}, MaxAge: 90 * time.Second}, "Content-Type, X-Trace, X-Api-Key", "90"},
		{"no max age", httprules.CORS{Origins: []string{"https://app.example"}, Headers: []string{"X-Trace"}, MaxAge: -1}, "X-Trace", ""},
	} {
		tab := handler.NewTable(handler.WithLogger(quiet()))
		demo.Register(tab)
		opts := []engine.Option{engine.WithCORS(c.cors.Origins...), engine.WithCORSMaxAge(c.cors.MaxAge)}
		if c.cors.Headers != nil {
			opts = append(opts, engine.WithCORSHeaders(c.cors.Headers...))
		}
		_, addr, _ := startEngine(t, tab, opts...)
		srv := httptest.NewServer(&handler.HTTPHandler{Table: tab, HTTPPolicy: handler.HTTPPolicy{CORS: c.cors}})
		for _, base := range []string{"http://" + addr, srv.URL} {
			req, _ := http.NewRequest("OPTIONS", base+"/", nil)
			req.Header.Set("Origin", "https://app.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "x-trace")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h := resp.Header
			_, hasAge := h["Access-Control-Max-Age"]
			if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
				h.Get("Access-Control-Allow-Headers") != c.headers || h.Get("Access-Control-Max-Age") != c.maxAge || hasAge != (c.maxAge != "") {
				t.Errorf("%s, %s: %d %v; want Allow-Headers %q, Max-Age %q", c.name, base, resp.StatusCode, h, c.headers, c.maxAge)
			}
		}
		srv.Close()
	}
}

// One readiness check given to the engine and to HTTPHandler answers
// the health check the same way: 200 while it passes, 503 with the same
// body naming its error while it fails.
func TestHTTPPolicy_readyAgree(t *testing.T) {
	var failing atomic.Bool
	p := handler.HTTPPolicy{Ready: func() error {
		if failing.Load() {
			return errors.New("replica lagging")
		}
		return nil
	}}
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	_, addr, _ := startEngine(t, tab, engine.WithHTTPPolicy(p))
	srv := httptest.NewServer(&handler.HTTPHandler{Table: tab, HTTPPolicy: p})
	defer srv.Close()
	for _, c := range []struct {
		fail bool
		code int
		body string
	}{
		{false, 200, httprules.HealthBody},
		{true, 503, `{"status":"not_ready","reason":"replica lagging"}`},
		{false, 200, httprules.HealthBody},
	} {
		failing.Store(c.fail)
		for _, base := range []string{"http://" + addr, srv.URL} {
			resp, err := http.Get(base + "/health")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.code || string(b) != c.body || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("failing %v, %s: %d %s; want %d %s", c.fail, base, resp.StatusCode, b, c.code, c.body)
			}
		}
	}
}
