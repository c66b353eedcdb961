package handler_test

// Tests of CallFrom (callinfo.go): the call a method reads from its
// context — single requests, notifications, each element of a batch,
// blocking methods deferred and run from a Pending, with and without
// interceptors, through contexts derived from the method's, and over
// net/http (HTTPHandler). The engine's transports are tested in package
// engine; the allocation guards are in alloc_test.go.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// whoTable serves who (inline) and slowwho (blocking), which answer the
// call they read from their context as "method id notification", and
// record it in seen (for notifications, which get no reply).
func whoTable(t *testing.T, seen *sync.Map) *handler.Table {
	w := pool.NewWorkers(4, 256)
	t.Cleanup(w.Close)
	tab := handler.NewTable(handler.WithWorkers(w))
	who := func(ctx context.Context, p [1]string) (string, error) {
		c := handler.CallFrom(context.WithValue(ctx, ctxKey{}, 1)) // through a derived context too
		if d := handler.CallFrom(ctx); d.Method != c.Method || string(d.ID) != string(c.ID) || d.Notification != c.Notification {
			return "", fmt.Errorf("derived %+v, direct %+v", c, d)
		}
		s := fmt.Sprintf("%s %s %v", c.Method, c.ID, c.Notification)
		if seen != nil {
			seen.Store(p[0], s)
		}
		return s, nil
	}
	handler.Register(tab, "who", who, handler.Inline())
	handler.Register(tab, "slowwho", who)
	return tab
}

func TestCallFrom_dispatch(t *testing.T) {
	for _, icept := range []bool{false, true} {
		t.Run(fmt.Sprintf("interceptor=%v", icept), func(t *testing.T) {
			var seen sync.Map
			tab := whoTable(t, &seen)
			if icept {
				tab.Use(func(ctx context.Context, c *handler.Call) error {
					if got := handler.CallFrom(ctx); got.Method != "" {
						t.Errorf("an interceptor's context carries a call: %+v", got)
					}
					c.Next(ctx)
					return nil
				})
			}
			ctx := context.Background()
			for _, tc := range []struct{ msg, want string }{
				{`{"jsonrpc":"2.0","method":"who","params":["a"],"id":1}`, `{"jsonrpc":"2.0","result":"who 1 false","id":1}`},
				{`{"jsonrpc":"2.0","method":"slowwho","params":["a"],"id":"x"}`, `{"jsonrpc":"2.0","result":"slowwho \"x\" false","id":"x"}`},
				{`{"jsonrpc":"2.0","method":"w\u0068o","params":["a"],"id":[]}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: id must be a string, a number or null (offset 57)"},"id":null}`},
				{`{"jsonrpc":"2.0","method":"w\u0068o","params":["a"],"id":null}`, `{"jsonrpc":"2.0","result":"who null false","id":null}`},
				{`{"method":"who","params":["a"],"id":7}`, `{"result":"who 7 false","error":null,"id":7}`},
				{`[{"jsonrpc":"2.0","method":"who","params":["a"],"id":1},{"jsonrpc":"2.0","method":"slowwho","params":["b"],"id":2},{"jsonrpc":"2.0","method":"who","params":["c"],"id":"3"}]`,
					`[{"jsonrpc":"2.0","result":"who 1 false","id":1},{"jsonrpc":"2.0","result":"slowwho 2 false","id":2},{"jsonrpc":"2.0","result":"who \"3\" false","id":"3"}]`},
			} {
				if got := string(tab.Dispatch(ctx, nil, []byte(tc.msg))); got != tc.want {
					t.Errorf("Dispatch %s:\n got %s\nwant %s", tc.msg, got, tc.want)
				}
				var p handler.Pending
				out, oc := tab.DispatchInline(ctx, nil, []byte(tc.msg), &p)
				if oc == handler.Deferred {
					out = p.Run(ctx, out)
				}
				if string(out) != tc.want {
					t.Errorf("DispatchInline %s:\n got %s\nwant %s", tc.msg, out, tc.want)
				}
			}
			// Notifications, alone and in a batch: no id, Notification set.
			tab.Dispatch(ctx, nil, []byte(`[{"jsonrpc":"2.0","method":"who","params":["n1"]},{"jsonrpc":"2.0","method":"slowwho","params":["n2"]},{"jsonrpc":"2.0","method":"who","params":["r"],"id":5}]`))
			tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"slowwho","params":["n3"]}`))
			for k, want := range map[string]string{"n1": "who  true", "n2": "slowwho  true", "r": "who 5 false", "n3": "slowwho  true"} {
				if got, _ := seen.Load(k); got != want {
					t.Errorf("%s: saw %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestCallFrom_parallelBatch: the elements of a batch run in parallel
// on workers each read their own id.
func TestCallFrom_parallelBatch(t *testing.T) {
	tab := whoTable(t, nil)
	var msg, want strings.Builder
	msg.WriteByte('[')
	want.WriteByte('[')
	for i := range 64 {
		if i > 0 {
			msg.WriteByte(',')
			want.WriteByte(',')
		}
		m := []string{"who", "slowwho"}[i%2]
		fmt.Fprintf(&msg, `{"jsonrpc":"2.0","method":%q,"params":["x"],"id":%d}`, m, i)
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","result":"%s %d false","id":%d}`, m, i, i)
	}
	msg.WriteByte(']')
	want.WriteByte(']')
	if got := string(tab.Dispatch(context.Background(), nil, []byte(msg.String()))); got != want.String() {
		t.Fatalf("got %s\nwant %s", got, want.String())
	}
}

// TestCallFrom_outsideACall: a context no table gave has no call.
func TestCallFrom_outsideACall(t *testing.T) {
	if got := handler.CallFrom(context.Background()); got.Method != "" || got.ID != nil || got.Notification {
		t.Fatalf("CallFrom(Background) = %+v", got)
	}
}

// TestCallFrom_keepsMetaAndGrants: the method's context still gives the
// transport's Meta and grants (MetaFrom, GrantsFrom) and its values.
func TestCallFrom_keepsMetaAndGrants(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "m", func(ctx context.Context) (string, error) {
		return fmt.Sprintf("%s %v %v %v", handler.MetaFrom(ctx).Header("X-A"), handler.GrantsFrom(ctx), ctx.Value(ctxKey{}), handler.CallFrom(ctx).Method), nil
	}, handler.Inline())
	cc := &handler.CallContext{Parent: context.WithValue(context.Background(), ctxKey{}, 9)}
	cc.Meta.Grants = handler.Grants{"g"}
	cc.Meta.SetHTTPHead([]byte("POST / HTTP/1.1\r\nX-A: b\r\n\r\n"))
	if got, want := string(tab.Dispatch(cc, nil, []byte(`{"jsonrpc":"2.0","method":"m","id":1}`))), `{"jsonrpc":"2.0","result":"b [g] 9 m","id":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestCallFrom_httpHandler(t *testing.T) {
	srv := httptest.NewServer(handler.NewHTTPHandler(whoTable(t, nil)))
	defer srv.Close()
	body := `[{"jsonrpc":"2.0","method":"who","params":["a"],"id":1},{"jsonrpc":"2.0","method":"slowwho","params":["b"],"id":"two"}]`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want := `[{"jsonrpc":"2.0","result":"who 1 false","id":1},{"jsonrpc":"2.0","result":"slowwho \"two\" false","id":"two"}]`; strings.TrimSpace(string(b)) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

// TestCallFrom_withTimeout: a method with a deadline (Timeout) reads its
// call too, and its context still carries the deadline.
func TestCallFrom_withTimeout(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "timed", func(ctx context.Context) (string, error) {
		_, ok := ctx.Deadline()
		c := handler.CallFrom(ctx)
		return fmt.Sprintf("%s %s %v", c.Method, c.ID, ok), nil
	}, handler.Timeout(time.Minute))
	if got, want := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"timed","id":4}`))), `{"jsonrpc":"2.0","result":"timed 4 true","id":4}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
