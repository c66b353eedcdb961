package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// who is what the whoami methods answer: the call metadata as the
// method saw it.
type who struct {
	Transport string   `json:"transport"`
	Remote    string   `json:"remote"`
	Local     string   `json:"local"`
	Method    string   `json:"method"`
	Target    string   `json:"target"`
	Caller    string   `json:"caller"`
	Grants    []string `json:"grants"`
}

func whoFrom(ctx context.Context) who {
	m := handler.MetaFrom(ctx)
	w := who{Transport: m.Transport.String(), Method: m.Method(), Target: m.Target(), Caller: strings.Clone(m.Header("x-caller")), Grants: handler.GrantsFrom(ctx)}
	if m.Remote != nil {
		w.Remote = m.Remote.Network() + ":" + m.Remote.String()
	}
	if m.Local != nil {
		w.Local = m.Local.String()
	}
	return w
}

// accessTable serves whoami (inline), whoami_slow (on a worker) and
// admin_only (needs the admin grant).
func accessTable(use ...handler.Interceptor) *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.RegisterNoParams(tab, "whoami", func(ctx context.Context) (who, error) { return whoFrom(ctx), nil }, handler.Inline())
	handler.RegisterNoParams(tab, "whoami_slow", func(ctx context.Context) (who, error) {
		time.Sleep(time.Millisecond)
		return whoFrom(ctx), nil
	})
	handler.RegisterNoParams(tab, "admin_only", func(context.Context) (string, error) { return "secret", nil },
		handler.Inline(), handler.Require("admin"))
	tab.Use(use...)
	return tab
}

// testAuthorize accepts the bearer token "good" (grants admin) and
// "user" (no grants), from the Authorization header, a "bearer."
// WebSocket subprotocol or the access_token query parameter; streams
// only over a Unix socket.
func testAuthorize(m *handler.Meta) (handler.Grants, error) {
	if m.Transport == handler.TransportStream {
		if m.Remote != nil && m.Remote.Network() == "unix" {
			return handler.Grants{"admin"}, nil
		}
		return nil, handler.ErrAccessDenied
	}
	tok := strings.TrimPrefix(m.Header("Authorization"), "Bearer ")
	for p := range strings.SplitSeq(m.Header("Sec-WebSocket-Protocol"), ",") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(p), "bearer."); ok {
			tok = t
		}
	}
	if q := m.Query("access_token"); q != "" {
		tok = q
	}
	switch tok {
	case "good":
		return handler.Grants{"admin"}, nil
	case "user":
		return nil, nil
	}
	return nil, handler.ErrUnauthenticated
}

func decodeWho(t testing.TB, reply []byte) who {
	t.Helper()
	var r struct {
		Result who `json:"result"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	return r.Result
}

// TestMeta_everyTransport: inline and worker methods see the transport,
// the addresses and, over HTTP and WebSocket, the request's head.
func TestMeta_everyTransport(t *testing.T) {
	_, tcp, unix := startEngine(t, accessTable())
	for _, method := range []string{"whoami", "whoami_slow"} {
		call := `{"jsonrpc":"2.0","method":"` + method + `","id":1}`
		t.Run(method, func(t *testing.T) {
			resps := rawHTTP(t, tcp, "POST /rpc?x=1 HTTP/1.1\r\nHost: a\r\nX-Caller: alice\r\nContent-Length: "+itoa(len(call))+"\r\n\r\n"+call, 1)
			w := decodeWho(t, []byte(bodyOf(resps[0])))
			if w.Transport != "http" || w.Method != "POST" || w.Target != "/rpc?x=1" || w.Caller != "alice" ||
				!strings.HasPrefix(w.Remote, "tcp:127.0.0.1:") || w.Local != tcp {
				t.Errorf("http: %+v", w)
			}

			ws := dialWS(t, tcp+"/?who=ws", &websocket.Dialer{})
			ws.Close()
			d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
			c, _, err := d.Dial("ws://"+tcp+"/", http.Header{"X-Caller": {"bob"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for range 2 { // the head is kept for the connection's life
				w = decodeWho(t, wsCall(t, c, call))
				if w.Transport != "websocket" || w.Method != "GET" || w.Target != "/" || w.Caller != "bob" || !strings.HasPrefix(w.Remote, "tcp:127.0.0.1:") {
					t.Errorf("websocket: %+v", w)
				}
			}

			for _, a := range []struct{ network, addr, remote string }{{"tcp", tcp, "tcp:127.0.0.1:"}, {"unix", unix, "unix:"}} {
				s := dialStream(t, a.network, a.addr)
				s.send(t, []byte(call+"\n"))
				w = decodeWho(t, s.line(t))
				if w.Transport != "stream" || w.Method != "" || w.Caller != "" || !strings.HasPrefix(w.Remote, a.remote) {
					t.Errorf("stream over %s: %+v", a.network, w)
				}
			}
		})
	}
}

// TestMeta_headKeptWhileBodyArrives: a request whose body comes in a
// later read than its head still shows its head to the method.
func TestMeta_headKeptWhileBodyArrives(t *testing.T) {
	_, tcp, _ := startEngine(t, accessTable())
	for _, method := range []string{"whoami", "whoami_slow"} {
		call := `{"jsonrpc":"2.0","method":"` + method + `","id":1}`
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nX-Caller: "+strings.Repeat("c", 300)+"\r\nContent-Length: "+itoa(len(call))+"\r\n\r\n"+call[:10])
		time.Sleep(50 * time.Millisecond)
		// Another connection's request in between reuses the loop's buffers.
		rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"whoami","id":2}`, "X-Caller: other\r\n"), 1)
		_, _ = io.WriteString(c, call[10:])
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		w := decodeWho(t, []byte(bodyOf(resp)))
		c.Close()
		if w.Caller != strings.Repeat("c", 300) {
			t.Errorf("%s: caller %q", method, w.Caller)
		}
	}
}

// TestMeta_pipelinedRequestsKeepTheirHeads: requests pipelined on one
// connection, on workers at once, each see their own head.
func TestMeta_pipelinedRequestsKeepTheirHeads(t *testing.T) {
	_, tcp, _ := startEngine(t, accessTable())
	var req strings.Builder
	names := []string{"ann", "ben", "cat", "dan", "eve", "fay"}
	for i, n := range names {
		method := "whoami_slow"
		if i%3 == 1 {
			method = "whoami"
		}
		req.WriteString(post(`{"jsonrpc":"2.0","method":"`+method+`","id":`+itoa(i)+`}`, "X-Caller: "+n+"\r\n"))
	}
	resps := rawHTTP(t, tcp, req.String(), len(names))
	for i, r := range resps {
		if w := decodeWho(t, []byte(bodyOf(r))); w.Caller != names[i] {
			t.Errorf("reply %d: caller %q, want %q", i, w.Caller, names[i])
		}
	}
}

// TestAuthorize_HTTP: the Authorizer answers 401 and 403 before the body
// is read; grants reach Require, inside a batch too; health checks and
// preflights need no credentials.
func TestAuthorize_HTTP(t *testing.T) {
	_, tcp, _ := startEngine(t, accessTable(), engine.WithAuthorize(testAuthorize), engine.WithCORS("https://app.example"))
	call := `{"jsonrpc":"2.0","method":"admin_only","id":1}`
	cases := []struct {
		name, auth string
		status     int
		body       string
	}{
		{"no token", "", 401, "missing or invalid credentials\n"},
		{"wrong token", "Authorization: Bearer nope\r\n", 401, "missing or invalid credentials\n"},
		{"user", "Authorization: Bearer user\r\n", 200, `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}`},
		{"admin", "Authorization: Bearer good\r\n", 200, `{"jsonrpc":"2.0","result":"secret","id":1}`},
	}
	for _, c := range cases {
		target := "/"
		req := "POST " + target + " HTTP/1.1\r\nHost: a\r\n" + c.auth + "Content-Length: " + itoa(len(call)) + "\r\n\r\n" + call
		r := rawHTTP(t, tcp, req, 1)[0]
		if r.StatusCode != c.status || bodyOf(r) != c.body {
			t.Errorf("%s: %d %q", c.name, r.StatusCode, bodyOf(r))
		}
		if c.status == 401 && r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s: WWW-Authenticate %q", c.name, r.Header.Get("WWW-Authenticate"))
		}
	}
	batch := `[{"jsonrpc":"2.0","method":"admin_only","id":1},{"jsonrpc":"2.0","method":"whoami","id":2},{"jsonrpc":"2.0","method":"admin_only"}]`
	r := rawHTTP(t, tcp, post(batch, "Authorization: Bearer user\r\n"), 1)[0]
	var replies []map[string]any
	if err := json.Unmarshal([]byte(bodyOf(r)), &replies); err != nil || len(replies) != 2 {
		t.Fatalf("batch: %q %v", bodyOf(r), err)
	}
	if e, _ := replies[0]["error"].(map[string]any); e == nil || e["code"] != float64(-32003) {
		t.Errorf("batch: forbidden element %v", replies[0])
	}
	if replies[1]["result"] == nil {
		t.Errorf("batch: sibling %v", replies[1])
	}
	if r := rawHTTP(t, tcp, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n", 1)[0]; r.StatusCode != 200 {
		t.Errorf("health: %d", r.StatusCode)
	}
	pre := "OPTIONS / HTTP/1.1\r\nHost: a\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization\r\n\r\n"
	if r := rawHTTP(t, tcp, pre, 1)[0]; r.StatusCode != 204 {
		t.Errorf("preflight: %d", r.StatusCode)
	}
	// A refused request with a body closes the connection rather than
	// reading it; the next client is served.
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, post(call, "")+post(call, "Authorization: Bearer good\r\n"))
	br := bufio.NewReader(c)
	if r, err := http.ReadResponse(br, nil); err != nil || r.StatusCode != 401 || !r.Close {
		t.Fatalf("refused with a body: %v %v", r, err)
	}
	if !waitClosed(c, 5*time.Second) {
		t.Error("connection left open after a refusal with a body")
	}
}

// TestAuthorize_WebSocket: the upgrade is refused without credentials;
// a browser's token in a subprotocol or the query is accepted, and the
// grants last the connection's life.
func TestAuthorize_WebSocket(t *testing.T) {
	_, tcp, _ := startEngine(t, accessTable(), engine.WithAuthorize(testAuthorize))
	d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	if _, resp, err := d.Dial("ws://"+tcp+"/", nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("no token: %v %v", err, resp)
	}
	if _, resp, err := d.Dial("ws://"+tcp+"/", http.Header{"Authorization": {"Bearer nope"}}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("wrong token: %v %v", err, resp)
	}
	admin := `{"jsonrpc":"2.0","method":"admin_only","id":1}`
	for _, dial := range []struct {
		name   string
		url    string
		header http.Header
		protos []string
		picked string
	}{
		{"header", "/", http.Header{"Authorization": {"Bearer good"}}, nil, ""},
		{"subprotocol", "/", nil, []string{"jsonrpc", "bearer.good"}, "jsonrpc"},
		{"subprotocol alone: never echoed", "/", nil, []string{"bearer.good"}, ""},
		{"query", "/?access_token=good", nil, nil, ""},
	} {
		d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second, Subprotocols: dial.protos}
		c, resp, err := d.Dial("ws://"+tcp+dial.url, dial.header)
		if err != nil {
			t.Fatalf("%s: %v", dial.name, err)
		}
		if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != dial.picked {
			t.Errorf("%s: subprotocol %q, want %q", dial.name, got, dial.picked)
		}
		for range 2 {
			if got := string(wsCall(t, c, admin)); got != `{"jsonrpc":"2.0","result":"secret","id":1}` {
				t.Errorf("%s: %s", dial.name, got)
			}
		}
		c.Close()
	}
	c, _, err := d.Dial("ws://"+tcp+"/", http.Header{"Authorization": {"Bearer user"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := string(wsCall(t, c, admin)); !strings.Contains(got, `"code":-32003`) {
		t.Errorf("user: %s", got)
	}
}

// TestAuthorize_stream: a stream connection the Authorizer refuses gets
// one -32003 error and is closed; one it accepts is served with its
// grants.
func TestAuthorize_stream(t *testing.T) {
	_, tcp, unix := startEngine(t, accessTable(), engine.WithAuthorize(testAuthorize))
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, `{"jsonrpc":"2.0","method":"whoami","id":1}`+"\n")
	got, _ := io.ReadAll(c) // to EOF: the server closes
	if string(got) != `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: this connection is not authorized"},"id":null}`+"\n" {
		t.Errorf("tcp stream: %q", got)
	}
	s := dialStream(t, "unix", unix)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"admin_only","id":1}`+"\n"))
	if got := string(s.line(t)); got != `{"jsonrpc":"2.0","result":"secret","id":1}`+"\n" {
		t.Errorf("unix stream: %q", got)
	}
}

// TestAcceptConn_refusesBeforeReading: a connection the hook refuses is
// closed before any byte is read; the others are served.
func TestAcceptConn_refusesBeforeReading(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	refuse := true
	e, tcp, _ := startEngine(t, nil, engine.WithAcceptConn(func(remote net.Addr) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, remote.Network())
		return !refuse
	}))
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	if !waitClosed(c, 5*time.Second) {
		t.Fatal("refused connection left open")
	}
	c.Close()
	mu.Lock()
	refuse = false
	mu.Unlock()
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`+"\n"))
	if got := string(s.line(t)); got != `{"jsonrpc":"2.0","result":3,"id":1}`+"\n" {
		t.Errorf("accepted: %q", got)
	}
	waitConns(t, e, 1)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "tcp" {
		t.Errorf("hook saw %v", seen)
	}
}

// TestCORS_preflightAndReplies: a preflight from an allowed origin is
// answered with the allowed methods and headers; every reply to that
// origin — inline, from a worker, 204 — carries
// Access-Control-Allow-Origin; other origins get 403 — their preflights
// and their calls alike.
func TestCORS_preflightAndReplies(t *testing.T) {
	_, tcp, _ := startEngine(t, accessTable(), engine.WithCORS("https://app.example"))
	pre := func(origin string) *http.Response {
		return rawHTTP(t, tcp, "OPTIONS / HTTP/1.1\r\nHost: a\r\nOrigin: "+origin+"\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, authorization\r\n\r\n", 1)[0]
	}
	r := pre("https://APP.example")
	h := r.Header
	if r.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://app.example" || h.Get("Access-Control-Allow-Methods") != "POST, GET, OPTIONS" ||
		h.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization" || h.Get("Access-Control-Max-Age") != "600" || h.Get("Vary") != "Origin" {
		t.Errorf("preflight: %d %v", r.StatusCode, h)
	}
	if r := pre("https://evil.example"); r.StatusCode != 403 || r.Header.Get("Access-Control-Allow-Origin") != "" || bodyOf(r) != httprules.TextOriginNotAllowed {
		t.Errorf("body %q", bodyOf(r))
		t.Errorf("preflight from another origin: %d %v", r.StatusCode, r.Header)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"whoami","id":1}`,
		`{"jsonrpc":"2.0","method":"whoami_slow","id":1}`,
		`{"jsonrpc":"2.0","method":"whoami"}`,
	} {
		r := rawHTTP(t, tcp, post(body, "Origin: https://app.example\r\n"), 1)[0]
		if r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Errorf("%s: %d %v", body, r.StatusCode, r.Header)
		}
		r = rawHTTP(t, tcp, post(body, "Origin: https://evil.example\r\n"), 1)[0]
		if r.StatusCode != 403 || bodyOf(r) != httprules.TextOriginNotAllowed || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s from another origin: %d %q %v", body, r.StatusCode, bodyOf(r), r.Header)
		}
	}
	_, plain, _ := startEngine(t, nil)
	if r := rawHTTP(t, plain, "OPTIONS / HTTP/1.1\r\nHost: a\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n\r\n", 1)[0]; r.StatusCode != 405 {
		t.Errorf("preflight without CORS: %d", r.StatusCode)
	}
	_, any, _ := startEngine(t, nil, engine.WithCORS("*"))
	if r := rawHTTP(t, any, post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "Origin: https://x.example\r\n"), 1)[0]; r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("wildcard: %v", r.Header)
	}
}

// TestHosts_refuseOtherNames: with a Host allow list, a request or an
// upgrade naming another host gets 403; IP addresses pass.
func TestHosts_refuseOtherNames(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithHosts("localhost", "api.example"))
	call := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	for host, want := range map[string]int{"localhost:8080": 200, "API.example": 200, "127.0.0.1:9": 200, "[::1]:9": 200, "evil.example": 403, "localhost.evil.example": 403} {
		r := rawHTTP(t, tcp, "POST / HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: "+itoa(len(call))+"\r\n\r\n"+call, 1)[0]
		if r.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, r.StatusCode, want)
		}
		if want == 403 && bodyOf(r) != httprules.TextHostNotAllowed {
			t.Errorf("Host %s: body %q", host, bodyOf(r))
		}
	}
	// One connection: an allowed Host is remembered, and another one on
	// the same connection is still checked.
	okCall := "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + itoa(len(call)) + "\r\n\r\n" + call
	resps := rawHTTP(t, tcp, okCall+"GET /health HTTP/1.1\r\nHost: evil.example\r\n\r\n"+okCall+"GET /health HTTP/1.1\r\nHost: LOCALHOST\r\n\r\n", 4)
	if len(resps) != 4 || resps[0].StatusCode != 200 || resps[1].StatusCode != 403 || resps[2].StatusCode != 200 || resps[3].StatusCode != 200 {
		t.Errorf("one connection, Hosts localhost, evil, localhost, LOCALHOST: %d replies %v", len(resps), resps)
	}
	d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	if _, resp, err := d.Dial("ws://"+tcp+"/", http.Header{"Host": {"evil.example"}}); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("upgrade with another host: %v %v", err, resp)
	}
}

// A Host check that means it: only a real IP address counts as one,
// and a strict list (WithStrictHosts) admits no address it does not
// name and no request without a Host, HTTP/1.0 included.
//
// Host: [evil.com] passed as an IPv6 literal, and nothing could refuse an address or a missing Host (found by an attack pass).
func TestHosts_ipLiteralsAndStrict(t *testing.T) {
	call := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	req := func(version, hostLine string) string {
		return "POST / HTTP/" + version + "\r\n" + hostLine + "Content-Type: application/json\r\nContent-Length: " + itoa(len(call)) + "\r\n\r\n" + call
	}
	for _, strict := range []bool{false, true} {
		_, tcp, _ := startEngine(t, nil, engine.WithHosts("api.example", "10.9.8.7"), engine.WithStrictHosts(strict))
		for _, c := range []struct {
			req         string
			lax, strict int
		}{
			{req("1.1", "Host: api.example\r\n"), 200, 200},
			{req("1.1", "Host: 10.9.8.7:8545\r\n"), 200, 200},
			{req("1.1", "Host: [evil.com]\r\n"), 403, 403},
			{req("1.1", "Host: [evil.com]:80\r\n"), 403, 403},
			{req("1.1", "Host: 127.0.0.1:8545\r\n"), 200, 403},
			{req("1.1", "Host: [::1]:8545\r\n"), 200, 403},
			{req("1.1", "Host: 999.1.1.1\r\n"), 403, 403},
			{req("1.1", "Host: \r\n"), 200, 403},
			{req("1.0", ""), 200, 403},
		} {
			want := c.lax
			if strict {
				want = c.strict
			}
			r := rawHTTP(t, tcp, c.req, 1)[0]
			if r.StatusCode != want || want == 403 && bodyOf(r) != httprules.TextHostNotAllowed {
				t.Errorf("strict %v, %q: %d %q; want %d", strict, strings.SplitN(c.req, "Content-Type", 2)[0], r.StatusCode, bodyOf(r), want)
			}
		}
	}
}

// TestInterceptors_overTheEngine: every call reaches the interceptors —
// inline, on a worker, unknown, malformed — with its metadata, and a
// refusal is the reply.
func TestInterceptors_overTheEngine(t *testing.T) {
	var mu sync.Mutex
	var log []string
	tab := accessTable(func(ctx context.Context, call *handler.Call) error {
		if call.Method() == "whoami" && handler.MetaFrom(ctx).Header("x-caller") == "mallory" {
			return handler.NewError(-32099, "go away")
		}
		call.Next(ctx)
		mu.Lock()
		log = append(log, handler.MetaFrom(ctx).Transport.String()+" "+call.Method()+" "+itoa(int(call.Code())))
		mu.Unlock()
		return nil
	})
	_, tcp, _ := startEngine(t, tab)
	rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"whoami","id":1}`, "")+
		post(`{"jsonrpc":"2.0","method":"whoami_slow","id":2}`, "")+
		post(`{"jsonrpc":"2.0","method":"nope","id":3}`, "")+
		post(`{"jsonrpc":"2.0","method"`, ""), 4)
	r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"whoami","id":1}`, "X-Caller: mallory\r\n"), 1)[0]
	if got := bodyOf(r); got != `{"jsonrpc":"2.0","error":{"code":-32099,"message":"go away"},"id":1}` {
		t.Errorf("refused: %s", got)
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"whoami_slow","id":1}`+"\n"))
	s.line(t)
	mu.Lock()
	defer mu.Unlock()
	// The worker's call may end after the inline ones that follow it.
	slices.Sort(log)
	want := []string{"http  -32700", "http nope -32601", "http whoami 0", "http whoami_slow 0", "stream whoami_slow 0"}
	if strings.Join(log, "|") != strings.Join(want, "|") {
		t.Errorf("interceptor saw %q, want %q", log, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestAuthorize_answerKeptForTheSameField: an Authorizer that says its
// answer holds for the same Authorization field (AuthorizedUntil) is
// asked once for a keep-alive connection's requests that carry the same
// field, and again for another field, after its answer expires, and for
// every request when it says nothing; the grants and principal given
// again are the ones it gave.
func TestAuthorize_answerKeptForTheSameField(t *testing.T) {
	var asked sync.Map // field → times asked
	count := func(field string) int {
		n, _ := asked.Load(field)
		v, _ := n.(int)
		return v
	}
	var mu sync.Mutex
	authorizer := func(m *handler.Meta) (handler.Grants, error) {
		field := strings.Clone(m.Header("Authorization")) // a view of the request, valid until the call returns: kept in asked
		mu.Lock()
		asked.Store(field, count(field)+1)
		mu.Unlock()
		switch field {
		case "Bearer forever":
			m.Principal, m.AuthorizedUntil = "p-forever", math.MaxInt64
			return handler.Grants{"admin"}, nil
		case "Bearer brief":
			m.Principal, m.AuthorizedUntil = "p-brief", clock.Now()+int64(40*time.Millisecond)
			return handler.Grants{"admin"}, nil
		case "Bearer ask":
			m.Principal = "p-ask"
			return handler.Grants{"admin"}, nil
		}
		m.AuthorizedUntil = math.MaxInt64 // even so, a refusal is not kept
		return nil, handler.ErrUnauthenticated
	}
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.RegisterNoParams(tab, "principal", func(ctx context.Context) (string, error) {
		return handler.MetaFrom(ctx).Principal + " " + strings.Join(handler.GrantsFrom(ctx), ","), nil
	}, handler.Inline(), handler.Require("admin"))
	handler.RegisterNoParams(tab, "principal_slow", func(ctx context.Context) (string, error) {
		return handler.MetaFrom(ctx).Principal, nil
	}, handler.Require("admin"))
	_, tcp, _ := startEngine(t, tab, engine.WithAuthorize(authorizer))
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	send := func(field, method string) (int, string) {
		t.Helper()
		call := `{"jsonrpc":"2.0","method":"` + method + `","id":1}`
		if _, err := io.WriteString(c, post(call, "Authorization: "+field+"\r\n")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	want := func(field, method, reply string) {
		t.Helper()
		if code, got := send(field, method); code != 200 || got != `{"jsonrpc":"2.0","result":"`+reply+`","id":1}` {
			t.Fatalf("%s: %d %s, want %s", field, code, got, reply)
		}
	}
	for range 5 {
		want("Bearer forever", "principal", "p-forever admin")
	}
	want("Bearer forever", "principal_slow", "p-forever")
	if n := count("Bearer forever"); n != 1 {
		t.Errorf("asked %d times about 6 requests with the same field, want 1", n)
	}
	want("Bearer ask", "principal", "p-ask admin")
	want("Bearer ask", "principal", "p-ask admin")
	if n := count("Bearer ask"); n != 2 {
		t.Errorf("an answer that says nothing: asked %d times for 2 requests, want 2", n)
	}
	want("Bearer forever", "principal", "p-forever admin") // another field came between: asked again
	if n := count("Bearer forever"); n != 2 {
		t.Errorf("after another field: asked %d times, want 2", n)
	}
	want("Bearer brief", "principal", "p-brief admin")
	want("Bearer brief", "principal", "p-brief admin")
	if n := count("Bearer brief"); n != 1 {
		t.Errorf("a brief answer within its time: asked %d times, want 1", n)
	}
	time.Sleep(80 * time.Millisecond) // past it, and past a tick of the engine's clock
	want("Bearer brief", "principal", "p-brief admin")
	if n := count("Bearer brief"); n != 2 {
		t.Errorf("a brief answer past its time: asked %d times, want 2", n)
	}
	// A refusal with a body closes the connection: the cache goes with it.
	if code, _ := send("Bearer wrong", "principal"); code != 401 {
		t.Fatalf("a wrong token: %d", code)
	}
}

// A call from a page of an origin CORS does not allow is refused with
// 403 before it runs, as documented; without an Origin (not a browser's
// cross-origin page) it runs; without a CORS list nothing is refused.
//
// A POST with a disallowed Origin was answered 200 with its result (found by an attack pass).
func TestCORS_refusedOriginRunsNothing(t *testing.T) {
	var n atomic.Int64
	_, tcp, _ := startEngine(t, countingTable(&n), engine.WithCORS("https://app.example"))
	for _, m := range []string{"count", "count_blocking"} {
		r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"`+m+`","id":1}`, "Origin: https://evil.example\r\n"), 1)[0]
		if r.StatusCode != 403 || bodyOf(r) != httprules.TextOriginNotAllowed {
			t.Errorf("%s from another origin: %d %q", m, r.StatusCode, bodyOf(r))
		}
		if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"`+m+`","id":1}`, "Origin: null\r\n"), 1)[0]; r.StatusCode != 403 {
			t.Errorf("%s from Origin null: %d", m, r.StatusCode)
		}
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("%d refused calls ran", got)
	}
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"count","id":1}`, "Origin: https://app.example\r\n"), 1)[0]; r.StatusCode != 200 || n.Load() != 1 {
		t.Errorf("from the allowed origin: %d, %d calls", r.StatusCode, n.Load())
	}
	if r := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"count","id":1}`, ""), 1)[0]; r.StatusCode != 200 || n.Load() != 2 {
		t.Errorf("without an Origin: %d, %d calls", r.StatusCode, n.Load())
	}
	_, open, _ := startEngine(t, countingTable(&n))
	if r := rawHTTP(t, open, post(`{"jsonrpc":"2.0","method":"count","id":1}`, "Origin: https://evil.example\r\n"), 1)[0]; r.StatusCode != 200 || n.Load() != 3 {
		t.Errorf("without a CORS list: %d, %d calls", r.StatusCode, n.Load())
	}
}

// TestCORS_originsChangingOnOneConnection: the answer to an Origin is
// kept for the connection's next requests with the same Origin; one
// connection whose requests carry other Origins — allowed, refused, in
// another case, none — gets each its own answer.
func TestCORS_originsChangingOnOneConnection(t *testing.T) {
	_, tcp, _ := startEngine(t, accessTable(), engine.WithCORS("https://app.example", "https://b.example"))
	origins := []string{"https://app.example", "https://app.example", "https://b.example", "", "https://B.example", "https://app.example", "https://evil.example"}
	want := []string{"https://app.example", "https://app.example", "https://b.example", "", "https://b.example", "https://app.example", "403"} // a refused Origin's 403 closes the connection (its body is not read)
	var req strings.Builder
	for i, o := range origins {
		field := ""
		if o != "" {
			field = "Origin: " + o + "\r\n"
		}
		method := "whoami"
		if i%3 == 1 {
			method = "whoami_slow"
		}
		req.WriteString(post(`{"jsonrpc":"2.0","method":"`+method+`","id":1}`, field))
	}
	for i, r := range rawHTTP(t, tcp, req.String(), len(origins)) {
		if want[i] == "403" {
			if r.StatusCode != 403 || bodyOf(r) != httprules.TextOriginNotAllowed || !r.Close {
				t.Errorf("request %d (Origin %q): %d %q, close %v; want 403 and close", i, origins[i], r.StatusCode, bodyOf(r), r.Close)
			}
			continue
		}
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != want[i] || r.StatusCode != 200 {
			t.Errorf("request %d (Origin %q): %d, Access-Control-Allow-Origin %q, want %q", i, origins[i], r.StatusCode, got, want[i])
		}
	}
}

// With API keys (auth.Keys), a key in the URL is taken on the WebSocket
// upgrade alone, a browser's only way to send it; an HTTP POST carrying
// one is refused with 401 and a body that says why, and the call does
// not run.
//
// An API key in ?access_token= was accepted on an HTTP POST (found by an attack pass).
func TestKeys_tokenInURLOnlyOnWebSocket(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
	_, tcp, _ := startEngine(t, accessTable(), engine.WithAuthorize(keys.Authorize))
	call := `{"jsonrpc":"2.0","method":"admin_only","id":1}`
	for _, target := range []string{"/?access_token=" + key, "/?a=1&access_token=" + key} {
		r := rawHTTP(t, tcp, "POST "+target+" HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: "+itoa(len(call))+"\r\n\r\n"+call, 1)[0]
		if r.StatusCode != 401 || bodyOf(r) != httprules.TextTokenInURL || r.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("POST %s: %d %q", target, r.StatusCode, bodyOf(r))
		}
	}
	r := rawHTTP(t, tcp, post(call, "Sec-WebSocket-Protocol: jsonrpc, bearer."+key+"\r\n"), 1)[0]
	if r.StatusCode != 401 {
		t.Errorf("POST with the key as a subprotocol: %d %q", r.StatusCode, bodyOf(r))
	}
	if r := rawHTTP(t, tcp, post(call, "Authorization: Bearer "+key+"\r\n"), 1)[0]; r.StatusCode != 200 || bodyOf(r) != `{"jsonrpc":"2.0","result":"secret","id":1}` {
		t.Errorf("POST with the header: %d %q", r.StatusCode, bodyOf(r))
	}
	d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws://"+tcp+"/?access_token="+key, nil)
	if err != nil {
		t.Fatalf("WebSocket with the key in the URL: %v", err)
	}
	defer c.Close()
	if got := string(wsCall(t, c, call)); got != `{"jsonrpc":"2.0","result":"secret","id":1}` {
		t.Errorf("WebSocket: %s", got)
	}
}

// An anonymous caller kept the principal its Authorizer had set before
// refusing with ErrNoCredentials: rate limits and idempotency keys
// (DefaultScope) counted it as that principal.
func TestAuthOptional_anonymousHasNoPrincipal(t *testing.T) {
	careless := func(m *handler.Meta) (handler.Grants, error) {
		m.Principal = "guest"
		return handler.Grants{"admin"}, handler.ErrNoCredentials
	}
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "principal", func(ctx context.Context) (string, error) {
		return handler.MetaFrom(ctx).Principal + "|" + strings.Join(handler.GrantsFrom(ctx), ","), nil
	}, handler.Inline())
	_, tcp, _ := startEngine(t, tab, engine.WithAuthorize(careless), engine.WithAuthOptional(true))
	call := `{"jsonrpc":"2.0","method":"principal","id":1}`
	want := `{"jsonrpc":"2.0","result":"|","id":1}`
	if r := rawHTTP(t, tcp, post(call, ""), 1)[0]; r.StatusCode != 200 || bodyOf(r) != want {
		t.Errorf("HTTP: %d %q; want 200 %q", r.StatusCode, bodyOf(r), want)
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(call+"\n"))
	if got := string(s.line(t)); got != want+"\n" {
		t.Errorf("stream: %q; want %q", got, want)
	}
}

// TestAuthOptional_everyTransport: under AuthOptional a caller without
// credentials is served anonymous, with no grants — over HTTP, a
// WebSocket and a stream — so that a method with Require refuses it
// -32003 and the others answer; credentials presented are checked as
// ever (a wrong key: 401), and a page still needs them.
func TestAuthOptional_everyTransport(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
	page := engine.Page{Path: "/private", ContentType: "text/plain", Append: func(dst []byte) []byte { return append(dst, "page"...) }}
	_, tcp, _ := startEngine(t, accessTable(), engine.WithAuthorize(keys.Authorize), engine.WithAuthOptional(true), engine.WithPage(page))
	admin := `{"jsonrpc":"2.0","method":"admin_only","id":1}`
	forbidden := `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission admin"},"id":1}`
	secret := `{"jsonrpc":"2.0","result":"secret","id":1}`
	for _, c := range []struct {
		name, auth, call string
		status           int
		body             string
	}{
		{"anonymous", "", admin, 200, forbidden},
		{"keyed", "Authorization: Bearer " + key + "\r\n", admin, 200, secret},
		{"wrong key", "Authorization: Bearer " + key + "x\r\n", admin, 401, "missing or invalid credentials\n"},
		{"another scheme", "Authorization: Basic dXNlcjpwYXNz\r\n", admin, 401, "missing or invalid credentials\n"},
		{"token in the URL", "", admin, 401, httprules.TextTokenInURL},
	} {
		target := "/"
		if c.name == "token in the URL" {
			target = "/?access_token=" + key
		}
		req := "POST " + target + " HTTP/1.1\r\nHost: a\r\n" + c.auth + "Content-Length: " + itoa(len(c.call)) + "\r\n\r\n" + c.call
		if r := rawHTTP(t, tcp, req, 1)[0]; r.StatusCode != c.status || bodyOf(r) != c.body {
			t.Errorf("HTTP %s: %d %q; want %d %q", c.name, r.StatusCode, bodyOf(r), c.status, c.body)
		}
	}
	if w := decodeWho(t, []byte(bodyOf(rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"whoami","id":1}`, ""), 1)[0]))); w.Grants != nil || w.Transport != "http" {
		t.Errorf("HTTP anonymous whoami: %+v", w)
	}
	for _, c := range []struct {
		name, auth string
		status     int
	}{{"anonymous", "", 401}, {"keyed", "Authorization: Bearer " + key + "\r\n", 200}} {
		if r := rawHTTP(t, tcp, "GET /private HTTP/1.1\r\nHost: a\r\n"+c.auth+"\r\n", 1)[0]; r.StatusCode != c.status {
			t.Errorf("page, %s: %d; want %d", c.name, r.StatusCode, c.status)
		}
	}

	// A WebSocket upgrade without credentials: anonymous for its life; a
	// wrong key: 401.
	d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	if _, resp, err := d.Dial("ws://"+tcp+"/", http.Header{"Authorization": {"Bearer nope"}}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("WebSocket, wrong key: %v %v", err, resp)
	}
	ws := dialWS(t, tcp, d)
	if got := string(wsCall(t, ws, admin)); got != forbidden {
		t.Errorf("WebSocket anonymous admin_only: %s", got)
	}
	if w := decodeWho(t, wsCall(t, ws, `{"jsonrpc":"2.0","method":"whoami","id":2}`)); w.Grants != nil {
		t.Errorf("WebSocket anonymous whoami: %+v", w)
	}
	keyed, _, err := d.Dial("ws://"+tcp+"/", http.Header{"Authorization": {"Bearer " + key}})
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	if got := string(wsCall(t, keyed, admin)); got != secret {
		t.Errorf("WebSocket keyed admin_only: %s", got)
	}

	// A stream has no head to carry a key: anonymous.
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(admin+"\n"))
	if got := string(s.line(t)); got != forbidden+"\n" {
		t.Errorf("stream anonymous admin_only: %q", got)
	}
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"whoami","id":2}`+"\n"))
	if w := decodeWho(t, s.line(t)); w.Grants != nil || w.Transport != "stream" {
		t.Errorf("stream anonymous whoami: %+v", w)
	}
}
