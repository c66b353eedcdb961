package engine_test

// Tests of the HTTP codec (http.go, httpwrite.go) over loopback sockets:
// pipelined requests on workers, reply order, reply heads written in
// place, chunked bodies, and the rules shared with net/http's adapter.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// rendezvous is a blocking method that returns only once n calls are
// running at the same time (or fails after 10 s): a connection whose
// requests ran one at a time would never get its replies.
func rendezvous(tab *handler.Table, n int) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	running := 0
	handler.Register(tab, "meet", func(ctx context.Context, p [1]int) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		running++
		cond.Broadcast()
		deadline := time.AfterFunc(10*time.Second, cond.Broadcast)
		defer deadline.Stop()
		start := time.Now()
		for running < n {
			if time.Since(start) >= 10*time.Second {
				return 0, errors.New("the other calls never came")
			}
			cond.Wait()
		}
		return p[0], nil
	})
}

// TestHTTP_pipelinedRunConcurrently: the requests pipelined on one HTTP
// connection run on workers at the same time — 8 calls that each wait
// for the 7 others all return — and their replies, and those of the
// inline calls between them, leave in request order. (An HTTP connection
// used to read no further while one of its requests was on a worker.)
func TestHTTP_pipelinedRunConcurrently(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	rendezvous(tab, 8)
	_, tcp, _ := startEngine(t, tab)
	var b strings.Builder
	var want []string
	for i := range 16 {
		if i%2 == 0 {
			b.WriteString(post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"meet","params":[%d],"id":%d}`, i, i), ""))
		} else {
			b.WriteString(post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"add","params":[%d,0],"id":%d}`, i, i), ""))
		}
		want = append(want, fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":%d}`, i, i))
	}
	resps := rawHTTP(t, tcp, b.String(), 16)
	if len(resps) != 16 {
		t.Fatalf("%d replies, want 16", len(resps))
	}
	for i, r := range resps {
		if got := bodyOf(r); r.StatusCode != 200 || got != want[i] {
			t.Fatalf("reply %d: %d %s, want %s", i, r.StatusCode, got, want[i])
		}
	}
}

// TestHTTP_orderWithRefusalsAndClose: replies held behind a request on a
// worker include the HTTP-level answers (405, the health check, 204 for a
// notification), and a request with Connection: close ends the
// connection after its reply, in order, whatever was sent after it.
func TestHTTP_orderWithRefusalsAndClose(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	req := post(`{"jsonrpc":"2.0","method":"sleep","params":[50],"id":1}`, "") +
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" +
		post(`{"jsonrpc":"2.0","method":"update","params":[1]}`, "") +
		post(`{"jsonrpc":"2.0","method":"sleep","params":[10],"id":2}`, "Connection: close\r\n") +
		post(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}`, "")
	resps := rawHTTP(t, tcp, req, 6)
	var got []string
	for _, r := range resps {
		got = append(got, strconv.Itoa(r.StatusCode)+" "+bodyOf(r))
	}
	want := []string{
		`200 {"jsonrpc":"2.0","result":50,"id":1}`,
		"405 JSON-RPC requires POST\n",
		`200 {"status":"ok"}`,
		"204 ",
		`200 {"jsonrpc":"2.0","result":10,"id":2}`,
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if !resps[4].Close {
		t.Fatal("the reply to Connection: close does not close")
	}
}

// TestHTTP_replyHeadsInPlace: an inline reply is written behind a head
// reserved from the loop's last reply length and moved only when its
// Content-Length needs another number of digits; replies that grow and
// shrink across 1 to 7 digits, and a notification's 204, all frame
// right.
func TestHTTP_replyHeadsInPlace(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	sizes := []int{0, 5, 95, 5, 995, 9995, 99995, 1_000_000, 3, 999_995, 30, 0}
	var b strings.Builder
	var want []string
	for i, n := range sizes {
		if n == 0 {
			b.WriteString(post(`{"jsonrpc":"2.0","method":"update"}`, ""))
			want = append(want, "")
			continue
		}
		s := strings.Repeat("x", n)
		b.WriteString(post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"echo","params":[%q],"id":%d}`, s, i), ""))
		want = append(want, fmt.Sprintf(`{"jsonrpc":"2.0","result":[%q],"id":%d}`, s, i))
	}
	resps := rawHTTP(t, tcp, b.String(), len(sizes))
	if len(resps) != len(sizes) {
		t.Fatalf("%d replies, want %d", len(resps), len(sizes))
	}
	for i, r := range resps {
		body := bodyOf(r)
		if body != want[i] || (want[i] == "" && r.StatusCode != 204) || r.ContentLength != int64(len(want[i])) && want[i] != "" {
			t.Fatalf("reply %d: %d, length %d, body %.40q…; want %.40q…", i, r.StatusCode, r.ContentLength, body, want[i])
		}
	}
}

// chunkedHead starts a chunked POST.
const chunkedHead = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"

// statusOfStream writes the pieces (each with its own write) and returns
// the status of the first response, or 0 if the server closed without
// one; the writes stop at the first error (the server may close first).
func statusOfStream(t *testing.T, addr string, pieces ...string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		for _, p := range pieces {
			if _, err := io.WriteString(c, p); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	return resp.StatusCode
}

// TestHTTP_chunkedNonDataBounded: chunk extensions and trailer fields
// count against a limit in all, however they arrive. The server used to
// read 16 MiB of extensions or trailers for a tiny body and answer 200,
// and to take a 60 KiB extension in one read but refuse it split in two
// (the class of CVE-2023-39326 and CVE-2024-22019).
func TestHTTP_chunkedNonDataBounded(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	add := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	chunk := strconv.FormatInt(int64(len(add)), 16)
	ext := ";x=" + strings.Repeat("a", 60<<10)
	// 60 KiB of extension on one size line: refused whole and split.
	whole := chunkedHead + chunk + ext + "\r\n" + add + "\r\n0\r\n\r\n"
	if got := statusOfStream(t, tcp, whole); got != 413 {
		t.Errorf("60 KiB extension in one write: %d, want 413", got)
	}
	half := len(chunkedHead) + len(chunk) + len(ext)/2
	if got := statusOfStream(t, tcp, whole[:half], whole[half:]); got != 413 {
		t.Errorf("60 KiB extension in two writes: %d, want 413", got)
	}
	// 16 MiB of small extensions, 1 byte of data per chunk.
	var many strings.Builder
	many.WriteString(chunkedHead)
	for many.Len() < 16<<20 {
		many.WriteString("1;e=" + strings.Repeat("b", 200) + "\r\n \r\n")
	}
	if got := statusOfStream(t, tcp, many.String()); got != 413 {
		t.Errorf("16 MiB of extensions: %d, want 413", got)
	}
	// 16 MiB of trailer fields.
	var trailers strings.Builder
	trailers.WriteString(chunkedHead + chunk + "\r\n" + add + "\r\n0\r\n")
	for trailers.Len() < 16<<20 {
		trailers.WriteString("X-T: " + strings.Repeat("c", 200) + "\r\n")
	}
	if got := statusOfStream(t, tcp, trailers.String()+"\r\n"); got != 431 {
		t.Errorf("16 MiB of trailers: %d, want 431", got)
	}
	// Small extensions and trailers are fine.
	if got := statusOfStream(t, tcp, chunkedHead+chunk+";a=b\r\n"+add+"\r\n0\r\nX-T: 1\r\n\r\n"); got != 200 {
		t.Errorf("small extension and trailer: %d, want 200", got)
	}
}

// TestHTTP_contentTypesAsAdapter: the engine and net/http's adapter
// (handler.HTTPHandler) accept and refuse the same Content-Types: one
// rule, handler.AcceptableContentType.
func TestHTTP_contentTypesAsAdapter(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	_, tcp, _ := startEngine(t, tab)
	srv := httptest.NewServer(handler.NewHTTPHandler(tab))
	defer srv.Close()
	body := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`
	for _, ct := range []string{"", "application/json", "Application/JSON; charset=UTF-8", "application/json-rpc",
		"application/jsonrequest", "text/json", "application/xml", "application/json+x", "application/json ;q=1", "text/plain"} {
		var adapter int
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		adapter = resp.StatusCode
		resp.Body.Close()
		head := "POST / HTTP/1.1\r\nHost: x\r\n"
		if ct != "" {
			head += "Content-Type: " + ct + "\r\n"
		}
		resps := rawHTTP(t, tcp, head+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body, 1)
		if len(resps) != 1 || resps[0].StatusCode != adapter {
			t.Errorf("Content-Type %q: engine %v, adapter %d", ct, resps, adapter)
		}
	}
}

// TestHTTP_rawInResultVerbatim: a handler.Raw inside a struct result is
// JSON written as it is, over the engine too (it was base64).
func TestHTTP_rawInResultVerbatim(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	type wrapped struct {
		V    handler.Raw   `json:"v"`
		List []handler.Raw `json:"list"`
	}
	handler.Register(tab, "wrap", func(context.Context, struct{}) (wrapped, error) {
		return wrapped{V: handler.Raw(`{"x":1}`), List: []handler.Raw{handler.Raw(`[true]`)}}, nil
	}, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	resps := rawHTTP(t, tcp, post(`{"jsonrpc":"2.0","method":"wrap","id":1}`, ""), 1)
	if len(resps) != 1 {
		t.Fatal("no reply")
	}
	if got, want := bodyOf(resps[0]), `{"jsonrpc":"2.0","result":{"v":{"x":1},"list":[[true]]},"id":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestNew_refusesTablePool: the engine's pool runs whole messages, whose
// batches wait on the table's pool: sharing one pool could deadlock, so
// New refuses it.
func TestNew_refusesTablePool(t *testing.T) {
	tab := handler.NewTable()
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "table's own pool") {
			t.Fatalf("New with the table's pool: %v", v)
		}
	}()
	engine.New(tab, engine.WithWorkers(tab.Workers()))
}
