package bench

// Regression tests from a review of the load generator: each proves a bug
// that was fixed (a malformed chunk size panicking the tool, stalls and
// wrong reply shapes passing as correct, ...), plus checks of sound
// behaviour worth keeping (wrong servers caught, exact counts, WebSocket
// fragments). Servers are loopback fakes; stall tests use a short Timeout.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// NewLineServer starts a newline-delimited stream server on loopback for
// the tests (also the external ones: bench_test) and returns its address:
// answer gets each request line and its number on the connection, and
// returns what to write (possibly "").
func NewLineServer(t *testing.T, answer func(line string, n int) string) string {
	return fakeServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for n := 0; ; n++ {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if s := answer(line, n); s != "" {
				if _, err := io.WriteString(c, s); err != nil {
					return
				}
			}
		}
	})
}

// fakeServer listens on loopback until the test ends, runs each
// connection with conn (closing it after), and returns the address.
func fakeServer(t *testing.T, conn func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				conn(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// revIDs returns the ids the tool put in a request line, in order.
func revIDs(line string) []string {
	var out []string
	for {
		_, after, ok := strings.Cut(line, `"id":`)
		if !ok {
			return out
		}
		i := 0
		for i < len(after) && after[i] >= '0' && after[i] <= '9' {
			i++
		}
		out = append(out, after[:i])
		line = after[i:]
	}
}

func revRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	if cfg.Warmup == 0 {
		cfg.Warmup = -1
	}
	if cfg.Conns == 0 {
		cfg.Conns = 2
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// revHTTPServer: net/http server; reply gets the request body and returns
// the reply body (status 200, application/json).
func revHTTPServer(t *testing.T, reply func(body string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply(string(b)))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// revRawHTTP: reads HTTP requests (Content-Length bodies) and writes what
// respond returns, in pieces split at every `|` (with a short pause), so
// that the tool sees replies cut at odd places.
func revRawHTTP(t *testing.T, respond func(body string, n int) string) string {
	return "http://" + fakeServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b := make([]byte, req.ContentLength)
			if _, err := io.ReadFull(req.Body, b); err != nil {
				return
			}
			out := respond(string(b), n)
			if out == "CLOSE" {
				return
			}
			for _, p := range strings.Split(out, "|") {
				if _, err := c.Write([]byte(p)); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
	}) + "/"
}

func revOK(id string) string { return `{"jsonrpc":"2.0","result":3,"id":` + id + `}` }

func revResp(body string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// StartDemoServer serves jetrpc's demo methods on TCP and a Unix socket
// until the test ends, for the tests (also the external ones: bench_test),
// and returns both addresses.
func StartDemoServer(t *testing.T) (tcp, unix string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	sock := filepath.Join(t.TempDir(), "b.sock")
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0", "unix://"+sock), engine.WithLogger(quiet))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e.Addrs()[0].String(), sock
}

// TestParseHTTPResponse_malformedSizes: a chunk size that overflows int
// used to panic the tool (slice bounds) on an event loop; oversized
// sizes, chunk data not followed by CRLF and oversized or overlong
// Content-Lengths are framing errors.
func TestParseHTTPResponse_malformedSizes(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, c := range []struct {
		name, resp string
		bad        bool
	}{
		{"size overflows int", head + "ffffffffffffffff\r\n{}\r\n0\r\n\r\n", true},
		{"size of 9 digits", head + "000000002\r\n{}\r\n0\r\n\r\n", true},
		{"size over 64 MiB", head + "4000001\r\n{}\r\n0\r\n\r\n", true},
		{"empty size", head + "\r\n{}\r\n0\r\n\r\n", true},
		{"no CRLF after the data", head + "2\r\n{}xx0\r\n\r\n", true},
		{"content-length of 11 digits", "HTTP/1.1 200 OK\r\nContent-Length: 00000000002\r\n\r\n{}", true},
		{"content-length over 64 MiB", "HTTP/1.1 200 OK\r\nContent-Length: 67108865\r\n\r\n{}", true},
		{"empty content-length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n{}", true},
		{"size of 8 digits with an extension (right)", head + "00000002;x=y\r\n{}\r\n0\r\n\r\n", false},
		{"content-length of 10 digits (right)", "HTTP/1.1 200 OK\r\nContent-Length: 0000000002\r\n\r\n{}", false},
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: parseHTTPResponse panicked: %v", c.name, p)
				}
			}()
			var dst []byte
			r, ok, bad := parseHTTPResponse([]byte(c.resp), &dst)
			if bad != c.bad || ok == c.bad {
				t.Errorf("%s: ok=%v bad=%v, want bad=%v", c.name, ok, bad, c.bad)
			}
			if !c.bad && string(r.body) != "{}" {
				t.Errorf("%s: body %q", c.name, r.body)
			}
		}()
	}
}

// TestRun_streamNotificationsOnly: on a stream a rotation of notifications
// only never filled the pipeline, so the closed loop's fill looped until
// the end of the run, buffering and counting millions of "requests". A
// closed loop over a stream now refuses it; an open loop sends them at
// its rate.
func TestRun_streamNotificationsOnly(t *testing.T) {
	var inWindow, total atomic.Int64
	var end atomic.Int64
	addr := NewLineServer(t, func(string, int) string {
		total.Add(1)
		if time.Now().UnixNano() < end.Load() {
			inWindow.Add(1)
		}
		return ""
	})
	for _, cfg := range []Config{
		{Target: "tcp://" + addr, Notify: 1},
		{Target: "ws://" + addr + "/", Notify: 1, Batch: 3},
		{Target: "tcp://" + addr, Bodies: [][]byte{[]byte(`{"jsonrpc":"2.0","method":"x"}`), []byte(`[{"jsonrpc":"2.0","method":"y"}]`)}},
	} {
		cfg.Duration = 100 * time.Millisecond
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "-rate") {
			t.Errorf("%s notify %v bodies %d: err %v, want a config error pointing at -rate", cfg.Target, cfg.Notify, len(cfg.Bodies), err)
		}
	}
	end.Store(time.Now().Add(300 * time.Millisecond).UnixNano())
	res := revRun(t, Config{Target: "tcp://" + addr, Notify: 1, Rate: 200, Conns: 1, Duration: 300 * time.Millisecond})
	t.Logf("open loop: %d requests; server received %d, %d of them in the window", res.Requests, total.Load(), inWindow.Load())
	if res.Requests == 0 || res.Requests > 60+1 || res.TotalErrors() != 0 {
		t.Fatalf("open loop of notifications at 200/s for 300 ms: %d requests, errors %v", res.Requests, res.Errors)
	}
}

// TestRun_bigBatchDuplicateHidesMissing: in a batch of more than 64 calls
// the duplicate of a call past the 64th went unseen, so a reply repeating
// one id and dropping another passed.
func TestRun_bigBatchDuplicateHidesMissing(t *testing.T) {
	target := revHTTPServer(t, func(body string) string {
		ids := revIDs(body)
		ids[70] = ids[69] // call 71 unanswered, call 70 answered twice
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = revOK(id)
		}
		return "[" + strings.Join(parts, ",") + "]"
	})
	res := revRun(t, Config{Target: target, Batch: 100, Requests: 20, Conns: 1})
	t.Logf("requests %d calls %d errors %v", res.Requests, res.Calls, res.Errors)
	if res.Errors[ErrDuplicate] != 20 || res.Errors[ErrMissing] != 20 {
		t.Fatalf("errors %v, want 20 duplicates and 20 missing", res.Errors)
	}
}

// revStallAt answers every request right until the time at, then reads
// and never answers again.
func revStallAt(t *testing.T, at *atomic.Int64) string {
	return NewLineServer(t, func(line string, n int) string {
		if time.Now().UnixNano() >= at.Load() {
			return ""
		}
		return revOK(revIDs(line)[0]) + "\n"
	})
}

// TestRun_stallClosedLoop: a server that stops answering late in the
// window (less than Timeout before the end) looked fine: requests in
// flight at the end were neither errors nor latencies. Now the run waits
// up to Timeout for them, then counts them as timeouts with their latency.
func TestRun_stallClosedLoop(t *testing.T) {
	var at atomic.Int64
	at.Store(math.MaxInt64)
	addr := revStallAt(t, &at)
	at.Store(time.Now().Add(150 * time.Millisecond).UnixNano())
	t0 := time.Now()
	res := revRun(t, Config{Target: "tcp://" + addr, Conns: 2, Pipeline: 2, Duration: 400 * time.Millisecond, Timeout: 600 * time.Millisecond})
	took := time.Since(t0)
	t.Logf("Run took %v; requests %d p99 %dµs max %dµs errors %v", took, res.Requests, res.Latency.P99, res.Latency.Max, res.Errors)
	if res.Errors[ErrTimeout] != 4 {
		t.Errorf("a server silent for the last 250 ms of the window: errors %v, want 4 timeouts (2 conns × pipeline 2)", res.Errors)
	}
	if res.Latency.Max < 600_000 {
		t.Errorf("max latency %dµs: the stalled requests' latency is not recorded", res.Latency.Max)
	}
	if took > 400*time.Millisecond+600*time.Millisecond+500*time.Millisecond {
		t.Errorf("Run took %v", took)
	}
}

// TestRun_stallOpenLoop: the same in an open loop, whose point is that a
// stall cannot hide: the stalled request and those due but never sent
// (the pipeline slot waiting) count, with their latencies, and Run
// overruns its window by at most Timeout.
func TestRun_stallOpenLoop(t *testing.T) {
	var at atomic.Int64
	at.Store(math.MaxInt64)
	addr := revStallAt(t, &at)
	at.Store(time.Now().Add(200 * time.Millisecond).UnixNano())
	t0 := time.Now()
	res := revRun(t, Config{Target: "tcp://" + addr, Conns: 1, Rate: 100, Duration: 500 * time.Millisecond, Timeout: 500 * time.Millisecond})
	took := time.Since(t0)
	t.Logf("Run took %v for a 500ms window; requests %d p99 %dµs max %dµs errors %v", took, res.Requests, res.Latency.P99, res.Latency.Max, res.Errors)
	if took > 500*time.Millisecond+500*time.Millisecond+300*time.Millisecond {
		t.Errorf("Run overran its 500 ms window by %v, more than Timeout", took-500*time.Millisecond)
	}
	if res.Errors[ErrTimeout] != 1 || res.Errors[ErrUnsent] < 20 {
		t.Errorf("errors %v, want 1 timeout and ~29 unsent", res.Errors)
	}
	if res.Latency.Max < 250_000 {
		t.Errorf("the server stalled for 300 of 500 ms, yet max latency %dµs", res.Latency.Max)
	}
}

// TestRun_batchAnsweredAsSingles: on a stream a batch answered by
// separate objects, one message each, passed as correct.
func TestRun_batchAnsweredAsSingles(t *testing.T) {
	addr := NewLineServer(t, func(line string, _ int) string {
		var b strings.Builder
		for _, id := range revIDs(line) {
			b.WriteString(revOK(id) + "\n")
		}
		return b.String()
	})
	res := revRun(t, Config{Target: "tcp://" + addr, Batch: 4, Requests: 50})
	t.Logf("requests %d calls %d errors %v", res.Requests, res.Calls, res.Errors)
	if res.Errors[ErrShape] != 50 || res.TotalErrors() != 50 {
		t.Fatalf("errors %v, want one wrong shape per request", res.Errors)
	}
}

// TestRun_singleAnsweredAsArray: a single call answered by a one-element
// array passed, over HTTP and streams.
func TestRun_singleAnsweredAsArray(t *testing.T) {
	httpTarget := revHTTPServer(t, func(body string) string { return "[" + revOK(revIDs(body)[0]) + "]" })
	stream := "tcp://" + NewLineServer(t, func(line string, _ int) string { return "[" + revOK(revIDs(line)[0]) + "]\n" })
	for _, target := range []string{httpTarget, stream} {
		res := revRun(t, Config{Target: target, Requests: 50})
		t.Logf("%s: requests %d errors %v", target, res.Requests, res.Errors)
		if res.Errors[ErrShape] != 50 || res.TotalErrors() != 50 {
			t.Errorf("%s: errors %v, want one wrong shape per request", target, res.Errors)
		}
	}
}

// TestRun_streamShortBatchFinishesAtOnce: on a stream a batch's reply is
// one message; when that array is short the missing calls count at once,
// instead of the request waiting for its timeout.
func TestRun_streamShortBatchFinishesAtOnce(t *testing.T) {
	addr := NewLineServer(t, func(line string, _ int) string {
		ids := revIDs(line)
		return "[" + revOK(ids[0]) + "," + revOK(ids[2]) + "]\n"
	})
	t0 := time.Now()
	res := revRun(t, Config{Target: "tcp://" + addr, Batch: 3, Requests: 8, Timeout: time.Second})
	took := time.Since(t0)
	t.Logf("took %v; requests %d errors %v", took, res.Requests, res.Errors)
	if res.Requests != 8 || res.Errors[ErrMissing] != 8 || res.TotalErrors() != 8 || took > 500*time.Millisecond {
		t.Fatalf("took %v, requests %d, errors %v: want 8 requests with a missing reply each, at once", took, res.Requests, res.Errors)
	}
}

// TestRun_replyToNotification: on a stream, messages were only read while
// a call was in flight: replies to notifications (open loop) were never
// read.
func TestRun_replyToNotification(t *testing.T) {
	var replied atomic.Int64
	addr := NewLineServer(t, func(string, int) string {
		replied.Add(1)
		return `{"jsonrpc":"2.0","result":3,"id":null}` + "\n"
	})
	res := revRun(t, Config{Target: "tcp://" + addr, Notify: 1, Rate: 200, Conns: 1, Duration: 300 * time.Millisecond})
	t.Logf("server replied to %d notifications; errors %v", replied.Load(), res.Errors)
	if replied.Load() == 0 || res.Errors[ErrUnexpectedReply] < replied.Load()-2 {
		t.Fatalf("%d replies to notifications, errors %v", replied.Load(), res.Errors)
	}
}

// TestRun_unaskedHTTPBytes: bytes from an HTTP server with nothing in
// flight are a reply to no request, and the connection is dropped.
func TestRun_unaskedHTTPBytes(t *testing.T) {
	target := revRawHTTP(t, func(b string, _ int) string {
		return revResp(revOK(revIDs(b)[0])) + "|" + revResp(revOK("1"))
	})
	res := revRun(t, Config{Target: target, Rate: 100, Conns: 1, Duration: 300 * time.Millisecond})
	t.Logf("requests %d errors %v", res.Requests, res.Errors)
	if res.Errors[ErrUnexpectedReply] == 0 {
		t.Fatalf("errors %v, want replies to no request", res.Errors)
	}
}

// TestRun_warmupErrorsUncounted: errors found while warming up (here an
// unknown id, in an open loop) are not counted: "measured" is the time,
// not a constant true.
func TestRun_warmupErrorsUncounted(t *testing.T) {
	var until atomic.Int64
	until.Store(math.MaxInt64)
	addr := NewLineServer(t, func(line string, _ int) string {
		r := revOK(revIDs(line)[0]) + "\n"
		if time.Now().UnixNano() < until.Load() {
			r = revOK("999999") + "\n" + r
		}
		return r
	})
	until.Store(time.Now().Add(150 * time.Millisecond).UnixNano())
	res := revRun(t, Config{Target: "tcp://" + addr, Rate: 200, Conns: 1, Warmup: 300 * time.Millisecond, Duration: 200 * time.Millisecond})
	t.Logf("requests %d errors %v", res.Requests, res.Errors)
	if res.TotalErrors() != 0 || res.Requests == 0 {
		t.Fatalf("errors %v in warm-up counted", res.Errors)
	}
}

// TestInspect_replyObjects: a valid reply has jsonrpc "2.0", an id, one
// of result and error (null counts as present), and an error that is an
// object with an integer code and a string message.
func TestInspect_replyObjects(t *testing.T) {
	for _, c := range []struct {
		obj          string
		valid, isErr bool
	}{
		{`{"jsonrpc":"2.0","result":3,"id":1}`, true, false},
		{`{"jsonrpc":"2.0","result":null,"id":1}`, true, false},
		{`{"jsonrpc":"2.0","error":{"code":-32601,"message":"no","data":[1]},"id":null}`, true, true},
		{`{"jsonrpc":"2.0","result":3,"error":null,"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":null,"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":1.5,"message":"x"},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":"1","message":"x"},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":1,"message":2},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":1},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","result":3}`, false, false},
		{`{"jsonrpc":"1.0","result":3,"id":1}`, false, false},
		{`3`, false, false},
	} {
		it := inspect([]byte(c.obj))
		if it.valid != c.valid || it.isError != c.isErr {
			t.Errorf("%s: valid %v isError %v, want %v %v", c.obj, it.valid, it.isError, c.valid, c.isErr)
		}
	}
	obj := []byte(`{"jsonrpc":"2.0","error":{"code":-32601,"message":"no"},"id":12}`)
	if n := testing.AllocsPerRun(100, func() { inspect(obj) }); n != 0 {
		t.Errorf("inspect: %v allocs", n)
	}
}

// TestRun_malformedReplyObjects: result with "error":null, and an error
// that is an empty object, passed as JSON-RPC 2.0 replies.
func TestRun_malformedReplyObjects(t *testing.T) {
	for _, reply := range []string{
		`{"jsonrpc":"2.0","result":3,"error":null,"id":%s}`,
		`{"jsonrpc":"2.0","error":{},"id":%s}`,
	} {
		addr := NewLineServer(t, func(line string, _ int) string { return fmt.Sprintf(reply, revIDs(line)[0]) + "\n" })
		res := revRun(t, Config{Target: "tcp://" + addr, Requests: 20, ExpectError: strings.Contains(reply, "{}")})
		if res.Errors[ErrNotJSONRPC] != 20 {
			t.Errorf("%s: errors %v, want 20 not json-rpc", reply, res.Errors)
		}
	}
}

// TestResult_noCheckTable: a --no-check run said "every reply checked".
func TestResult_noCheckTable(t *testing.T) {
	addr := NewLineServer(t, func(string, int) string { return "{\"wrong\":1}\n" })
	res := revRun(t, Config{Target: "tcp://" + addr, Requests: 20, NoCheck: true})
	var b strings.Builder
	res.WriteTable(&b)
	if res.Checked || strings.Contains(b.String(), "every reply checked") || !strings.Contains(b.String(), "not checked (--no-check)") {
		t.Fatalf("no-check run against a wrong server: checked %v\n%s", res.Checked, b.String())
	}
}

// TestConfig_rejects: negative counts, NaN and infinite rates or shares,
// and targets without a host are errors, not defaults.
func TestConfig_rejects(t *testing.T) {
	for _, cfg := range []Config{
		{Target: "tcp://127.0.0.1:1", Conns: -1},
		{Target: "tcp://127.0.0.1:1", Pipeline: -1},
		{Target: "tcp://127.0.0.1:1", Batch: -1},
		{Target: "tcp://127.0.0.1:1", Notify: math.NaN()},
		{Target: "tcp://127.0.0.1:1", Rate: math.NaN()},
		{Target: "tcp://127.0.0.1:1", Rate: math.Inf(1)},
		{Target: "http://:8080/"},
		{Target: "ws:///path"},
		{Target: "tcp://"},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestWorker_lostCountsRequests: losing a connection counts one error per
// measured request in flight; with none in flight, one while measuring,
// none while warming up. A non-200 status counts only the status.
func TestWorker_lostCountsRequests(t *testing.T) {
	cfg := Config{Target: "tcp://127.0.0.1:1", Pipeline: 4}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	tg, _ := parseTarget(cfg.Target)
	msgs, _ := messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
	r := &runner{cfg: cfg, t: tg, msgs: msgs, start: time.Now().Add(-time.Second)}
	w := newWorker(r, 0)
	for range 3 {
		w.push(time.Now())
	}
	w.lost(ErrTransport)
	if w.errs[ErrTransport] != 3 || w.n != 0 {
		t.Fatalf("3 requests lost: errors %v, in flight %d", w.errs, w.n)
	}
	w.lost(ErrTransport)
	if w.errs[ErrTransport] != 4 {
		t.Fatalf("nothing in flight while measuring: errors %v", w.errs)
	}
	r.start = time.Now().Add(time.Hour)
	w.lost(ErrTransport)
	if w.errs[ErrTransport] != 4 {
		t.Fatalf("nothing in flight while warming up: errors %v", w.errs)
	}

	target := revRawHTTP(t, func(string, int) string { return "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n" })
	res := revRun(t, Config{Target: target, Batch: 3, Requests: 10})
	if res.Errors[ErrHTTPStatus] != 10 || res.TotalErrors() != 10 {
		t.Fatalf("HTTP 500: errors %v, want the status only", res.Errors)
	}
}

// TestConsumeWS_longPing: a server ping over 125 bytes is a protocol
// error, not answered with a malformed pong.
func TestConsumeWS_longPing(t *testing.T) {
	cfg := Config{Target: "ws://127.0.0.1:1/"}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	tg, _ := parseTarget(cfg.Target)
	msgs, _ := messagesFromFlags(cfg.Method, cfg.Params, cfg.Batch, cfg.Notify)
	w := newWorker(&runner{cfg: cfg, t: tg, msgs: msgs}, 0)
	ping := append([]byte{0x89, 126, 0, 200}, make([]byte, 200)...)
	if _, bad := w.consumeWS(ping); !bad || len(w.pong) != 0 {
		t.Fatalf("ping of 200 bytes: bad %v, pong %d bytes", bad, len(w.pong))
	}
	if _, bad := w.consumeWS([]byte{0x89, 2, 'h', 'i'}); bad || len(w.pong) != 2+4+2 {
		t.Fatalf("ping of 2 bytes: bad %v, pong % x", bad, w.pong)
	}
}

// Checked and sound (logged; fails only when a wrong server gets no error or
// a right one gets errors).
func TestRun_wrongServersTable(t *testing.T) {
	type tc struct {
		name    string
		cfg     Config
		wantErr bool
	}
	stream := func(f func(line string, n int) string) string { return "tcp://" + NewLineServer(t, f) }
	cases := []tc{
		{"stream wrong id", Config{Target: stream(func(l string, _ int) string { return revOK("999999") + "\n" })}, true},
		{"stream dup", Config{Target: stream(func(l string, _ int) string { r := revOK(revIDs(l)[0]) + "\n"; return r + r })}, true},
		{"stream invalid json", Config{Target: stream(func(l string, _ int) string { return `{"jsonrpc":"2.0","result":,"id":1}` + "\n" })}, true},
		{"stream truncated then close", Config{Target: stream(func(l string, n int) string {
			if n == 3 {
				return `{"jsonrpc":"2.0","res`
			}
			return revOK(revIDs(l)[0]) + "\n"
		})}, true},
		{"stream result when error expected", Config{ExpectError: true, Target: stream(func(l string, _ int) string { return revOK(revIDs(l)[0]) + "\n" })}, true},
		{"stream reordered pipeline (right)", Config{Pipeline: 4, Conns: 1, Target: stream(func() func(string, int) string {
			var held string
			return func(l string, n int) string {
				r := revOK(revIDs(l)[0]) + "\n"
				if n%2 == 0 {
					held = r
					return ""
				}
				return r + held
			}
		}())}, false},
		{"stream batch reordered elements (right)", Config{Batch: 3, Target: stream(func(l string, _ int) string {
			ids := revIDs(l)
			return "[" + revOK(ids[2]) + "," + revOK(ids[0]) + "," + revOK(ids[1]) + "]\n"
		})}, false},
		{"stream batch missing element", Config{Batch: 3, Timeout: 100 * time.Millisecond, Target: stream(func(l string, _ int) string {
			ids := revIDs(l)
			return "[" + revOK(ids[0]) + "," + revOK(ids[1]) + "]\n"
		})}, true},
		{"http 500", Config{Target: revRawHTTP(t, func(b string, _ int) string {
			return "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"
		})}, true},
		{"http content-length short", Config{Target: revRawHTTP(t, func(b string, _ int) string {
			r := revOK(revIDs(b)[0])
			return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(r)-3) + "\r\n\r\n" + r
		})}, true},
		{"http content-length long", Config{Timeout: 100 * time.Millisecond, Target: revRawHTTP(t, func(b string, _ int) string {
			r := revOK(revIDs(b)[0])
			return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(r)+3) + "\r\n\r\n" + r
		})}, true},
		{"http chunked split at odd places (right)", Config{Pipeline: 2, Target: revRawHTTP(t, func(b string, _ int) string {
			r := revOK(revIDs(b)[0])
			return "HTTP/1.1 200 OK\r|\nTransfer-Encoding: chunked\r\n\r\n5\r|\n" + r[:5] + "\r\n" + strconv.FormatInt(int64(len(r)-5), 16) + ";x=y\r\n" + r[5:7] + "|" + r[7:] + "\r\n0\r\n|\r\n"
		})}, false},
		{"http batch missing element", Config{Batch: 3, Target: revRawHTTP(t, func(b string, _ int) string {
			ids := revIDs(b)
			return revResp("[" + revOK(ids[0]) + "," + revOK(ids[1]) + "]")
		})}, true},
		{"http batch extra element", Config{Batch: 3, Target: revRawHTTP(t, func(b string, _ int) string {
			ids := revIDs(b)
			return revResp("[" + revOK(ids[0]) + "," + revOK(ids[1]) + "," + revOK(ids[2]) + "," + revOK(ids[2]) + "]")
		})}, true},
		{"http swapped pipelined replies", Config{Pipeline: 2, Target: revRawHTTP(t, func(b string, n int) string {
			return revResp(revOK(strconv.Itoa(n + 100)))
		})}, true},
		{"http close mid-run", Config{Requests: 40, Target: revRawHTTP(t, func(b string, n int) string {
			if n == 5 {
				return "CLOSE"
			}
			return revResp(revOK(revIDs(b)[0]))
		})}, true},
		{"http reply to notification", Config{Notify: 1, Target: revRawHTTP(t, func(b string, n int) string {
			return revResp(`{"jsonrpc":"2.0","result":3,"id":null}`)
		})}, true},
	}
	for _, c := range cases {
		// Servers that never answer right cost a Timeout per request:
		// keep both short.
		if c.cfg.Requests == 0 {
			c.cfg.Requests = 24
		}
		if c.cfg.Conns == 0 {
			c.cfg.Conns = 4
		}
		if c.cfg.Timeout == 0 {
			c.cfg.Timeout = 100 * time.Millisecond
		}
		res := revRun(t, c.cfg)
		t.Logf("%-42s requests %3d errors %v", c.name, res.Requests, res.Errors)
		if (res.TotalErrors() > 0) != c.wantErr {
			t.Errorf("%s: errors %v, want errors: %v", c.name, res.Errors, c.wantErr)
		}
	}
}

// TestRun_webSocketFragmentsAndPings: fragmented replies with pings
// between fragments are right.
func TestRun_webSocketFragmentsAndPings(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pongs := make(chan struct{}, 1000)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := ws.Upgrade(c); err != nil {
					return
				}
				for {
					h, err := ws.ReadHeader(c)
					if err != nil {
						return
					}
					p := make([]byte, h.Length)
					if _, err := io.ReadFull(c, p); err != nil {
						return
					}
					if h.Masked {
						ws.Cipher(p, h.Mask, 0)
					}
					if h.OpCode == ws.OpPong {
						pongs <- struct{}{}
						continue
					}
					r := []byte(revOK(revIDs(string(p))[0]))
					ws.WriteHeader(c, ws.Header{Fin: false, OpCode: ws.OpText, Length: 3})
					c.Write(r[:3])
					wsutil.WriteServerMessage(c, ws.OpPing, []byte("hi"))
					ws.WriteHeader(c, ws.Header{Fin: false, OpCode: ws.OpContinuation, Length: 5})
					c.Write(r[3:8])
					ws.WriteHeader(c, ws.Header{Fin: true, OpCode: ws.OpContinuation, Length: int64(len(r) - 8)})
					c.Write(r[8:])
				}
			}()
		}
	}()
	res := revRun(t, Config{Target: "ws://" + ln.Addr().String() + "/", Requests: 50, Timeout: time.Second})
	t.Logf("ws: requests %d errors %v pongs %d", res.Requests, res.Errors, len(pongs))
	if res.TotalErrors() != 0 || res.Requests != 50 {
		t.Fatalf("%+v", res)
	}
}

// TestRun_exactCounts: a request budget is met exactly, without errors,
// over every transport and mode.
func TestRun_exactCounts(t *testing.T) {
	tcp, unix := StartDemoServer(t)
	for _, c := range []Config{
		{Target: "http://" + tcp + "/", Batch: 5, Pipeline: 3},
		{Target: "ws://" + tcp + "/", Batch: 5, Pipeline: 3},
		{Target: "unix://" + unix, Pipeline: 7},
		{Target: "tcp://" + tcp, Pipeline: 2, Notify: 0.3, Batch: 3},
		{Target: "tcp://" + tcp, Rate: 2000},
		{Target: "http://" + tcp + "/", Warmup: 200 * time.Millisecond, Pipeline: 2},
	} {
		c.Requests = 777
		c.Conns = 3
		res := revRun(t, c)
		t.Logf("%s batch %d rate %v: requests %d calls %d errors %v", c.Target[:4], c.Batch, c.Rate, res.Requests, res.Calls, res.Errors)
		if res.Requests != 777 || res.TotalErrors() != 0 {
			t.Errorf("%+v", res)
		}
	}
}

// TestRun_openLoopMidStall: one 300 ms stall mid-run shows in the tail.
func TestRun_openLoopMidStall(t *testing.T) {
	addr := NewLineServer(t, func(line string, n int) string {
		if n == 60 {
			time.Sleep(300 * time.Millisecond)
		}
		return revOK(revIDs(line)[0]) + "\n"
	})
	res := revRun(t, Config{Target: "tcp://" + addr, Conns: 1, Rate: 200, Duration: time.Second})
	t.Logf("requests %d p50 %d p90 %d p99 %d max %d errors %v", res.Requests, res.Latency.P50, res.Latency.P90, res.Latency.P99, res.Latency.Max, res.Errors)
	if res.Latency.Max < 290_000 || res.Latency.P90 < 50_000 {
		t.Errorf("stall hidden")
	}
}
