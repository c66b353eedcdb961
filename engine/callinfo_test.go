package engine_test

// CallFrom over the engine's transports: HTTP, WebSocket and the TCP
// stream, single requests and batches, inline and blocking methods.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

func TestCallFrom_transports(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	who := func(ctx context.Context, _ struct{}) (string, error) {
		c := handler.CallFrom(ctx)
		return fmt.Sprintf("%s %s %v %s", c.Method, c.ID, c.Notification, handler.MetaFrom(ctx).Transport), nil
	}
	handler.Register(tab, "who", who, handler.Inline())
	handler.Register(tab, "slowwho", who)
	_, addr, _ := startEngine(t, tab)
	single := `{"jsonrpc":"2.0","method":"slowwho","id":"a"}`
	batch := `[{"jsonrpc":"2.0","method":"who","id":1},{"jsonrpc":"2.0","method":"slowwho","id":2},{"jsonrpc":"2.0","method":"who"}]`
	want := func(tr string) (string, string) {
		return `{"jsonrpc":"2.0","result":"slowwho \"a\" false ` + tr + `","id":"a"}`,
			`[{"jsonrpc":"2.0","result":"who 1 false ` + tr + `","id":1},{"jsonrpc":"2.0","result":"slowwho 2 false ` + tr + `","id":2}]`
	}
	t.Run("http", func(t *testing.T) {
		ws, wb := want("http")
		for msg, w := range map[string]string{single: ws, batch: wb} {
			rs := rawHTTP(t, addr, post(msg, ""), 1)
			if len(rs) != 1 {
				t.Fatalf("%d responses", len(rs))
			}
			if got := strings.TrimSpace(bodyOf(rs[0])); got != w {
				t.Errorf("got %s\nwant %s", got, w)
			}
		}
	})
	t.Run("websocket", func(t *testing.T) {
		c := dialWS(t, addr, nil)
		ws, wb := want("websocket")
		for msg, w := range map[string]string{single: ws, batch: wb} {
			if got := strings.TrimSpace(string(wsCall(t, c, msg))); got != w {
				t.Errorf("got %s\nwant %s", got, w)
			}
		}
	})
	t.Run("stream", func(t *testing.T) {
		s := dialStream(t, "tcp", addr)
		ws, wb := want("stream")
		for msg, w := range map[string]string{single: ws, batch: wb} {
			s.send(t, []byte(msg))
			if got := strings.TrimSpace(string(s.line(t))); got != w {
				t.Errorf("got %s\nwant %s", got, w)
			}
		}
	})
}
