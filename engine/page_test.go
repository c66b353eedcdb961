package engine_test

// Tests of pages (page.go): documents served on HTTP GET beside
// JSON-RPC, made on a worker and answered in the connection's reply
// order, over loopback sockets.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// pageBody is the deterministic body of n bytes a test page serves.
func pageBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// fixedPage serves pageBody(n) at path.
func fixedPage(path string, n int) engine.Page {
	body := pageBody(n)
	return engine.Page{Path: path, ContentType: "text/plain", Append: func(dst []byte) []byte { return append(dst, body...) }}
}

// pageConn is a raw HTTP/1.1 client connection reading responses in
// order.
type pageConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialPage(t *testing.T, addr string) *pageConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &pageConn{c: c, r: bufio.NewReaderSize(c, 1<<16)}
}

func (p *pageConn) write(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.c, s); err != nil {
		t.Fatal(err)
	}
}

// read reads one response, its body whole; method is the request's.
func (p *pageConn) read(t *testing.T, method string) (*http.Response, string) {
	t.Helper()
	_ = p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(p.r, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading a response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading a body: %v", err)
	}
	return resp, string(b)
}

// expectClosed fails unless the server closes the connection with
// nothing more to read (expectEOF).
func (p *pageConn) expectClosed(t *testing.T) {
	t.Helper()
	expectEOF(t, p.c, p.r)
}

func getPage(path, extra string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n"
}

func rpcCall(method string, params string, id int) string {
	return post(`{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`,"id":`+strconv.Itoa(id)+`}`, "")
}

// TestPage_contentLengthIsBodyLength: the length is put in the head
// after the body is made, moving the body; every size, whatever its
// number of digits, is framed exactly, and the next response on the
// connection parses.
func TestPage_contentLengthIsBodyLength(t *testing.T) {
	sizes := []int{0, 1, 9, 10, 99, 100, 999, 1000, 4095, 4096, 65535, 65536, 100000, 1 << 20}
	var opts []engine.Option
	for _, n := range sizes {
		opts = append(opts, engine.WithPage(fixedPage("/p"+strconv.Itoa(n), n)))
	}
	tab := bigReplies()
	_, tcp, _ := startEngine(t, tab, opts...)
	pc := dialPage(t, tcp)
	for round := range 2 { // the second time, on pooled jobs that held a reply
		for _, n := range sizes {
			pc.write(t, getPage("/p"+strconv.Itoa(n), "")+rpcCall("add", "[1,2]", n))
			resp, body := pc.read(t, "GET")
			if resp.StatusCode != 200 || resp.ContentLength != int64(n) || body != string(pageBody(n)) {
				t.Fatalf("round %d, %d bytes: %s, Content-Length %d, body of %d bytes (equal %v)",
					round, n, resp.Status, resp.ContentLength, len(body), body == string(pageBody(n)))
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
				t.Errorf("%d bytes: Content-Type %q", n, ct)
			}
			if resp, body := pc.read(t, "POST"); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","result":3,"id":`+strconv.Itoa(n)+`}` {
				t.Fatalf("the call after the %d-byte page: %s %q", n, resp.Status, body)
			}
		}
	}
}

// TestPage_largeBody: a body larger than the pooled buffers, grown by
// Append, comes whole.
func TestPage_largeBody(t *testing.T) {
	p := engine.Page{Path: "/dst", ContentType: "text/plain", Append: func(dst []byte) []byte {
		dst = append(dst, "hello"...)
		return append(dst, strings.Repeat("!", 70000)...) // past the pooled buffer: dst grows
	}}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(p))
	pc := dialPage(t, tcp)
	pc.write(t, getPage("/dst", ""))
	resp, body := pc.read(t, "GET")
	if resp.StatusCode != 200 || body != "hello"+strings.Repeat("!", 70000) {
		t.Fatalf("%s: %d bytes, starts %q", resp.Status, len(body), body[:min(len(body), 20)])
	}
}

// TestPage_pipelinedInRequestOrder: a page between calls on one
// connection — a slow page between inline calls, a page behind a call on
// a worker — is answered in request order.
func TestPage_pipelinedInRequestOrder(t *testing.T) {
	slow := engine.Page{Path: "/slow", ContentType: "text/plain", Append: func(dst []byte) []byte {
		time.Sleep(50 * time.Millisecond)
		return append(dst, "slow page"...)
	}}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(slow), engine.WithPage(fixedPage("/fast", 5)))
	pc := dialPage(t, tcp)
	pc.write(t, rpcCall("add", "[1,1]", 1)+getPage("/slow", "")+rpcCall("add", "[1,2]", 2)+
		rpcCall("sleep", "[40]", 3)+getPage("/fast", "")+rpcCall("add", "[2,2]", 4)+getPage("/slow?x=1&y", "")+rpcCall("add", "[2,3]", 5))
	want := []struct{ method, body string }{
		{"POST", `{"jsonrpc":"2.0","result":2,"id":1}`},
		{"GET", "slow page"},
		{"POST", `{"jsonrpc":"2.0","result":3,"id":2}`},
		{"POST", `{"jsonrpc":"2.0","result":40,"id":3}`},
		{"GET", "abcde"},
		{"POST", `{"jsonrpc":"2.0","result":4,"id":4}`},
		{"GET", "slow page"},
		{"POST", `{"jsonrpc":"2.0","result":5,"id":5}`},
	}
	for i, w := range want {
		resp, body := pc.read(t, w.method)
		if resp.StatusCode != 200 || body != w.body {
			t.Fatalf("response %d: %s %q, want 200 %q", i, resp.Status, body, w.body)
		}
	}
}

// TestPage_manyPipelinedPastMaxInFlight: more pages pipelined than
// MaxInFlight are all answered, in order.
func TestPage_manyPipelinedPastMaxInFlight(t *testing.T) {
	var n atomic.Int64
	counter := engine.Page{Path: "/n", ContentType: "text/plain", Append: func(dst []byte) []byte {
		return strconv.AppendInt(dst, n.Add(1), 10)
	}}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(counter), engine.WithMaxInFlight(2))
	pc := dialPage(t, tcp)
	var req strings.Builder
	for range 50 {
		req.WriteString(getPage("/n", ""))
	}
	pc.write(t, req.String())
	seen := map[string]bool{}
	for i := range 50 {
		resp, body := pc.read(t, "GET")
		if resp.StatusCode != 200 || seen[body] {
			t.Fatalf("response %d: %s %q (seen before: %v)", i, resp.Status, body, seen[body])
		}
		seen[body] = true
	}
}

// TestPage_connectionHeaders: Connection: close on a page request closes
// the connection after the page; HTTP/1.0 closes unless it asks for
// keep-alive; a GET with a body is answered, then the connection closes
// (its body is not read as a request).
func TestPage_connectionHeaders(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithPage(fixedPage("/p", 12)))
	t.Run("close", func(t *testing.T) {
		pc := dialPage(t, tcp)
		pc.write(t, getPage("/p", "Connection: close\r\n"))
		resp, body := pc.read(t, "GET")
		if resp.StatusCode != 200 || body != string(pageBody(12)) || !resp.Close {
			t.Fatalf("%s %q, Close %v", resp.Status, body, resp.Close)
		}
		if !waitClosed(pc.c, 5*time.Second) {
			t.Fatal("left open after Connection: close")
		}
	})
	t.Run("HTTP/1.0", func(t *testing.T) {
		pc := dialPage(t, tcp)
		pc.write(t, "GET /p HTTP/1.0\r\n\r\n")
		resp, body := pc.read(t, "GET")
		if resp.StatusCode != 200 || body != string(pageBody(12)) || !resp.Close {
			t.Fatalf("%s %q, Close %v", resp.Status, body, resp.Close)
		}
		if !waitClosed(pc.c, 5*time.Second) {
			t.Fatal("HTTP/1.0 left open")
		}
	})
	t.Run("HTTP/1.0 keep-alive", func(t *testing.T) {
		pc := dialPage(t, tcp)
		for i := range 3 {
			pc.write(t, "GET /p HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
			resp, body := pc.read(t, "GET")
			if resp.StatusCode != 200 || body != string(pageBody(12)) || resp.Close ||
				!strings.EqualFold(resp.Header.Get("Connection"), "keep-alive") {
				t.Fatalf("request %d: %s %q, Close %v, Connection %q", i, resp.Status, body, resp.Close, resp.Header.Get("Connection"))
			}
		}
	})
	t.Run("GET with a body", func(t *testing.T) {
		pc := dialPage(t, tcp)
		smuggled := rpcCall("add", "[1,2]", 9)
		pc.write(t, "GET /p HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(smuggled))+"\r\n\r\n"+smuggled)
		resp, body := pc.read(t, "GET")
		if resp.StatusCode != 200 || body != string(pageBody(12)) || !resp.Close {
			t.Fatalf("%s %q, Close %v", resp.Status, body, resp.Close)
		}
		_ = pc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, _ := io.ReadAll(pc.r)
		if len(rest) != 0 {
			t.Fatalf("after the page: %q (the body was served as a request)", rest)
		}
	})
}

// TestPage_onlyGETOfItsPath: the query is ignored; other paths, other
// methods are not the page: HEAD is refused, a POST of JSON to the page's
// path is a JSON-RPC call.
func TestPage_onlyGETOfItsPath(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithPage(fixedPage("/metrics", 7)))
	pc := dialPage(t, tcp)
	for _, target := range []string{"/metrics?", "/metrics?a=b", "/metrics?name[]=x&y=%20"} {
		pc.write(t, getPage(target, ""))
		if resp, body := pc.read(t, "GET"); resp.StatusCode != 200 || body != "abcdefg" {
			t.Errorf("GET %s: %s %q", target, resp.Status, body)
		}
	}
	for _, target := range []string{"/metrics/", "/metricsx", "/METRICS", "/metric", "metrics", "/metrics#x"} {
		pc.write(t, getPage(target, ""))
		if resp, _ := pc.read(t, "GET"); resp.StatusCode == 200 {
			t.Errorf("GET %s: served the page", target)
		}
	}
	pc.write(t, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 54\r\n\r\n"+
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	if resp, body := pc.read(t, "POST"); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Errorf("POST /metrics: %s %q, want the call's reply", resp.Status, body)
	}
	pc.write(t, getPage("/metrics", ""))
	if resp, body := pc.read(t, "GET"); resp.StatusCode != 200 || body != "abcdefg" {
		t.Errorf("GET after the others: %s %q", resp.Status, body)
	}
}

// TestPage_headAnsweredWithoutBody: HEAD of a page's path is not served
// the page, and its answer has no body (RFC 9110 9.3.2), so that a
// keep-alive client reads the next response where it begins.
//
// HEAD /metrics got a 405 with the body "JSON-RPC requires POST\n": a client, which reads no body after HEAD, took it for the next status line.
func TestPage_headAnsweredWithoutBody(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithPage(fixedPage("/metrics", 7)))
	pc := dialPage(t, tcp)
	pc.write(t, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"+getPage("/metrics", ""))
	if resp, _ := pc.read(t, "HEAD"); resp.StatusCode == 200 && resp.ContentLength != 7 {
		t.Errorf("HEAD: %s, Content-Length %d", resp.Status, resp.ContentLength)
	}
	_ = pc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	next, err := http.ReadResponse(pc.r, nil)
	if err != nil {
		t.Fatalf("the response after HEAD's: %v (HEAD's answer had a body)", err)
	}
	if b, _ := io.ReadAll(next.Body); next.StatusCode != 200 || string(b) != "abcdefg" {
		t.Fatalf("GET after HEAD: %s %q", next.Status, b)
	}
}

// TestPage_panicAnswers500: a page whose Append panics is answered 500;
// the connection and the others go on.
func TestPage_panicAnswers500(t *testing.T) {
	bad := engine.Page{Path: "/bad", ContentType: "text/plain", Append: func(dst []byte) []byte {
		dst = append(dst, "half a body"...)
		panic("page broken")
	}}
	good := engine.Page{Path: "/good", ContentType: "text/plain", Append: func(dst []byte) []byte {
		return append(dst, "fine"...)
	}}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(bad), engine.WithPage(good))
	pc := dialPage(t, tcp)
	pc.write(t, rpcCall("add", "[1,2]", 1)+getPage("/bad", "")+rpcCall("add", "[2,2]", 2)+getPage("/good", ""))
	if resp, body := pc.read(t, "POST"); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Fatalf("first: %s %q", resp.Status, body)
	}
	resp, body := pc.read(t, "GET")
	if resp.StatusCode != 500 || strings.Contains(body, "half a body") {
		t.Fatalf("the panicking page: %s %q, want 500", resp.Status, body)
	}
	if resp, body := pc.read(t, "POST"); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","result":4,"id":2}` {
		t.Fatalf("after the 500: %s %q", resp.Status, body)
	}
	if resp, body := pc.read(t, "GET"); resp.StatusCode != 200 || body != "fine" {
		t.Fatalf("the page again: %s %q", resp.Status, body)
	}
	other := dialPage(t, tcp)
	other.write(t, rpcCall("add", "[3,3]", 3))
	if resp, body := other.read(t, "POST"); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","result":6,"id":3}` {
		t.Fatalf("another connection: %s %q", resp.Status, body)
	}
}

// TestPage_busyAnswers503: with the one worker taken, a page is answered
// 503 at once, in order; once it is free, the page is served.
func TestPage_busyAnswers503(t *testing.T) {
	release := make(chan struct{})
	tcp, holder := startHolding(t, release, 1)
	pc := dialPage(t, tcp)
	pc.write(t, rpcCall("add", "[1,2]", 2)+getPage("/p", "")+rpcCall("add", "[2,2]", 3))
	if resp, body := pc.read(t, "POST"); resp.StatusCode != 200 || !strings.Contains(body, `"result":3`) {
		t.Fatalf("first: %s %q", resp.Status, body)
	}
	if resp, _ := pc.read(t, "GET"); resp.StatusCode != 503 {
		t.Fatalf("the page with the worker taken: %s, want 503", resp.Status)
	}
	if resp, body := pc.read(t, "POST"); resp.StatusCode != 200 || !strings.Contains(body, `"result":4`) {
		t.Fatalf("after the 503: %s %q", resp.Status, body)
	}
	close(release)
	if resp, body := holder.read(t, "POST"); resp.StatusCode != 200 || !strings.Contains(body, `"result":1`) {
		t.Fatalf("hold: %s %q", resp.Status, body)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		pc.write(t, getPage("/p", ""))
		resp, body := pc.read(t, "GET")
		if resp.StatusCode == 200 && body == "abc" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page once the worker is free: %s %q", resp.Status, body)
		}
	}
}

// TestPage_busyBehindHeldReply: a page answered 503 behind a reply
// still on a worker waits for it: the responses keep request order.
func TestPage_busyBehindHeldReply(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	_, pc := startHolding(t, release, 7)
	pc.write(t, getPage("/p", "")+rpcCall("add", "[1,2]", 2)+getPage("/p", "Connection: close\r\n"))
	time.Sleep(30 * time.Millisecond)
	free()
	for i, w := range []struct {
		method string
		status int
		body   string
	}{
		{"POST", 200, `{"jsonrpc":"2.0","result":7,"id":1}`},
		{"GET", 503, ""},
		{"POST", 200, `{"jsonrpc":"2.0","result":3,"id":2}`},
		{"GET", 0, ""}, // 503 or 200, whichever the worker allowed
	} {
		resp, body := pc.read(t, w.method)
		if w.status != 0 && resp.StatusCode != w.status || w.body != "" && body != w.body {
			t.Fatalf("response %d: %s %q, want %d %q", i, resp.Status, body, w.status, w.body)
		}
		if i == 3 && !resp.Close {
			t.Errorf("the last response, to Connection: close, does not say close")
		}
	}
	if !waitClosed(pc.c, 5*time.Second) {
		t.Error("left open after Connection: close")
	}
}

// TestPage_hostAndAuthorizer: a page passes the Host check and the
// Authorizer; refusals keep the connection's order.
func TestPage_hostAndAuthorizer(t *testing.T) {
	auth := func(m *handler.Meta) (handler.Grants, error) {
		switch m.Header("Authorization") {
		case "Bearer good":
			return handler.Grants{"*"}, nil
		case "Bearer user":
			return nil, handler.ErrAccessDenied
		}
		return nil, handler.ErrUnauthenticated
	}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(fixedPage("/p", 4)), engine.WithHosts("good.example"), engine.WithAuthorize(auth))
	pc := dialPage(t, tcp)
	get := func(host, token string) string {
		h := "GET /p HTTP/1.1\r\nHost: " + host + "\r\n"
		if token != "" {
			h += "Authorization: Bearer " + token + "\r\n"
		}
		return h + "\r\n"
	}
	pc.write(t, get("evil.example", "good")+get("good.example", "")+get("good.example", "user")+get("good.example", "good"))
	for i, want := range []int{403, 401, 403, 200} {
		resp, body := pc.read(t, "GET")
		if resp.StatusCode != want || want == 200 && body != "abcd" || want != 200 && body == "abcd" {
			t.Errorf("request %d: %s %q, want %d", i, resp.Status, body, want)
		}
	}
}

// TestPage_corsOrigin: a page to an allowed origin carries its CORS
// headers, as a call's reply does.
func TestPage_corsOrigin(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithPage(fixedPage("/p", 4)), engine.WithCORS("https://app.example"))
	pc := dialPage(t, tcp)
	pc.write(t, getPage("/p", "Origin: https://app.example\r\n"))
	resp, body := pc.read(t, "GET")
	if resp.StatusCode != 200 || body != "abcd" || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("%s %q, headers %v", resp.Status, body, resp.Header)
	}
}

// TestPage_concurrentScrapes: many clients get a page at once while
// calls run; every response is whole.
func TestPage_concurrentScrapes(t *testing.T) {
	big := pageBody(20000)
	p := engine.Page{Path: "/p", ContentType: "text/plain", Append: func(dst []byte) []byte {
		return append(dst, big...)
	}}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(p))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Go(func() {
			for i := range 20 {
				var resp *http.Response
				var err error
				if (g+i)%3 == 0 {
					resp, err = client.Post("http://"+tcp+"/", "application/json",
						strings.NewReader(`{"jsonrpc":"2.0","method":"sleep","params":[1],"id":1}`))
				} else {
					resp, err = client.Get("http://" + tcp + "/p")
				}
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					errs <- err
					return
				case resp.Request.Method == "GET" && (resp.StatusCode != 200 || string(b) != string(big)):
					errs <- fmt.Errorf("GET: %s, %d bytes", resp.Status, len(b))
					return
				case resp.Request.Method == "POST" && string(b) != `{"jsonrpc":"2.0","result":1,"id":1}`:
					errs <- fmt.Errorf("POST: %s %q", resp.Status, b)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPage_clientGoneWhileMade: a client that closes while its page is
// made, or half-closes after asking, costs nothing: the half-closed one
// still gets its page, and the connections are forgotten.
func TestPage_clientGoneWhileMade(t *testing.T) {
	gate := make(chan struct{})
	var made atomic.Int64
	slow := engine.Page{Path: "/slow", ContentType: "text/plain", Append: func(dst []byte) []byte {
		<-gate
		made.Add(1)
		return append(dst, "made"...)
	}}
	e, tcp, _ := startEngine(t, nil, engine.WithPage(slow))
	gone := dialPage(t, tcp)
	gone.write(t, getPage("/slow", "")+rpcCall("add", "[1,2]", 1))
	half := dialPage(t, tcp)
	half.write(t, rpcCall("add", "[1,2]", 2)+getPage("/slow", "")+rpcCall("add", "[2,2]", 3))
	time.Sleep(50 * time.Millisecond)
	gone.c.Close()
	_ = half.c.(*net.TCPConn).CloseWrite()
	time.Sleep(50 * time.Millisecond)
	close(gate)
	for i, w := range []string{`{"jsonrpc":"2.0","result":3,"id":2}`, "made", `{"jsonrpc":"2.0","result":4,"id":3}`} {
		resp, body := half.read(t, map[bool]string{true: "GET", false: "POST"}[i == 1])
		if resp.StatusCode != 200 || body != w {
			t.Fatalf("half-closed client, response %d: %s %q, want %q", i, resp.Status, body, w)
		}
	}
	if !waitClosed(half.c, 5*time.Second) {
		t.Error("the half-closed connection was left open")
	}
	waitConns(t, e, 0)
	if made.Load() != 2 {
		t.Errorf("%d pages made, want 2", made.Load())
	}
}

// TestPage_thenUpgrade: a WebSocket upgrade behind a page waits for it,
// then the connection speaks WebSocket.
func TestPage_thenUpgrade(t *testing.T) {
	slow := engine.Page{Path: "/slow", ContentType: "text/plain", Append: func(dst []byte) []byte {
		time.Sleep(30 * time.Millisecond)
		return append(dst, "made"...)
	}}
	_, tcp, _ := startEngine(t, nil, engine.WithPage(slow))
	pc := dialPage(t, tcp)
	pc.write(t, getPage("/slow", "")+"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	if resp, body := pc.read(t, "GET"); resp.StatusCode != 200 || body != "made" {
		t.Fatalf("page: %s %q", resp.Status, body)
	}
	if resp, _ := pc.read(t, "GET"); resp.StatusCode != 101 {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	pc.write(t, string(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`), true)))
	if op, payload, err := readFrame(pc.r, pc.c); err != nil || op != 1 || string(payload) != `{"jsonrpc":"2.0","result":3,"id":2}` {
		t.Fatalf("over the WebSocket: %d %q %v", op, payload, err)
	}
}

// TestPage_whileStoppingOnlyTheLastSaysClose: a page and a call read
// before Stop are both answered while the engine stops; only the last
// response says Connection: close (one that said it before another
// followed would tell the client the call behind it never ran), and the
// connection closes after it.
func TestPage_whileStoppingOnlyTheLastSaysClose(t *testing.T) {
	gate := make(chan struct{})
	slow := engine.Page{Path: "/slow", ContentType: "text/plain", Append: func(dst []byte) []byte {
		<-gate
		return append(dst, "made"...)
	}}
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()), engine.WithPage(slow))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	pc := dialPage(t, e.Addrs()[0].String())
	pc.write(t, getPage("/slow", "")+rpcCall("sleep", "[100]", 1))
	time.Sleep(50 * time.Millisecond)
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- e.Stop(ctx)
	}()
	time.Sleep(50 * time.Millisecond) // Stop has begun: the engine drains
	close(gate)
	page, body := pc.read(t, "GET")
	call, _ := pc.read(t, "POST")
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if page.StatusCode != 200 || body != "made" {
		t.Fatalf("page: %s %q", page.Status, body)
	}
	if page.Close {
		t.Errorf("the page says Connection: close, and the call's reply followed it")
	}
	if !call.Close {
		t.Fatalf("the call's reply, the last while stopping, has no Connection: close")
	}
	pc.expectClosed(t)
}

// startHolding starts an engine with one worker and the page /p, and
// takes the worker with a call of "hold" on a connection of its own,
// which answers result once release is closed; it returns the address
// and that connection.
func startHolding(t *testing.T, release <-chan struct{}, result int) (string, *pageConn) {
	t.Helper()
	workers := pool.NewWorkers(1, 0)
	t.Cleanup(workers.Close)
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	entered := make(chan struct{}, 1)
	handler.Register(tab, "hold", func(context.Context, handler.Raw) (int, error) {
		entered <- struct{}{}
		<-release
		return result, nil
	})
	_, tcp, _ := startEngine(t, tab, engine.WithWorkers(workers), engine.WithPage(fixedPage("/p", 3)))
	holder := dialPage(t, tcp)
	holder.write(t, rpcCall("hold", "[]", 1))
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("hold never ran")
	}
	return tcp, holder
}
