package handler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/parser"
)

func TestHTTPGet_methodInfo(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "cached", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.HTTPGet("max-age=5"))
	handler.Register(tab, "fresh", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.HTTPGet(""))
	handler.Register(tab, "post", func(_ context.Context, p [1]int) (int, error) { return p[0], nil })
	want := map[string][2]any{"cached": {true, "max-age=5"}, "fresh": {true, "no-store"}, "post": {false, ""}}
	for _, m := range tab.Methods() {
		if w := want[m.Name]; m.HTTPGet != w[0] || m.CacheControl != w[1] {
			t.Errorf("%s: HTTPGet %v CacheControl %q, want %v %q", m.Name, m.HTTPGet, m.CacheControl, w[0], w[1])
		}
	}
}

func TestHTTPGet_controlCharacterRefused(t *testing.T) {
	defer func() {
		if err, _ := recover().(error); err == nil || !strings.Contains(err.Error(), "Cache-Control") {
			t.Errorf("panic %v, want one naming Cache-Control", err)
		}
	}()
	handler.Register(handler.NewTable(), "m", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.HTTPGet("max-age=5\r\nX-Evil: 1"))
}

// Admit refuses an unknown method, a missing grant and a spent rate
// limit; an admitted call is not charged again when it runs.
func TestTable_AdmitChecksBeforeTheBody(t *testing.T) {
	tab := handler.NewTable(handler.WithRateLimit(ratelimit.Limits{Rate: 0.001, Burst: 2}))
	ran := 0
	handler.Register(tab, "count", func(_ context.Context, p [1]int) (int, error) { ran++; return p[0], nil }, handler.Inline())
	handler.Register(tab, "admin", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, handler.Require("admin"))
	q := tab.NewQuota()
	ctx := &handler.CallContext{Parent: context.Background()}
	ctx.Meta.Transport, ctx.Meta.Quota = handler.TransportHTTP, q
	if code, _ := tab.Admit(ctx, []byte("nosuch")); code != parser.CodeMethodNotFound {
		t.Errorf("nosuch: %v", code)
	}
	if code, detail := tab.Admit(ctx, []byte("admin")); code != parser.CodeForbidden || detail != "requires permission admin" {
		t.Errorf("admin: %v %q", code, detail)
	}
	msg := []byte(`{"jsonrpc":"2.0","method":"count","params":[1],"id":1}`)
	for i := range 2 {
		ctx.Meta.SetHTTPHeadParsed([]byte("POST / HTTP/1.1\r\n\r\n"), nil)
		if code, _ := tab.Admit(ctx, []byte("count")); code != 0 {
			t.Fatalf("call %d: admitted %v", i, code)
		}
		if got := string(tab.Dispatch(ctx, nil, msg)); got != `{"jsonrpc":"2.0","result":1,"id":1}` {
			t.Fatalf("call %d: %s", i, got)
		}
	}
	if code, _ := tab.Admit(ctx, []byte("count")); code != parser.CodeLimitExceeded {
		t.Errorf("third: %v, want the rate limit's refusal", code)
	}
	if ran != 2 {
		t.Errorf("ran %d", ran)
	}
}
