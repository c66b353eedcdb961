package handler_test

// Tests of streamed results (stream.go): built whole without a sink,
// sent in parts through one, their failures before and after the first
// part, a sink that refuses, the limit, notifications, interceptors, and
// registration.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// upTo yields 0 … n-1, then err unless nil; it notes how far it went.
func upTo(n int, err error, went *int) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for i := range n {
			*went = i + 1
			if !yield(i, nil) {
				return
			}
		}
		if err != nil {
			yield(0, err)
		}
	}
}

func wantArray(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteByte(']')
	return b.String()
}

// partSink collects the parts a Pending sends; refuse makes it refuse
// from that part on (0: never).
type partSink struct {
	parts  [][]byte
	refuse int
}

func (s *partSink) SendPart(p []byte) error {
	if s.refuse > 0 && len(s.parts)+1 >= s.refuse {
		return errors.New("client gone")
	}
	s.parts = append(s.parts, bytes.Clone(p))
	return nil
}

// runStreamed runs msg, a call of a streamed method, through a Pending
// with sink, and returns the parts and the last part.
func runStreamed(t *testing.T, tab *handler.Table, msg string, sink *partSink) (joined string, last []byte) {
	t.Helper()
	var p handler.Pending
	out, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), &p)
	if oc != handler.Deferred || len(out) != 0 || !p.Streamed() {
		t.Fatalf("%s: outcome %v, out %s, streamed %v", msg, oc, out, p.Streamed())
	}
	d := p.Take()
	d.StreamTo(sink)
	last = d.Run(context.Background(), nil)
	return string(bytes.Join(sink.parts, nil)) + string(last), last
}

func TestRegisterStream_builtWholeWithoutSink(t *testing.T) {
	tab := handler.NewTable()
	var went int
	handler.RegisterStream(tab, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	handler.RegisterStream(tab, "none", func(context.Context, struct{}) iter.Seq2[int, error] { return nil })
	ctx := context.Background()
	if got, want := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"up","params":[50000],"id":1}`))), `{"jsonrpc":"2.0","result":`+wantArray(50000)+`,"id":1}`; got != want {
		t.Fatalf("whole: %d bytes, want %d", len(got), len(want))
	}
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"none","id":"x"}`))); got != `{"jsonrpc":"2.0","result":[],"id":"x"}` {
		t.Errorf("nil iterator: %s", got)
	}
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"method":"up","params":[2],"id":1}`))); got != `{"result":[0,1],"error":null,"id":1}` {
		t.Errorf("JSON-RPC 1.0: %s", got)
	}
	went = 0
	if got := tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"up","params":[1000]}`)); len(got) != 0 || went != 1000 {
		t.Errorf("notification: reply %s, iterated %d", got, went)
	}
	// Past the reply limit, built whole: -32008 as any reply, the
	// iteration cut short.
	small := handler.NewTable(handler.WithMaxResponseSize(100_000, 0))
	handler.RegisterStream(small, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	got := small.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"up","params":[10000000],"id":1}`))
	if !bytes.Contains(got, []byte(`"code":-32008`)) || went > 100_000 {
		t.Errorf("past the limit: %s after %d elements", got, went)
	}
}

func TestRegisterStream_partsThroughSink(t *testing.T) {
	tab := handler.NewTable()
	var went int
	handler.RegisterStream(tab, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	sink := &partSink{}
	got, last := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"up","params":[100000],"id":9}`, sink)
	if want := `{"jsonrpc":"2.0","result":` + wantArray(100000) + `,"id":9}`; got != want {
		t.Fatalf("parts join to %d bytes, want %d", len(got), len(want))
	}
	if len(sink.parts) < 10 || !strings.HasPrefix(string(sink.parts[0]), `{"jsonrpc":"2.0","result":[0,1,`) || len(last) > 40<<10 {
		t.Errorf("%d parts, last %d bytes", len(sink.parts), len(last))
	}
	// A small result never reaches the sink: an ordinary reply.
	sink = &partSink{}
	if got, _ := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"up","params":[3],"id":9}`, sink); got != `{"jsonrpc":"2.0","result":[0,1,2],"id":9}` || len(sink.parts) != 0 {
		t.Errorf("small: %s in %d parts", got, len(sink.parts))
	}
}

func TestRegisterStream_failures(t *testing.T) {
	tab := handler.NewTable(handler.WithMaxStreamedResponseSize(200_000))
	var went int
	fail := &handler.Error{Code: -32050, Message: "trace lost", Data: "block 7"}
	handler.RegisterStream(tab, "fail", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], fail, &went) })
	handler.RegisterStream(tab, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	// After parts went: the array closed, the envelope flagged, the id kept.
	got, _ := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"fail","params":[20000],"id":3}`, &partSink{})
	want := `{"jsonrpc":"2.0","result":` + wantArray(20000) + `,"_streamStatus":"failed","_streamError":{"code":-32050,"message":"trace lost","data":"block 7"},"id":3}`
	if got != want {
		t.Fatalf("failed after parts:\n%s\nwant\n%s", got[max(len(got)-200, 0):], want[len(want)-200:])
	}
	// Before any part: an ordinary error reply.
	got, _ = runStreamed(t, tab, `{"jsonrpc":"2.0","method":"fail","params":[5],"id":3}`, &partSink{})
	if got != `{"jsonrpc":"2.0","error":{"code":-32050,"message":"trace lost","data":"block 7"},"id":3}` {
		t.Errorf("failed before a part: %s", got)
	}
	// Past MaxStreamedResponseSize: flagged -32008, the iteration stopped.
	got, _ = runStreamed(t, tab, `{"jsonrpc":"2.0","method":"up","params":[100000000],"id":4}`, &partSink{})
	if !strings.HasSuffix(got, `],"_streamStatus":"failed","_streamError":{"code":-32008,"message":"Response too large: the streamed result passed the server's limit"},"id":4}`) || went > 100_000 || len(got) > 260_000 {
		t.Errorf("past the limit: ends %s after %d elements", got[max(len(got)-120, 0):], went)
	}
	// A sink that refuses (the client went): the iteration ends, nothing
	// more is written.
	sink := &partSink{refuse: 3}
	_, last := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"up","params":[100000000],"id":5}`, sink)
	if len(last) != 0 || len(sink.parts) != 2 || went > 50_000 {
		t.Errorf("refused: last %q, %d parts, %d elements", last, len(sink.parts), went)
	}
}

// TestRegisterStream_interceptorsCannotReplaceBegunReply: an interceptor
// sees a streamed call's outcome but not its result, and neither its
// error nor Answer after Next replaces a reply whose parts went.
func TestRegisterStream_interceptorsCannotReplaceBegunReply(t *testing.T) {
	tab := handler.NewTable()
	var went int
	handler.RegisterStream(tab, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	var result handler.Raw
	var code parser.Code
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		result, code = bytes.Clone(c.Result()), c.Code() // valid until the interceptor returns
		return errors.New("replace it")
	})
	got, _ := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"up","params":[50000],"id":1}`, &partSink{})
	if got != `{"jsonrpc":"2.0","result":`+wantArray(50000)+`,"id":1}` || result != nil || code != 0 {
		t.Errorf("reply ends %s; the interceptor saw result %d bytes, code %d", got[max(len(got)-40, 0):], len(result), code)
	}
	// Built whole, the reply can still be replaced.
	if got := tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"up","params":[3],"id":1}`)); !bytes.Contains(got, []byte(`"error"`)) || string(result) != "[0,1,2]" {
		t.Errorf("whole: %s, result %s", got, result)
	}
}

func TestRegisterStream_refusesInline(t *testing.T) {
	defer func() {
		if err, _ := recover().(error); !errors.Is(err, handler.ErrStreamInline) {
			t.Errorf("panic %v", err)
		}
	}()
	handler.RegisterStream(handler.NewTable(), "up", func(context.Context, struct{}) iter.Seq2[int, error] { return nil }, handler.Inline())
}

// TestRegisterStream_timeoutInContext: a streamed method with a timeout
// streams through its sink all the same (its context carries the
// deadline); past it, the result ends flagged -32002.
func TestRegisterStream_timeoutInContext(t *testing.T) {
	tab := handler.NewTable(handler.WithCallTimeout(time.Minute))
	var went int
	handler.RegisterStream(tab, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	handler.RegisterStream(tab, "slow", func(ctx context.Context, _ struct{}) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for i := 0; ; i++ {
				if i%1000 == 999 {
					time.Sleep(time.Millisecond)
				}
				if !yield(i, nil) {
					return
				}
			}
		}
	}, handler.Timeout(50*time.Millisecond))
	sink := &partSink{}
	got, _ := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"up","params":[100000],"id":1}`, sink)
	if got != `{"jsonrpc":"2.0","result":`+wantArray(100000)+`,"id":1}` || len(sink.parts) < 10 {
		t.Fatalf("with a call timeout: %d parts", len(sink.parts))
	}
	got, _ = runStreamed(t, tab, `{"jsonrpc":"2.0","method":"slow","id":2}`, &partSink{})
	if !strings.HasSuffix(got, `"_streamStatus":"failed","_streamError":{"code":-32002,"message":"Deadline exceeded"},"id":2}`) {
		t.Errorf("past its timeout: ends %s", got[max(len(got)-120, 0):])
	}
}

// TestHTTPHandler_streamsResult: mounted in net/http, a streamed result
// goes out chunked as it is made, equal to the whole reply; a batch
// holding it is built whole.
func TestHTTPHandler_streamsResult(t *testing.T) {
	tab := handler.NewTable()
	var went int
	handler.RegisterStream(tab, "up", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) })
	srv := httptest.NewServer(handler.NewHTTPHandler(tab))
	defer srv.Close()
	post := func(body string) (*http.Response, string) {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	resp, got := post(`{"jsonrpc":"2.0","method":"up","params":[200000],"id":1}`)
	if want := `{"jsonrpc":"2.0","result":` + wantArray(200000) + `,"id":1}`; got != want || len(resp.TransferEncoding) != 1 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("streamed: %d bytes (want %d), transfer encoding %v, %v", len(got), len(want), resp.TransferEncoding, resp.Header)
	}
	resp, got = post(`[{"jsonrpc":"2.0","method":"up","params":[3],"id":1}]`)
	if got != `[{"jsonrpc":"2.0","result":[0,1,2],"id":1}]` || resp.ContentLength != int64(len(got)) {
		t.Errorf("in a batch: %s, length %d", got, resp.ContentLength)
	}
}
