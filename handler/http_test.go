package handler_test

// Tests of the net/http adapter (http.go).

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
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

func TestAcceptableContentType_mediaTypes(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "application/json": true, "Application/JSON; charset=UTF-8": true,
		"application/json-rpc": true, "application/jsonrequest": true,
		"text/json": false, "application/xml": false, "application/json+x": false, ";;": false,
	} {
		if got := handler.AcceptableContentType(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
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
