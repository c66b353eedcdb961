package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
