package handler_test

// Tests of call metadata (meta.go): Meta read from an HTTP head or a
// net/http request, its copy, CallContext as a context, MetaFrom; grants
// (Grants, WithGrants, GrantsFrom) and the methods that Require them
// (register.go); AuthStatus.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// TestMeta_setHTTPHead: the request line and the header fields of a head,
// read in place.
func TestMeta_setHTTPHead(t *testing.T) {
	for _, tc := range []struct {
		at, head       string
		method, target string
		path           string
		query          map[string]string
		header         map[string]string
	}{
		{
			at:     here(),
			head:   "POST /rpc?key=a%2Fb&x=1&key=second&plus=a+b&bad=%zz&empty=&flag HTTP/1.1\r\nHost: example.com\r\nAuthorization:  Bearer t0k  \r\nX-Dup: first\r\nx-dup: second\r\nX-Tab:\tv\t\r\nX-Empty:\r\n\r\n",
			method: "POST", target: "/rpc?key=a%2Fb&x=1&key=second&plus=a+b&bad=%zz&empty=&flag", path: "/rpc",
			query: map[string]string{"key": "a/b", "x": "1", "plus": "a b", "bad": "%zz", "empty": "", "flag": "", "missing": "", "KEY": ""},
			header: map[string]string{
				"Host": "example.com", "host": "example.com", "HOST": "example.com",
				"authorization": "Bearer t0k", "X-Dup": "first", "X-DUP": "first",
				"X-Tab": "v", "X-Empty": "", "Missing": "", "": "",
			},
		},
		{
			at:     here(),
			head:   "\r\n\r\nGET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
			method: "GET", target: "/ws", path: "/ws",
			query:  map[string]string{"a": ""},
			header: map[string]string{"Upgrade": "websocket", "GET /ws HTTP/1.1": ""},
		},
		{
			at:     here(),
			head:   "NOREQUESTLINE\r\nA:  1\r\n\r\n",
			header: map[string]string{"a": "1"},
		},
		{
			at:     here(),
			head:   "OPTIONS * HTTP/1.0\r\n\r\n",
			method: "OPTIONS", target: "*", path: "*",
			header: map[string]string{"Host": ""},
		},
		{
			at:     here(),
			head:   "POST /p?q=%E2%82%AC HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"body\":\"X-Not: header\"}",
			method: "POST", target: "/p?q=%E2%82%AC", path: "/p",
			query:  map[string]string{"q": "€"},
			header: map[string]string{"content-type": "application/json", "X-Not": "", "{\"body\"": ""},
		},
	} {
		var m handler.Meta
		m.SetHTTPHead([]byte(tc.head))
		if m.Method() != tc.method || m.Target() != tc.target || m.Path() != tc.path {
			t.Errorf("%s: method %q target %q path %q; want %q %q %q", tc.at, m.Method(), m.Target(), m.Path(), tc.method, tc.target, tc.path)
		}
		for name, want := range tc.query {
			if got := m.Query(name); got != want {
				t.Errorf("%s: Query(%q) = %q, want %q", tc.at, name, got, want)
			}
		}
		for name, want := range tc.header {
			if got := m.Header(name); got != want {
				t.Errorf("%s: Header(%q) = %q, want %q", tc.at, name, got, want)
			}
		}
		if m.Transport != handler.TransportInProcess || m.Remote != nil || m.Grants != nil {
			t.Errorf("%s: SetHTTPHead set more than the head: %+v", tc.at, m)
		}
	}
}

// TestMeta_noHead: a Meta with no HTTP request reads as empty.
func TestMeta_noHead(t *testing.T) {
	var m handler.Meta
	if m.Method() != "" || m.Target() != "" || m.Path() != "" || m.Query("a") != "" || m.Header("Host") != "" {
		t.Errorf("zero Meta: %q %q %q %q %q", m.Method(), m.Target(), m.Path(), m.Query("a"), m.Header("Host"))
	}
	for n, v := range m.Headers() {
		t.Errorf("zero Meta yields %q: %q", n, v)
	}
}

// TestMeta_headers: Headers yields every field in order, names as sent,
// values trimmed, and stops when told to.
func TestMeta_headers(t *testing.T) {
	var m handler.Meta
	m.SetHTTPHead([]byte("\r\nPOST / HTTP/1.1\r\nHost: h\r\nx-A:  1 \r\nX-a: 2\r\nEmpty:\r\n\r\n"))
	var got []string
	for n, v := range m.Headers() {
		got = append(got, n+"="+v)
	}
	if want := []string{"Host=h", "x-A=1", "X-a=2", "Empty="}; !slices.Equal(got, want) {
		t.Errorf("Headers: %q, want %q", got, want)
	}
	got = got[:0]
	for n := range m.Headers() {
		got = append(got, n)
		if n == "x-A" {
			break
		}
	}
	if want := []string{"Host", "x-A"}; !slices.Equal(got, want) {
		t.Errorf("Headers with break: %q, want %q", got, want)
	}
}

// TestMeta_setHTTPRequest: a Meta over a net/http request reads the
// same as one over a head.
func TestMeta_setHTTPRequest(t *testing.T) {
	r := httptest.NewRequest("POST", "/rpc?key=a+b&k2=%41", strings.NewReader("{}"))
	r.Header.Set("Authorization", "Bearer x")
	r.Header.Add("X-Dup", "one")
	r.Header.Add("X-Dup", "two")
	var m handler.Meta
	m.SetHTTPHead([]byte("GET /old HTTP/1.1\r\nAuthorization: stale\r\n\r\n"))
	m.SetHTTPRequest(r)
	if m.Method() != "POST" || m.Target() != "/rpc?key=a+b&k2=%41" || m.Path() != "/rpc" || m.Query("key") != "a b" || m.Query("k2") != "A" {
		t.Errorf("method %q target %q path %q key %q k2 %q", m.Method(), m.Target(), m.Path(), m.Query("key"), m.Query("k2"))
	}
	if m.Header("authorization") != "Bearer x" || m.Header("x-dup") != "one" || m.Header("Missing") != "" {
		t.Errorf("headers: %q %q %q", m.Header("authorization"), m.Header("x-dup"), m.Header("Missing"))
	}
	var got []string
	for n, v := range m.Headers() {
		got = append(got, n+"="+v)
	}
	slices.Sort(got)
	if want := []string{"Authorization=Bearer x", "Host=example.com", "X-Dup=one", "X-Dup=two"}; !slices.Equal(got, want) { // Host too, as over the engine
		t.Errorf("Headers: %q, want %q", got, want)
	}
	n := 0
	for range m.Headers() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("Headers went on after a break: %d", n)
	}
	// A request built by hand, without RequestURI: the target comes from
	// the URL.
	r2, _ := http.NewRequest("GET", "http://example.com/a/b?c=d", nil)
	m.SetHTTPRequest(r2)
	if m.Target() != "/a/b?c=d" || m.Query("c") != "d" || m.Method() != "GET" {
		t.Errorf("client request: target %q query %q", m.Target(), m.Query("c"))
	}
	// And back to a head: nothing of the request is left.
	m.SetHTTPHead([]byte("PUT /x HTTP/1.1\r\nA: 1\r\n\r\n"))
	if m.Method() != "PUT" || m.Header("Authorization") != "" || m.Header("A") != "1" {
		t.Errorf("head after request: %q %q %q", m.Method(), m.Header("Authorization"), m.Header("A"))
	}
}

// TestMeta_copyTo: CopyTo gives a copy of its own, which the source's
// buffer no longer affects, in the buffer given (grown as needed).
func TestMeta_copyTo(t *testing.T) {
	head := []byte("POST /rpc?k=v HTTP/1.1\r\nAuthorization: Bearer abc\r\n\r\n")
	src := handler.Meta{Transport: handler.TransportHTTP, Grants: handler.Grants{"g"}}
	src.SetHTTPHead(head)
	var dst handler.Meta
	buf := src.CopyTo(&dst, make([]byte, 0, 4))
	for i := range head {
		head[i] = 'X'
	}
	if dst.Method() != "POST" || dst.Target() != "/rpc?k=v" || dst.Query("k") != "v" || dst.Header("authorization") != "Bearer abc" {
		t.Errorf("copy changed with its source: %q %q %q", dst.Method(), dst.Target(), dst.Header("authorization"))
	}
	if dst.Transport != handler.TransportHTTP || !slices.Equal(dst.Grants, handler.Grants{"g"}) {
		t.Errorf("copy lost fields: %+v", dst)
	}
	if !strings.HasPrefix(string(buf), "POST /rpc") {
		t.Errorf("returned buffer %q", buf)
	}
	// Reusing the buffer for another head.
	head2 := []byte("GET /ws HTTP/1.1\r\nOrigin: o\r\n\r\n")
	src.SetHTTPHead(head2)
	buf = src.CopyTo(&dst, buf)
	clear(head2)
	if dst.Method() != "GET" || dst.Header("Origin") != "o" || dst.Header("Authorization") != "" {
		t.Errorf("second copy: %q %q", dst.Method(), dst.Header("Origin"))
	}
	// A Meta without a head copies as it is, and leaves buf alone.
	var none, dst2 handler.Meta
	none.Transport = handler.TransportStream
	if b := none.CopyTo(&dst2, buf); len(b) != len(buf) || dst2.Transport != handler.TransportStream || dst2.Method() != "" {
		t.Errorf("no head: %q %+v", b, dst2)
	}
	// A net/http request is shared.
	r := httptest.NewRequest("POST", "/n", nil)
	r.Header.Set("X", "y")
	var viaReq, dst3 handler.Meta
	viaReq.SetHTTPRequest(r)
	viaReq.CopyTo(&dst3, nil)
	if dst3.Header("X") != "y" || dst3.Target() != "/n" {
		t.Errorf("net/http copy: %q %q", dst3.Header("X"), dst3.Target())
	}
}

// TestMetaFrom_contexts: MetaFrom finds the CallContext itself or under
// derived contexts, and a zero Meta elsewhere.
func TestMetaFrom_contexts(t *testing.T) {
	if m := handler.MetaFrom(context.Background()); m.Transport != handler.TransportInProcess || m.Method() != "" || m.Remote != nil || m.Grants != nil {
		t.Errorf("plain context: %+v", m)
	}
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.Transport = handler.TransportWebSocket
	cc.Meta.SetHTTPHead([]byte("GET /ws HTTP/1.1\r\nX-User: ann\r\n\r\n"))
	cc.Meta.Grants = handler.Grants{"read"}
	derived, cancel := context.WithCancel(context.WithValue(cc, ctxKey{}, "v"))
	defer cancel()
	for name, ctx := range map[string]context.Context{"CallContext": cc, "derived": derived} {
		m := handler.MetaFrom(ctx)
		if m.Transport != handler.TransportWebSocket || m.Method() != "GET" || m.Header("x-user") != "ann" || !slices.Equal(m.Grants, handler.Grants{"read"}) {
			t.Errorf("%s: %+v", name, m)
		}
		if g := handler.GrantsFrom(ctx); !slices.Equal(g, handler.Grants{"read"}) {
			t.Errorf("%s: GrantsFrom %v", name, g)
		}
	}
	if derived.Value(ctxKey{}) != "v" {
		t.Error("derived context lost its value")
	}
}

// TestCallContext_delegates: a CallContext is its Parent as a context —
// deadline, cancellation, values — and contexts derived from it behave.
func TestCallContext_delegates(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancelParent := context.WithDeadline(context.WithValue(context.Background(), ctxKey{}, "pv"), deadline)
	cc := &handler.CallContext{Parent: parent}
	if d, ok := cc.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("Deadline %v %v", d, ok)
	}
	if cc.Done() != parent.Done() || cc.Err() != nil || cc.Value(ctxKey{}) != "pv" || cc.Value("other") != nil {
		t.Errorf("Done/Err/Value not the parent's")
	}
	child, cancelChild := context.WithCancel(cc)
	timed, cancelTimed := context.WithTimeout(cc, 2*time.Hour)
	defer cancelTimed()
	if d, _ := timed.Deadline(); !d.Equal(deadline) {
		t.Errorf("WithTimeout over it: deadline %v, want the earlier parent's %v", d, deadline)
	}
	short, cancelShort := context.WithTimeout(cc, time.Millisecond)
	defer cancelShort()
	select {
	case <-short.Done():
		if !errors.Is(short.Err(), context.DeadlineExceeded) || cc.Err() != nil {
			t.Errorf("short timeout: %v, parent %v", short.Err(), cc.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a timeout over a CallContext never fired")
	}
	cancelChild()
	if cc.Err() != nil || child.Err() != context.Canceled {
		t.Errorf("cancelling a child: parent %v, child %v", cc.Err(), child.Err())
	}
	child2, cancel2 := context.WithCancel(cc)
	defer cancel2()
	cancelParent()
	for name, ctx := range map[string]context.Context{"CallContext": cc, "WithCancel": child2, "WithTimeout": timed} {
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.Canceled) {
				t.Errorf("%s: Err %v after the parent's cancel", name, ctx.Err())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the parent's cancel did not reach it", name)
		}
	}
	if handler.MetaFrom(child2).Transport != handler.TransportInProcess {
		t.Error("MetaFrom over a derived context")
	}
}

// TestMetaFrom_inMethodsAndInterceptors: the Meta of the CallContext
// given to Dispatch reaches methods and interceptors, on the caller and
// on the worker path.
func TestMetaFrom_inMethodsAndInterceptors(t *testing.T) {
	w := pool.NewWorkers(2, 16)
	defer w.Close()
	tab := handler.NewTable(handler.WithWorkers(w))
	who := func(ctx context.Context) (string, error) {
		m := handler.MetaFrom(ctx)
		return m.Transport.String() + " " + m.Path() + " " + m.Header("X-User"), nil
	}
	handler.RegisterNoParams(tab, "who", who, handler.Inline())
	handler.RegisterNoParams(tab, "slowwho", who)
	var seen atomic.Value
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		m := handler.MetaFrom(ctx)
		seen.Store(strings.Clone(m.Header("x-user")))
		c.Next(context.WithValue(ctx, ctxKey{}, 1))
		return nil
	})
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.Transport = handler.TransportHTTP
	cc.Meta.SetHTTPHead([]byte("POST /rpc?x=1 HTTP/1.1\r\nX-User: bob\r\n\r\n"))
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"who","id":1}`,
		`{"jsonrpc":"2.0","method":"slowwho","id":1}`,
		`[{"jsonrpc":"2.0","method":"slowwho","id":1}]`,
	} {
		want := `{"jsonrpc":"2.0","result":"http /rpc bob","id":1}`
		if msg[0] == '[' {
			want = "[" + want + "]"
		}
		seen.Store("")
		if got := string(tab.Dispatch(cc, nil, []byte(msg))); got != want || seen.Load() != "bob" {
			t.Errorf("Dispatch %s: %s (interceptor saw %q)", msg, got, seen.Load())
		}
		var later handler.Pending
		out, oc := tab.DispatchInline(cc, nil, []byte(msg), &later)
		if oc == handler.Deferred {
			out = later.Run(cc, out)
		}
		if string(out) != want {
			t.Errorf("DispatchInline %s: %s", msg, out)
		}
	}
	if got := call(t, tab, `{"jsonrpc":"2.0","method":"who","id":1}`); got != `{"jsonrpc":"2.0","result":"in-process  ","id":1}` {
		t.Errorf("in process: %s", got)
	}
}

func TestTransport_string(t *testing.T) {
	for tr, want := range map[handler.Transport]string{
		handler.TransportInProcess: "in-process",
		handler.TransportHTTP:      "http",
		handler.TransportWebSocket: "websocket",
		handler.TransportStream:    "stream",
	} {
		if got := tr.String(); got != want {
			t.Errorf("%d: %q, want %q", tr, got, want)
		}
	}
}

// TestAuthStatus: 401 for ErrUnauthenticated however it is wrapped, 403
// for anything else.
func TestAuthStatus(t *testing.T) {
	for _, tc := range []struct {
		at   string
		err  error
		want int
	}{
		{here(), handler.ErrUnauthenticated, http.StatusUnauthorized},
		{here(), fmt.Errorf("token expired: %w", handler.ErrUnauthenticated), http.StatusUnauthorized},
		{here(), fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", handler.ErrUnauthenticated)), http.StatusUnauthorized},
		{here(), handler.ErrAccessDenied, http.StatusForbidden},
		{here(), errors.New("jetrpc: missing or invalid credentials"), http.StatusForbidden}, // same text, another error
		{here(), fmt.Errorf("%v", handler.ErrUnauthenticated), http.StatusForbidden},         // not wrapped
		{here(), io.EOF, http.StatusForbidden},
		// Errors that wrap it as errors.Is sees it.
		{here(), fmt.Errorf("%w: %w", handler.ErrUnauthenticated, io.EOF), http.StatusUnauthorized},
		{here(), errors.Join(io.EOF, handler.ErrUnauthenticated), http.StatusUnauthorized},
	} {
		if got := handler.AuthStatus(tc.err); got != tc.want {
			t.Errorf("%s: AuthStatus(%v) = %d, want %d (errors.Is %v)", tc.at, tc.err, got, tc.want, errors.Is(tc.err, handler.ErrUnauthenticated))
		}
	}
}

func TestGrants_has(t *testing.T) {
	g := handler.Grants{"read", "write"}
	if !g.Has("read") || !g.Has("write") || g.Has("admin") || g.Has("") || g.Has("READ") {
		t.Errorf("Has on %v", g)
	}
	if !(handler.Grants{"*"}).Has("anything") || (handler.Grants(nil)).Has("read") {
		t.Error("Has with * or nil")
	}
}

// TestGrants_hasAll: HasAll holds when every permission is held (or
// "*" is), and for none.
func TestGrants_hasAll(t *testing.T) {
	g := handler.Grants{"read", "write"}
	for _, tc := range []struct {
		g     handler.Grants
		perms []string
		want  bool
	}{
		{g, []string{"read", "write"}, true},
		{g, []string{"read", "admin"}, false},
		{g, nil, true},
		{nil, nil, true},
		{nil, []string{"read"}, false},
		{handler.Grants{"*"}, []string{"admin", "x"}, true},
	} {
		if got := tc.g.HasAll(tc.perms...); got != tc.want {
			t.Errorf("%v.HasAll(%q) = %v, want %v", tc.g, tc.perms, got, tc.want)
		}
	}
}

// requireTable serves "reset" (inline, Require admin), "slowreset"
// (blocking, Require admin), "both" (Require a, b), "add" (no
// requirement); runs counts the runs of the guarded methods.
func requireTable(t testing.TB, opts ...handler.Option) (*handler.Table, *atomic.Int64) {
	t.Helper()
	tab := handler.NewTable(opts...)
	runs := new(atomic.Int64)
	reset := func(context.Context) (string, error) { runs.Add(1); return "done", nil }
	handler.RegisterNoParams(tab, "reset", reset, handler.Inline(), handler.Require("admin"))
	handler.RegisterNoParams(tab, "slowreset", reset, handler.Require("admin"))
	handler.RegisterNoParams(tab, "both", reset, handler.Inline(), handler.Require("a"), handler.Require("b"))
	handler.RegisterNoParams(tab, "open", reset, handler.Inline(), handler.Require())
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	return tab, runs
}

const forbiddenAdmin = `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}`

// TestRequire_withoutGrants: a caller without the permission gets -32003
// and the method does not run — alone, in a batch beside others that
// run, as a notification (no reply), on the worker path.
func TestRequire_withoutGrants(t *testing.T) {
	w := pool.NewWorkers(2, 16)
	defer w.Close()
	tab, runs := requireTable(t, handler.WithWorkers(w))
	for _, tc := range []struct{ at, msg, want string }{
		{here(), `{"jsonrpc":"2.0","method":"reset","id":1}`, forbiddenAdmin},
		{here(), `{"jsonrpc":"2.0","method":"slowreset","id":1}`, forbiddenAdmin},
		{here(), `{"method":"reset","params":[],"id":1}`, `{"result":null,"error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}`},
		{here(), `{"jsonrpc":"2.0","method":"both","id":1}`, `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permissions a, b"},"id":1}`},
		{here(), `{"jsonrpc":"2.0","method":"reset"}`, ``},
		{here(), `{"jsonrpc":"2.0","method":"slowreset"}`, ``},
		{here(), `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":0},{"jsonrpc":"2.0","method":"reset","id":1},{"jsonrpc":"2.0","method":"reset"},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`,
			`[{"jsonrpc":"2.0","result":3,"id":0},` + forbiddenAdmin + `,{"jsonrpc":"2.0","result":7,"id":2}]`},
		{here(), `[{"jsonrpc":"2.0","method":"slowreset","id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2},{"jsonrpc":"2.0","method":"slowreset","id":3}]`,
			`[` + forbiddenAdmin + `,{"jsonrpc":"2.0","result":7,"id":2},{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":3}]`},
		{here(), `[{"jsonrpc":"2.0","method":"reset"},{"jsonrpc":"2.0","method":"slowreset"}]`, ``},
	} {
		if got := call(t, tab, tc.msg); got != tc.want {
			t.Errorf("%s: Dispatch\n got %s\nwant %s", tc.at, got, tc.want)
		}
		var later handler.Pending
		out, oc := tab.DispatchInline(context.Background(), nil, []byte(tc.msg), &later)
		if oc == handler.Deferred {
			out = later.Run(context.Background(), out)
		}
		if string(out) != tc.want {
			t.Errorf("%s: DispatchInline\n got %s\nwant %s", tc.at, out, tc.want)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("guarded methods ran %d times", n)
	}
	if got := call(t, tab, `{"jsonrpc":"2.0","method":"open","id":1}`); got != `{"jsonrpc":"2.0","result":"done","id":1}` {
		t.Errorf("Require() with no permission: %s", got)
	}
}

// TestRequire_grants: the grants of a CallContext's Meta, or of
// WithGrants (an interceptor's), let the call through; the innermost
// WithGrants wins.
func TestRequire_grants(t *testing.T) {
	withMeta := func(g handler.Grants) context.Context {
		cc := &handler.CallContext{Parent: context.Background()}
		cc.Meta.Grants = g
		return cc
	}
	for _, tc := range []struct {
		at     string
		ctx    context.Context
		method string
		ok     bool
	}{
		{here(), withMeta(handler.Grants{"admin"}), "reset", true},
		{here(), withMeta(handler.Grants{"read", "admin"}), "slowreset", true},
		{here(), withMeta(handler.Grants{"*"}), "both", true},
		{here(), withMeta(handler.Grants{"a", "b"}), "both", true},
		{here(), withMeta(handler.Grants{"a"}), "both", false},
		{here(), withMeta(handler.Grants{"Admin"}), "reset", false},
		{here(), withMeta(nil), "reset", false},
		{here(), handler.WithGrants(context.Background(), handler.Grants{"admin"}), "reset", true},
		{here(), handler.WithGrants(withMeta(handler.Grants{"admin"}), nil), "reset", false},
		{here(), handler.WithGrants(withMeta(nil), handler.Grants{"admin"}), "slowreset", true},
		{here(), handler.WithGrants(handler.WithGrants(context.Background(), handler.Grants{"admin"}), handler.Grants{"x"}), "reset", false},
		{here(), context.WithValue(handler.WithGrants(context.Background(), handler.Grants{"admin"}), ctxKey{}, 1), "reset", true},
	} {
		tab, runs := requireTable(t)
		msg := `{"jsonrpc":"2.0","method":"` + tc.method + `","id":1}`
		want := `{"jsonrpc":"2.0","result":"done","id":1}`
		if !tc.ok {
			want = `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden`
		}
		if got := string(tab.Dispatch(tc.ctx, nil, []byte(msg))); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s", tc.at, got)
		}
		if wantRuns := map[bool]int64{true: 1, false: 0}[tc.ok]; runs.Load() != wantRuns {
			t.Errorf("%s: ran %d times", tc.at, runs.Load())
		}
	}
}

// TestRequire_interceptorGrants: an interceptor that authenticates by
// itself grants with WithGrants; the outer ones see the refusals.
func TestRequire_interceptorGrants(t *testing.T) {
	tab, runs := requireTable(t)
	var log callLog
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		log.add("%s %s %d %v", c.Method(), c.ID(), c.Code(), c.Err() == handler.ErrForbidden)
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		if strings.HasPrefix(string(c.ID()), `"root`) {
			ctx = handler.WithGrants(ctx, handler.Grants{"admin"})
		}
		c.Next(ctx)
		return nil
	})
	got := call(t, tab, `[{"jsonrpc":"2.0","method":"reset","id":"root1"},{"jsonrpc":"2.0","method":"reset","id":1},{"jsonrpc":"2.0","method":"slowreset","id":"root2"}]`)
	want := `[{"jsonrpc":"2.0","result":"done","id":"root1"},` + forbiddenAdmin + `,{"jsonrpc":"2.0","result":"done","id":"root2"}]`
	if got != want {
		t.Errorf("reply\n got %s\nwant %s", got, want)
	}
	evs := log.take()
	slices.Sort(evs)
	if wantEvs := []string{`reset "root1" 0 false`, `reset 1 -32003 true`, `slowreset "root2" 0 false`}; !slices.Equal(evs, wantEvs) {
		t.Errorf("events %q, want %q", evs, wantEvs)
	}
	if runs.Load() != 2 {
		t.Errorf("ran %d times, want 2", runs.Load())
	}
}

// TestRequire_methodInfo: Methods reports the permissions, as a copy.
func TestRequire_methodInfo(t *testing.T) {
	tab, _ := requireTable(t)
	infos := map[string]handler.MethodInfo{}
	for _, m := range tab.Methods() {
		infos[m.Name] = m
	}
	if r := infos["reset"].Require; !slices.Equal(r, []string{"admin"}) {
		t.Errorf("reset: %q", r)
	}
	if r := infos["both"].Require; !slices.Equal(r, []string{"a", "b"}) {
		t.Errorf("both: %q", r)
	}
	if r := infos["add"].Require; r != nil {
		t.Errorf("add: %q, want nil", r)
	}
	if r := infos["open"].Require; r != nil {
		t.Errorf("Require(): %q, want nil", r)
	}
	infos["reset"].Require[0] = "nobody"
	for _, m := range tab.Methods() {
		if m.Name == "reset" && m.Require[0] != "admin" {
			t.Errorf("Methods hands out the table's own slice: %q", m.Require)
		}
	}
}

// TestGrantsFrom_underCallContext: GrantsFrom promises "those of the
// innermost WithGrants, else those its transport's Authorizer gave". A
// transport without an Authorizer gives none, so grants set with
// WithGrants in the CallContext's Parent — say by a net/http middleware
// in front of HTTPHandler — must count.
func TestGrantsFrom_underCallContext(t *testing.T) {
	parent := handler.WithGrants(context.Background(), handler.Grants{"admin"})
	cc := &handler.CallContext{Parent: parent} // no Authorizer: Meta.Grants nil
	if g := handler.GrantsFrom(cc); !slices.Equal(g, handler.Grants{"admin"}) {
		t.Errorf("GrantsFrom(CallContext over WithGrants) = %v, want [admin]", g)
	}
	// The same through HTTPHandler.
	tab, runs := requireTable(t)
	h := handler.NewHTTPHandler(tab)
	mw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(handler.WithGrants(r.Context(), handler.Grants{"admin"})))
	})
	rec := httptest.NewRecorder()
	mw.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","method":"reset","id":1}`)))
	if got := rec.Body.String(); got != `{"jsonrpc":"2.0","result":"done","id":1}` || runs.Load() != 1 {
		t.Errorf("HTTPHandler behind a middleware that grants admin: %s", got)
	}
}

// TestMeta_hostOverNetHTTP: Header reads the request's fields whatever
// the transport. net/http moves Host out of Request.Header into
// Request.Host, so a Meta over a net/http request must still answer
// Header("Host") (and yield it from Headers), as it does over the
// engine's head: an Authorizer must not see a different request under
// HTTPHandler.
func TestMeta_hostOverNetHTTP(t *testing.T) {
	var head handler.Meta
	head.SetHTTPHead([]byte("POST /rpc HTTP/1.1\r\nHost: node.example:8545\r\n\r\n"))
	r := httptest.NewRequest("POST", "/rpc", nil)
	r.Host = "node.example:8545"
	var req handler.Meta
	req.SetHTTPRequest(r)
	if head.Header("host") != "node.example:8545" {
		t.Fatalf("head: Host %q", head.Header("host"))
	}
	if got := req.Header("host"); got != "node.example:8545" {
		t.Errorf("net/http: Header(\"host\") = %q, want %q", got, "node.example:8545")
	}
	found := false
	for n, v := range req.Headers() {
		found = found || (strings.EqualFold(n, "Host") && v == "node.example:8545")
	}
	if !found {
		t.Error("net/http: Headers does not yield Host")
	}
}

// parseHead parses head with the transports' parser.
func parseHead(t *testing.T, head []byte) *http1.Request {
	t.Helper()
	var r http1.Request
	var scan http1.HeadScan
	if st := http1.ParseHead(head, &scan, len(head), &r); st != http1.StatusOK {
		t.Fatalf("ParseHead %q: %d", head, st)
	}
	return &r
}

// TestMeta_setHTTPHeadParsed: a transport's parsed head gives the same
// answers as SetHTTPHead, the Authorization and traceparent fields
// without a search, and CopyTo keeps them pointing into the copy.
func TestMeta_setHTTPHeadParsed(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	head := []byte("POST /rpc?k=v HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer tok\r\nTraceparent: " + tp + "\r\nX-Other: 1\r\ntraceparent: second\r\n\r\n")
	var m handler.Meta
	m.SetHTTPHeadParsed(head, parseHead(t, head))
	if m.Method() != "POST" || m.Target() != "/rpc?k=v" || m.Header("AUTHORIZATION") != "Bearer tok" || m.Header("x-other") != "1" || m.Header("traceparent") != tp {
		t.Fatalf("parsed: %q %q %q %q %q", m.Method(), m.Target(), m.Header("authorization"), m.Header("x-other"), m.Header("traceparent"))
	}
	var c handler.Meta
	buf := m.CopyTo(&c, nil)
	copy(head, bytes.Repeat([]byte{'#'}, len(head))) // the source buffer reused
	if c.Method() != "POST" || c.Header("Authorization") != "Bearer tok" || c.Header("X-Other") != "1" || c.Header("TraceParent") != tp || &buf[0] == &head[0] {
		t.Fatalf("copy: %q %q %q %q", c.Method(), c.Header("Authorization"), c.Header("X-Other"), c.Header("TraceParent"))
	}
	none := []byte("POST / HTTP/1.1\r\nHost: a\r\n\r\n")
	var n handler.Meta
	n.SetHTTPHeadParsed(none, parseHead(t, none))
	if n.Header("Authorization") != "" || n.Header("traceparent") != "" {
		t.Fatalf("no Authorization or traceparent field: %q %q", n.Header("Authorization"), n.Header("traceparent"))
	}
	var empty handler.Meta
	empty.SetHTTPHeadParsed(nil, nil)
	if empty.Method() != "" || empty.Header("traceparent") != "" {
		t.Fatalf("nil request: %q", empty.Method())
	}
}

// TestMeta_headerValuesAgreesWithHeader: HeaderValues finds in one pass
// what Header finds name by name, on a head set parsed and unparsed, and
// on net/http's request; repeated fields give their first value.
func TestMeta_headerValuesAgreesWithHeader(t *testing.T) {
	head := []byte("POST / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nAuthorization: Bearer t\r\ntraceparent: tp1\r\nX-Force: yes\r\nx-force: no\r\nX-Empty: later\r\n\r\n")
	names := []string{"traceparent", "X-Force", "authorization", "x-empty", "missing", "HOST"}
	var parsed, plain, std handler.Meta
	parsed.SetHTTPHeadParsed(head, parseHead(t, head))
	plain.SetHTTPHead(head)
	req := httptest.NewRequest("POST", "/", nil)
	req.Host = "a"
	req.Header.Set("traceparent", "tp1")
	req.Header.Set("X-Force", "yes")
	req.Header.Set("Authorization", "Bearer t")
	std.SetHTTPRequest(req)
	want := []string{"tp1", "yes", "Bearer t", "", "", "a"}
	for what, m := range map[string]*handler.Meta{"parsed": &parsed, "unparsed": &plain, "net/http": &std} {
		got := make([]string, len(names)+1)
		got[len(names)] = "untouched"
		m.HeaderValues(names, got)
		for i, n := range names {
			if got[i] != want[i] || got[i] != m.Header(n) {
				t.Errorf("%s: %s = %q, Header %q, want %q", what, n, got[i], m.Header(n), want[i])
			}
		}
		if got[len(names)] != "untouched" {
			t.Errorf("%s: wrote past names", what)
		}
	}
}
