package bench

// Tests of the load loop: wrong servers caught (stalls, wrong shapes,
// missing and duplicate replies, stray bytes), exact counts, and what is
// measured when. Servers are loopback fakes (helpers_test.go); stall
// tests use a short Timeout.

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

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
	res := mustRun(t, Config{Target: "tcp://" + addr, Notify: 1, Rate: 200, Conns: 1, Duration: 300 * time.Millisecond})
	t.Logf("open loop: %d requests; server received %d, %d of them in the window", res.Requests, total.Load(), inWindow.Load())
	if res.Requests == 0 || res.Requests > 60+1 || res.TotalErrors() != 0 {
		t.Fatalf("open loop of notifications at 200/s for 300 ms: %d requests, errors %v", res.Requests, res.Errors)
	}
}

// TestRun_bigBatchDuplicateHidesMissing: in a batch of more than 64 calls
// the duplicate of a call past the 64th went unseen, so a reply repeating
// one id and dropping another passed.
func TestRun_bigBatchDuplicateHidesMissing(t *testing.T) {
	target := netHTTPServer(t, func(body string) string {
		ids := requestIDs(body)
		ids[70] = ids[69] // call 71 unanswered, call 70 answered twice
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = okReply(id)
		}
		return "[" + strings.Join(parts, ",") + "]"
	})
	res := mustRun(t, Config{Target: target, Batch: 100, Requests: 20, Conns: 1})
	t.Logf("requests %d calls %d errors %v", res.Requests, res.Calls, res.Errors)
	if res.Errors[ErrDuplicate] != 20 || res.Errors[ErrMissing] != 20 {
		t.Fatalf("errors %v, want 20 duplicates and 20 missing", res.Errors)
	}
}

// TestRun_stallClosedLoop: a server that stops answering late in the
// window (less than Timeout before the end) looked fine: requests in
// flight at the end were neither errors nor latencies. Now the run waits
// up to Timeout for them, then counts them as timeouts with their latency.
func TestRun_stallClosedLoop(t *testing.T) {
	var at atomic.Int64
	at.Store(math.MaxInt64)
	addr := stallingServer(t, &at)
	at.Store(time.Now().Add(150 * time.Millisecond).UnixNano())
	t0 := time.Now()
	res := mustRun(t, Config{Target: "tcp://" + addr, Conns: 2, Pipeline: 2, Duration: 400 * time.Millisecond, Timeout: 600 * time.Millisecond})
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
	addr := stallingServer(t, &at)
	at.Store(time.Now().Add(200 * time.Millisecond).UnixNano())
	t0 := time.Now()
	res := mustRun(t, Config{Target: "tcp://" + addr, Conns: 1, Rate: 100, Duration: 500 * time.Millisecond, Timeout: 500 * time.Millisecond})
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

// TestRun_openLoopMidStall: one 300 ms stall mid-run shows in the tail.
func TestRun_openLoopMidStall(t *testing.T) {
	addr := NewLineServer(t, func(line string, n int) string {
		if n == 60 {
			time.Sleep(300 * time.Millisecond)
		}
		return okReply(requestIDs(line)[0]) + "\n"
	})
	res := mustRun(t, Config{Target: "tcp://" + addr, Conns: 1, Rate: 200, Duration: time.Second})
	t.Logf("requests %d p50 %d p90 %d p99 %d max %d errors %v", res.Requests, res.Latency.P50, res.Latency.P90, res.Latency.P99, res.Latency.Max, res.Errors)
	if res.Latency.Max < 290_000 || res.Latency.P90 < 50_000 {
		t.Errorf("stall hidden")
	}
}

// TestRun_batchAnsweredAsSingles: on a stream a batch answered by
// separate objects, one message each, passed as correct.
func TestRun_batchAnsweredAsSingles(t *testing.T) {
	addr := NewLineServer(t, func(line string, _ int) string {
		var b strings.Builder
		for _, id := range requestIDs(line) {
			b.WriteString(okReply(id) + "\n")
		}
		return b.String()
	})
	res := mustRun(t, Config{Target: "tcp://" + addr, Batch: 4, Requests: 50})
	t.Logf("requests %d calls %d errors %v", res.Requests, res.Calls, res.Errors)
	if res.Errors[ErrShape] != 50 || res.TotalErrors() != 50 {
		t.Fatalf("errors %v, want one wrong shape per request", res.Errors)
	}
}

// TestRun_singleAnsweredAsArray: a single call answered by a one-element
// array passed, over HTTP and streams.
func TestRun_singleAnsweredAsArray(t *testing.T) {
	httpTarget := netHTTPServer(t, func(body string) string { return "[" + okReply(requestIDs(body)[0]) + "]" })
	stream := "tcp://" + NewLineServer(t, func(line string, _ int) string { return "[" + okReply(requestIDs(line)[0]) + "]\n" })
	for _, target := range []string{httpTarget, stream} {
		res := mustRun(t, Config{Target: target, Requests: 50})
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
		ids := requestIDs(line)
		return "[" + okReply(ids[0]) + "," + okReply(ids[2]) + "]\n"
	})
	t0 := time.Now()
	res := mustRun(t, Config{Target: "tcp://" + addr, Batch: 3, Requests: 8, Timeout: time.Second})
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
	res := mustRun(t, Config{Target: "tcp://" + addr, Notify: 1, Rate: 200, Conns: 1, Duration: 300 * time.Millisecond})
	t.Logf("server replied to %d notifications; errors %v", replied.Load(), res.Errors)
	if replied.Load() == 0 || res.Errors[ErrUnexpectedReply] < replied.Load()-2 {
		t.Fatalf("%d replies to notifications, errors %v", replied.Load(), res.Errors)
	}
}

// TestRun_unaskedHTTPBytes: bytes from an HTTP server with nothing in
// flight are a reply to no request, and the connection is dropped.
func TestRun_unaskedHTTPBytes(t *testing.T) {
	target := rawHTTPServer(t, func(b string, _ int) string {
		return httpReply(okReply(requestIDs(b)[0])) + "|" + httpReply(okReply("1"))
	})
	res := mustRun(t, Config{Target: target, Rate: 100, Conns: 1, Duration: 300 * time.Millisecond})
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
		r := okReply(requestIDs(line)[0]) + "\n"
		if time.Now().UnixNano() < until.Load() {
			r = okReply("999999") + "\n" + r
		}
		return r
	})
	until.Store(time.Now().Add(150 * time.Millisecond).UnixNano())
	res := mustRun(t, Config{Target: "tcp://" + addr, Rate: 200, Conns: 1, Warmup: 300 * time.Millisecond, Duration: 200 * time.Millisecond})
	t.Logf("requests %d errors %v", res.Requests, res.Errors)
	if res.TotalErrors() != 0 || res.Requests == 0 {
		t.Fatalf("errors %v in warm-up counted", res.Errors)
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
	r := newRunner(cfg, tg, msgs)
	r.start = time.Now().Add(-time.Second)
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

	target := rawHTTPServer(t, func(string, int) string { return "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n" })
	res := mustRun(t, Config{Target: target, Batch: 3, Requests: 10})
	if res.Errors[ErrHTTPStatus] != 10 || res.TotalErrors() != 10 {
		t.Fatalf("HTTP 500: errors %v, want the status only", res.Errors)
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
		{"stream wrong id", Config{Target: stream(func(l string, _ int) string { return okReply("999999") + "\n" })}, true},
		{"stream dup", Config{Target: stream(func(l string, _ int) string { r := okReply(requestIDs(l)[0]) + "\n"; return r + r })}, true},
		{"stream invalid json", Config{Target: stream(func(l string, _ int) string { return `{"jsonrpc":"2.0","result":,"id":1}` + "\n" })}, true},
		{"stream truncated then close", Config{Target: stream(func(l string, n int) string {
			if n == 3 {
				return `{"jsonrpc":"2.0","res`
			}
			return okReply(requestIDs(l)[0]) + "\n"
		})}, true},
		{"stream result when error expected", Config{ExpectError: true, Target: stream(func(l string, _ int) string { return okReply(requestIDs(l)[0]) + "\n" })}, true},
		{"stream reordered pipeline (right)", Config{Pipeline: 4, Conns: 1, Target: stream(func() func(string, int) string {
			var held string
			return func(l string, n int) string {
				r := okReply(requestIDs(l)[0]) + "\n"
				if n%2 == 0 {
					held = r
					return ""
				}
				return r + held
			}
		}())}, false},
		{"stream batch reordered elements (right)", Config{Batch: 3, Target: stream(func(l string, _ int) string {
			ids := requestIDs(l)
			return "[" + okReply(ids[2]) + "," + okReply(ids[0]) + "," + okReply(ids[1]) + "]\n"
		})}, false},
		{"stream batch missing element", Config{Batch: 3, Timeout: 100 * time.Millisecond, Target: stream(func(l string, _ int) string {
			ids := requestIDs(l)
			return "[" + okReply(ids[0]) + "," + okReply(ids[1]) + "]\n"
		})}, true},
		{"http 500", Config{Target: rawHTTPServer(t, func(b string, _ int) string {
			return "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"
		})}, true},
		{"http content-length short", Config{Target: rawHTTPServer(t, func(b string, _ int) string {
			r := okReply(requestIDs(b)[0])
			return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(r)-3) + "\r\n\r\n" + r
		})}, true},
		{"http content-length long", Config{Timeout: 100 * time.Millisecond, Target: rawHTTPServer(t, func(b string, _ int) string {
			r := okReply(requestIDs(b)[0])
			return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(r)+3) + "\r\n\r\n" + r
		})}, true},
		{"http chunked split at odd places (right)", Config{Pipeline: 2, Target: rawHTTPServer(t, func(b string, _ int) string {
			r := okReply(requestIDs(b)[0])
			return "HTTP/1.1 200 OK\r|\nTransfer-Encoding: chunked\r\n\r\n5\r|\n" + r[:5] + "\r\n" + strconv.FormatInt(int64(len(r)-5), 16) + ";x=y\r\n" + r[5:7] + "|" + r[7:] + "\r\n0\r\n|\r\n"
		})}, false},
		{"http batch missing element", Config{Batch: 3, Target: rawHTTPServer(t, func(b string, _ int) string {
			ids := requestIDs(b)
			return httpReply("[" + okReply(ids[0]) + "," + okReply(ids[1]) + "]")
		})}, true},
		{"http batch extra element", Config{Batch: 3, Target: rawHTTPServer(t, func(b string, _ int) string {
			ids := requestIDs(b)
			return httpReply("[" + okReply(ids[0]) + "," + okReply(ids[1]) + "," + okReply(ids[2]) + "," + okReply(ids[2]) + "]")
		})}, true},
		{"http swapped pipelined replies", Config{Pipeline: 2, Target: rawHTTPServer(t, func(b string, n int) string {
			return httpReply(okReply(strconv.Itoa(n + 100)))
		})}, true},
		{"http close mid-run", Config{Requests: 40, Target: rawHTTPServer(t, func(b string, n int) string {
			if n == 5 {
				return "CLOSE"
			}
			return httpReply(okReply(requestIDs(b)[0]))
		})}, true},
		{"http reply to notification", Config{Notify: 1, Target: rawHTTPServer(t, func(b string, n int) string {
			return httpReply(`{"jsonrpc":"2.0","result":3,"id":null}`)
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
		res := mustRun(t, c.cfg)
		t.Logf("%-42s requests %3d errors %v", c.name, res.Requests, res.Errors)
		if (res.TotalErrors() > 0) != c.wantErr {
			t.Errorf("%s: errors %v, want errors: %v", c.name, res.Errors, c.wantErr)
		}
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
		res := mustRun(t, c)
		t.Logf("%s batch %d rate %v: requests %d calls %d errors %v", c.Target[:4], c.Batch, c.Rate, res.Requests, res.Calls, res.Errors)
		if res.Requests != 777 || res.TotalErrors() != 0 {
			t.Errorf("%+v", res)
		}
	}
}
