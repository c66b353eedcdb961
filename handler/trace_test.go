package handler

// Tests of what a tracer gives a table (trace.go): a call's span named
// with Call.SetSpan reaches its access log record (trace_id, span_id)
// and its method's exemplars, on every path a call takes (inline,
// batch element on the caller and on a worker, deferred, a timed call);
// batch hooks run once around every batch however it runs (inline,
// parallel, deferred, answered busy), their values reach the elements'
// interceptors, and a single request is in no batch; a batch element
// given up or answered too large is in no span; Filtered and a Filter's
// panic on the deferred paths. Helpers are prefixed tr.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/stats"
)

// trRef is the SpanRef the tests give a call whose id is id.
func trRef(id byte) SpanRef {
	var r SpanRef
	r.TraceID[0], r.TraceID[15], r.SpanID[7] = 0xab, id, id
	return r
}

// trSpanner names each call's span by its id's first digit (a call
// without an id gets none).
func trSpanner(_ context.Context, c *Call) error {
	if id := c.ID(); len(id) > 0 && id[0] >= '1' && id[0] <= '9' {
		c.SetSpan(trRef(id[0] - '0'))
	}
	return nil
}

// trExemplars returns the valid exemplars of method in tab's metrics.
func trExemplars(t *testing.T, tab *Table, method string) []stats.Exemplar {
	t.Helper()
	var out []stats.Exemplar
	if _, ok := tab.Metrics(func(m *stats.Method) {
		if m.Method != method {
			return
		}
		if m.Duration.Exemplars != nil && len(m.Duration.Exemplars) != len(m.Duration.Buckets) {
			t.Errorf("%s: %d exemplars for %d buckets", method, len(m.Duration.Exemplars), len(m.Duration.Buckets))
		}
		for _, e := range m.Duration.Exemplars {
			if e.Valid() {
				out = append(out, e)
			}
		}
	}); !ok {
		t.Fatal("no metrics")
	}
	return out
}

func TestSetSpan_accessLogRecord(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 1})
	tab.Use(trSpanner)
	ctx := context.Background()
	r := trRef(3)
	for _, c := range []struct{ msg, attrs string }{
		{mxReq(3, "ok", ""), `method="ok" id=3 code=0 duration_ms=D trace_id="` + r.TraceIDString() + `" span_id="` + r.SpanIDString() + `" ` + alLocal},
		{mxReq(3, "nope", ""), `method="nope" id=3 code=-32601 duration_ms=D trace_id="` + r.TraceIDString() + `" span_id="` + r.SpanIDString() + `" ` + alLocal},
		{mxNote("ok", ""), `method="ok" notification=true code=0 duration_ms=D ` + alLocal}, // no id: no span
	} {
		alCheck(t, c.msg, alOne(t, tab, h, ctx, c.msg), slog.LevelInfo, "jetrpc: call", c.attrs)
	}
	if got := r.TraceIDString(); got != "ab000000000000000000000000000003" {
		t.Errorf("TraceIDString %q", got)
	}
	if got := r.SpanIDString(); got != "0000000000000003" {
		t.Errorf("SpanIDString %q", got)
	}
}

// TestSetSpan_exemplarsOnEveryPath: a traced call's duration is its
// method's exemplar, however the call ran; a call not traced leaves
// none.
func TestSetSpan_exemplarsOnEveryPath(t *testing.T) {
	tab := mxTable(WithParallelBatch(2))
	tab.Use(trSpanner)
	ctx := context.Background()
	tab.Dispatch(ctx, nil, []byte(mxNote("add", "[1,2]"))) // no span
	if ex := trExemplars(t, tab, "add"); len(ex) != 0 {
		t.Fatalf("an untraced call left exemplars %v", ex)
	}
	for _, c := range []struct {
		name, msg string
		method    string
		ids       []byte
	}{
		{"inline single", mxReq(1, "ok", ""), "ok", []byte{1}},
		{"blocking single", mxReq(2, "work", "[1]"), "work", []byte{2}},
		{"inline batch", mxBatch(mxReq(3, "add", "[1,2]"), mxReq(4, "add", "[2,2]")), "add", []byte{3, 4}},
		{"parallel batch", mxBatch(mxReq(5, "failb", "[0]"), mxReq(6, "failb", "[0]"), mxReq(7, "failb", "[0]")), "failb", []byte{5, 6, 7}},
	} {
		tab.Dispatch(ctx, nil, []byte(c.msg))
		ex := trExemplars(t, tab, c.method)
		for _, id := range c.ids {
			found := false
			for _, e := range ex {
				if e.TraceID == trRef(id).TraceID && e.SpanID == trRef(id).SpanID {
					found = e.Value >= 0 && time.Since(e.Time) < time.Minute
				}
			}
			// Calls of one method that fall in one bucket keep the last:
			// each of these is in the bucket of a call of microseconds,
			// so at least the last id is there.
			if !found && id == c.ids[len(c.ids)-1] {
				t.Errorf("%s: no exemplar of call %d in %v", c.name, id, ex)
			}
		}
	}
	// A deferred call, run later (an event loop's Pending).
	var later Pending
	if _, oc := tab.DispatchInline(ctx, nil, []byte(mxReq(8, "failb", "[0]")), &later); oc != Deferred {
		t.Fatalf("outcome %v, want Deferred", oc)
	}
	p := later.Take()
	p.Run(ctx, nil)
	if ex := trExemplars(t, tab, "failb"); !trHas(ex, 8) {
		t.Errorf("deferred call: no exemplar in %v", ex)
	}
	// A timed blocking call, run on a worker while its caller waits.
	tt := mxTable(WithCallTimeout(time.Minute))
	tt.Use(trSpanner)
	tt.Dispatch(ctx, nil, []byte(mxReq(9, "work", "[1]")))
	if ex := trExemplars(t, tt, "work"); !trHas(ex, 9) {
		t.Errorf("timed call: no exemplar in %v", ex)
	}
}

func trHas(ex []stats.Exemplar, id byte) bool {
	for _, e := range ex {
		if e.TraceID == trRef(id).TraceID {
			return true
		}
	}
	return false
}

// trHook is a BatchHook that records what it sees, and gives each batch
// a value its elements' interceptors read.
type trHook struct {
	mu     sync.Mutex
	name   string
	events *[]string
}

type trKey struct{}

func (h *trHook) BeginBatch(ctx context.Context, b *Batch) {
	var methods []string
	for i := range b.Len() {
		m := b.Method(i)
		if !b.Registered(i) {
			m = "?" + m
		}
		methods = append(methods, m)
	}
	h.add(fmt.Sprintf("%s begin %s", h.name, strings.Join(methods, ",")))
	b.Set(trKey{}, h.name+"-value")
	b.SetSpan(trRef(9))
}

func (h *trHook) EndBatch(ctx context.Context, b *Batch) {
	h.add(fmt.Sprintf("%s end errors=%d", h.name, b.Errors()))
}

func (h *trHook) add(s string) {
	h.mu.Lock()
	*h.events = append(*h.events, s)
	h.mu.Unlock()
}

// trHooked returns an mxTable with two batch hooks and an interceptor
// that records each call's batch value, and the events.
func trHooked(opts ...Option) (*Table, func() []string) {
	var mu sync.Mutex
	events := []string{}
	tab := mxTable(opts...)
	a, b := &trHook{name: "a", events: &events}, &trHook{name: "b", events: &events}
	tab.UseBatch(a, b)
	tab.Use(func(ctx context.Context, c *Call) error {
		v := "none"
		if bt := c.Batch(); bt != nil {
			v = fmt.Sprint(bt.Get(trKey{}))
		}
		mu.Lock()
		a.mu.Lock()
		events = append(events, c.Method()+":"+v)
		a.mu.Unlock()
		mu.Unlock()
		return nil
	})
	return tab, func() []string {
		a.mu.Lock()
		defer a.mu.Unlock()
		out := events
		events = []string{}
		return out
	}
}

// TestBatchHook_aroundEveryBatch: the hooks begin (in order) before any
// element and end (in reverse) after the last, once per batch, however
// it runs; the elements see the value the last hook set; the errors are
// counted; a single request is in no batch.
func TestBatchHook_aroundEveryBatch(t *testing.T) {
	ctx := context.Background()
	sorted := func(ev []string) string {
		// Elements on workers run in any order: sort the middle.
		if len(ev) < 4 {
			return strings.Join(ev, " | ")
		}
		mid := append([]string(nil), ev[2:len(ev)-2]...)
		for i := range mid {
			for j := i + 1; j < len(mid); j++ {
				if mid[j] < mid[i] {
					mid[i], mid[j] = mid[j], mid[i]
				}
			}
		}
		return strings.Join(append(append(append([]string(nil), ev[:2]...), mid...), ev[len(ev)-2:]...), " | ")
	}
	tab, take := trHooked(WithParallelBatch(2))
	for _, c := range []struct{ name, msg, want string }{
		{"single", mxReq(1, "ok", ""), "ok:none"},
		{"inline batch", mxBatch(mxReq(1, "ok", ""), mxReq(2, "fail", "[7]"), mxReq(3, "nope", "")),
			"a begin ok,fail,?nope | b begin ok,fail,?nope | fail:b-value | nope:b-value | ok:b-value | b end errors=2 | a end errors=2"},
		{"parallel batch", mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "failb", "[3]"), mxReq(3, "ok", ""), `1`),
			"a begin work,failb,ok,? | b begin work,failb,ok,? | :b-value | failb:b-value | ok:b-value | work:b-value | b end errors=2 | a end errors=2"},
	} {
		tab.Dispatch(ctx, nil, []byte(c.msg))
		if got := sorted(take()); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// Deferred to a Pending: hooked when it runs, or is answered busy
	// (its busy elements pass no interceptor; its faults do).
	for _, busy := range []bool{false, true} {
		var later Pending
		msg := mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "nope", ""))
		if _, oc := tab.DispatchInline(ctx, nil, []byte(msg), &later); oc != Deferred {
			t.Fatalf("outcome %v, want Deferred", oc)
		}
		if ev := take(); len(ev) != 0 {
			t.Errorf("busy %v: hooked before it ran: %v", busy, ev)
		}
		p := later.Take()
		want := "a begin work,?nope | b begin work,?nope | nope:b-value | work:b-value | b end errors=1 | a end errors=1"
		if busy {
			p.Busy(ctx, nil)
			want = "a begin work,?nope | b begin work,?nope | nope:b-value | b end errors=2 | a end errors=2"
		} else {
			p.Run(ctx, nil)
		}
		if got := sorted(take()); got != want {
			t.Errorf("deferred, busy %v:\n got %s\nwant %s", busy, got, want)
		}
	}
	// A batch too long is refused whole: one call, no hook.
	long, take2 := trHooked(WithMaxBatch(1))
	long.Dispatch(ctx, nil, []byte(mxBatch(mxReq(1, "ok", ""), mxReq(2, "ok", ""))))
	if got := strings.Join(take2(), " | "); got != ":none" {
		t.Errorf("batch too long: %s", got)
	}
}

// TestBatchHook_accessLogRecord: a batch's record carries the span its
// hook named.
func TestBatchHook_accessLogRecord(t *testing.T) {
	tab, h := alTable(false, AccessLog{Sample: 1})
	tab.UseBatch(&trHook{name: "a", events: new([]string)})
	r := trRef(9)
	alCheck(t, "batch", alOne(t, tab, h, context.Background(), mxBatch(mxReq(1, "ok", ""), mxReq(2, "fail", "[7]"))),
		slog.LevelInfo, "jetrpc: batch", `elements=2 errors=1 duration_ms=D trace_id="`+r.TraceIDString()+`" span_id="`+r.SpanIDString()+`" `+alLocal)
}

func TestUseBatch_panics(t *testing.T) {
	tab := mxTable()
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"nil", func() { tab.UseBatch(nil) }},
		{"too many", func() {
			for range maxBatchHooks + 1 {
				tab.UseBatch(&trHook{events: new([]string)})
			}
		}},
		{"sealed", func() { tab.Dispatch(context.Background(), nil, []byte(mxReq(1, "ok", ""))); tab.UseBatch(&trHook{}) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

// TestSetSpan_lateBatchElementNoRace: a batch element given up at its
// deadline is noted by the caller while its worker still runs it; the
// caller must not read what the worker writes of the element (its span)
// — under -race this reports a data race when it does.
// A review of the tracing change (issue 25) found this wrong.
func TestSetSpan_lateBatchElementNoRace(t *testing.T) {
	tab := mxTable()
	Register(tab, "slow", func(_ context.Context, p [1]int) (int, error) {
		time.Sleep(60 * time.Millisecond) // no synchronisation with the caller
		return p[0], nil
	}, Timeout(10*time.Millisecond))
	tab.Use(trSpanner)
	out := tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "slow", "[1]"), mxReq(2, "ok", ""))))
	if got := mxCodes(t, out); got[-32002] != 1 || got[0] != 1 {
		t.Fatalf("batch reply %s", out)
	}
	time.Sleep(150 * time.Millisecond) // the worker finishes the late call
	if ex := trExemplars(t, tab, "slow"); trHas(ex, 1) {
		// The element was answered -32002 by its caller, before the call
		// named its span: no exemplar may link to it.
		t.Errorf("a given-up element left the exemplar %v", ex)
	}
}

// TestSetSpan_tooLargeElementHasNoSpan: an element answered -32008
// without running (the batch's replies passed MaxBatchResponseSize)
// ran in no span: its method gets no exemplar of the element before it.
// A review of the tracing change (issue 25) found this wrong.
func TestSetSpan_tooLargeElementHasNoSpan(t *testing.T) {
	tab := mxTable(WithMaxResponseSize(0, 10))
	tab.Use(trSpanner)
	out := tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "add", "[1,2]"), mxReq(2, "ok", ""))))
	if got := mxCodes(t, out); got[0] != 1 || got[-32008] != 1 {
		t.Fatalf("batch reply %s", out)
	}
	if ex := trExemplars(t, tab, "ok"); len(ex) != 0 {
		t.Errorf("the element answered too large has exemplars %v (the span of the element before it)", ex)
	}
}

// TestUseWhen_filteredIsZeroForUse: Filtered is 0 for an interceptor
// added with Use, even when the pooled state last ran a call of a table
// whose filter returned something else.
// A review of the tracing change (issue 25) found this wrong.
func TestUseWhen_filteredIsZeroForUse(t *testing.T) {
	ctx := context.Background()
	filtered := NewTable(WithLogger(mxQuiet()))
	RegisterNoParams(filtered, "ok", func(context.Context) (int, error) { return 1, nil }, Inline())
	filtered.UseWhen(func(context.Context, *Call) uint8 { return 7 }, func(ctx context.Context, c *Call) error { return nil })
	plain := NewTable(WithLogger(mxQuiet()))
	RegisterNoParams(plain, "ok", func(context.Context) (int, error) { return 1, nil }, Inline())
	var got []uint8
	plain.Use(func(ctx context.Context, c *Call) error {
		got = append(got, c.Filtered())
		return nil
	})
	for range 20 {
		filtered.Dispatch(ctx, nil, []byte(mxReq(1, "ok", "")))
		plain.Dispatch(ctx, nil, []byte(mxReq(1, "ok", "")))
	}
	for _, v := range got {
		if v != 0 {
			t.Fatalf("Filtered in an interceptor added with Use: %v, want all 0", got)
		}
	}
}

// TestUseWhen_filterPanicInBusyFailsTheMessage: a Filter that panics
// fails the message -32603, as its doc says — also when the message is
// answered busy (Pending.Busy runs a batch's faults through the chain),
// rather than panicking out of Busy into its transport.
// A review of the tracing change (issue 25) found this wrong.
func TestUseWhen_filterPanicInBusyFailsTheMessage(t *testing.T) {
	ctx := context.Background()
	tab := mxTable()
	tab.UseWhen(func(_ context.Context, c *Call) uint8 {
		if c.Fault() != 0 {
			panic("filter")
		}
		return 0
	}, func(ctx context.Context, c *Call) error { return nil })
	var later Pending
	if _, oc := tab.DispatchInline(ctx, nil, []byte(mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "nope", ""))), &later); oc != Deferred {
		t.Fatalf("outcome %v, want Deferred", oc)
	}
	p := later.Take()
	var out []byte
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("Busy panicked: %v", v)
			}
		}()
		out = p.Busy(ctx, nil)
	}()
	if want := `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}`; string(out) != want {
		t.Errorf("reply %s, want the message failed: %s", out, want)
	}
}
