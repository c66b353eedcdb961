package engine_test

// Tests of replies as event streams (sse.go) on real sockets: the
// events a call sends go before its reply, framed per the SSE
// specification; what each Accept gets; a client that reads no events;
// a Conn kept past its call.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/pool"
)

// sseTable has progress ([n]: n notifications, then "done"), quiet (a
// blocking method that sends nothing), and the demo's methods, with a
// call timeout as jetrpc serve has.
// (With a timeout, serve's calls ran as timed segments, whose copy of
// the call's context once lost its Conn: no events.)
func sseTable(kept chan<- handler.Conn) *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()), handler.WithCallTimeout(time.Minute))
	demo.Register(tab)
	handler.Register(tab, "progress", func(ctx context.Context, p [1]int) (string, error) {
		c := handler.ConnFrom(ctx)
		type progress struct {
			Progress int    `json:"progress"`
			Total    int    `json:"total"`
			Note     string `json:"note"`
		}
		for i := range p[0] {
			if err := handler.Notify(c, "notifications/progress", progress{i + 1, p[0], "line one\nline two"}); err != nil {
				return "", err
			}
		}
		if p[0] > 0 { // a message with line breaks of its own: one data line each
			if err := c.Send([]byte("{\"jsonrpc\": \"2.0\",\r\n \"method\": \"log\"\n}")); err != nil {
				return "", err
			}
		}
		if kept != nil {
			kept <- c
		}
		return "done", nil
	})
	handler.Register(tab, "quiet", func(context.Context, struct{}) (string, error) { return "hush", nil })
	return tab
}

// sseEvents reads an event stream to its end and returns the data of
// each event (its data lines joined with "\n").
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var events []string
	var data []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != nil {
				events = append(events, strings.Join(data, "\n"))
				data = nil
			}
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[len("data: "):])
		case strings.HasPrefix(line, ":"):
		default:
			t.Fatalf("a line that is not SSE: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if data != nil {
		t.Fatalf("an event not ended: %q", data)
	}
	return events
}

func postAccept(t *testing.T, addr, accept, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestSSE_eventsBeforeReply: a call that sends notifications while it
// runs, asked with Accept: application/json, text/event-stream, is
// answered as an event stream: its notifications in order (a message
// with line breaks in data lines, which the client joins back), then
// its reply, then the end.
func TestSSE_eventsBeforeReply(t *testing.T) {
	_, addr, _ := startEngine(t, sseTable(nil), engine.WithSSE(true))
	resp := postAccept(t, addr, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"progress","params":[5],"id":"p"}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-cache" ||
		resp.Header.Get("X-Accel-Buffering") != "no" || len(resp.TransferEncoding) != 1 {
		t.Fatalf("head %v, transfer encoding %v", resp.Header, resp.TransferEncoding)
	}
	events := sseEvents(t, resp.Body)
	if len(events) != 7 {
		t.Fatalf("%d events: %q", len(events), events)
	}
	for i, e := range events[:5] {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":%d,"total":5,"note":"line one\nline two"}}`, i+1)
		if e != want {
			t.Errorf("event %d: %s, want %s", i, e, want)
		}
	}
	if events[5] != "{\"jsonrpc\": \"2.0\",\n \"method\": \"log\"\n}" {
		t.Errorf("a message of three lines: %q", events[5])
	}
	if events[6] != `{"jsonrpc":"2.0","result":"done","id":"p"}` {
		t.Errorf("the reply's event: %s", events[6])
	}
}

// TestSSE_batchIsOneStream: a batch asked for an event stream is one
// stream: the events its elements send, each element's in its order,
// then the array of its replies as one event. A batch that sends
// nothing answers JSON.
func TestSSE_batchIsOneStream(t *testing.T) {
	_, addr, _ := startEngine(t, sseTable(nil), engine.WithSSE(true))
	resp := postAccept(t, addr, "application/json, text/event-stream",
		`[{"jsonrpc":"2.0","method":"progress","params":[2],"id":"a"},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"b"},{"jsonrpc":"2.0","method":"progress","params":[3],"id":"c"}]`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := sseEvents(t, resp.Body)
	if len(events) != 2+1+3+1+1 { // 2 and 3 progress events, a log each, the array
		t.Fatalf("%d events: %q", len(events), events)
	}
	last := map[int]int{} // an element's last progress seen, by total
	for _, e := range events[:len(events)-1] {
		var n struct {
			Method string
			Params struct{ Progress, Total int }
		}
		if err := json.Unmarshal([]byte(e), &n); err != nil {
			t.Fatalf("%v: %q", err, e)
		}
		if n.Method == "log" {
			continue
		}
		if n.Method != "notifications/progress" || n.Params.Progress != last[n.Params.Total]+1 {
			t.Fatalf("event out of order: %q after %v", e, last)
		}
		last[n.Params.Total] = n.Params.Progress
	}
	if last[2] != 2 || last[3] != 3 {
		t.Fatalf("progress of each element: %v", last)
	}
	var replies []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(events[len(events)-1]), &replies); err != nil || len(replies) != 3 ||
		string(replies[0]["id"]) != `"a"` || string(replies[1]["result"]) != "3" || string(replies[2]["id"]) != `"c"` {
		t.Fatalf("the last event is not the batch's replies: %v %q", err, events[len(events)-1])
	}
	resp = postAccept(t, addr, "application/json, text/event-stream", `[{"jsonrpc":"2.0","method":"quiet","id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]`)
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || string(b) != `[{"jsonrpc":"2.0","result":"hush","id":1},{"jsonrpc":"2.0","result":3,"id":2}]` {
		t.Fatalf("a batch that sends nothing: %s %s", ct, b)
	}
}

// readSubscription reads, from an event stream, the reply (id) of a
// subscribe call of namespace ns and its first n notifications, counting
// 1, 2, 3…
func readSubscription(t *testing.T, body io.Reader, ns string, id, n int) {
	t.Helper()
	r := bufio.NewReader(body)
	var sub string
	for i := 0; i <= n; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
		if !ok {
			continue
		}
		if i == 0 {
			var reply struct {
				Result string
				ID     int
			}
			if err := json.Unmarshal([]byte(data), &reply); err != nil || reply.Result == "" || reply.ID != id {
				t.Fatalf("the subscribe reply: %q", data)
			}
			sub = reply.Result
		} else if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"%s_subscription","params":{"subscription":%q,"result":%d}}`, ns, sub, i); data != want {
			t.Fatalf("notification %d: %s, want %s", i, data, want)
		}
		i++
	}
}

// subscriptionsEnd waits for the subscriptions of namespace ns to end:
// their client closed its stream.
func subscriptionsEnd(t *testing.T, tab *handler.Table, ns string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); tab.Subscriptions(ns) != 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := tab.Subscriptions(ns); n != 0 {
		t.Errorf("%d %s subscriptions after the client closed its stream", n, ns)
	}
}

// TestSSE_GETSubscription: a subscribe method marked HTTPGet, called by
// GET with Accept: text/event-stream as EventSource sends it, answers
// an event stream (no-cache, whatever the method's Cache-Control): its
// id as the first event, then its notifications, until the client
// closes it, which ends the subscription. Without the stream in Accept
// it answers a JSON error, as a POST does.
func TestSSE_GETSubscription(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	stop := make(chan struct{})
	defer close(stop)
	handler.RegisterSubscription(tab, "tick", func(_ context.Context, p [1]int, sub *handler.Subscription) error {
		go func() {
			for n := 1; ; n++ {
				select {
				case <-sub.Context().Done():
					return
				case <-stop:
					return
				case <-time.After(time.Duration(p[0]) * time.Millisecond):
				}
				if sub.Notify(n) != nil {
					return
				}
			}
		}()
		return nil
	}, handler.HTTPGet("max-age=60"))
	_, addr, _ := startEngine(t, tab, engine.WithSSE(true))
	url := "http://" + addr + "/events?method=tick_subscribe&id=7&params=%5B5%5D"
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	readSubscription(t, resp.Body, "tick", 7, 3)
	resp.Body.Close()
	subscriptionsEnd(t, tab, "tick")
	resp2, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.Header.Get("Content-Type") != "application/json" || resp2.Header.Get("Cache-Control") != "no-store" || !strings.Contains(string(b), `"error"`) {
		t.Errorf("a GET that takes JSON: %v %s", resp2.Header, b)
	}
}

// TestSSE_streamedResultGoesAsJSON: a call of a streamed method whose
// request takes JSON beside the event stream (as MCP clients ask) is
// answered JSON, in parts (chunked); taking only the event stream, its
// result is one event, built whole.
func TestSSE_streamedResultGoesAsJSON(t *testing.T) {
	_, addr, _ := startEngine(t, sseTable(nil), engine.WithSSE(true))
	call := `{"jsonrpc":"2.0","method":"range","params":{"n":100000},"id":1}`
	resp := postAccept(t, addr, "application/json, text/event-stream", call)
	b, _ := io.ReadAll(resp.Body)
	var r struct{ Result []int }
	if resp.Header.Get("Content-Type") != "application/json" || len(resp.TransferEncoding) != 1 || json.Unmarshal(b, &r) != nil || len(r.Result) != 100000 || r.Result[99999] != 99999 {
		t.Fatalf("JSON too: %v %v, %d bytes", resp.Header, resp.TransferEncoding, len(b))
	}
	resp = postAccept(t, addr, "text/event-stream", call)
	events := sseEvents(t, resp.Body)
	if resp.Header.Get("Content-Type") != "text/event-stream" || len(events) != 1 || json.Unmarshal([]byte(events[0]), &r) != nil || len(r.Result) != 100000 {
		t.Fatalf("an event stream alone: %v, %d events", resp.Header, len(events))
	}
}

// TestSSE_whatEachAcceptGets: a call that sends nothing gets JSON when
// JSON is taken too, one event when only the stream is; an inline call
// likewise; without the stream in Accept, or with SSE off, a call's
// Conn cannot push and the reply is JSON; q=0 refuses the stream.
func TestSSE_whatEachAcceptGets(t *testing.T) {
	_, addr, _ := startEngine(t, sseTable(nil), engine.WithSSE(true))
	_, offAddr, _ := startEngine(t, sseTable(nil))
	for _, c := range []struct {
		addr, accept, body, ct, want string
	}{
		{addr, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"quiet","id":1}`, "application/json", `{"jsonrpc":"2.0","result":"hush","id":1}`},
		{addr, "text/event-stream", `{"jsonrpc":"2.0","method":"quiet","id":1}`, "text/event-stream", "data: " + `{"jsonrpc":"2.0","result":"hush","id":1}` + "\n\n"},
		{addr, "text/event-stream", `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`, "text/event-stream", "data: " + `{"jsonrpc":"2.0","result":3,"id":2}` + "\n\n"},
		{addr, "*/*, text/event-stream", `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`, "application/json", `{"jsonrpc":"2.0","result":3,"id":2}`},
		{addr, "application/json", `{"jsonrpc":"2.0","method":"progress","params":[2],"id":3}`, "application/json", `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":3}`},
		{addr, "text/event-stream;q=0, application/json", `{"jsonrpc":"2.0","method":"progress","params":[2],"id":3}`, "application/json", `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":3}`},
		{offAddr, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"progress","params":[2],"id":3}`, "application/json", `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":3}`},
	} {
		resp := postAccept(t, c.addr, c.accept, c.body)
		b, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct != c.ct || string(b) != c.want || resp.ContentLength != int64(len(b)) {
			t.Errorf("Accept %q, %s: %s (length %d) %q, want %s %q", c.accept, c.body, ct, resp.ContentLength, b, c.ct, c.want)
		}
	}
	// A notification asked for a stream, that sends nothing: 204.
	if resp := postAccept(t, addr, "text/event-stream", `{"jsonrpc":"2.0","method":"quiet"}`); resp.StatusCode != http.StatusNoContent {
		t.Errorf("a notification: %d", resp.StatusCode)
	}
}

// TestSSE_acceptRefusals: an Accept that takes no reply the engine can
// send is refused 406, a malformed one 400, each with a JSON-RPC error
// saying why and before the body is read; the usual spellings of JSON
// (application/json-rpc, application/*), text/* for the stream, and an
// empty Accept are served. Calls by GET are checked alike.
func TestSSE_acceptRefusals(t *testing.T) {
	tab := sseTable(nil)
	handler.Register(tab, "price", func(context.Context, []string) (int, error) { return 7, nil }, handler.Inline(), handler.HTTPGet("max-age=5"))
	_, addr, _ := startEngine(t, tab, engine.WithSSE(true))
	_, offAddr, _ := startEngine(t, sseTable(nil))
	const (
		notAcceptable = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Acceptable: the Accept header takes neither application/json nor text/event-stream"},"id":null}`
		jsonOnly      = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Acceptable: the Accept header does not take application/json"},"id":null}`
		malformed     = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the Accept header names no media range"},"id":null}`
		add           = `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}`
		sum           = `{"jsonrpc":"2.0","result":3,"id":2}`
	)
	for _, c := range []struct {
		addr, accept string
		status       int
		ct, want     string
	}{
		{addr, "text/html", 406, "application/json", notAcceptable},
		{addr, "text/html, application/json;q=0", 406, "application/json", notAcceptable},
		{addr, "application/json;q=abc", 400, "application/json", malformed},
		{addr, "application json", 400, "application/json", malformed},
		{addr, `application/json;x="open`, 400, "application/json", malformed},
		{offAddr, "text/event-stream", 406, "application/json", jsonOnly},
		{addr, "application/json-rpc", 200, "application/json", sum},
		{addr, "application/jsonrequest, text/plain", 200, "application/json", sum},
		{addr, "application/*", 200, "application/json", sum},
		{addr, " , ", 200, "application/json", sum},
		{addr, "text/*", 200, "text/event-stream", "data: " + sum + "\n\n"},
		{offAddr, "text/html;q=0.5, */*;q=0.1", 200, "application/json", sum},
	} {
		resp := postAccept(t, c.addr, c.accept, add)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.ct || string(b) != c.want {
			t.Errorf("Accept %q: %d %s %q, want %d %s %q", c.accept, resp.StatusCode, resp.Header.Get("Content-Type"), b, c.status, c.ct, c.want)
		}
	}
	for accept, status := range map[string]int{"text/html": 406, "a/b;q=7": 400, "application/json": 200} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/?method=price&id=1&params=%5B%22BTC%22%5D", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("GET with Accept %q: %d %s, want %d", accept, resp.StatusCode, b, status)
		}
	}
}

// TestSSE_connEndsWithCall: a Conn kept past its call sends nothing: its
// stream ended with the reply.
func TestSSE_connEndsWithCall(t *testing.T) {
	kept := make(chan handler.Conn, 1)
	_, addr, _ := startEngine(t, sseTable(kept), engine.WithSSE(true))
	resp := postAccept(t, addr, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"progress","params":[1],"id":1}`)
	if n := len(sseEvents(t, resp.Body)); n != 3 {
		t.Fatalf("%d events", n)
	}
	c := <-kept
	if err := c.Send([]byte(`{"jsonrpc":"2.0","method":"late"}`)); !errors.Is(err, handler.ErrConnClosed) || c.CanPush() {
		t.Errorf("a send after the call: %v, can push %v", err, c.CanPush())
	}
}

// TestSSE_readerThatDoesNotReadIsClosed: a call that sends more than the
// client reads, past MaxPushQueue, is refused with ErrSlowConsumer and
// the connection closes; the server holds no more than the bound.
func TestSSE_readerThatDoesNotReadIsClosed(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var mu sync.Mutex
	var sendErr error
	done := make(chan struct{})
	big := strings.Repeat("x", 8<<10)
	handler.Register(tab, "flood", func(ctx context.Context, _ struct{}) (int, error) {
		defer close(done)
		c := handler.ConnFrom(ctx)
		for i := 0; ; i++ {
			if err := handler.Notify(c, "chunk", []string{big}); err != nil {
				mu.Lock()
				sendErr = err
				mu.Unlock()
				return i, nil
			}
		}
	})
	e, addr, _ := startEngine(t, tab, engine.WithSSE(true), engine.WithMaxPushQueue(1<<20))
	conn, err := smallReceiveBuffer().Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","method":"flood","id":1}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the flood was never refused")
	}
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(sendErr, handler.ErrSlowConsumer) {
		t.Errorf("the flood ended with %v", sendErr)
	}
	if !waitClosed(conn, 10*time.Second) {
		t.Error("the connection stays open")
	}
	if st := e.Stats(); st.ConnOutputPeak > 2<<20 {
		t.Errorf("held up to %d bytes for it", st.ConnOutputPeak)
	}
}

// TestSSE_HTTP10: over HTTP/1.0 an event stream has no chunks and ends
// with the connection.
func TestSSE_HTTP10(t *testing.T) {
	_, addr, _ := startEngine(t, sseTable(nil), engine.WithSSE(true))
	body := `{"jsonrpc":"2.0","method":"progress","params":[2],"id":1}`
	got := rawExchange(t, addr, "POST / HTTP/1.0\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	head, rest, _ := strings.Cut(got, "\r\n\r\n")
	if !strings.Contains(head, "Content-Type: text/event-stream") || strings.Contains(head, "chunked") || !strings.Contains(head, "Connection: close") {
		t.Fatalf("head %q", head)
	}
	if n := len(sseEvents(t, strings.NewReader(rest))); n != 4 {
		t.Errorf("%d events in %q", n, rest)
	}
}

// TestSSE_subscriptionStreams: a subscribe call over a POST asking for
// an event stream gets its id as an event, then its notifications, on
// the same stream, which stays open with keep-alive comments while the
// subscription lives; the server's Unsubscribe ends the stream (and the
// connection serves the next request); a client that closes the stream
// ends the subscription.
func TestSSE_subscriptionStreams(t *testing.T) {
	tab := sseTable(nil)
	subs := make(chan *handler.Subscription, 4)
	handler.RegisterSubscription(tab, "quietsub", func(_ context.Context, _ struct{}, s *handler.Subscription) error {
		subs <- s
		return nil
	}, handler.Inline())
	_, addr, _ := startEngine(t, tab, engine.WithSSE(true), engine.WithSSEKeepAlive(20*time.Millisecond))

	// clock: its id, then its notifications, until the client closes.
	resp := postAccept(t, addr, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"clock_subscribe","params":[10],"id":1}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("head %v", resp.Header)
	}
	readSubscription(t, resp.Body, "clock", 1, 3)
	resp.Body.Close()
	subscriptionsEnd(t, tab, "clock")

	// quietsub: keep-alive comments while nothing comes; Unsubscribe ends
	// the stream, and the connection goes on.
	c := dialStream(t, "tcp", addr)
	body := `{"jsonrpc":"2.0","method":"quietsub_subscribe","id":2}`
	fmt.Fprintf(c.c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	s := <-subs
	resp2, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp2.Body)
	comments := 0
	for comments < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": keep-alive\n" {
			comments++
		}
	}
	s.Unsubscribe()
	if rest, err := io.ReadAll(r); err != nil || strings.Contains(string(rest), "data: ") {
		t.Fatalf("the stream's end: %v, %q", err, rest)
	}
	fmt.Fprintf(c.c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(sentinel), sentinel)
	resp3, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp3.Body); !strings.Contains(string(b), `"result":42`) {
		t.Errorf("the next request: %s", b)
	}
}

// TestSSE_thousandStreamsStayInBudget: 1,000 clients whose calls send
// events without end and that read nothing cost the server no more
// than its output budget: together they would hold 1,000 times
// MaxPushQueue (4 MiB), but past the budget the clients holding the most
// are disconnected, their methods refused (their Notify fails) so that
// they end.
func TestSSE_thousandStreamsStayInBudget(t *testing.T) {
	if testing.Short() || engine.RaceEnabled {
		t.Skip("1,000 connections: minutes under the race detector")
	}
	const n, budget = 1000, 32 << 20
	tab := handler.NewTable(handler.WithLogger(quiet()))
	var running, ended sync.WaitGroup
	running.Add(n)
	ended.Add(n)
	event := strings.Repeat("e", 1000)
	handler.Register(tab, "flood", func(ctx context.Context, _ struct{}) (int, error) {
		defer ended.Done()
		running.Done()
		c := handler.ConnFrom(ctx)
		for i := 0; ; i++ {
			if handler.Notify(c, "chunk", []string{event}) != nil {
				return i, nil
			}
			if i%64 == 63 {
				time.Sleep(time.Millisecond) // a steady producer, not a spin
			}
		}
	})
	workers := pool.NewWorkers(n+100, 0)
	defer workers.Close()
	e, addr, _ := startEngine(t, tab, engine.WithSSE(true), engine.WithWorkers(workers), engine.WithMaxOutputBudget(budget))
	body := `{"jsonrpc":"2.0","method":"flood","id":1}`
	req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	dialSending(t, addr, n, req)
	var peak int64
	done := make(chan struct{})
	go func() { ended.Wait(); close(done) }()
	// The hard line (9/8 of the budget), and what the sum may not have
	// seen yet: growth is counted by steps of 16 KiB per connection, and
	// the loops look between them.
	hard := int64(budget)/8*9 + budget/4
	for wait := time.After(60 * time.Second); ; {
		st := e.Stats()
		peak = max(peak, st.OutputHeld)
		select {
		case <-done:
			st = e.Stats()
			t.Logf("peak held %d bytes (budget %d); closed for the budget %d, for the push queue %d", peak, budget, st.Closed.OutputBudget, st.Closed.PushQueue)
			if peak > hard {
				t.Errorf("held %d bytes at the peak, over the budget's hard line and its slack, %d", peak, hard)
			}
			return
		case <-wait:
			t.Fatalf("the floods did not all end: held %d, peak %d", st.OutputHeld, peak)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestSSE_timeoutAfterEvents: a call past its timeout whose events have
// gone ends its stream with the timeout's reply as the last event (its
// worker answers it when its context ends: the loop does not replace a
// stream that has begun).
func TestSSE_timeoutAfterEvents(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "stuck", func(ctx context.Context, _ struct{}) (int, error) {
		if err := handler.Notify(handler.ConnFrom(ctx), "started", nil); err != nil {
			return 0, err
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}, handler.Timeout(50*time.Millisecond))
	_, addr, _ := startEngine(t, tab, engine.WithSSE(true))
	resp := postAccept(t, addr, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"stuck","id":9}`)
	events := sseEvents(t, resp.Body)
	if len(events) != 2 || events[0] != `{"jsonrpc":"2.0","method":"started"}` || !strings.Contains(events[1], `"code":-32002`) || !strings.HasSuffix(events[1], `"id":9}`) {
		t.Fatalf("events %q", events)
	}
}
