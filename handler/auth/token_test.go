package auth_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

// tokenCases are WebSocket upgrade requests (target and header fields)
// and the token each carries; the fuzz target is seeded from them.
var tokenCases = []struct {
	at     string
	target string
	fields []string
	want   string
	allocs bool // Token may allocate: percent-decoding, or a Sec-WebSocket-Protocol field past the first
}{
	// Authorization header.
	{at: here(), target: "/", fields: []string{"Authorization: Bearer tok"}, want: "tok"},
	{at: here(), target: "/", fields: []string{"Authorization: bearer tok"}, want: "tok"},
	{at: here(), target: "/", fields: []string{"Authorization: BEARER tok"}, want: "tok"},
	{at: here(), target: "/", fields: []string{"authorization: BeArEr tok"}, want: "tok"},
	{at: here(), target: "/", fields: []string{"Authorization: Bearer   tok  "}, want: "tok"},
	{at: here(), target: "/", fields: []string{"Authorization: Bearer\ttok"}, want: "tok"},
	{at: here(), target: "/", fields: []string{"Authorization: Bearer eyJ.a-b_c~d+e/f=="}, want: "eyJ.a-b_c~d+e/f=="},
	{at: here(), target: "/", fields: []string{"Authorization: Bearer one", "Authorization: Bearer two"}, want: "one"},
	// Malformed or other schemes: skipped.
	{at: here(), target: "/", fields: []string{"Authorization: Bearer"}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization: Bearer "}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization: Bearertok"}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization: Bearer a b"}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization: Basic dXNlcjpwYXNz"}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization: Bear tok"}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization: tok"}, want: ""},
	{at: here(), target: "/", fields: []string{"Authorization:"}, want: ""},
	{at: here(), target: "/", fields: []string{"X-Authorization: Bearer tok"}, want: ""},
	// WebSocket subprotocol.
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: bearer.ws"}, want: "ws"},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: jsonrpc, bearer.ws"}, want: "ws"},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: jsonrpc,bearer.ws ,x"}, want: "ws"},
	{at: here(), target: "/", fields: []string{"sec-websocket-protocol:  bearer.ws1 , bearer.ws2"}, want: "ws1"},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: jsonrpc", "Sec-WebSocket-Protocol: bearer.ws"}, want: "ws", allocs: true},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: bearer., bearer.ws"}, want: "ws"},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: jsonrpc"}, want: "", allocs: true},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: Bearer.ws"}, want: "", allocs: true},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: xbearer.ws"}, want: "", allocs: true},
	{at: here(), target: "/", fields: []string{"Sec-WebSocket-Protocol: bearer."}, want: "", allocs: true},
	// Query.
	{at: here(), target: "/?access_token=q", want: "q"},
	{at: here(), target: "/rpc?a=1&access_token=q&access_token=r", want: "q"},
	{at: here(), target: "/?access_token=a%2Fb%3D", want: "a/b=", allocs: true},
	{at: here(), target: "/?access_token=a+b", want: "", allocs: true},
	{at: here(), target: "/?access_token=", want: ""},
	{at: here(), target: "/?xaccess_token=q", want: ""},
	{at: here(), target: "/access_token=q", want: ""},
	// Precedence: header, then subprotocol, then query.
	{at: here(), target: "/?access_token=q", fields: []string{"Sec-WebSocket-Protocol: bearer.ws", "Authorization: Bearer h"}, want: "h"},
	{at: here(), target: "/?access_token=q", fields: []string{"Sec-WebSocket-Protocol: bearer.ws"}, want: "ws"},
	{at: here(), target: "/?access_token=q", fields: []string{"Authorization: Basic x"}, want: "q"},
	{at: here(), target: "/?access_token=q", fields: []string{"Authorization: Bearer"}, want: "q"},
	{at: here(), target: "/?access_token=q", fields: []string{"Sec-WebSocket-Protocol: jsonrpc", "Authorization: bearer a b"}, want: "q", allocs: true},
	// Nothing.
	{at: here(), target: "/", want: ""},
}

func TestToken(t *testing.T) {
	for _, c := range tokenCases {
		if got := auth.Token(wsMeta(c.target, c.fields...)); got != c.want {
			t.Errorf("%s: Token = %q; want %q", c.at, got, c.want)
		}
	}
}

// A token in the URL or a subprotocol counts on a WebSocket upgrade only:
// on a POST (or a GET that is no upgrade) Token finds none, and
// TokenInURL tells a refusal why.
//
// An API key in ?access_token= was accepted on an HTTP POST (found by an attack pass).
func TestToken_urlAndSubprotocolOnlyOnUpgrade(t *testing.T) {
	get := func(target string, fields ...string) *handler.Meta {
		m := &handler.Meta{Transport: handler.TransportHTTP}
		m.SetHTTPHead([]byte(strings.Replace(string(head(target, fields...)), "POST ", "GET ", 1)))
		return m
	}
	for _, c := range []struct {
		at       string
		m        *handler.Meta
		want     string
		tokenURL bool
	}{
		{at: here(), m: httpMeta("/?access_token=q"), want: "", tokenURL: true},
		{at: here(), m: httpMeta("/rpc?a=1&access_token=q"), want: "", tokenURL: true},
		{at: here(), m: get("/?access_token=q"), want: "", tokenURL: true},
		{at: here(), m: get("/?access_token=q", "Upgrade: h2c"), want: "", tokenURL: true},
		{at: here(), m: httpMeta("/", "Sec-WebSocket-Protocol: bearer.ws"), want: ""},
		{at: here(), m: httpMeta("/?access_token=q", "Authorization: Bearer h"), want: "h", tokenURL: true},
		{at: here(), m: wsMeta("/?access_token=q"), want: "q"},
		{at: here(), m: get("/?access_token=q", "Upgrade: WebSocket"), want: "q"},
		{at: here(), m: httpMeta("/"), want: ""},
	} {
		if got := auth.Token(c.m); got != c.want {
			t.Errorf("%s: Token = %q; want %q", c.at, got, c.want)
		}
		if got := auth.TokenInURL(c.m); got != c.tokenURL {
			t.Errorf("%s: TokenInURL = %v; want %v", c.at, got, c.tokenURL)
		}
	}
}

// TestToken_netHTTP reads the same requests through net/http's Request.
func TestToken_netHTTP(t *testing.T) {
	for _, c := range tokenCases {
		r := httptest.NewRequest("GET", c.target, nil)
		r.Header.Set("Upgrade", "websocket")
		for _, f := range c.fields {
			name, value, _ := cutField(f)
			r.Header.Add(name, value)
		}
		var m handler.Meta
		m.SetHTTPRequest(r)
		if got := auth.Token(&m); got != c.want {
			t.Errorf("%s: Token = %q; want %q", c.at, got, c.want)
		}
	}
}

// cutField splits "Name: value" as net/http's reader would.
func cutField(f string) (name, value string, ok bool) {
	for i := 0; i < len(f); i++ {
		if f[i] == ':' {
			v := f[i+1:]
			for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
				v = v[1:]
			}
			for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
				v = v[:len(v)-1]
			}
			return f[:i], v, true
		}
	}
	return f, "", false
}

func TestToken_noHTTP(t *testing.T) {
	for _, m := range []*handler.Meta{
		{},
		{Transport: handler.TransportStream, Remote: tcp("10.0.0.1")},
	} {
		if got := auth.Token(m); got != "" {
			t.Errorf("Token(%v) = %q; want \"\"", m.Transport, got)
		}
	}
}

func FuzzToken(f *testing.F) {
	for _, c := range tokenCases {
		h := ""
		if len(c.fields) > 0 {
			h = c.fields[0]
		}
		f.Add(c.target, h)
	}
	f.Fuzz(func(t *testing.T, target, field string) {
		for _, r := range target + field {
			if r == '\r' || r == '\n' {
				return // not a single request line and field
			}
		}
		m := wsMeta("/"+target, field) // an upgrade: every source is read
		tok := auth.Token(m)
		for i := 0; i < len(tok); i++ {
			if tok[i] <= ' ' || tok[i] == 0x7f {
				t.Fatalf("token %q holds white space or a control byte", tok)
			}
		}
	})
}
