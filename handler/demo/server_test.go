package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// RegisterServer registers the bundled server whole: the spec methods,
// the topics and admin_stats, which needs the admin grant and counts the
// connections conns gives.
func TestRegisterServer_adminNeedsItsGrant(t *testing.T) {
	tab := handler.NewTable()
	demo.RegisterServer(tab, topics.New(nil, nil), func() int { return 7 })
	for _, m := range []string{"add", "subtract", "topic_publish", "admin_stats"} {
		if found, _ := tab.Lookup(m); !found {
			t.Errorf("%s not registered", m)
		}
	}
	call := []byte(`{"jsonrpc":"2.0","method":"admin_stats","id":1}`)
	if got := string(tab.Dispatch(context.Background(), nil, call)); got != `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}` {
		t.Errorf("without the grant: %s", got)
	}
	ctx := handler.WithGrants(context.Background(), handler.Grants{"admin"})
	var r struct {
		Result demo.AdminStats
	}
	if err := json.Unmarshal(tab.Dispatch(ctx, nil, call), &r); err != nil || r.Result.Connections != 7 || r.Result.Goroutines < 1 {
		t.Errorf("with the grant: %+v, %v", r.Result, err)
	}
}
