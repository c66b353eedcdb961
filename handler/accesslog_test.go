package handler

// Tests of the access log (observe.go): one record per message — a call,
// a notification, a batch, a fault — with its attributes exactly, at
// Info when sampled and at Warn when slow; the caller's transport and
// address; names and ids clipped. Records are caught by alRecorder, a
// slog.Handler that renders each one with its attributes' kinds. The
// tables are mxTable's (metrics_test.go), with metrics on and off, as
// the record of a call must not depend on them. Helpers are prefixed al.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// alRecord is one record as alRecorder renders it.
type alRecord struct {
	level slog.Level
	msg   string
	attrs string            // `key=value` by space, strings quoted, duration_ms as D
	dur   time.Duration     // the duration_ms attribute
	vals  map[string]string // the attributes' values, as text
	kinds map[string]slog.Kind
}

func (r alRecord) String() string { return fmt.Sprintf("%v %q %s", r.level, r.msg, r.attrs) }

// alRecorder is a slog.Handler that keeps the records it is given.
type alRecorder struct {
	mu   sync.Mutex
	recs []alRecord
}

func (h *alRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *alRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *alRecorder) WithGroup(string) slog.Handler            { return h }

func (h *alRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := alRecord{level: r.Level, msg: r.Message, vals: map[string]string{}, kinds: map[string]slog.Kind{}}
	var parts []string
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve()
		rec.vals[a.Key], rec.kinds[a.Key] = v.String(), v.Kind()
		var s string
		switch {
		case v.Kind() == slog.KindString:
			s = strconv.Quote(v.String())
		case a.Key == "duration_ms" && v.Kind() == slog.KindFloat64:
			s, rec.dur = "D", time.Duration(v.Float64()*1e6)
		default:
			s = v.String()
		}
		parts = append(parts, a.Key+"="+s)
		return true
	})
	rec.attrs = strings.Join(parts, " ")
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

// take returns the records so far and forgets them.
func (h *alRecorder) take() []alRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.recs
	h.recs = nil
	return r
}

// alTable returns an mxTable, with metrics or not, that logs to a
// recorder with a (whose Logger is set here).
func alTable(metrics bool, a AccessLog, opts ...Option) (*Table, *alRecorder) {
	h := &alRecorder{}
	a.Logger = slog.New(h)
	return mxTable(append([]Option{WithMetrics(metrics), WithAccessLog(a)}, opts...)...), h
}

// alOne dispatches msg with ctx and returns its one record.
func alOne(t testing.TB, tab *Table, h *alRecorder, ctx context.Context, msg string) alRecord {
	t.Helper()
	tab.Dispatch(ctx, nil, []byte(msg))
	recs := h.take()
	if len(recs) != 1 {
		t.Fatalf("%.200s: %d records %v, want 1", msg, len(recs), recs)
	}
	return recs[0]
}

// alCheck asserts a record's level, message and attributes.
func alCheck(t testing.TB, what string, r alRecord, level slog.Level, msg, attrs string) {
	t.Helper()
	if r.level != level || r.msg != msg || r.attrs != attrs {
		t.Errorf("%s: record\n%v %q %s\nwant\n%v %q %s", what, r.level, r.msg, r.attrs, level, msg, attrs)
	}
	if r.dur < 0 {
		t.Errorf("%s: duration %v", what, r.dur)
	}
}

const alLocal = `transport="in-process"`

func TestAccessLog_callRecords(t *testing.T) {
	for _, metrics := range []bool{false, true} {
		tab, h := alTable(metrics, AccessLog{Sample: 1})
		ctx := context.Background()
		for _, c := range []struct {
			msg, attrs string
		}{
			{mxReq(1, "ok", ""), `method="ok" id=1 code=0 duration_ms=D ` + alLocal},
			{`{"jsonrpc":"2.0","method":"fail","params":[7],"id":"a"}`, `method="fail" id="a" code=7 duration_ms=D ` + alLocal},
			{mxReq(3, "add", `[1,"x"]`), `method="add" id=3 code=-32602 duration_ms=D ` + alLocal},
			{mxReq(4, "work", "[1]"), `method="work" id=4 code=0 duration_ms=D ` + alLocal},
			{mxReq(5, "failb", "[9]"), `method="failb" id=5 code=9 duration_ms=D ` + alLocal},
			{mxReq(6, "nope", ""), `method="nope" id=6 code=-32601 duration_ms=D ` + alLocal},
			{`{"jsonrpc":"2.0","method":"\u006fk","id":7}`, `method="ok" id=7 code=0 duration_ms=D ` + alLocal},
			{`{"jsonrpc":"2.0","method":"n\u006fpe","id":null}`, `method="nope" id=<nil> code=-32601 duration_ms=D ` + alLocal},
			{`{"method":"ok","params":[],"id":8}`, `method="ok" id=8 code=0 duration_ms=D ` + alLocal},
			{mxNote("ok", ""), `method="ok" notification=true code=0 duration_ms=D ` + alLocal},
			{mxNote("fail", "[7]"), `method="fail" notification=true code=7 duration_ms=D ` + alLocal},
			{mxNote("nope", ""), `method="nope" notification=true code=-32601 duration_ms=D ` + alLocal},
			{mxNote("work", "[1]"), `method="work" notification=true code=0 duration_ms=D ` + alLocal},
		} {
			r := alOne(t, tab, h, ctx, c.msg)
			alCheck(t, fmt.Sprintf("metrics %v: %s", metrics, c.msg), r, slog.LevelInfo, "jetrpc: call", c.attrs)
		}
	}
}

// TestAccessLog_faultRecords: a message answered whole before any method
// logs one call record with no method, no id, and no duration.
func TestAccessLog_faultRecords(t *testing.T) {
	for _, metrics := range []bool{false, true} {
		tab, h := alTable(metrics, AccessLog{Sample: 1}, WithMaxBatch(2))
		for _, c := range []struct {
			msg, attrs string
		}{
			{`{"jsonrpc":"2.0","method":`, `method="" code=-32700 duration_ms=D ` + alLocal},
			{`[]`, `method="" code=-32600 duration_ms=D ` + alLocal},
			{`1`, `method="" code=-32600 duration_ms=D ` + alLocal},
			{mxBatch(mxReq(1, "ok", ""), mxReq(2, "ok", ""), mxReq(3, "ok", "")), `method="" code=-32600 duration_ms=D ` + alLocal},
		} {
			r := alOne(t, tab, h, context.Background(), c.msg)
			alCheck(t, fmt.Sprintf("metrics %v: %s", metrics, c.msg), r, slog.LevelInfo, "jetrpc: call", c.attrs)
			if r.dur != 0 {
				t.Errorf("%s: duration %v, want 0", c.msg, r.dur)
			}
		}
		// An invalid request has an id, if one could be read.
		r := alOne(t, tab, h, context.Background(), `{"jsonrpc":"2.0","method":1,"id":9}`)
		if r.level != slog.LevelInfo || r.msg != "jetrpc: call" || r.vals["id"] != "9" || !strings.Contains(r.attrs, " code=-32600 ") {
			t.Errorf("metrics %v: invalid request: %v", metrics, r)
		}
	}
}

// TestAccessLog_batchRecord: a batch logs one record, with its elements
// and the errors among their replies, however it runs; its elements
// log nothing of their own.
func TestAccessLog_batchRecord(t *testing.T) {
	for _, metrics := range []bool{false, true} {
		tab, h := alTable(metrics, AccessLog{Sample: 1})
		ctx := context.Background()
		for _, c := range []struct {
			msg, attrs string
		}{
			{mxBatch(mxReq(1, "ok", ""), mxReq(2, "fail", "[7]"), mxReq(3, "nope", ""), `1`, mxNote("ok", "")), `elements=5 errors=3 duration_ms=D ` + alLocal},
			{mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "failb", "[7]"), mxReq(3, "ok", "")), `elements=3 errors=1 duration_ms=D ` + alLocal},
			{mxBatch(mxNote("ok", ""), mxNote("work", "[1]")), `elements=2 errors=0 duration_ms=D ` + alLocal},
			{mxCycle(100, mxReq(1, "ok", ""), mxReq(2, "fail", "[7]")), `elements=100 errors=50 duration_ms=D ` + alLocal},
		} {
			r := alOne(t, tab, h, ctx, c.msg)
			alCheck(t, fmt.Sprintf("metrics %v: %.100s", metrics, c.msg), r, slog.LevelInfo, "jetrpc: batch", c.attrs)
		}
	}
}

// TestAccessLog_deferredRecords: a message deferred to a Pending logs
// when it is run or answered busy, once.
func TestAccessLog_deferredRecords(t *testing.T) {
	for _, metrics := range []bool{false, true} {
		tab, h := alTable(metrics, AccessLog{Sample: 1})
		ctx := context.Background()
		for _, c := range []struct {
			msg   string
			busy  bool
			rmsg  string
			attrs string
		}{
			{mxReq(1, "work", "[1]"), false, "jetrpc: call", `method="work" id=1 code=0 duration_ms=D ` + alLocal},
			{mxReq(2, "failb", "[5]"), false, "jetrpc: call", `method="failb" id=2 code=5 duration_ms=D ` + alLocal},
			{mxReq(3, "work", "[1]"), true, "jetrpc: call", `method="work" id=3 code=-32000 duration_ms=D ` + alLocal},
			{mxNote("work", "[1]"), true, "jetrpc: call", `method="work" notification=true code=-32000 duration_ms=D ` + alLocal},
			{mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "ok", "")), false, "jetrpc: batch", `elements=2 errors=0 duration_ms=D ` + alLocal},
			{mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "ok", ""), mxReq(3, "nope", "")), true, "jetrpc: batch", `elements=3 errors=3 duration_ms=D ` + alLocal},
		} {
			var later Pending
			if _, oc := tab.DispatchInline(ctx, nil, []byte(c.msg), &later); oc != Deferred {
				t.Fatalf("%s: outcome %v, want Deferred", c.msg, oc)
			}
			if recs := h.take(); len(recs) != 0 {
				t.Errorf("%s: deferred, but logged %v", c.msg, recs)
			}
			p := later.Take()
			if c.busy {
				p.Busy(ctx, nil)
			} else {
				p.Run(ctx, nil)
			}
			recs := h.take()
			if len(recs) != 1 {
				t.Fatalf("%s: %d records %v, want 1", c.msg, len(recs), recs)
			}
			alCheck(t, fmt.Sprintf("metrics %v: %s busy %v", metrics, c.msg, c.busy), recs[0], slog.LevelInfo, c.rmsg, c.attrs)
		}
	}
}

// TestAccessLog_deferredCallLogsItsOwnCode: an event loop's Pending,
// reused, runs a deferred call that succeeds after an error reply: its
// record says code 0.
func TestAccessLog_deferredCallLogsItsOwnCode(t *testing.T) {
	for _, metrics := range []bool{false, true} {
		tab, h := alTable(metrics, AccessLog{Sample: 1})
		ctx := context.Background()
		var later Pending
		tab.DispatchInline(ctx, nil, []byte(mxReq(1, "fail", "[7]")), &later)
		if _, oc := tab.DispatchInline(ctx, nil, []byte(mxReq(2, "work", "[1]")), &later); oc != Deferred {
			t.Fatalf("outcome %v, want Deferred", oc)
		}
		p := later.Take()
		p.Run(ctx, nil)
		recs := h.take()
		if len(recs) != 2 {
			t.Fatalf("%d records %v, want 2", len(recs), recs)
		}
		alCheck(t, fmt.Sprintf("metrics %v: work after fail", metrics), recs[1], slog.LevelInfo, "jetrpc: call", `method="work" id=2 code=0 duration_ms=D `+alLocal)
	}
}

// TestAccessLog_timeoutRecord: a call answered at its deadline logs
// parser.CodeDeadline, once, and its duration is at least the timeout.
func TestAccessLog_timeoutRecord(t *testing.T) {
	tab, h := alTable(true, AccessLog{Sample: 1})
	g := newMxGate()
	Register(tab, "stuck", g.fn, Timeout(20*time.Millisecond))
	r := alOne(t, tab, h, context.Background(), mxReq(1, "stuck", "[1]"))
	alCheck(t, "timeout", r, slog.LevelInfo, "jetrpc: call", `method="stuck" id=1 code=-32002 duration_ms=D `+alLocal)
	if r.dur < 20*time.Millisecond {
		t.Errorf("duration %v, want at least the timeout", r.dur)
	}
	<-g.entered
	close(g.release)
	<-g.returned
	time.Sleep(20 * time.Millisecond)
	if recs := h.take(); len(recs) != 0 {
		t.Errorf("the late worker logged %v", recs)
	}
}

// TestAccessLog_slowOnly: with Sample 0 only messages slower than Slow
// are logged, at Warn, as "slow call" or "slow batch"; with Sample 1 a
// slow message is logged once, at Warn.
func TestAccessLog_slowOnly(t *testing.T) {
	const slow = 200 * time.Millisecond
	for _, sample := range []float64{0, 1} {
		tab, h := alTable(true, AccessLog{Sample: sample, Slow: slow})
		Register(tab, "nap", func(context.Context, struct{}) (int, error) {
			time.Sleep(slow + 50*time.Millisecond)
			return 1, nil
		})
		ctx := context.Background()
		for i := range 5 {
			tab.Dispatch(ctx, nil, []byte(mxReq(i, "ok", "")))
		}
		tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":`))
		tab.Dispatch(ctx, nil, []byte(mxBatch(mxReq(1, "ok", ""), mxReq(2, "work", "[1]"))))
		if recs := h.take(); sample == 0 && len(recs) != 0 {
			t.Errorf("Sample 0: fast messages logged: %v", recs)
		} else if sample == 1 && len(recs) != 7 {
			t.Errorf("Sample 1: %d records of fast messages, want 7: %v", len(recs), recs)
		}
		r := alOne(t, tab, h, ctx, mxReq(9, "nap", ""))
		alCheck(t, "slow call", r, slog.LevelWarn, "jetrpc: slow call", `method="nap" id=9 code=0 duration_ms=D `+alLocal)
		if r.dur <= slow {
			t.Errorf("slow call: duration %v, want over %v", r.dur, slow)
		}
		r = alOne(t, tab, h, ctx, mxBatch(mxReq(1, "nap", ""), mxReq(2, "ok", "")))
		alCheck(t, "slow batch", r, slog.LevelWarn, "jetrpc: slow batch", `elements=2 errors=0 duration_ms=D `+alLocal)
		r = alOne(t, tab, h, ctx, mxNote("nap", ""))
		alCheck(t, "slow notification", r, slog.LevelWarn, "jetrpc: slow call", `method="nap" notification=true code=0 duration_ms=D `+alLocal)
	}
}

// TestAccessLog_sampleHalf: Sample 0.5 logs about half the messages.
func TestAccessLog_sampleHalf(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 0.5})
	const n = 2000
	for i := range n {
		tab.Dispatch(context.Background(), nil, []byte(mxReq(i, "ok", "")))
	}
	recs := h.take()
	if len(recs) < 800 || len(recs) > 1200 {
		t.Errorf("%d of %d messages logged, want about half", len(recs), n)
	}
	for _, r := range recs {
		if r.level != slog.LevelInfo || r.msg != "jetrpc: call" {
			t.Fatalf("record %v", r)
		}
	}
}

// TestAccessLog_transportAndRemote: records carry the transport and the
// remote address of the caller's CallContext — also through a context
// derived from it, a deferred message and a timed call — and no remote
// when there is none.
func TestAccessLog_transportAndRemote(t *testing.T) {
	tab, h := alTable(true, AccessLog{Sample: 1})
	Register(tab, "slowish", func(context.Context, [1]int) (int, error) { return 1, nil }, Timeout(time.Second))
	ws := &CallContext{Parent: context.Background(), Meta: Meta{
		Transport: TransportWebSocket,
		Remote:    &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242},
	}}
	const wsAttrs = `transport="websocket" remote="192.0.2.1:4242"`
	type key struct{}
	derived := context.WithValue(ws, key{}, 1)
	unix := &CallContext{Parent: context.Background(), Meta: Meta{Transport: TransportStream}}
	for _, c := range []struct {
		ctx        context.Context
		msg, attrs string
	}{
		{ws, mxReq(1, "ok", ""), `method="ok" id=1 code=0 duration_ms=D ` + wsAttrs},
		{ws, mxReq(2, "slowish", "[1]"), `method="slowish" id=2 code=0 duration_ms=D ` + wsAttrs},
		{ws, mxBatch(mxReq(1, "ok", ""), mxReq(2, "work", "[1]")), `elements=2 errors=0 duration_ms=D ` + wsAttrs},
		{ws, `{"jsonrpc":`, `method="" code=-32700 duration_ms=D ` + wsAttrs},
		{derived, mxNote("ok", ""), `method="ok" notification=true code=0 duration_ms=D ` + wsAttrs},
		{unix, mxReq(3, "nope", ""), `method="nope" id=3 code=-32601 duration_ms=D transport="stream"`},
	} {
		r := alOne(t, tab, h, c.ctx, c.msg)
		alCheck(t, c.msg, r, r.level, r.msg, c.attrs)
	}
	var later Pending
	if _, oc := tab.DispatchInline(ws, nil, []byte(mxReq(4, "work", "[1]")), &later); oc != Deferred {
		t.Fatalf("outcome %v, want Deferred", oc)
	}
	p := later.Take()
	p.Run(ws, nil)
	recs := h.take()
	if len(recs) != 1 {
		t.Fatalf("deferred: %d records %v", len(recs), recs)
	}
	alCheck(t, "deferred", recs[0], slog.LevelInfo, "jetrpc: call", `method="work" id=4 code=0 duration_ms=D `+wsAttrs)
}

// TestAccessLog_clipsLongNamesAndIDs: a method name or id longer than 128
// bytes is logged as its first 128 bytes and "…", escaped or not,
// registered or not, with metrics or without.
func TestAccessLog_clipsLongNamesAndIDs(t *testing.T) {
	long := strings.Repeat("m", 300)
	registered := strings.Repeat("r", 200)
	clipped := func(s string) string { return s[:128] + "…" }
	for _, metrics := range []bool{false, true} {
		h := &alRecorder{}
		tab := NewTable(WithMetrics(metrics), WithLogger(mxQuiet()), WithAccessLog(AccessLog{Logger: slog.New(h), Sample: 1}))
		RegisterNoParams(tab, registered, func(context.Context) (int, error) { return 1, nil }, Inline())
		for _, c := range []struct {
			msg, method, id string
		}{
			{mxReq(1, long, ""), clipped(long), "1"},
			{`{"jsonrpc":"2.0","method":"` + strings.Repeat(`\u006d`, 200) + `","id":1}`, clipped(long), "1"},
			{`{"jsonrpc":"2.0","method":"x","id":"` + long + `"}`, "x", clipped(long)},
			{mxReq(1, registered, ""), clipped(registered), "1"},
			{mxReq(1, strings.Repeat("m", 128), ""), strings.Repeat("m", 128), "1"},
		} {
			r := alOne(t, tab, h, context.Background(), c.msg)
			if r.vals["method"] != c.method || r.vals["id"] != c.id {
				t.Errorf("metrics %v: %.60s…: method %q (%d bytes), id %q (%d bytes); want %q, %q", metrics, c.msg,
					r.vals["method"], len(r.vals["method"]), r.vals["id"], len(r.vals["id"]), c.method, c.id)
			}
		}
	}
}

// TestAccessLog_clipKeepsUTF8: clipping a name or id at 128 bytes does
// not cut a character in two: what is logged stays valid UTF-8.
func TestAccessLog_clipKeepsUTF8(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 1})
	name := strings.Repeat("a", 127) + "éé"
	r := alOne(t, tab, h, context.Background(), `{"jsonrpc":"2.0","method":"`+name+`","id":"`+name+`"}`)
	for _, k := range []string{"method", "id"} {
		if v := r.vals[k]; !utf8.ValidString(v) || len(v) > 128+len("…") {
			t.Errorf("%s %q: not valid UTF-8, or over 128 bytes and the ellipsis", k, v)
		}
	}
}

// TestAccessLog_offWhenNothingToLog: an access log without a Logger, or
// with neither Sample nor Slow, is off: the table observes nothing.
func TestAccessLog_offWhenNothingToLog(t *testing.T) {
	h := &alRecorder{}
	for _, a := range []AccessLog{
		{Sample: 1, Slow: time.Millisecond},
		{Logger: slog.New(h)},
		{Logger: slog.New(h), Sample: -1, Slow: -time.Second},
	} {
		tab := NewTable(WithAccessLog(a))
		RegisterNoParams(tab, "ok", func(context.Context) (int, error) { return 1, nil }, Inline())
		tab.Dispatch(context.Background(), nil, []byte(mxReq(1, "ok", "")))
		if tab.obs != nil || metricsOn(tab) {
			t.Errorf("%+v: the table observes its calls", a)
		}
	}
	if recs := h.take(); len(recs) != 0 {
		t.Errorf("logged %v", recs)
	}
}

// TestAccessLog_sampleShare: with Sample p, about p of the messages are
// logged — the count of a binomial draw, within 5 standard deviations,
// over inline and blocking calls, from Dispatch and from a transport's
// Pending — and the gaps between records are not fixed (sampling, not
// every n-th message).
func TestAccessLog_sampleShare(t *testing.T) {
	const n = 20000
	for _, p := range []float64{0.01, 0.1, 0.5} {
		tab, h := alTable(false, AccessLog{Sample: p})
		var later Pending
		for i := range n {
			msg := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
			if i%4 == 3 {
				msg = []byte(`{"jsonrpc":"2.0","method":"work","params":[2],"id":1}`)
			}
			if i%2 == 0 {
				tab.Dispatch(context.Background(), nil, msg)
				continue
			}
			if _, oc := tab.DispatchInline(context.Background(), nil, msg, &later); oc == Deferred {
				d := later.Take()
				d.Run(context.Background(), nil)
			}
			later.Flush()
		}
		got := float64(len(h.take()))
		mean, sd := n*p, math.Sqrt(n*p*(1-p))
		if math.Abs(got-mean) > 5*sd {
			t.Errorf("Sample %v: %v of %d messages logged, want %v ± %.0f", p, got, n, mean, 5*sd)
		}
	}
	// The gaps: a state's record comes after a random number of messages.
	gaps := map[int64]bool{}
	for range 200 {
		gaps[logSkip(0.1)] = true
	}
	if len(gaps) < 10 {
		t.Errorf("200 gaps drawn for Sample 0.1 take %d values: %v", len(gaps), gaps)
	}
}

// TestAccessLog_slowWithoutMetrics: without metrics the messages that
// are not sampled are timed on the coarse clock: a call well past Slow
// is still logged as slow, with its duration to within the clock's
// steps; a fast one is not; a sampled one has its precise duration.
func TestAccessLog_slowWithoutMetrics(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 0, Slow: 30 * time.Millisecond})
	Register(tab, "nap", func(_ context.Context, p [1]int) (int, error) {
		time.Sleep(time.Duration(p[0]) * time.Millisecond)
		return p[0], nil
	}, Inline())
	var later Pending
	run := func(msg string) {
		if _, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), &later); oc != Replied {
			t.Fatalf("%s: %v", msg, oc)
		}
		later.Flush()
	}
	for range 3 {
		run(`{"jsonrpc":"2.0","method":"nap","params":[0],"id":1}`)
	}
	run(`{"jsonrpc":"2.0","method":"nap","params":[80],"id":2}`)
	recs := h.take()
	if len(recs) != 1 || recs[0].msg != "jetrpc: slow call" {
		t.Fatalf("records %v, want the slow call alone", recs)
	}
	if d := recs[0].dur; d < 70*time.Millisecond || d > 10*time.Second {
		t.Errorf("the slow call's duration %v, want about 80 ms", d)
	}
	// Sampled: precise. A state's first draw of Sample 1 logs at once.
	tab, h = alTable(false, AccessLog{Sample: 1, Slow: time.Hour})
	Register(tab, "nap", func(_ context.Context, p [1]int) (int, error) { return p[0], nil }, Inline())
	later = Pending{}
	if _, oc := tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"nap","params":[0],"id":3}`), &later); oc != Replied {
		t.Fatal(oc)
	}
	if recs := h.take(); len(recs) != 1 || recs[0].dur <= 0 || recs[0].dur >= 10*time.Millisecond {
		t.Errorf("a sampled fast call: %v, want one record with its precise duration", recs)
	}
}

// alJSON returns an mxTable logging a to a JSON handler, and a func that
// returns the records written so far, decoded, and forgets them.
func alJSON(a AccessLog, opts ...Option) (*Table, func(testing.TB) []map[string]any) {
	var mu sync.Mutex
	var buf bytes.Buffer
	a.Logger = slog.New(slog.NewJSONHandler(&alLocked{mu: &mu, w: &buf}, nil))
	tab := mxTable(append([]Option{WithMetrics(false), WithAccessLog(a)}, opts...)...)
	return tab, func(t testing.TB) []map[string]any {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		var recs []map[string]any
		dec := json.NewDecoder(&buf)
		dec.UseNumber()
		for dec.More() {
			var r map[string]any
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("a record that is not JSON: %v", err)
			}
			recs = append(recs, r)
		}
		buf.Reset()
		return recs
	}
}

// alLocked is a writer under a mutex.
type alLocked struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *alLocked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestAccessLog_idAsSent: a string id is logged as the string it
// decodes to, not as its JSON text quoted again (it was "id":"\"long\""
// in JSON); a number as a number; null as null — what a JSON handler
// writes is the id as the request had it.
func TestAccessLog_idAsSent(t *testing.T) {
	tab, take := alJSON(AccessLog{Sample: 1})
	for _, c := range []struct {
		id   string // as sent
		want string // the record's "id", as JSON
	}{
		{`"long"`, `"long"`},
		{`"a\"b\\c\/d"`, `"a\"b\\c/d"`},
		{`"\u00e9t\u00E9"`, `"été"`},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\ud83d"`, `"\ufffd"`},
		{`"é"`, `"é"`},
		{`""`, `""`},
		{`"7"`, `"7"`},
		{`"null"`, `"null"`},
		{`7`, `7`},
		{`-3`, `-3`},
		{`0`, `0`},
		{`18446744073709551615`, `18446744073709551615`},
		{`1.5`, `1.5`},
		{`-2.5e-3`, `-0.0025`},
		{`1e400`, `"1e400"`},
		{`null`, `null`},
	} {
		tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"ok","id":`+c.id+`}`))
		recs := take(t)
		if len(recs) != 1 {
			t.Fatalf("id %s: %d records, want 1", c.id, len(recs))
		}
		got, err := json.Marshal(recs[0]["id"])
		if err != nil {
			t.Fatal(err)
		}
		var want any
		dec := json.NewDecoder(strings.NewReader(c.want))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		if string(got) != string(wantJSON) {
			t.Errorf("id %s: logged as %s, want %s", c.id, got, wantJSON)
		}
	}
	// A long escaped id is decoded, then clipped.
	tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"ok","id":"`+strings.Repeat(`\u0061`, 300)+`"}`))
	if recs := take(t); len(recs) != 1 || recs[0]["id"] != strings.Repeat("a", 128)+"…" {
		t.Errorf("a long escaped id: %v, want 128 a's and …", recs)
	}
	// Exactly 128 bytes, escaped: not clipped.
	tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"ok","id":"`+strings.Repeat(`\u0061`, 128)+`"}`))
	if recs := take(t); len(recs) != 1 || recs[0]["id"] != strings.Repeat("a", 128) {
		t.Errorf("a 128-byte escaped id: %v, want 128 a's", recs)
	}
}

// TestAccessLog_durationInMilliseconds: a record's duration is
// duration_ms, milliseconds as a float — not integer nanoseconds, which
// a JSON handler wrote for slog.Duration ("duration":20512345).
func TestAccessLog_durationInMilliseconds(t *testing.T) {
	tab, take := alJSON(AccessLog{Sample: 1})
	Register(tab, "nap", func(context.Context, struct{}) (int, error) {
		time.Sleep(20 * time.Millisecond)
		return 1, nil
	})
	tab.Dispatch(context.Background(), nil, []byte(mxReq(1, "nap", "")))
	tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "nap", ""), mxReq(2, "ok", ""))))
	tab.Dispatch(context.Background(), nil, []byte(mxReq(2, "ok", "")))
	recs := take(t)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %v", len(recs), recs)
	}
	for i, r := range recs {
		if _, ok := r["duration"]; ok {
			t.Errorf("record %d has duration: %v", i, r)
		}
		n, ok := r["duration_ms"].(json.Number)
		if !ok {
			t.Fatalf("record %d: duration_ms %#v, want a number", i, r["duration_ms"])
		}
		ms, _ := n.Float64()
		if lo := map[bool]float64{true: 19, false: 0}[i < 2]; ms < lo || ms > 10_000 {
			t.Errorf("record %d: duration_ms %v, want at least %v", i, ms, lo)
		}
	}
	if n := recs[2]["duration_ms"].(json.Number); !strings.ContainsAny(string(n), ".e") && n != "0" {
		t.Errorf("a fast call's duration_ms %s: not a fraction of a millisecond", n)
	}
}

// TestAccessLog_principal: a record names the caller the Authorizer
// named (Meta.Principal), and only then.
func TestAccessLog_principal(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 1})
	cc := &CallContext{Parent: context.Background(), Meta: Meta{Transport: TransportHTTP, Principal: "ops-key"}}
	r := alOne(t, tab, h, cc, mxReq(1, "ok", ""))
	alCheck(t, "call", r, slog.LevelInfo, "jetrpc: call", `method="ok" id=1 code=0 duration_ms=D transport="http" principal="ops-key"`)
	r = alOne(t, tab, h, cc, mxBatch(mxReq(1, "ok", "")))
	alCheck(t, "batch", r, slog.LevelInfo, "jetrpc: batch", `elements=1 errors=0 duration_ms=D transport="http" principal="ops-key"`)
	cc.Meta.Principal = ""
	r = alOne(t, tab, h, cc, mxReq(1, "ok", ""))
	alCheck(t, "no principal", r, slog.LevelInfo, "jetrpc: call", `method="ok" id=1 code=0 duration_ms=D transport="http"`)
}

// TestTable_Refused: a refusal logs one record, status and reason then
// the caller's attributes; a status of 0 is left out; RefusedConn has
// the address alone. Without an access log nothing is logged.
func TestTable_Refused(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 1})
	cc := &CallContext{Parent: context.Background(), Meta: Meta{
		Transport: TransportHTTP,
		Remote:    &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242},
		Principal: "ops-key",
	}}
	tab.Refused(cc, 413, "body_too_large")
	cc.Meta.Transport, cc.Meta.Principal = TransportStream, ""
	tab.Refused(cc, 0, "message_too_large")
	tab.RefusedConn(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 9), Port: 1}, "too_many_connections")
	recs := h.take()
	if len(recs) != 3 {
		t.Fatalf("%d records %v, want 3", len(recs), recs)
	}
	alCheck(t, "413", recs[0], slog.LevelInfo, "jetrpc: refused", `status=413 reason="body_too_large" transport="http" remote="192.0.2.1:4242" principal="ops-key"`)
	alCheck(t, "stream", recs[1], slog.LevelInfo, "jetrpc: refused", `reason="message_too_large" transport="stream" remote="192.0.2.1:4242"`)
	alCheck(t, "conn", recs[2], slog.LevelInfo, "jetrpc: refused", `reason="too_many_connections" remote="192.0.2.9:1"`)

	// Slow alone: refusals are never slow, so none is logged.
	tab, h = alTable(false, AccessLog{Slow: time.Nanosecond})
	tab.Refused(cc, 401, "unauthorized")
	if recs := h.take(); len(recs) != 0 {
		t.Errorf("Slow alone: logged %v", recs)
	}
	if !tab.AccessLogEnabled() || NewTable().AccessLogEnabled() {
		t.Errorf("AccessLogEnabled: %v with an access log, %v without", tab.AccessLogEnabled(), NewTable().AccessLogEnabled())
	}
	NewTable().Refused(cc, 401, "unauthorized") // no access log: nothing to do
}

// TestTable_Refused_sampled: refusals are sampled at AccessLog.Sample.
func TestTable_Refused_sampled(t *testing.T) {
	const n, p = 20000, 0.1
	tab, h := alTable(false, AccessLog{Sample: p})
	for range n {
		tab.Refused(context.Background(), 401, "unauthorized")
	}
	got := float64(len(h.take()))
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	if math.Abs(got-mean) > 5*sd {
		t.Errorf("%v of %d refusals logged, want %v ± %.0f", got, n, mean, 5*sd)
	}
}
