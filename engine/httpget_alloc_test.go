//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// TestHTTPGet_zeroAllocs: in the steady state a call by GET — inline or
// on a worker, with a string id and URL-encoded params, with the access
// checks and CORS on, and its refusals (405, 400) — allocates nothing.
func TestHTTPGet_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	const key = "0123456789abcdef0123456789abcdef"
	tab := handler.NewTable()
	demo.Register(tab)
	handler.Register(tab, "get_add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil },
		handler.Inline(), handler.HTTPGet("max-age=5"), handler.Require("admin"))
	handler.Register(tab, "get_slow", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil },
		handler.HTTPGet("max-age=60"))
	keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
	cs, fc := newFakeConnOf(t, tab, WithCORS("https://app.example"), WithHosts("localhost"), WithAuthorize(keys.Authorize))
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	get := func(target string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nOrigin: https://app.example\r\nAuthorization: Bearer " + key + "\r\n\r\n"
	}
	cors := "Access-Control-Allow-Origin: https://app.example"
	assertRequestNoAllocs(t, cs, fc, "inline", get("/?method=get_add&id=1&params=%5B40%2C2%5D"), false, `{"jsonrpc":"2.0","result":42,"id":1}`, "Cache-Control: max-age=5", cors)
	assertRequestNoAllocs(t, cs, fc, "string id", get("/rpc?method=get_add&id=a+b&params=[40,2]"), false, `{"jsonrpc":"2.0","result":42,"id":"a b"}`, "Cache-Control: max-age=5")
	assertRequestNoAllocs(t, cs, fc, "error", get("/?method=get_add&id=1&params=[1]"), false, `-32602`, "Cache-Control: no-store")
	assertRequestNoAllocs(t, cs, fc, "worker", get("/?method=get_slow&id=1&params=[40,2]"), true, `{"jsonrpc":"2.0","result":42,"id":1}`, "Cache-Control: max-age=60", cors)
	assertRequestNoAllocs(t, cs, fc, "not by GET", get("/?method=add&id=1&params=[40,2]"), false, "405 Method Not Allowed", "Allow: POST")
	assertRequestNoAllocs(t, cs, fc, "bad params", get("/?method=get_add&id=1&params=[40"), false, "400 Bad Request")
}
