package engine_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// getTable is demo's table with add and echo callable by GET (add
// cacheable 5 s, echo with the default no-store), a blocking GET method
// (slowAdd), a GET method that fails, and one that requires a grant.
func getTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	handler.Register(tab, "get_add", func(_ context.Context, p [2]int64) (int64, error) { return p[0] + p[1], nil }, handler.Inline(), handler.HTTPGet("max-age=5"))
	handler.Register(tab, "get_echo", func(_ context.Context, p handler.Raw) (handler.Raw, error) { return p, nil }, handler.Inline(), handler.HTTPGet(""))
	handler.Register(tab, "get_slow", func(_ context.Context, p [2]int64) (int64, error) {
		time.Sleep(time.Millisecond)
		return p[0] + p[1], nil
	}, handler.HTTPGet("public, max-age=60"))
	handler.Register(tab, "get_fail", func(_ context.Context, p [2]int64) (int64, error) {
		return 0, errors.New("no")
	}, handler.Inline(), handler.HTTPGet("max-age=5"))
	handler.Register(tab, "get_admin", func(_ context.Context, p [2]int64) (int64, error) { return 1, nil }, handler.Inline(), handler.HTTPGet("max-age=1"), handler.Require("admin"))
	return tab
}

func getReq(target string, extra string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n"
}

func TestHTTPGet_callsMarkedMethod(t *testing.T) {
	_, addr, _ := startEngine(t, getTable())
	for _, tc := range []struct {
		target, body, cache string
	}{
		{"/?method=get_add&id=7&params=" + url.QueryEscape("[2,3]"), `{"jsonrpc":"2.0","result":5,"id":7}`, "max-age=5"},
		{"/rpc/x?method=get_add&id=abc&params=%5B2%2C3%5D", `{"jsonrpc":"2.0","result":5,"id":"abc"}`, "max-age=5"},
		{"/?method=get_add&params=[1,1]", `{"jsonrpc":"2.0","result":2,"id":null}`, "max-age=5"},
		{"/?_=123&method=get_echo&id=-1.5e3&params=" + url.QueryEscape(`{"a":"b c"}`), `{"jsonrpc":"2.0","result":{"a":"b c"},"id":-1.5e3}`, "no-store"},
		{"/?method=get_echo&id=1&params=%7B%22a%22:+1%7D", `{"jsonrpc":"2.0","result":{"a":1},"id":1}`, "no-store"},
		{"/?method=get_slow&id=1&params=[20,22]", `{"jsonrpc":"2.0","result":42,"id":1}`, "public, max-age=60"},
		{"/?method=get_fail&id=1&params=[1,2]", `"error"`, "no-store"},
		{"/?method=get_add&id=1&params=[1]", `"error":{"code":-32602`, "no-store"},
		{"/?method=get_admin&id=1&params=[1,1]", `"error":{"code":-32003`, "no-store"},
		{"/?method=get_add&id=%22q%22&params=[1,1]", `"id":"\"q\""`, "max-age=5"},
	} {
		rs := rawHTTP(t, addr, getReq(tc.target, ""), 1)
		if len(rs) != 1 {
			t.Fatalf("%s: no response", tc.target)
		}
		r := rs[0]
		if b := bodyOf(r); r.StatusCode != 200 || !strings.Contains(b, tc.body) {
			t.Errorf("%s: %d %s, want 200 with %s", tc.target, r.StatusCode, b, tc.body)
		}
		if got := r.Header.Get("Cache-Control"); got != tc.cache {
			t.Errorf("%s: Cache-Control %q, want %q", tc.target, got, tc.cache)
		}
	}
}

func TestHTTPGet_refusals(t *testing.T) {
	_, addr, _ := startEngine(t, getTable())
	for _, tc := range []struct {
		target string
		status int
		text   string
	}{
		{"/?method=add&id=1&params=[1,2]", 405, "not callable by GET"},    // registered, not marked
		{"/?method=nosuch&id=1&params=[1,2]", 405, "not callable by GET"}, // not registered
		{"/?method=get_add&id=1&params=1", 400, "params"},
		{"/?method=get_add&id=1&params=%5B1", 400, "params"},
		{"/?method=get_add&id=1&params=" + url.QueryEscape(`[1,2],"method":"add"`), 400, "params"},
		{"/?method=get_add&id=1&params=%zz", 400, "percent escape"},
		{"/?method=get_add&id=1&params=[1,2]%", 400, "percent escape"},
		{"/?method=get_add&method=add&id=1", 400, "twice"},
		{"/?method=&id=1", 400, "empty"},
	} {
		rs := rawHTTP(t, addr, getReq(tc.target, ""), 1)
		if len(rs) != 1 {
			t.Fatalf("%s: no response", tc.target)
		}
		r := rs[0]
		if b := bodyOf(r); r.StatusCode != tc.status || !strings.Contains(b, tc.text) {
			t.Errorf("%s: %d %q, want %d with %q", tc.target, r.StatusCode, b, tc.status, tc.text)
		}
		if tc.status == 405 && r.Header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q, want POST", tc.target, r.Header.Get("Allow"))
		}
	}
}

// Health, pages, a GET without a method parameter and the WebSocket
// upgrade answer as they did before calls by GET.
func TestHTTPGet_otherGetsUnchanged(t *testing.T) {
	page := engine.Page{Path: "/metrics", ContentType: "text/plain", Append: func(dst []byte) []byte { return append(dst, "m 1\n"...) }}
	_, addr, _ := startEngine(t, getTable(), engine.WithPage(page))
	for _, tc := range []struct {
		target string
		status int
		body   string
	}{
		{"/health?method=get_add", 200, "ok"},
		{"/metrics?method=get_add", 200, "m 1"},
		{"/?x=1", 405, ""},
		{"/?methods=get_add", 405, ""},
	} {
		r := rawHTTP(t, addr, getReq(tc.target, ""), 1)[0]
		if b := bodyOf(r); r.StatusCode != tc.status || !strings.Contains(b, tc.body) {
			t.Errorf("%s: %d %q, want %d", tc.target, r.StatusCode, b, tc.status)
		}
	}
	c := dialWS(t, addr, nil)
	defer c.Close()
	if got := string(wsCall(t, c, `{"jsonrpc":"2.0","method":"get_add","params":[1,2],"id":1}`)); got != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Errorf("websocket: %s", got)
	}
}

// A keep-alive connection takes GET calls and POSTs pipelined, answered
// in order, the blocking GET's reply held for order with its own
// Cache-Control.
func TestHTTPGet_pipelinedInOrder(t *testing.T) {
	_, addr, _ := startEngine(t, getTable())
	req := getReq("/?method=get_slow&id=1&params=[1,2]", "") +
		post(`{"jsonrpc":"2.0","method":"add","params":[1,1],"id":2}`, "") +
		getReq("/?method=get_add&id=3&params=[3,3]", "")
	rs := rawHTTP(t, addr, req, 3)
	if len(rs) != 3 {
		t.Fatalf("%d responses", len(rs))
	}
	want := []struct{ body, cache string }{{`"result":3,"id":1`, "public, max-age=60"}, {`"result":2,"id":2`, ""}, {`"result":6,"id":3`, "max-age=5"}}
	for i, w := range want {
		if b := bodyOf(rs[i]); !strings.Contains(b, w.body) || rs[i].Header.Get("Cache-Control") != w.cache {
			t.Errorf("reply %d: %s Cache-Control %q, want %s %q", i, b, rs[i].Header.Get("Cache-Control"), w.body, w.cache)
		}
	}
}

// The Authorizer, Hosts and CORS apply to a call by GET as to a POST.
func TestHTTPGet_accessChecks(t *testing.T) {
	auth := func(m *handler.Meta) (handler.Grants, error) {
		switch m.Header("authorization") {
		case "Bearer admin":
			return handler.Grants{"admin"}, nil
		case "Bearer user":
			return handler.Grants{}, nil
		}
		return nil, handler.ErrUnauthenticated
	}
	_, addr, _ := startEngine(t, getTable(), func(o *engine.Options) {
		o.Authorize = auth
		o.Hosts = []string{"x"}
		o.CORS.Origins = []string{"https://ok.example"}
	})
	target := "/?method=get_admin&id=1&params=[1,1]"
	for _, tc := range []struct {
		extra  string
		status int
		body   string
	}{
		{"", 401, ""},
		{"Authorization: Bearer user\r\n", 200, `-32003`},
		{"Authorization: Bearer admin\r\n", 200, `"result":1`},
		{"Authorization: Bearer admin\r\nOrigin: https://evil.example\r\n", 403, ""},
		{"Authorization: Bearer admin\r\nOrigin: https://ok.example\r\n", 200, `"result":1`},
	} {
		r := rawHTTP(t, addr, getReq(target, tc.extra), 1)[0]
		if b := bodyOf(r); r.StatusCode != tc.status || !strings.Contains(b, tc.body) {
			t.Errorf("%q: %d %q, want %d %q", tc.extra, r.StatusCode, b, tc.status, tc.body)
		}
		if tc.status == 200 && strings.Contains(tc.extra, "Origin") && r.Header.Get("Access-Control-Allow-Origin") != "https://ok.example" {
			t.Errorf("%q: no CORS header: %v", tc.extra, r.Header)
		}
	}
	r := rawHTTP(t, addr, "GET "+target+" HTTP/1.1\r\nHost: y\r\nAuthorization: Bearer admin\r\n\r\n", 1)[0]
	if r.StatusCode != 403 {
		t.Errorf("Host y: %d, want 403", r.StatusCode)
	}
}

// A net/http client gets the reply of a call by GET, with its
// Cache-Control.
func TestHTTPGet_netHTTPClient(t *testing.T) {
	_, addr, _ := startEngine(t, getTable())
	q := url.Values{"method": {"get_add"}, "id": {"9"}, "params": {"[40,2]"}}
	r, err := http.Get("http://" + addr + "/rpc?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if b := bodyOf(r); b != `{"jsonrpc":"2.0","result":42,"id":9}` || r.Header.Get("Cache-Control") != "max-age=5" {
		t.Errorf("%s %v", b, r.Header)
	}
}

// curl -G --data-urlencode calls a method by GET and sees its
// Cache-Control (skipped without curl, unless JETRPC_REQUIRE_CURL=1).
func TestHTTPGet_curl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("JETRPC_REQUIRE_CURL") == "1" {
			t.Fatalf("curl is not installed: %v", err)
		}
		t.Skipf("curl is not installed: %v", err)
	}
	_, addr, _ := startEngine(t, getTable())
	out, err := exec.Command(curl, "-sS", "-i", "-G", "--data-urlencode", "method=get_echo", "--data-urlencode", "id=1",
		"--data-urlencode", `params={"q":"a&b=c d+e"}`, "http://"+addr+"/rpc").Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	if s := string(out); !strings.Contains(s, "Cache-Control: no-store\r\n") || !strings.HasSuffix(s, `{"jsonrpc":"2.0","result":{"q":"a&b=c d+e"},"id":1}`) {
		t.Errorf("curl: %s", out)
	}
}
