package openrpc_test

// Tests of rpc.discover (discover.go) through Table.Dispatch, and over
// real sockets (an engine on loopback, callers told apart by API keys).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
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
	if got := strings.Join(names, " "); got != "add clock_subscribe clock_unsubscribe countdown echo fail get_data late notify_hello notify_sum range sleep subtract sum update" {
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

// discoverCall is an rpc.discover request.
const discoverCall = `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`

// methodNames returns the names of the methods of the document that the
// rpc.discover reply r carries.
func methodNames(t *testing.T, r reply) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("rpc.discover: error %+v", r.Error)
	}
	var doc openrpc.Doc
	if err := json.Unmarshal(r.Result, &doc); err != nil {
		t.Fatalf("document %s: %v", r.Result, err)
	}
	var out []string
	for _, m := range doc.Methods {
		out = append(out, m.Name)
	}
	return strings.Join(out, " ")
}

// TestRegister_filterByGrants: with FilterByGrants, each caller gets the
// document New gives for its grants (those of its transport, or an
// interceptor's WithGrants), the same bytes call after call; without
// it, every caller gets every method.
func TestRegister_filterByGrants(t *testing.T) {
	tab := grantsTable()
	if err := openrpc.Register(tab, openrpc.FilterByGrants(true)); err != nil {
		t.Fatal(err)
	}
	for _, g := range []handler.Grants{nil, {"user"}, {"read"}, {"admin"}, {"admin", "ops"}, {"*"}, {"user", "admin", "x"}} {
		want, err := openrpc.Document(tab, openrpc.ForGrants(g))
		if err != nil {
			t.Fatal(err)
		}
		for _, ctx := range []context.Context{
			handler.WithGrants(context.Background(), g),
			&handler.CallContext{Parent: context.Background(), Meta: handler.Meta{Grants: g}},
		} {
			for range 2 {
				var r reply
				if err := json.Unmarshal(tab.Dispatch(ctx, nil, []byte(discoverCall)), &r); err != nil {
					t.Fatal(err)
				}
				if r.Error != nil || !bytes.Equal(r.Result, want) {
					t.Fatalf("grants %q: error %+v, result %s\nwant %s", g, r.Error, r.Result, want)
				}
			}
		}
	}
	if got := methodNames(t, dispatch(t, tab, discoverCall)); got != "add" {
		t.Errorf("no grants: methods %q", got)
	}

	all := grantsTable()
	if err := openrpc.Register(all, openrpc.FilterByGrants(false)); err != nil {
		t.Fatal(err)
	}
	if got := methodNames(t, dispatch(t, all, discoverCall)); got != "add audit read rotate" {
		t.Errorf("FilterByGrants(false), no grants: methods %q", got)
	}
}

// TestRegister_filterByGrantsConcurrentCalls: callers of several grant
// sets racing to build their documents each get their own (go test
// -race).
func TestRegister_filterByGrantsConcurrentCalls(t *testing.T) {
	tab := grantsTable()
	if err := openrpc.Register(tab, openrpc.FilterByGrants(true)); err != nil {
		t.Fatal(err)
	}
	sets := []handler.Grants{nil, {"read"}, {"admin"}, {"admin", "ops"}, {"*"}}
	want := make([][]byte, len(sets))
	for i, g := range sets {
		doc, err := openrpc.Document(tab, openrpc.ForGrants(g))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = doc
	}
	var wg sync.WaitGroup
	for i := range 4 * len(sets) {
		wg.Go(func() {
			g := sets[i%len(sets)]
			r := tab.Dispatch(handler.WithGrants(context.Background(), g), nil, []byte(discoverCall))
			if !bytes.Contains(r, want[i%len(sets)]) {
				t.Errorf("grants %q: %s", g, r)
			}
		})
	}
	wg.Wait()
}

// TestRegister_filterByGrantsNoRequirement: a table whose methods
// require nothing answers every caller the one document, filtered or
// not.
func TestRegister_filterByGrantsNoRequirement(t *testing.T) {
	tab := handler.NewTable()
	demo.Register(tab)
	if err := openrpc.Register(tab, openrpc.FilterByGrants(true)); err != nil {
		t.Fatal(err)
	}
	want, err := openrpc.Document(tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []handler.Grants{nil, {"admin"}} {
		r := tab.Dispatch(handler.WithGrants(context.Background(), g), nil, []byte(discoverCall))
		if !bytes.Contains(r, want) {
			t.Errorf("grants %q: %s", g, r)
		}
	}
}

// TestRegister_maxDocuments: past WithMaxDocuments, a caller gets the
// right document, built for its call, and the first such call is logged
// once at WARN.
func TestRegister_maxDocuments(t *testing.T) {
	var logs bytes.Buffer
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	handler.RegisterNoParams(tab, "audit", func(context.Context) (int, error) { return 0, nil }, handler.Require("admin"))
	handler.RegisterNoParams(tab, "read", func(context.Context) (int, error) { return 0, nil }, handler.Require("read"))
	if err := openrpc.Register(tab, openrpc.FilterByGrants(true), openrpc.WithMaxDocuments(1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		grants handler.Grants
		want   string
	}{
		{handler.Grants{"admin"}, "audit"}, // kept
		{handler.Grants{"read"}, "read"},   // no room: built for the call
		{handler.Grants{"read"}, "read"},
		{handler.Grants{"*"}, "audit read"},
		{handler.Grants{"admin"}, "audit"},
	} {
		var r reply
		if err := json.Unmarshal(tab.Dispatch(handler.WithGrants(context.Background(), tc.grants), nil, []byte(discoverCall)), &r); err != nil {
			t.Fatal(err)
		}
		if got := methodNames(t, r); got != tc.want {
			t.Errorf("grants %q: methods %q, want %q", tc.grants, got, tc.want)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"openrpc: rpc.discover keeps no more documents"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// Keys of the socket tests: an admin and a user without grants.
const (
	adminKey = "admin-key-0123456789abcdef"
	userKey  = "user-key-0123456789abcdef"
)

// serveDiscover serves grantsTable with rpc.discover registered with
// opts on a loopback port, API keys required, and returns its HTTP URL.
func serveDiscover(t *testing.T, opts ...openrpc.Option) string {
	t.Helper()
	tab := grantsTable()
	if err := openrpc.Register(tab, opts...); err != nil {
		t.Fatal(err)
	}
	keys := auth.NewKeys(map[string]handler.Grants{adminKey: {"admin"}, userKey: nil})
	_, addr := enginetest.Start(t, tab, engine.WithAuthorize(keys.Authorize))
	return "http://" + addr + "/"
}

// discoverAs posts rpc.discover to url with the API key key and returns
// the decoded reply.
func discoverAs(t *testing.T, url, key string) reply {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(discoverCall))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r reply
	if resp.StatusCode != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("key %s: %d %s", key, resp.StatusCode, body)
	}
	return r
}

// TestRegister_filterByGrantsOverHTTP: over HTTP with API keys, under
// FilterByGrants a key without the admin grant is not told of the
// methods that need it (audit, nor its types), and an admin key is;
// without the option (the default) both see every method.
func TestRegister_filterByGrantsOverHTTP(t *testing.T) {
	filtered := serveDiscover(t, openrpc.FilterByGrants(true))
	for range 2 { // built, then kept
		user := discoverAs(t, filtered, userKey)
		if got := methodNames(t, user); got != "add" {
			t.Errorf("filtered, user key: methods %q, want add", got)
		}
		if strings.Contains(string(user.Result), "secretReport") {
			t.Errorf("filtered, user key: the document names secretReport: %s", user.Result)
		}
		if got := methodNames(t, discoverAs(t, filtered, adminKey)); got != "add audit" {
			t.Errorf("filtered, admin key: methods %q, want add audit", got)
		}
	}
	whole := serveDiscover(t)
	for _, key := range []string{userKey, adminKey} {
		if got := methodNames(t, discoverAs(t, whole, key)); got != "add audit read rotate" {
			t.Errorf("unfiltered, key %s: methods %q", key, got)
		}
	}
}

// TestRegister_undeclaredSchema: a result that writes itself without a
// schema fails Register when its method is registered first; registered
// after, it fails the document's build, which the table's logger reports
// naming the type and the method.
func TestRegister_undeclaredSchema(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "self", func(context.Context) (selfWriting, error) { return selfWriting{}, nil })
	if err := openrpc.Register(tab); err == nil || !strings.Contains(err.Error(), `openrpc_test.selfWriting (method "self" result)`) {
		t.Errorf("Register: %v", err)
	}
	if err := openrpc.Register(tab, openrpc.WithTypeSchema(reflect.TypeFor[selfWriting](), "true")); err != nil {
		t.Errorf("Register with WithTypeSchema(t, true): %v", err)
	}

	var log bytes.Buffer
	late := handler.NewTable(handler.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err := openrpc.Register(late); err != nil {
		t.Fatal(err)
	}
	handler.RegisterNoParams(late, "self", func(context.Context) (selfWriting, error) { return selfWriting{}, nil })
	if r := dispatch(t, late, discoverCall); r.Error == nil || r.Error.Code != -32603 {
		t.Fatalf("%+v", r)
	}
	if got := log.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, `openrpc_test.selfWriting (method \"self\" result)`) {
		t.Errorf("log: %s", got)
	}
}
