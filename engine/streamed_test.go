package engine_test

// Tests of streamed replies (streamed.go, handler.RegisterStream) on
// real sockets: HTTP chunked (raw, gzip, zstd; HTTP/1.0), WebSocket
// fragments (raw and permessage-deflate), streams; failures mid-stream,
// replies that finish while a stream goes, batches, and a producer
// paused by a client that does not read, then ended when it goes.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/klauspost/compress/zstd"
)

// rangeReply is the reply to range {"n":n} with id 1, as a client must
// read it whole.
func rangeReply(n int) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","result":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(`],"id":1}`)
	return b.String()
}

func rangeCall(n int) string {
	return `{"jsonrpc":"2.0","method":"range","params":{"n":` + strconv.Itoa(n) + `},"id":1}`
}

// postHTTP posts body with the extra header lines and returns the
// response, its body read.
func postHTTP(t *testing.T, addr, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestStreamed_HTTPChunked: a streamed result over HTTP/1.1 is a chunked
// body, byte for byte the reply a client expects, raw and compressed
// (gzip and zstd, each part compressed on its own); a small one, under a
// part, is an ordinary reply with its length.
func TestStreamed_HTTPChunked(t *testing.T) {
	_, addr, _ := startEngine(t, nil, engine.WithCompression("gzip", "zstd"))
	const n = 300_000 // about 2 MB: many parts
	want := rangeReply(n)
	resp, body := postHTTP(t, addr, rangeCall(n))
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || resp.ContentLength != -1 {
		t.Errorf("transfer encoding %v, length %d", resp.TransferEncoding, resp.ContentLength)
	}
	if string(body) != want {
		t.Fatalf("raw body: %d bytes, want %d (ends %q)", len(body), len(want), tail(body))
	}
	resp, body = postHTTP(t, addr, rangeCall(n), "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip head %v", resp.Header)
	}
	if got := gunzip(t, body); got != want {
		t.Fatalf("gzip body inflates to %d bytes, want %d", len(got), len(want))
	}
	if len(body) > len(want)/2 {
		t.Errorf("gzip body %d bytes for %d", len(body), len(want))
	}
	resp, body = postHTTP(t, addr, rangeCall(n), "Accept-Encoding", "zstd")
	if resp.Header.Get("Content-Encoding") != "zstd" {
		t.Fatalf("zstd head %v", resp.Header)
	}
	d, _ := zstd.NewReader(nil)
	defer d.Close()
	got, err := d.DecodeAll(body, nil)
	if err != nil || string(got) != want {
		t.Fatalf("zstd body: %v, %d bytes, want %d", err, len(got), len(want))
	}
	resp, body = postHTTP(t, addr, rangeCall(10))
	if resp.ContentLength != int64(len(rangeReply(10))) || string(body) != rangeReply(10) {
		t.Errorf("small result: length %d, body %s", resp.ContentLength, body)
	}
}

func tail(b []byte) []byte { return b[max(len(b)-60, 0):] }

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v after %d bytes", err, len(got))
	}
	return string(got)
}

// TestStreamed_HTTP10: an HTTP/1.0 client gets the streamed body
// delimited by the connection's close.
func TestStreamed_HTTP10(t *testing.T) {
	_, addr, _ := startEngine(t, nil)
	const n = 100_000
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := rangeCall(n)
	fmt.Fprintf(c, "POST / HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	head, got, ok := bytes.Cut(all, []byte("\r\n\r\n"))
	if !ok || !bytes.Contains(head, []byte("Connection: close")) || bytes.Contains(head, []byte("chunked")) || bytes.Contains(head, []byte("Content-Length")) {
		t.Fatalf("head %q", head)
	}
	if string(got) != rangeReply(n) {
		t.Fatalf("body %d bytes, want %d", len(got), len(rangeReply(n)))
	}
}

// TestStreamed_WebSocketFragments: over WebSocket a streamed result is
// one text message in fragments — the first a text frame without FIN,
// then continuations — raw and with permessage-deflate; gorilla reads
// it whole.
func TestStreamed_WebSocketFragments(t *testing.T) {
	_, addr, _ := startEngine(t, nil, engine.WithWSCompression(true))
	const n = 200_000
	want := rangeReply(n)
	for _, compress := range []bool{false, true} {
		c := dialWS(t, addr, &websocket.Dialer{EnableCompression: compress, HandshakeTimeout: 10 * time.Second})
		if got := wsCall(t, c, rangeCall(n)); string(got) != want {
			t.Fatalf("compress %v: %d bytes, want %d", compress, len(got), len(want))
		}
		if got := wsCall(t, c, rangeCall(3)); string(got) != rangeReply(3) {
			t.Fatalf("compress %v: small %s", compress, got)
		}
	}
	raw, r := rawWS(t, addr)
	if _, err := raw.Write(frame(true, 1, []byte(rangeCall(n)), true)); err != nil {
		t.Fatal(err)
	}
	var msg []byte
	for i := 0; ; i++ {
		_ = raw.SetReadDeadline(time.Now().Add(10 * time.Second))
		h, err := r.Peek(1)
		if err != nil {
			t.Fatal(err)
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		_, p, err := readFrame(r, raw)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && (fin || op != 1) || i > 0 && op != 0 {
			t.Fatalf("frame %d: fin %v op %d", i, fin, op)
		}
		msg = append(msg, p...)
		if fin {
			if i < 2 {
				t.Errorf("%d frames", i+1)
			}
			break
		}
	}
	if string(msg) != want {
		t.Fatalf("fragments make %d bytes, want %d", len(msg), len(want))
	}
}

// TestStreamed_streamTransport: over a stream the reply is written as
// it comes, then its newline.
func TestStreamed_streamTransport(t *testing.T) {
	_, addr, sock := startEngine(t, nil)
	for _, nw := range [][2]string{{"tcp", addr}, {"unix", sock}} {
		s := dialStream(t, nw[0], nw[1])
		s.send(t, []byte(rangeCall(150_000)))
		if got := s.line(t); string(got) != rangeReply(150_000)+"\n" {
			t.Fatalf("%s: %d bytes", nw[0], len(got))
		}
	}
}

// TestStreamed_othersWaitTheirTurn: replies that finish while a streamed
// reply goes — inline ones, a blocking one, a push — never come between
// its parts: on WebSocket and streams they follow it whole; over HTTP,
// pipelined, each reply keeps its request's order.
func TestStreamed_othersWaitTheirTurn(t *testing.T) {
	_, addr, _ := startEngine(t, nil)
	const n = 400_000
	want := rangeReply(n)
	var batch strings.Builder
	batch.WriteString(rangeCall(n))
	for i := range 20 {
		fmt.Fprintf(&batch, "\n"+`{"jsonrpc":"2.0","method":"add","params":[%d,1],"id":"a%d"}`, i, i)
	}
	batch.WriteString("\n" + `{"jsonrpc":"2.0","method":"sleep","params":[1],"id":"s"}`)
	s := dialStream(t, "tcp", addr)
	s.send(t, []byte(batch.String()))
	seen := 0
	for range 22 {
		l := s.line(t)
		switch {
		case bytes.HasPrefix(l, []byte(`{"jsonrpc":"2.0","result":[`)):
			if string(l) != want+"\n" {
				t.Fatalf("stream: streamed reply broken: %d bytes", len(l))
			}
		case !json.Valid(bytes.TrimSpace(l)):
			t.Fatalf("stream: a reply broken: %q", tail(l))
		}
		seen++
	}
	ws := dialWS(t, addr, nil)
	for _, m := range strings.Split(batch.String(), "\n") {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for range 22 {
		b := wsRead(t, ws)
		if bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","result":[`)) && string(b) != want || !json.Valid(b) {
			t.Fatalf("ws: a reply broken: %q", tail(b))
		}
	}
	var req strings.Builder
	for _, m := range strings.Split(batch.String(), "\n")[:5] {
		req.WriteString(post(m, ""))
	}
	resps := rawHTTP(t, addr, req.String(), 5)
	if len(resps) != 5 || bodyOf(resps[0]) != want {
		t.Fatalf("http: %d replies", len(resps))
	}
	for i, r := range resps[1:] {
		if got := bodyOf(r); got != fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":"a%d"}`, i+1, i) {
			t.Errorf("http reply %d: %s", i+1, got)
		}
	}
}

// failing yields n elements, then err (nil: ends there).
func failing(n int, err error) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for i := range n {
			if !yield(i, nil) {
				return
			}
		}
		if err != nil {
			yield(0, err)
		}
	}
}

// TestStreamed_failureMidStream: a method that fails once its reply has
// begun to go ends the array and flags the reply, which stays valid
// JSON with its id; failing before, it is an ordinary error reply; a
// panic is the same with -32603.
func TestStreamed_failureMidStream(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.RegisterStream(tab, "fail_after", func(_ context.Context, p [1]int) iter.Seq2[int, error] {
		return failing(p[0], &handler.Error{Code: -32050, Message: "trace lost"})
	})
	handler.RegisterStream(tab, "panic_after", func(_ context.Context, p [1]int) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for i := range p[0] {
				yield(i, nil)
			}
			panic("boom")
		}
	})
	_, addr, _ := startEngine(t, tab)
	var got struct {
		Result []int           `json:"result"`
		Status string          `json:"_streamStatus"`
		Err    *handler.Error  `json:"_streamError"`
		Error  *handler.Error  `json:"error"`
		ID     json.RawMessage `json:"id"`
	}
	for _, c := range []struct {
		method   string
		n        int
		code     int
		streamed bool
	}{
		{"fail_after", 100_000, -32050, true},
		{"fail_after", 10, -32050, false},
		{"panic_after", 100_000, -32603, true},
		{"panic_after", 0, -32603, false},
	} {
		_, body := postHTTP(t, addr, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":[%d],"id":7}`, c.method, c.n))
		got.Result, got.Status, got.Err, got.Error = nil, "", nil, nil
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s %d: %v: %q", c.method, c.n, err, tail(body))
		}
		if string(got.ID) != "7" {
			t.Errorf("%s %d: id %s", c.method, c.n, got.ID)
		}
		if !c.streamed {
			if got.Error == nil || int(got.Error.Code) != c.code || got.Result != nil || got.Status != "" {
				t.Errorf("%s %d: %s", c.method, c.n, body)
			}
			continue
		}
		if got.Status != "failed" || got.Err == nil || int(got.Err.Code) != c.code || got.Error != nil {
			t.Errorf("%s %d: status %q error %+v / %+v", c.method, c.n, got.Status, got.Err, got.Error)
		}
		if len(got.Result) == 0 || len(got.Result) > c.n || got.Result[len(got.Result)-1] != len(got.Result)-1 {
			t.Errorf("%s %d: %d elements", c.method, c.n, len(got.Result))
		}
	}
}

// TestStreamed_inBatchBuiltWhole: in a batch a streamed method's result
// is built whole, as any element's, within the reply limit.
func TestStreamed_inBatchBuiltWhole(t *testing.T) {
	_, addr, _ := startEngine(t, nil)
	_, body := postHTTP(t, addr, `[`+rangeCall(5)+`,{"jsonrpc":"2.0","method":"range","params":[2],"id":2}]`)
	if want := `[` + rangeReply(5) + `,{"jsonrpc":"2.0","result":[0,1],"id":2}]`; string(body) != want {
		t.Fatalf("%s, want %s", body, want)
	}
	_, body = postHTTP(t, addr, `[`+rangeCall(2_000_000)+`]`)
	if !bytes.Contains(body, []byte(`"code":-32008`)) {
		t.Fatalf("a whole result past the reply limit: %q", tail(body))
	}
}

// TestStreamed_slowReaderPausesProducer: a client that does not read
// pauses the method — it makes no more than the engine's window, the
// kernel's socket buffers and a part ahead — and when the client goes
// the method's iteration ends (its yield returns false, its context is
// done).
// (CI under -race once saw the method end before its context was done:
// release now cancels the context before it closes the mailbox.)
func TestStreamed_slowReaderPausesProducer(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var made atomic.Int64
	ended := make(chan error, 1)
	handler.RegisterStream(tab, "endless", func(ctx context.Context, _ struct{}) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			defer func() { ended <- ctx.Err() }()
			for {
				if !yield("0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789", nil) {
					return
				}
				made.Add(103)
			}
		}
	})
	e, addr, _ := startEngine(t, tab)
	c, err := smallReceiveBuffer().Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","method":"endless","id":1}`
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// Wait until production stops moving.
	last := int64(-1)
	for i := 0; i < 200; i++ {
		time.Sleep(50 * time.Millisecond)
		if m := made.Load(); m == last && m > 0 {
			break
		} else {
			last = m
		}
	}
	t.Logf("made %d bytes before the method paused", made.Load())
	if m := made.Load(); m == 0 || m > 8<<20 {
		t.Fatalf("made %d bytes for a client that reads nothing", m)
	}
	if st := e.Stats(); st.OutputHeld > 1<<20 {
		t.Errorf("the engine holds %d bytes for it", st.OutputHeld)
	}
	c.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the method's context: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the method goes on after its client left")
	}
}

// TestStreamed_thousandStallsStayInBudget: 1,000 clients that ask for a
// large streamed result and read nothing hold their streams within the
// server's output budget — each at most its window and a part, paused
// under pressure — and none is disconnected for it; their methods wait,
// and end when the clients go.
func TestStreamed_thousandStallsStayInBudget(t *testing.T) {
	if testing.Short() || engine.RaceEnabled {
		t.Skip("1,000 connections: minutes under the race detector")
	}
	const n, budget = 1000, 64 << 20
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var running, ended atomic.Int64
	handler.RegisterStream(tab, "endless", func(ctx context.Context, _ struct{}) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			running.Add(1)
			defer ended.Add(1)
			for yield("0123456789012345678901234567890123456789012345678901234567890123456789", nil) {
			}
		}
	})
	workers := pool.NewWorkers(n+100, 0)
	defer workers.Close()
	e, addr, _ := startEngine(t, tab, engine.WithWorkers(workers), engine.WithMaxOutputBudget(budget))
	conns := dialSending(t, addr, n, `{"jsonrpc":"2.0","method":"endless","id":1}`+"\n")
	deadline := time.Now().Add(30 * time.Second)
	for running.Load() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if running.Load() != n {
		t.Fatalf("%d of %d streamed calls running", running.Load(), n)
	}
	var peak int64
	for range 20 { // two seconds: past the budget's grace
		time.Sleep(100 * time.Millisecond)
		st := e.Stats()
		peak = max(peak, st.OutputHeld)
	}
	st := e.Stats()
	t.Logf("held %d bytes (peak %d), budget %d, closed for it %d", st.OutputHeld, peak, budget, st.Closed.OutputBudget)
	if peak > budget || st.Closed.OutputBudget != 0 {
		t.Errorf("held %d bytes at the peak, over the budget %d; %d connections closed for it", peak, budget, st.Closed.OutputBudget)
	}
	for _, c := range conns {
		c.Close()
	}
	for ended.Load() < n && time.Now().Before(deadline.Add(30*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	if ended.Load() != n {
		t.Errorf("%d of %d methods ended after their clients left", ended.Load(), n)
	}
}
