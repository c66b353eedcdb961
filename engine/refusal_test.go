package engine_test

// Tests of the access log over real sockets (refusal.go): the records of
// calls (their ids and principal) and of the refusals before JSON-RPC —
// 401, 403 for a Host and an Origin, 413, 431, a stream the Authorizer
// refused, a message over the limit, a connection refused as accepted —
// read back from a JSON handler. Helpers are prefixed rf.

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// rfLog is an access log's JSON output, read back record by record.
type rfLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *rfLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// take waits until n records were written (or a few seconds passed),
// and returns those written, decoded, forgetting them.
func (l *rfLog) take(t testing.TB, n int) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		lines := bytes.Count(l.buf.Bytes(), []byte("\n"))
		l.mu.Unlock()
		if lines >= n || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(10 * time.Millisecond) // any record past the n expected
	l.mu.Lock()
	defer l.mu.Unlock()
	var recs []map[string]any
	dec := json.NewDecoder(&l.buf)
	dec.UseNumber()
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("a record that is not JSON: %v", err)
		}
		recs = append(recs, r)
	}
	l.buf.Reset()
	return recs
}

// rfTable is the demo table logging every message, and every refusal,
// to a JSON handler.
func rfTable() (*handler.Table, *rfLog) {
	l := &rfLog{}
	tab := handler.NewTable(handler.WithLogger(quiet()),
		handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.NewJSONHandler(l, nil)), Sample: 1}))
	demo.Register(tab)
	return tab, l
}

// rfCheck asserts that rec has the attributes of want, with these
// values ("*": any), and none of absent.
func rfCheck(t testing.TB, what string, rec map[string]any, want map[string]string, absent ...string) {
	t.Helper()
	for k, v := range want {
		got, ok := rec[k]
		if !ok {
			t.Errorf("%s: no %s in %v", what, k, rec)
			continue
		}
		if s := rfText(got); v != "*" && s != v {
			t.Errorf("%s: %s %s, want %s (record %v)", what, k, s, v, rec)
		}
	}
	for _, k := range absent {
		if v, ok := rec[k]; ok {
			t.Errorf("%s: %s %v, want none (record %v)", what, k, v, rec)
		}
	}
}

// rfText is a decoded JSON value as its JSON text.
func rfText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const rfKey = "0123456789abcdef0123456789abcdef"

// TestAccessLog_callRecordsOverHTTP: over a real socket, a call's record
// has its string id as the string the client sent — not its JSON text
// quoted again ("id":"\"long\"") — a number id as a number, its duration
// in milliseconds, and the principal the API key names.
func TestAccessLog_callRecordsOverHTTP(t *testing.T) {
	tab, l := rfTable()
	keys := auth.NewKeys(map[string]handler.Grants{rfKey: nil})
	_, addr, _ := startEngine(t, tab, engine.WithAuthorize(keys.Authorize))
	bearer := "Authorization: Bearer " + rfKey + "\r\n"
	resps := rawHTTP(t, addr, post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"long"}`, bearer)+
		post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":7}`, bearer)+
		post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"a\"b\u00e9"}`, bearer), 3)
	if len(resps) != 3 {
		t.Fatalf("%d responses, want 3", len(resps))
	}
	recs := l.take(t, 3)
	if len(recs) != 3 {
		t.Fatalf("%d records %v, want 3", len(recs), recs)
	}
	principal := strconv.Quote(auth.KeyName(rfKey))
	for i, id := range []string{`"long"`, `7`, `"a\"bé"`} {
		rfCheck(t, "call "+id, recs[i], map[string]string{
			"msg": `"jetrpc: call"`, "method": `"add"`, "id": id, "code": "0", "duration_ms": "*",
			"transport": `"http"`, "remote": "*", "principal": principal,
		}, "duration")
		if _, ok := recs[i]["duration_ms"].(json.Number); !ok {
			t.Errorf("duration_ms %v: not a number", recs[i]["duration_ms"])
		}
	}
}

// TestAccessLog_refusalsOverHTTP: the HTTP refusals before JSON-RPC are
// logged — they were not at all — with their status, a reason word and
// the caller's fields: a request without a key (401), one naming a Host
// not allowed (403), a body over the limit by its Content-Length and
// once decoded from chunks (413: the latter after the key was accepted,
// so with its principal), a head over the limit (431), a WebSocket
// upgrade from an Origin not allowed (403). A refusal on a connection
// whose last request was authorized does not carry that one's principal.
func TestAccessLog_refusalsOverHTTP(t *testing.T) {
	tab, l := rfTable()
	keys := auth.NewKeys(map[string]handler.Grants{rfKey: nil})
	_, addr, _ := startEngine(t, tab, engine.WithAuthorize(keys.Authorize), engine.WithHosts("localhost", "x"),
		engine.WithMaxMessageSize(1024), engine.WithMaxHeaderSize(2048), engine.WithCORS("https://app.example"))
	bearer := "Authorization: Bearer " + rfKey + "\r\n"
	principal := strconv.Quote(auth.KeyName(rfKey))
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 2000) + `"],"id":1}`
	chunked := "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + bearer + "Transfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(big)), 16) + "\r\n" + big + "\r\n0\r\n\r\n"
	for _, c := range []struct {
		name    string
		req     string
		status  int
		want    map[string]string
		absent  []string
		records int // the call records logged before the refusal
	}{
		{"no key", post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, ""), 401,
			map[string]string{"reason": `"unauthorized"`}, []string{"principal"}, 0},
		{"a wrong key", post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "Authorization: Bearer nope\r\n"), 401,
			map[string]string{"reason": `"unauthorized"`}, []string{"principal"}, 0},
		{"a Host not allowed, after an authorized call", post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, bearer) +
			strings.Replace(post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`, bearer), "Host: x", "Host: evil.example", 1), 403,
			map[string]string{"reason": `"forbidden_host"`}, []string{"principal"}, 1},
		{"a body over the limit", post(big, bearer), 413,
			map[string]string{"reason": `"body_too_large"`}, []string{"principal"}, 0},
		{"a chunked body over the limit", chunked, 413,
			map[string]string{"reason": `"body_too_large"`, "principal": principal}, nil, 0},
		{"a head over the limit", "POST / HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 4096) + "\r\n\r\n", 431,
			map[string]string{"reason": `"head_too_large"`}, []string{"principal"}, 0},
		{"a key in a POST's URL", strings.Replace(post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, ""), "POST / ", "POST /?access_token="+rfKey+" ", 1), 401,
			map[string]string{"reason": `"token_in_url"`}, []string{"principal"}, 0},
		{"a call from an Origin not allowed", post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, bearer+"Origin: https://evil.example\r\n"), 403,
			map[string]string{"reason": `"forbidden_origin"`}, []string{"principal"}, 0},
		{"a WebSocket upgrade from an Origin not allowed", "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: https://evil.example\r\n\r\n", 403,
			map[string]string{"reason": `"forbidden_origin"`}, []string{"principal"}, 0},
	} {
		resps := rawHTTP(t, addr, c.req, c.records+1)
		if len(resps) != c.records+1 || resps[c.records].StatusCode != c.status {
			t.Errorf("%s: %d responses, want %d, the last %d", c.name, len(resps), c.records+1, c.status)
			continue
		}
		recs := l.take(t, c.records+1)
		if len(recs) != c.records+1 {
			t.Errorf("%s: %d records %v, want %d", c.name, len(recs), recs, c.records+1)
			continue
		}
		want := map[string]string{"msg": `"jetrpc: refused"`, "level": `"INFO"`, "status": strconv.Itoa(c.status), "transport": `"http"`, "remote": "*"}
		for k, v := range c.want {
			want[k] = v
		}
		rfCheck(t, c.name, recs[c.records], want, append(c.absent, "method", "id")...)
		if c.records > 0 {
			rfCheck(t, c.name+": the call before", recs[0], map[string]string{"msg": `"jetrpc: call"`, "principal": principal})
		}
	}
}

// TestAccessLog_refusalBehindProxy: behind a trusted proxy, a refusal
// from a head names the client that head's forwarding field names — not
// the one of the connection's request before it.
func TestAccessLog_refusalBehindProxy(t *testing.T) {
	tab, l := rfTable()
	proxies, err := httprules.ParseProxies("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	_, addr, _ := startEngine(t, tab, engine.WithTrustedProxies(proxies), engine.WithHosts("x"))
	resps := rawHTTP(t, addr, post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, "X-Forwarded-For: 198.51.100.1\r\n")+
		"GET / HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-For: 198.51.100.2\r\n\r\n", 2)
	if len(resps) != 2 || resps[1].StatusCode != http.StatusForbidden {
		t.Fatalf("%d responses, want 2, the second 403", len(resps))
	}
	recs := l.take(t, 2)
	if len(recs) != 2 {
		t.Fatalf("%d records %v, want 2", len(recs), recs)
	}
	rfCheck(t, "call", recs[0], map[string]string{"msg": `"jetrpc: call"`, "client": `"198.51.100.1"`})
	rfCheck(t, "refusal", recs[1], map[string]string{"msg": `"jetrpc: refused"`, "reason": `"forbidden_host"`, "client": `"198.51.100.2"`})
}

// TestAccessLog_refusalsOfStreamsAndConnections: a stream connection
// the Authorizer refuses, a stream message and a WebSocket message over
// the limit, and a connection refused as it is accepted are logged too,
// without a status (none was sent).
func TestAccessLog_refusalsOfStreamsAndConnections(t *testing.T) {
	tab, l := rfTable()
	keys := auth.NewKeys(map[string]handler.Grants{rfKey: nil})
	_, addr, _ := startEngine(t, tab, engine.WithAuthorize(keys.Authorize))
	s := dialStream(t, "tcp", addr)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
	if line := s.line(t); !bytes.Contains(line, []byte("-32003")) {
		t.Fatalf("a stream without a key: %s", line)
	}
	recs := l.take(t, 1)
	if len(recs) != 1 {
		t.Fatalf("stream refused: %d records %v, want 1", len(recs), recs)
	}
	rfCheck(t, "stream refused", recs[0], map[string]string{"msg": `"jetrpc: refused"`, "reason": `"unauthorized"`, "transport": `"stream"`, "remote": "*"}, "status", "principal")

	tab, l = rfTable()
	_, addr, _ = startEngine(t, tab, engine.WithMaxMessageSize(1024))
	s = dialStream(t, "tcp", addr)
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("x", 2000)+`"],"id":1}`))
	s.line(t)
	ws := dialWS(t, addr, nil)
	_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"echo","params":["`+strings.Repeat("x", 2000)+`"],"id":1}`))
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := ws.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("a WebSocket message over the limit: %v", err)
	}
	recs = l.take(t, 2)
	if len(recs) != 2 {
		t.Fatalf("messages over the limit: %d records %v, want 2", len(recs), recs)
	}
	rfCheck(t, "stream message", recs[0], map[string]string{"msg": `"jetrpc: refused"`, "reason": `"message_too_large"`, "transport": `"stream"`}, "status")
	rfCheck(t, "WebSocket message", recs[1], map[string]string{"msg": `"jetrpc: refused"`, "reason": `"message_too_large"`, "transport": `"websocket"`}, "status")

	tab, l = rfTable()
	_, addr, _ = startEngine(t, tab, engine.WithAcceptConn(func(net.Addr) bool { return false }))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.ReadAll(c)
	recs = l.take(t, 1)
	if len(recs) != 1 {
		t.Fatalf("a connection refused: %d records %v, want 1", len(recs), recs)
	}
	rfCheck(t, "connection refused", recs[0], map[string]string{"msg": `"jetrpc: refused"`, "reason": `"address_refused"`, "remote": strconv.Quote(c.LocalAddr().String())}, "status", "transport")
}

// TestAccessLog_refusalsSampled: refusals are sampled with the calls:
// with Sample 0 and a slow-call threshold (every refusal takes no time)
// none is logged.
func TestAccessLog_refusalsSampled(t *testing.T) {
	l := &rfLog{}
	tab := handler.NewTable(handler.WithLogger(quiet()),
		handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.NewJSONHandler(l, nil)), Slow: time.Nanosecond}))
	demo.Register(tab)
	keys := auth.NewKeys(map[string]handler.Grants{rfKey: nil})
	_, addr, _ := startEngine(t, tab, engine.WithAuthorize(keys.Authorize))
	if resps := rawHTTP(t, addr, post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, ""), 1); len(resps) != 1 || resps[0].StatusCode != http.StatusUnauthorized {
		t.Fatalf("responses %v, want one 401", resps)
	}
	if recs := l.take(t, 0); len(recs) != 0 { // a record would have been written before the reply
		t.Errorf("Sample 0: logged %v", recs)
	}
}
