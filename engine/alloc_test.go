//go:build !race

package engine

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/panjf2000/gnet/v2"
)

// TestConn_zeroAllocs drives the HTTP and the stream paths with bytes:
// in steady state a request to an inline method allocates nothing, from
// the bytes read to the reply written.
func TestConn_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	batch := "[" + strings.TrimSuffix(strings.Repeat(add+",", 10), ",") + "]"
	httpReq := func(body string) string {
		return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
			itoa(len(body)) + "\r\n\r\n" + body
	}
	cases := []struct {
		name, in, want string
	}{
		{"http single", httpReq(add), `{"jsonrpc":"2.0","result":42,"id":1}`},
		{"http pipelined x3", strings.Repeat(httpReq(add), 3), `{"jsonrpc":"2.0","result":42,"id":1}`},
		{"http batch10", httpReq(batch), `"result":42`},
		{"http notification", httpReq(`{"jsonrpc":"2.0","method":"update"}`), "204 No Content"},
		{"http chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + itoaHex(len(add)) + "\r\n" + add + "\r\n0\r\n\r\n", `"result":42`},
		{"stream single", add + "\n", `{"jsonrpc":"2.0","result":42,"id":1}` + "\n"},
		{"stream x3", strings.Repeat(add+"\n", 3), `{"jsonrpc":"2.0","result":42,"id":1}` + "\n"},
		{"stream batch10", batch + "\n", `"result":42`},
		{"health", "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", `{"status":"ok"}`},
	}
	for _, c := range cases {
		cs, fc := newFakeConn(t)
		in := []byte(c.in)
		step := func() {
			fc.in = in
			fc.out = fc.out[:0]
			if cs.traffic() != gnet.None {
				t.Fatalf("%s: connection closed", c.name)
			}
		}
		step()
		if !bytes.Contains(fc.out, []byte(c.want)) || len(fc.in) != 0 {
			t.Fatalf("%s: out %q, left %q", c.name, fc.out, fc.in)
		}
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("%s: %v allocs per message, want 0", c.name, got)
		}
	}
}

// TestConn_zeroAllocsWithAccessChecks: with the access features on — a
// no-op interceptor, a bearer-token check (API keys), CORS and a Host
// allow list — a request to an inline method, one that needs a grant
// and a preflight still allocate nothing; so does a message on a worker.
func TestConn_zeroAllocsWithAccessChecks(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	const key = "0123456789abcdef0123456789abcdef"
	tab := handler.NewTable()
	demo.Register(tab)
	handler.Register(tab, "admin_add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil },
		handler.Inline(), handler.Require("admin"))
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	tab.Use(func(ctx context.Context, call *handler.Call) error {
		call.Next(ctx)
		return nil
	})
	keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
	cs, fc := newFakeConnOf(t, tab, WithCORS("https://app.example"), WithHosts("localhost"), WithAuthorize(keys.Authorize))
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	req := func(body string) string {
		return "POST / HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: https://app.example\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	}
	cases := []struct {
		name, in, want string
		worker         bool
	}{
		{"inline", req(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`), `{"jsonrpc":"2.0","result":42,"id":1}`, false},
		{"granted", req(`{"jsonrpc":"2.0","method":"admin_add","params":[40,2],"id":1}`), `{"jsonrpc":"2.0","result":42,"id":1}`, false},
		{"preflight", "OPTIONS / HTTP/1.1\r\nHost: localhost\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n\r\n", "Access-Control-Max-Age", false},
		{"worker", req(`{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), `{"jsonrpc":"2.0","result":42,"id":1}`, true},
	}
	for _, c := range cases {
		assertRequestNoAllocs(t, cs, fc, c.name, c.in, c.worker, c.want, "Access-Control-Allow-Origin: https://app.example")
	}

	// Under AuthOptional, an anonymous caller — answered, or refused a
	// method that needs a grant — allocates nothing either.
	anon, afc := newFakeConnOf(t, tab, WithHosts("localhost"), WithAuthorize(keys.Authorize), WithAuthOptional(true))
	anonReq := func(body string) string {
		return "POST / HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	}
	assertRequestNoAllocs(t, anon, afc, "anonymous", anonReq(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`), false, `{"jsonrpc":"2.0","result":42,"id":1}`)
	assertRequestNoAllocs(t, anon, afc, "anonymous, forbidden", anonReq(`{"jsonrpc":"2.0","method":"admin_add","params":[40,2],"id":1}`), false, `"code":-32003`)
}

// TestConn_zeroAllocsRefused: a refusal on a connection that persists —
// a Host not allowed (403), a method not allowed (405) — allocates
// nothing, with no access log and with one whose sampling passes over
// it. (A 401 allocates in the Authorizer's refusal and its Debug line,
// with or without the access log.)
func TestConn_zeroAllocsRefused(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	keys := auth.NewKeys(map[string]handler.Grants{"0123456789abcdef0123456789abcdef": nil})
	for name, tab := range map[string]*handler.Table{
		"no access log": handler.NewTable(),
		"not sampled":   handler.NewTable(handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.DiscardHandler), Sample: 1e-12})),
	} {
		demo.Register(tab)
		cs, fc := newFakeConnOf(t, tab, WithHosts("localhost"), WithAuthorize(keys.Authorize))
		for _, c := range []struct{ what, in, want string }{
			{"403", "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", "403 Forbidden"},
			{"405", "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", "405 Method Not Allowed"},
		} {
			assertRequestNoAllocs(t, cs, fc, name+": "+c.what, c.in, false, c.want)
		}
	}
}

// assertRequestNoAllocs serves in on cs — waiting for the worker when
// worker is set — checks that the output holds each of want, then that
// serving it again allocates nothing.
func assertRequestNoAllocs(t *testing.T, cs *conn, fc *fakeConn, name, in string, worker bool, want ...string) {
	t.Helper()
	b := []byte(in)
	step := func() {
		fc.in, fc.out = b, fc.out[:0]
		if cs.traffic() != gnet.None {
			t.Fatalf("%s: connection closed", name)
		}
		if worker {
			for !cs.mail.waking.Load() {
				runtime.Gosched()
			}
			cs.traffic() // writes the reply
		}
	}
	step()
	for _, w := range want {
		if !bytes.Contains(fc.out, []byte(w)) {
			t.Fatalf("%s: out %q, want %q in it", name, fc.out, w)
		}
	}
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("%s: %v allocs per request, want 0", name, got)
	}
}

func itoa(n int) string    { return strconv.Itoa(n) }
func itoaHex(n int) string { return strings.ToLower(strings.TrimLeft(hexOf(n), "0")) }

func hexOf(n int) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[n&15]
		n >>= 4
	}
	return string(b[:])
}

// TestWork_zeroAllocs: a message for a blocking method goes to a
// worker and its reply comes back through the connection's done queue
// without allocating (the fake connection's Wake is free; gnet's costs
// two allocations per burst of replies, not per reply).
func TestWork_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	cs, fc := newFakeConn(t)
	// A blocking method that allocates nothing itself (sleep's timer would).
	handler.Register(cs.e.table, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	for _, in := range []string{
		`{"jsonrpc":"2.0","method":"slowadd","params":[0,0],"id":1}` + "\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 58\r\n\r\n" + `{"jsonrpc":"2.0","method":"slowadd","params":[0,0],"id":1}`,
	} {
		cs.resetCodec()
		in := []byte(in)
		step := offloaded(t, cs, fc, in, `"result":0,"id":1}`)
		step()
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("%.20q: %v allocs per offloaded message, want 0", in, got)
		}
		// The loops take every P: the read waits for its one worker
		// (awaitOne), whose reply it writes itself, or the next pass does.
		cs.e.yield = true
		awaited := func() {
			fc.in, fc.out = in, fc.out[:0]
			cs.traffic()
			for !bytes.Contains(fc.out, []byte(`"result":0,"id":1}`)) {
				runtime.Gosched()
				cs.traffic()
			}
		}
		awaited()
		if got := testing.AllocsPerRun(200, awaited); got != 0 {
			t.Errorf("%.20q, awaited: %v allocs per offloaded message, want 0", in, got)
		}
		cs.e.yield = false
	}
}

// offloaded returns a step that sends in, a message for a blocking
// method, to cs: its read queues it on a worker, and the read after the
// worker's wake writes the reply, which must contain want.
func offloaded(t *testing.T, cs *conn, fc *fakeConn, in []byte, want string) func() {
	return func() {
		fc.in, fc.out = in, fc.out[:0]
		cs.traffic() // queues it on the worker
		for !cs.mail.waking.Load() {
			runtime.Gosched()
		}
		cs.traffic() // writes the reply
		if !bytes.Contains(fc.out, []byte(want)) {
			t.Fatalf("out %q", fc.out)
		}
	}
}

// TestWS_zeroAllocs: in steady state a WebSocket message to an inline
// method allocates nothing, fragmented or not; nor does a ping.
func TestWS_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	add := []byte(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`)
	batch := []byte("[" + string(bytes.Repeat(append(append([]byte(nil), add...), ','), 10)))
	batch[len(batch)-1] = ']'
	want := `{"jsonrpc":"2.0","result":42,"id":1}`
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"text", clientFrame(true, ws.OpText, add), want},
		{"binary", clientFrame(true, ws.OpBinary, add), want},
		{"x3", bytes.Repeat(clientFrame(true, ws.OpText, add), 3), want},
		{"batch10", clientFrame(true, ws.OpText, batch), `"result":42`},
		{"fragmented", append(append(clientFrame(false, ws.OpText, add[:10]), clientFrame(true, ws.OpPing, []byte("p"))...),
			clientFrame(true, ws.OpContinuation, add[10:])...), want},
		{"notification", clientFrame(true, ws.OpText, []byte(`{"jsonrpc":"2.0","method":"update"}`)), ""},
		{"ping", clientFrame(true, ws.OpPing, []byte("hello")), "hello"},
	}
	for _, c := range cases {
		cs, fc := wsFakeConn(t)
		buf := make([]byte, len(c.in))
		step := func() {
			copy(buf, c.in) // the server unmasks in place
			fc.in = buf
			fc.out = fc.out[:0]
			if cs.traffic() != gnet.None {
				t.Fatalf("%s: connection closed", c.name)
			}
		}
		step()
		if !bytes.Contains(fc.out, []byte(c.want)) || len(fc.in) != 0 || (c.want == "" && len(fc.out) != 0) {
			t.Fatalf("%s: out %q, left %q", c.name, fc.out, fc.in)
		}
		serverFrames(t, fc.out)
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("%s: %v allocs per message, want 0", c.name, got)
		}
	}
}

// TestPush_zeroAllocs: a server message sent with Conn.Send — the
// connection's, or a call's DirectConn — and written by the loop
// allocates nothing in steady state, over a stream and over a WebSocket.
func TestPush_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	msg := []byte(`{"jsonrpc":"2.0","method":"tick","params":{"n":1}}`)
	for _, c := range []struct{ ws, direct bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		ws := c.ws
		var cs *conn
		var fc *fakeConn
		if ws {
			cs, fc = wsFakeConn(t)
		} else {
			cs, fc = newFakeConn(t)
			cs.use(newStreamCodec())
		}
		var send handler.Conn = cs
		if c.direct {
			send = cs.call.Conn // the call's DirectConn
			if _, ok := send.(handler.DirectConn); !ok {
				t.Fatalf("the call's Conn %T is not a DirectConn", send)
			}
		}
		step := func() {
			fc.out = fc.out[:0]
			if err := send.Send(msg); err != nil {
				t.Fatal(err)
			}
			cs.traffic()
			if !bytes.Contains(fc.out, msg) || cs.mail.queued.Load() != 0 {
				t.Fatalf("out %q, queued %d", fc.out, cs.mail.queued.Load())
			}
		}
		step()
		if got := testing.AllocsPerRun(500, step); got != 0 {
			t.Errorf("websocket %v, direct %v: %v allocs per pushed message, want 0", ws, c.direct, got)
		}
	}
}

// allocCase is a request assertNoAllocsOnConns sends: its bytes, a text
// its reply holds, and whether it runs on a worker.
type allocCase struct {
	name, in, want string
	worker         bool
}

// postOf is an HTTP/1.1 POST of body.
func postOf(body string) string {
	return "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

// add42 is the call of the allocation tests' bursts.
const add42 = `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`

// assertNoAllocsOnConns sends each case on one HTTP connection of tab
// (its engine given a worker pool of its own), then bursts of 16
// pipelined add42 calls on a stream, and checks that none allocates.
func assertNoAllocsOnConns(t *testing.T, tab *handler.Table, cases []allocCase) {
	t.Helper()
	cs, fc := newFakeConnOf(t, tab)
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	for _, c := range cases {
		assertRequestNoAllocs(t, cs, fc, c.name, c.in, c.worker, c.want)
	}
	scs, sfc := newFakeConnOf(t, tab)
	in := bytes.Repeat([]byte(add42+"\n"), 16)
	step := func() {
		sfc.in, sfc.out = in, sfc.out[:0]
		scs.traffic()
	}
	step()
	if n := bytes.Count(sfc.out, []byte(`"result":42`)); n != 16 {
		t.Fatalf("stream: %d replies in %q", n, sfc.out)
	}
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("stream pipelined 16: %v allocs per burst, want 0", got)
	}
}

// TestConn_zeroAllocsHealthWithReady: the health check with a readiness
// check that passes allocates nothing, and neither does its 503 after
// SetNotReady (the body is made once, by SetNotReady).
func TestConn_zeroAllocsHealthWithReady(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	demo.Register(tab)
	cs, fc := newFakeConnOf(t, tab, WithReady(func() error { return nil }), WithLogger(slog.New(slog.DiscardHandler)))
	const get = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
	assertRequestNoAllocs(t, cs, fc, "ready", get, false, "200 OK", `{"status":"ok"}`)
	cs.e.SetNotReady("warming up")
	assertRequestNoAllocs(t, cs, fc, "not ready", get, false, "503 Service Unavailable", `{"status":"not_ready","reason":"warming up"}`)
}
