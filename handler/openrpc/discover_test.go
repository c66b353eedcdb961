package openrpc_test

// Tests of rpc.discover (discover.go) through Table.Dispatch.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/openrpc"
)

// reply is a decoded reply.
type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ID json.RawMessage `json:"id"`
}

func dispatch(t *testing.T, tab *handler.Table, msg string) reply {
	t.Helper()
	out := tab.Dispatch(context.Background(), nil, []byte(msg))
	var r reply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("reply %q: %v", out, err)
	}
	return r
}

// TestRegister_discover: rpc.discover answers the document, by position,
// by name and without params, the same bytes every time; it is not in
// the document itself; a method registered after Register is.
func TestRegister_discover(t *testing.T) {
	tab := handler.NewTable()
	demo.Register(tab)
	info := openrpc.Info{Title: "demo", Version: "1.0.0"}
	if err := openrpc.Register(tab, openrpc.WithInfo(info)); err != nil {
		t.Fatal(err)
	}
	handler.Register(tab, "late", func(context.Context, [1]int) (int, error) { return 0, nil })
	want, err := openrpc.Document(tab, openrpc.WithInfo(info))
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`,
		`{"jsonrpc":"2.0","method":"rpc.discover","params":[],"id":1}`,
		`{"jsonrpc":"2.0","method":"rpc.discover","params":{},"id":1}`,
	} {
		r := dispatch(t, tab, msg)
		if r.Error != nil || !bytes.Equal(r.Result, want) {
			t.Fatalf("%s: error %+v, result %s\nwant %s", msg, r.Error, r.Result, want)
		}
	}
	var doc openrpc.Doc
	if err := json.Unmarshal(want, &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range doc.Methods {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "add clock_subscribe clock_unsubscribe echo fail get_data late notify_hello notify_sum sleep subtract sum update" {
		t.Errorf("methods %s", got)
	}
	if r := dispatch(t, tab, `{"jsonrpc":"2.0","method":"rpc.discover","params":[1],"id":2}`); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("params [1]: %+v", r)
	}
	if found, inline := tab.Lookup(openrpc.DiscoverMethod); !found || !inline {
		t.Errorf("rpc.discover: found %v, inline %v", found, inline)
	}
}

// TestRegister_concurrentFirstCalls: calls racing to build the document
// all get it (go test -race).
func TestRegister_concurrentFirstCalls(t *testing.T) {
	tab := handler.NewTable()
	demo.Register(tab)
	if err := openrpc.Register(tab); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([][]byte, 8)
	for i := range results {
		wg.Go(func() {
			results[i] = tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
		})
	}
	wg.Wait()
	for _, r := range results[1:] {
		if !bytes.Equal(r, results[0]) || !bytes.Contains(r, []byte(`"openrpc":"1.3.2"`)) {
			t.Fatalf("replies differ:\n%s\n%s", r, results[0])
		}
	}
}

// TestRegister_refusals: a second rpc.discover, a sealed table, a bad
// option.
func TestRegister_refusals(t *testing.T) {
	tab := handler.NewTable()
	if err := openrpc.Register(tab); err != nil {
		t.Fatal(err)
	}
	if err := openrpc.Register(tab); !errors.Is(err, handler.ErrDuplicateName) {
		t.Errorf("second Register: %v", err)
	}
	if err := openrpc.Register(handler.NewTable(), openrpc.EditMethod("x", nil)); err == nil {
		t.Error("Register took a nil EditMethod")
	}
	tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
	if err := openrpc.Register(handler.NewTable()); err != nil {
		t.Errorf("Register on a new table: %v", err)
	}
	sealed := handler.NewTable()
	sealed.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"x","id":1}`))
	if err := openrpc.Register(sealed); !errors.Is(err, handler.ErrSealed) {
		t.Errorf("Register on a sealed table: %v", err)
	}
}

// TestRegister_buildFailure: a document that cannot be built (an
// EditMethod naming no method) is answered -32603, every time.
func TestRegister_buildFailure(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	if err := openrpc.Register(tab, openrpc.EditMethod("nope", func(*openrpc.Method) {})); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := dispatch(t, tab, `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`); r.Error == nil || r.Error.Code != -32603 {
			t.Fatalf("%+v", r)
		}
	}
}
