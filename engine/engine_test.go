package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startEngine serves the demo methods on a TCP and a Unix listener.
func startEngine(t testing.TB, tab *handler.Table, opts ...engine.Option) (*engine.Engine, string, string) {
	t.Helper()
	if tab == nil {
		tab = handler.NewTable(handler.WithLogger(quiet()))
		demo.Register(tab)
	}
	sock := filepath.Join(t.TempDir(), "rpc.sock")
	opts = append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0", "unix://"+sock), engine.WithLogger(quiet())}, opts...)
	e := engine.New(tab, opts...)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	addrs := e.Addrs()
	return e, addrs[0].String(), addrs[1].String()
}

func vectors(t testing.TB) []demo.Vector {
	vs, err := demo.LoadVectors("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// streamClient is a newline-delimited JSON client.
type streamClient struct {
	c net.Conn
	r *bufio.Reader
}

func dialStream(t testing.TB, network, addr string) *streamClient {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &streamClient{c: c, r: bufio.NewReaderSize(c, 1<<16)}
}

func (s *streamClient) send(t testing.TB, msg []byte) {
	t.Helper()
	if _, err := s.c.Write(append(append([]byte(nil), msg...), '\n')); err != nil {
		t.Fatal(err)
	}
}

func (s *streamClient) line(t testing.TB) []byte {
	t.Helper()
	_ = s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := s.r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading a reply: %v (got %q)", err, l)
	}
	return l
}

const sentinel = `{"jsonrpc":"2.0","method":"add","params":[20,22],"id":"sentinel"}`

// TestVectors_stream runs every spec vector over TCP and over the Unix
// socket. A vector that must get no reply is followed by a sentinel
// request: its reply must be the next line.
func TestVectors_stream(t *testing.T) {
	_, tcp, unix := startEngine(t, nil)
	for _, nw := range []struct{ network, addr string }{{"tcp", tcp}, {"unix", unix}} {
		for _, v := range vectors(t) {
			t.Run(nw.network+"/"+v.File+"/"+v.Name, func(t *testing.T) {
				switch {
				case len(bytes.TrimSpace(v.Request)) == 0:
					t.Skip("an empty message does not exist on a stream: whitespace separates messages")
				case v.Name == "trailing-garbage" || v.Name == "two-values":
					t.Skip("on a stream several values are several messages (TestStream_sequence)")
				}
				s := dialStream(t, nw.network, nw.addr)
				// A first request fixes the protocol as a stream (a first
				// byte that is a letter means HTTP).
				s.send(t, []byte(sentinel))
				if got := s.line(t); !bytes.Contains(got, []byte(`"sentinel"`)) {
					t.Fatalf("sentinel: %s", got)
				}
				s.send(t, v.Request)
				if v.Response == nil {
					s.send(t, []byte(sentinel))
					if got := s.line(t); !bytes.Contains(got, []byte(`"sentinel"`)) {
						t.Fatalf("want no reply, got %s", got)
					}
					return
				}
				got := s.line(t)
				if err := demo.SameReply(got, v.Response); err != nil {
					t.Fatalf("%s\n%v", v.Note, err)
				}
			})
		}
	}
}

// TestVectors_HTTP runs every spec vector over HTTP with net/http's
// client.
func TestVectors_HTTP(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	client := &http.Client{Timeout: 10 * time.Second}
	for _, v := range vectors(t) {
		t.Run(v.File+"/"+v.Name, func(t *testing.T) {
			resp, err := client.Post("http://"+tcp+"/", "application/json", bytes.NewReader(v.Request))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if v.Response == nil {
				if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
					t.Fatalf("want 204 and no body, got %d %q", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Date") == "" {
				t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
			}
			if err := demo.SameReply(body, v.Response); err != nil {
				t.Fatalf("%s\n%v", v.Note, err)
			}
		})
	}
}

// rawHTTP sends raw bytes on a new connection and reads all responses
// until the server closes or n responses were read.
func rawHTTP(t testing.TB, addr string, req string, n int) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var out []*http.Response
	for len(out) < n {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		out = append(out, resp)
	}
	return out
}

func bodyOf(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

func post(body string, extra string) string {
	return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra + "Content-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
}

// TestHTTP_pipelined100: 100 requests in one write are answered in order.
func TestHTTP_pipelined100(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	var b strings.Builder
	for i := range 100 {
		method := "add"
		if i%10 == 5 {
			method = "sleep" // a blocking one now and then: order must hold
		}
		params := fmt.Sprintf("[%d,1]", i)
		if method == "sleep" {
			params = "[1]"
		}
		b.WriteString(post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"%s","params":%s,"id":%d}`, method, params, i), ""))
	}
	resps := rawHTTP(t, tcp, b.String(), 100)
	if len(resps) != 100 {
		t.Fatalf("%d responses", len(resps))
	}
	for i, r := range resps {
		if !strings.Contains(bodyOf(r), fmt.Sprintf(`"id":%d}`, i)) {
			t.Fatalf("response %d out of order: %s", i, bodyOf(r))
		}
	}
}

// TestHTTP_oneByteAtATime delivers a request a byte at a time.
func TestHTTP_oneByteAtATime(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := post(`{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":1}`, "")
	for i := range len(req) {
		if _, err := c.Write([]byte{req[i]}); err != nil {
			t.Fatal(err)
		}
		if i%16 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := bodyOf(resp); got != `{"jsonrpc":"2.0","result":19,"id":1}` {
		t.Fatal(got)
	}
}

// TestStream_oneByteAtATime does the same on a stream.
func TestStream_oneByteAtATime(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	msg := `{"jsonrpc":"2.0","method":"echo","params":["a\"}]b"],"id":1}` + "\n"
	for i := range len(msg) {
		if _, err := s.c.Write([]byte{msg[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(s.line(t)); got != `{"jsonrpc":"2.0","result":["a\"}]b"],"id":1}`+"\n" {
		t.Fatal(got)
	}
}

// TestLargeMessage sends a 4 MiB message over HTTP and over a stream.
func TestLargeMessage(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	big := strings.Repeat("x", 4<<20)
	msg := `{"jsonrpc":"2.0","method":"echo","params":["` + big + `"],"id":1}`
	want := `{"jsonrpc":"2.0","result":["` + big + `"],"id":1}`
	resps := rawHTTP(t, tcp, post(msg, ""), 1)
	if len(resps) != 1 || bodyOf(resps[0]) != want {
		t.Fatalf("HTTP: %d responses", len(resps))
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(msg))
	if got := s.line(t); string(got) != want+"\n" {
		t.Fatalf("stream: %d bytes", len(got))
	}
}

// TestHTTP_statuses checks the HTTP-level answers.
func TestHTTP_statuses(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1000), engine.WithMaxHeaderSize(2000))
	add := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	cases := []struct {
		name, req string
		status    int
		closed    bool
	}{
		{"ok", post(add, ""), 200, false},
		{"notification", post(`{"jsonrpc":"2.0","method":"add","params":[1,2]}`, ""), 204, false},
		{"health", "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 200, false},
		{"get", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 405, false},
		{"put with body", "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 405, true},
		{"text/plain", "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}", 415, true},
		{"too large", post(strings.Repeat(" ", 1001), ""), 413, true},
		{"head too large", "POST / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 3000) + "\r\n\r\n", 431, true},
		{"malformed", "POST / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, true},
		{"TE and CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, true},
		{"duplicate CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400, true},
		{"gzip TE", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, true},
		{"HTTP/2.0", "POST / HTTP/2.0\r\n\r\n", 505, true},
		{"connection close", post(add, "Connection: close\r\n"), 200, true},
		{"http/1.0", "POST / HTTP/1.0\r\nContent-Length: " + fmt.Sprint(len(add)) + "\r\n\r\n" + add, 200, true},
		{"chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n" + add[:16] + "\r\n" + fmt.Sprintf("%x", len(add)-16) + "\r\n" + add[16:] + "\r\n0\r\n\r\n", 200, false},
	}
	for _, c := range cases {
		resps := rawHTTP(t, tcp, c.req+post(add, ""), 2)
		if len(resps) == 0 || resps[0].StatusCode != c.status {
			t.Errorf("%s: %d responses, first %v", c.name, len(resps), func() any {
				if len(resps) > 0 {
					return resps[0].Status
				}
				return nil
			}())
			continue
		}
		if c.status == 405 && resps[0].Header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q", c.name, resps[0].Header.Get("Allow"))
		}
		if c.status == 200 && c.name != "health" && bodyOf(resps[0]) != `{"jsonrpc":"2.0","result":3,"id":1}` {
			t.Errorf("%s: body %q", c.name, bodyOf(resps[0]))
		}
		// A kept connection answers the request that follows; a closed one
		// does not.
		if closed := len(resps) == 1; closed != c.closed {
			t.Errorf("%s: closed=%v, want %v", c.name, closed, c.closed)
		}
	}
}

// TestHTTP_expectContinue: the client waits for 100 Continue before
// sending the body.
func TestHTTP_expectContinue(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("%q %v", line, err)
	}
	if blank, _ := r.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("%q", blank)
	}
	io.WriteString(c, body)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || bodyOf(resp) != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Fatalf("%v", err)
	}
}

// TestStream_invalidJSONCloses: one -32700 reply, then the connection is
// closed after it was flushed.
func TestStream_invalidJSONCloses(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	for _, bad := range []string{`{"jsonrpc":"2.0","method":"add","params":[1,}`, `}`} {
		s := dialStream(t, "tcp", tcp)
		s.send(t, []byte(bad))
		got := s.line(t)
		if !bytes.Contains(got, []byte(`"code":-32700`)) {
			t.Fatalf("%s: %s", bad, got)
		}
		_ = s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := s.r.ReadByte(); err != io.EOF {
			t.Fatalf("%s: connection not closed: %v", bad, err)
		}
	}
}

// TestStream_tooLarge: a message over the limit is refused before it is
// all buffered, and the connection closed.
func TestStream_tooLarge(t *testing.T) {
	_, tcp, _ := startEngine(t, nil, engine.WithMaxMessageSize(1<<10))
	s := dialStream(t, "tcp", tcp)
	_, _ = s.c.Write([]byte(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 4096)))
	got := s.line(t)
	if !bytes.Contains(got, []byte(`"code":-32600`)) {
		t.Fatal(string(got))
	}
}

// TestManyConnections: 1,000 concurrent connections, half HTTP, half
// stream, each with a few requests.
func TestManyConnections(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(c)
			for k := range 3 {
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,%d],"id":%d}`, i, k, k)
				want := fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, i+k, k)
				if i%2 == 0 {
					io.WriteString(c, msg+"\n")
					line, err := r.ReadString('\n')
					if err != nil || line != want+"\n" {
						errs <- fmt.Errorf("stream %d: %q %v", i, line, err)
						return
					}
					continue
				}
				io.WriteString(c, post(msg, ""))
				resp, err := http.ReadResponse(r, nil)
				if err != nil || bodyOf(resp) != want {
					errs <- fmt.Errorf("http %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestBlockingDoesNotHoldInline: while a blocking method runs on one
// connection, an inline request on another connection — and a later
// inline request on the same stream — is answered first.
func TestBlockingDoesNotHoldInline(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	release := make(chan struct{})
	started := make(chan struct{})
	handler.Register(tab, "block", func(context.Context, struct{}) (string, error) {
		close(started)
		<-release
		return "late", nil
	})
	handler.Register(tab, "now", func(context.Context, struct{}) (string, error) { return "now", nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	a := dialStream(t, "tcp", tcp)
	a.send(t, []byte(`{"jsonrpc":"2.0","method":"block","id":1}`))
	<-started
	b := dialStream(t, "tcp", tcp)
	b.send(t, []byte(`{"jsonrpc":"2.0","method":"now","id":2}`))
	if got := string(b.line(t)); !strings.Contains(got, `"now"`) {
		t.Fatalf("other connection: %s", got)
	}
	a.send(t, []byte(`{"jsonrpc":"2.0","method":"now","id":3}`))
	if got := string(a.line(t)); !strings.Contains(got, `"id":3`) {
		t.Fatalf("same stream: the inline reply did not come first: %s", got)
	}
	close(release)
	if got := string(a.line(t)); !strings.Contains(got, `"late"`) {
		t.Fatalf("blocking reply: %s", got)
	}
}

// TestAllNotificationBatch: 204 over HTTP, nothing over a stream.
func TestAllNotificationBatch(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	batch := `[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]`
	resps := rawHTTP(t, tcp, post(batch, ""), 1)
	if len(resps) != 1 || resps[0].StatusCode != 204 || bodyOf(resps[0]) != "" {
		t.Fatalf("HTTP: %+v", resps)
	}
	s := dialStream(t, "tcp", tcp)
	s.send(t, []byte(batch))
	s.send(t, []byte(sentinel))
	if got := s.line(t); !bytes.Contains(got, []byte("sentinel")) {
		t.Fatalf("stream: %s", got)
	}
}

// TestStop_inFlight: Stop with requests in flight loses none of their
// replies.
func TestStop_inFlight(t *testing.T) {
	e, tcp, _ := startEngine(t, nil)
	const n = 20
	conns := make([]*streamClient, n)
	for i := range conns {
		conns[i] = dialStream(t, "tcp", tcp)
		conns[i].send(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":%d}`, i)))
	}
	hc, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	io.WriteString(hc, post(`{"jsonrpc":"2.0","method":"sleep","params":[200],"id":"h"}`, ""))
	time.Sleep(50 * time.Millisecond) // let them reach the workers
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(ctx) }()
	for i, s := range conns {
		if got := string(s.line(t)); got != fmt.Sprintf(`{"jsonrpc":"2.0","result":200,"id":%d}`+"\n", i) {
			t.Fatalf("conn %d: %q", i, got)
		}
	}
	_ = hc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(hc), nil)
	if err != nil || bodyOf(resp) != `{"jsonrpc":"2.0","result":200,"id":"h"}` {
		t.Fatalf("http: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", tcp); err == nil {
		t.Fatal("still accepting after Stop")
	}
}

// TestStream_sequence: values separated by any whitespace, or none, are
// messages of their own; garbage after a value is one -32700 and close.
func TestStream_sequence(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	_, _ = s.c.Write([]byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}` +
		"\r\n\t " + `[{"jsonrpc":"2.0","method":"add","params":[5,6],"id":3}] x`))
	for _, want := range []string{`"result":3,"id":1}`, `"result":7,"id":2}`, `[{"jsonrpc":"2.0","result":11,"id":3}]`, `"code":-32700`} {
		if got := string(s.line(t)); !strings.Contains(got, want) {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	_ = s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.r.ReadByte(); err != io.EOF {
		t.Fatalf("not closed: %v", err)
	}
}
