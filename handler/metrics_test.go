package handler

// NOTE: tests of a table's metrics (metrics.go, observe.go and the
// observation points of dispatch.go), written from the documented
// semantics: every call counts once — a request, a notification (with
// the code its reply would have had), each batch element — under its
// method, stats.UnknownMethod or stats.InvalidMethod, by the code of its reply.
// Tables are driven as transports drive them, through Dispatch,
// DispatchInline and Pending; replies are checked too, so that a count
// and the reply it stands for never disagree. Only the histogram bounds,
// which real clocks cannot hit exactly, are checked white-box. Helpers
// are prefixed mx.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/internal/testkit"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

func mxQuiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// mxTable returns a table with metrics (and opts) and these methods:
//   - ok (inline): no params, result 1;
//   - fail (inline): [code]: an error of that code, or result 1 for 0;
//   - add (inline): [a, b]: a+b (anything else is -32602);
//   - work (blocking): [n]: n;
//   - failb (blocking): as fail.
func mxTable(opts ...Option) *Table {
	tab := NewTable(append([]Option{WithMetrics(true), WithLogger(mxQuiet())}, opts...)...)
	RegisterNoParams(tab, "ok", func(context.Context) (int, error) { return 1, nil }, Inline())
	Register(tab, "fail", mxFail, Inline())
	Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, Inline())
	Register(tab, "work", func(_ context.Context, p [1]int) (int, error) { return p[0], nil })
	Register(tab, "failb", mxFail)
	return tab
}

func mxFail(_ context.Context, p [1]int) (int, error) {
	if p[0] == 0 {
		return 1, nil
	}
	return 0, NewError(parser.Code(p[0]), "fail")
}

// mxReq is a request with id id; params "" means none.
func mxReq(id int, method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","method":"` + method + `","id":` + strconv.Itoa(id) + `}`
	}
	return `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":` + strconv.Itoa(id) + `}`
}

// mxNote is a notification; params "" means none.
func mxNote(method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `}`
}

func mxBatch(elems ...string) string { return "[" + strings.Join(elems, ",") + "]" }

// mxReply is one reply object.
type mxReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func (r mxReply) code() int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// mxNone is the code of no reply (mxDo): msg is a notification.
const mxNone = math.MinInt32

// mxDo dispatches msg and checks its reply: one carrying code (0: a
// result), or none for mxNone.
func mxDo(t testing.TB, tab *Table, msg string, code int) {
	t.Helper()
	out := tab.Dispatch(context.Background(), nil, []byte(msg))
	mxCheckReply(t, msg, out, code)
}

func mxCheckReply(t testing.TB, msg string, out []byte, code int) {
	t.Helper()
	if code == mxNone {
		if len(out) != 0 {
			t.Errorf("%s: reply %s, want none", msg, out)
		}
		return
	}
	var r mxReply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: reply %q: %v", msg, out, err)
	}
	if r.code() != code {
		t.Errorf("%s: reply %s, want code %d", msg, out, code)
	}
}

// mxCodes decodes a batch reply and counts its codes.
func mxCodes(t testing.TB, out []byte) map[int]int {
	t.Helper()
	var rs []mxReply
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatalf("batch reply %q: %v", out, err)
	}
	n := map[int]int{}
	for _, r := range rs {
		n[r.code()]++
	}
	return n
}

// mxSnap is a copy of what Table.Metrics reported.
type mxSnap struct {
	names   []string // in the order reported
	methods map[string]stats.Method
	batches stats.Batch
}

func mxRead(t testing.TB, tab *Table) mxSnap {
	t.Helper()
	s := mxSnap{methods: map[string]stats.Method{}}
	b, ok := tab.Metrics(func(m *stats.Method) {
		c := *m
		c.Handled = slices.Clone(m.Handled)
		c.Duration.Buckets = slices.Clone(m.Duration.Buckets)
		s.names = append(s.names, m.Method)
		s.methods[m.Method] = c
	})
	if !ok {
		t.Fatal("Metrics reported false on a table with metrics")
	}
	s.batches = b
	return s
}

// mxH builds a Handled list from code, count pairs.
func mxH(pairs ...int) []stats.CodeCount {
	var h []stats.CodeCount
	for i := 0; i < len(pairs); i += 2 {
		h = append(h, stats.CodeCount{Code: parser.Code(pairs[i]), Count: uint64(pairs[i+1])})
	}
	return h
}

func mxFmt(h []stats.CodeCount) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range h {
		if i > 0 {
			b.WriteByte(' ')
		}
		if c.Other {
			fmt.Fprintf(&b, "other:%d", c.Count)
		} else {
			fmt.Fprintf(&b, "%d:%d", c.Code, c.Count)
		}
	}
	return b.String() + "]"
}

func mxTotal(h []stats.CodeCount) uint64 {
	n := uint64(0)
	for _, c := range h {
		n += c.Count
	}
	return n
}

// check asserts the Started and Handled of method exactly, and that its
// duration histogram counts every handled call.
func (s mxSnap) check(t testing.TB, method string, started int, handled []stats.CodeCount) {
	t.Helper()
	m, ok := s.methods[method]
	if !ok {
		t.Errorf("%s: not reported; reported %q", method, s.names)
		return
	}
	if m.Started != uint64(started) || !slices.Equal(m.Handled, handled) {
		t.Errorf("%s: Started %d, Handled %s; want Started %d, Handled %s", method, m.Started, mxFmt(m.Handled), started, mxFmt(handled))
	}
	if m.Duration.Count != mxTotal(m.Handled) {
		t.Errorf("%s: Duration.Count %d, want the handled calls, %d", method, m.Duration.Count, mxTotal(m.Handled))
	}
	var n uint64
	for _, b := range m.Duration.Buckets {
		n += b
	}
	if n != m.Duration.Count || len(m.Duration.Buckets) != len(stats.DurationBuckets())+1 {
		t.Errorf("%s: %d buckets summing to %d, Count %d", method, len(m.Duration.Buckets), n, m.Duration.Count)
	}
}

// checkBatches asserts the batch size histogram: count batches of sum
// elements, with buckets[i] in bucket i (others 0).
func (s mxSnap) checkBatches(t testing.TB, count int, sum float64, buckets map[int]uint64) {
	t.Helper()
	h := s.batches.Sizes
	want := make([]uint64, len(stats.BatchSizeBuckets())+1)
	for i, n := range buckets {
		want[i] = n
	}
	if h.Count != uint64(count) || h.Sum != sum || !slices.Equal(h.Buckets, want) {
		t.Errorf("batches: Count %d, Sum %v, Buckets %v; want %d, %v, %v", h.Count, h.Sum, h.Buckets, count, sum, want)
	}
}

// mxStdNames are the names mxTable's tables report, in order.
var mxStdNames = []string{"add", "fail", "failb", "ok", "work", stats.UnknownMethod, stats.InvalidMethod}

func TestMetrics_countsCallsByMethodAndCode(t *testing.T) {
	tab := mxTable()
	for i := range 3 {
		mxDo(t, tab, mxReq(i, "ok", ""), 0)
	}
	for _, c := range []int{7, -5, 7, 0} {
		mxDo(t, tab, mxReq(1, "fail", "["+strconv.Itoa(c)+"]"), c)
	}
	mxDo(t, tab, mxReq(1, "add", `[1,"x"]`), -32602)
	mxDo(t, tab, mxReq(1, "add", `[1,2,3]`), -32602)
	mxDo(t, tab, mxReq(1, "add", `[1,2]`), 0)
	mxDo(t, tab, mxReq(1, "work", `[5]`), 0)
	mxDo(t, tab, mxReq(2, "work", `[6]`), 0)
	mxDo(t, tab, mxReq(1, "failb", `[9]`), 9)
	mxDo(t, tab, mxReq(1, "failb", `["x"]`), -32602)
	s := mxRead(t, tab)
	if !slices.Equal(s.names, mxStdNames) {
		t.Errorf("reported %q, want %q", s.names, mxStdNames)
	}
	s.check(t, "ok", 3, mxH(0, 3))
	s.check(t, "fail", 4, mxH(0, 1, -5, 1, 7, 2))
	s.check(t, "add", 3, mxH(0, 1, -32602, 2))
	s.check(t, "work", 2, mxH(0, 2))
	s.check(t, "failb", 2, mxH(-32602, 1, 9, 1))
	s.check(t, stats.UnknownMethod, 0, nil)
	s.check(t, stats.InvalidMethod, 0, nil)
	s.checkBatches(t, 0, 0, nil)
}

// TestMetrics_handledSortedSuccessFirst: codes are listed success first,
// then in increasing order, whatever order they were seen in and
// whichever slot (reserved, server, registry) holds them.
func TestMetrics_handledSortedSuccessFirst(t *testing.T) {
	tab := mxTable()
	for _, c := range []int{5, -3, 0, -32099, -32602, 1000, -32000, -32700, 5, -32601} {
		mxDo(t, tab, mxReq(1, "fail", "["+strconv.Itoa(c)+"]"), c)
	}
	mxRead(t, tab).check(t, "fail", 10, mxH(0, 1, -32700, 1, -32602, 1, -32601, 1, -32099, 1, -32000, 1, -3, 1, 5, 2, 1000, 1))
}

// TestMetrics_unknownMethodsFoldIntoOne: a client cannot grow the series:
// every unregistered name counts under stats.UnknownMethod.
func TestMetrics_unknownMethodsFoldIntoOne(t *testing.T) {
	tab := mxTable()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 10_000
	for i := range n {
		name := "m" + strconv.FormatUint(rng.Uint64(), 36)
		switch i % 4 {
		case 0:
			mxDo(t, tab, mxNote(name, ""), mxNone)
		case 1:
			name = `\u006d` + name // escaped
			fallthrough
		default:
			mxDo(t, tab, mxReq(i, name, "[1]"), -32601)
		}
	}
	s := mxRead(t, tab)
	if !slices.Equal(s.names, mxStdNames) {
		t.Errorf("reported %d series %q, want %q", len(s.names), s.names, mxStdNames)
	}
	s.check(t, stats.UnknownMethod, n, mxH(-32601, n))
	s.check(t, stats.InvalidMethod, 0, nil)
}

// TestMetrics_faultsCountAsInvalid: messages answered before any method
// could be looked up count under stats.InvalidMethod, each batch element
// alone.
func TestMetrics_faultsCountAsInvalid(t *testing.T) {
	tab := mxTable()
	for _, c := range []struct {
		msg  string
		code int
	}{
		{`{"jsonrpc":"2.0","method":`, -32700},
		{`[1,2`, -32700},
		{`nul`, -32700},
		{`1`, -32600},
		{`"ok"`, -32600},
		{`[]`, -32600},
		{`{"jsonrpc":"2.0","method":1,"id":1}`, -32600},
		{`{"jsonrpc":"2.0","id":1}`, -32600},
		{`{"jsonrpc":"3.0","method":"ok","id":1}`, -32600},
		{`{"jsonrpc":"2.0","method":"ok","params":1,"id":1}`, -32600},
	} {
		mxDo(t, tab, c.msg, c.code)
	}
	out := tab.Dispatch(context.Background(), nil, []byte(`[1,{"jsonrpc":"2.0","method":"ok","id":1},{"id":2}]`))
	if got := mxCodes(t, out); got[-32600] != 2 || got[0] != 1 {
		t.Errorf("batch reply %s", out)
	}
	s := mxRead(t, tab)
	s.check(t, stats.InvalidMethod, 3+7+2, mxH(-32700, 3, -32600, 7+2))
	s.check(t, "ok", 1, mxH(0, 1))
	s.check(t, stats.UnknownMethod, 0, nil)
	s.checkBatches(t, 1, 3, map[int]uint64{2: 1})
}

// TestMetrics_batchTooLongCountsOnce: a batch over MaxBatch is refused
// whole: one stats.InvalidMethod -32600, a refusal, and a batch of its length;
// none of its elements count.
func TestMetrics_batchTooLongCountsOnce(t *testing.T) {
	tab := mxTable(WithMaxBatch(3))
	msg := mxBatch(mxReq(1, "ok", ""), mxReq(2, "ok", ""), mxReq(3, "work", "[1]"), mxReq(4, "nope", ""), mxNote("ok", ""))
	mxDo(t, tab, msg, -32600)
	var later Pending
	out, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), &later)
	if oc != Replied || !later.Empty() {
		t.Fatalf("DispatchInline: outcome %v, pending empty %v", oc, later.Empty())
	}
	mxCheckReply(t, msg, out, -32600)
	s := mxRead(t, tab)
	s.check(t, stats.InvalidMethod, 2, mxH(-32600, 2))
	for _, m := range []string{"ok", "work", stats.UnknownMethod} {
		s.check(t, m, 0, nil)
	}
	s.checkBatches(t, 2, 10, map[int]uint64{2: 2})
	if r := tab.LimitRefusals(); r != (stats.Refusals{BatchLength: 2}) {
		t.Errorf("LimitRefusals %+v, want BatchLength 2", r)
	}
}

// TestMetrics_appCodesBeyondRegistryCountAsOther: the first 32 distinct
// codes outside the reserved ranges are told apart, table-wide; later
// ones count together as Other. Reserved and server codes never take a
// place in the registry.
func TestMetrics_appCodesBeyondRegistryCountAsOther(t *testing.T) {
	tab := mxTable()
	for _, c := range []int{-32700, -32603, -32600, -32000, -32009} {
		mxDo(t, tab, mxReq(1, "fail", "["+strconv.Itoa(c)+"]"), c)
	}
	for c := 1; c <= 40; c++ {
		for range 2 {
			mxDo(t, tab, mxReq(1, "fail", "["+strconv.Itoa(c)+"]"), c)
		}
	}
	mxDo(t, tab, mxReq(1, "fail", "[5]"), 5)
	mxDo(t, tab, mxReq(1, "fail", "[35]"), 35)
	// failb sees a listed code, one beyond the registry and a new one:
	// the registry is the table's, full already.
	mxDo(t, tab, mxReq(1, "failb", "[3]"), 3)
	mxDo(t, tab, mxReq(1, "failb", "[36]"), 36)
	mxDo(t, tab, mxReq(1, "failb", "[-32010]"), -32010)
	want := mxH(-32700, 1, -32603, 1, -32600, 1, -32009, 1, -32000, 1)
	for c := 1; c <= 32; c++ {
		want = append(want, stats.CodeCount{Code: parser.Code(c), Count: 2})
	}
	want[5+5-1].Count = 3 // code 5
	want = append(want, stats.CodeCount{Other: true, Count: 8*2 + 1})
	s := mxRead(t, tab)
	s.check(t, "fail", 5+80+2, want)
	s.check(t, "failb", 3, []stats.CodeCount{{Code: 3, Count: 1}, {Other: true, Count: 2}})
}

// TestMetrics_notificationsCountWouldBeCode: a notification gets no
// reply but counts with the code its reply would have had.
func TestMetrics_notificationsCountWouldBeCode(t *testing.T) {
	tab := mxTable()
	for _, msg := range []string{
		mxNote("ok", ""), mxNote("ok", ""),
		mxNote("fail", "[7]"), mxNote("fail", "[0]"),
		mxNote("add", `[1,"x"]`),
		mxNote("nope", ""),
		mxNote("work", "[1]"),
		mxNote("failb", "[8]"),
	} {
		mxDo(t, tab, msg, mxNone)
	}
	mxDo(t, tab, `{"jsonrpc":"2.0","method":1}`, -32600) // invalid: answered, id null
	s := mxRead(t, tab)
	s.check(t, "ok", 2, mxH(0, 2))
	s.check(t, "fail", 2, mxH(0, 1, 7, 1))
	s.check(t, "add", 1, mxH(-32602, 1))
	s.check(t, stats.UnknownMethod, 1, mxH(-32601, 1))
	s.check(t, "work", 1, mxH(0, 1))
	s.check(t, "failb", 1, mxH(8, 1))
	s.check(t, stats.InvalidMethod, 1, mxH(-32600, 1))
}

// mxCycle repeats elems to n elements, in order.
func mxCycle(n int, elems ...string) string {
	out := make([]string, n)
	for i := range out {
		out[i] = elems[i%len(elems)]
	}
	return mxBatch(out...)
}

// mxWant is what one method should report.
type mxWant struct {
	started int
	handled []stats.CodeCount
}

// TestMetrics_batchElementsCountOnce: each element of a batch counts
// once, however the batch runs: in order on the caller, in parallel
// segments (longer than ParallelBatch), with blocking elements on the
// worker pool, or deferred by DispatchInline and run from a Pending.
func TestMetrics_batchElementsCountOnce(t *testing.T) {
	mixed := []string{mxReq(1, "ok", ""), mxReq(2, "fail", "[7]"), mxReq(3, "add", `[1,"x"]`), mxReq(4, "nope", ""), `1`, mxNote("ok", ""), mxNote("fail", "[9]")}
	blocking := []string{mxReq(1, "work", "[1]"), mxReq(2, "ok", ""), mxReq(3, "failb", "[4]"), mxReq(4, "nope", ""), `{"id":5}`, mxNote("work", "[2]")}
	cases := []struct {
		name    string
		msg     string
		elems   int
		replies int
		want    map[string]mxWant
		bucket  int // of the batch size
	}{
		{"inline", mxBatch(mixed...), 7, 5, map[string]mxWant{
			"ok": {2, mxH(0, 2)}, "fail": {2, mxH(7, 1, 9, 1)}, "add": {1, mxH(-32602, 1)},
			stats.UnknownMethod: {1, mxH(-32601, 1)}, stats.InvalidMethod: {1, mxH(-32600, 1)},
		}, 3},
		{"blocking", mxBatch(blocking...), 6, 5, map[string]mxWant{
			"work": {2, mxH(0, 2)}, "ok": {1, mxH(0, 1)}, "failb": {1, mxH(4, 1)},
			stats.UnknownMethod: {1, mxH(-32601, 1)}, stats.InvalidMethod: {1, mxH(-32600, 1)},
		}, 3},
		{"long inline", mxCycle(7*30, mixed...), 7 * 30, 5 * 30, map[string]mxWant{
			"ok": {2 * 30, mxH(0, 2*30)}, "fail": {2 * 30, mxH(7, 30, 9, 30)}, "add": {30, mxH(-32602, 30)},
			stats.UnknownMethod: {30, mxH(-32601, 30)}, stats.InvalidMethod: {30, mxH(-32600, 30)},
		}, 8},
		{"long blocking", mxCycle(6*25, blocking...), 6 * 25, 5 * 25, map[string]mxWant{
			"work": {2 * 25, mxH(0, 2*25)}, "ok": {25, mxH(0, 25)}, "failb": {25, mxH(4, 25)},
			stats.UnknownMethod: {25, mxH(-32601, 25)}, stats.InvalidMethod: {25, mxH(-32600, 25)},
		}, 7},
	}
	for _, c := range cases {
		for _, via := range []string{"Dispatch", "Pending"} {
			t.Run(c.name+"/"+via, func(t *testing.T) {
				tab := mxTable()
				var out []byte
				if via == "Dispatch" {
					out = tab.Dispatch(context.Background(), nil, []byte(c.msg))
				} else {
					var later Pending
					var oc Outcome
					out, oc = tab.DispatchInline(context.Background(), nil, []byte(c.msg), &later)
					if oc == Deferred {
						p := later.Take()
						out = p.Run(context.Background(), out)
					} else if c.name != "inline" {
						t.Fatalf("DispatchInline: outcome %v, want Deferred", oc)
					}
				}
				var rs []json.RawMessage
				if err := json.Unmarshal(out, &rs); err != nil || len(rs) != c.replies {
					t.Fatalf("reply of %d elements (%v), want %d: %.300s", len(rs), err, c.replies, out)
				}
				s := mxRead(t, tab)
				for _, m := range mxStdNames {
					w := c.want[m]
					s.check(t, m, w.started, w.handled)
				}
				s.checkBatches(t, 1, float64(c.elems), map[int]uint64{c.bucket: 1})
			})
		}
	}
}

// mxGate is a blocking method's gate: each call says it entered, waits
// for release, and says it returned.
type mxGate struct {
	entered, returned chan struct{}
	release           chan struct{}
}

func newMxGate() *mxGate {
	return &mxGate{entered: make(chan struct{}, 16), returned: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *mxGate) fn(context.Context, [1]int) (int, error) {
	g.entered <- struct{}{}
	<-g.release
	g.returned <- struct{}{}
	return 1, nil
}

// inProgress returns Started minus the handled calls of method.
func (s mxSnap) inProgress(method string) int64 {
	m := s.methods[method]
	return int64(m.Started) - int64(mxTotal(m.Handled))
}

// TestMetrics_blockingStartedWhileRunning: a blocking method's call
// counts as started when it starts, so that Started minus the handled
// calls is the calls in progress — alone, as a batch element, and from
// a Pending (counted when DispatchInline planned it).
func TestMetrics_blockingStartedWhileRunning(t *testing.T) {
	ctx := context.Background()
	for _, msg := range []string{mxReq(1, "gate", "[1]"), mxBatch(mxReq(1, "gate", "[1]"), mxReq(2, "ok", ""))} {
		tab := mxTable()
		g := newMxGate()
		Register(tab, "gate", g.fn)
		done := make(chan []byte)
		go func() { done <- tab.Dispatch(ctx, nil, []byte(msg)) }()
		<-g.entered
		s := mxRead(t, tab)
		if n := s.inProgress("gate"); n != 1 || s.methods["gate"].Started != 1 {
			t.Errorf("%s: while it runs: Started %d, in progress %d; want 1, 1", msg, s.methods["gate"].Started, n)
		}
		close(g.release)
		<-done
		mxRead(t, tab).check(t, "gate", 1, mxH(0, 1))
	}

	tab := mxTable()
	g := newMxGate()
	close(g.release)
	Register(tab, "gate", g.fn)
	var later Pending
	_, oc := tab.DispatchInline(ctx, nil, []byte(mxReq(1, "gate", "[1]")), &later)
	if oc != Deferred {
		t.Fatalf("outcome %v, want Deferred", oc)
	}
	if n := mxRead(t, tab).inProgress("gate"); n != 1 {
		t.Errorf("deferred: in progress %d, want 1", n)
	}
	p := later.Take()
	mxCheckReply(t, "gate", p.Run(ctx, nil), 0)
	mxRead(t, tab).check(t, "gate", 1, mxH(0, 1))
}

// TestMetrics_deferredWithoutPendingCountsOnce: DispatchInline with a nil
// Pending defers a blocking call and the caller Dispatches the message
// itself, as its doc says: the call still counts as started once.
func TestMetrics_deferredWithoutPendingCountsOnce(t *testing.T) {
	ctx := context.Background()
	for _, msg := range []string{mxReq(1, "work", "[1]"), mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "ok", ""))} {
		tab := mxTable()
		if _, oc := tab.DispatchInline(ctx, nil, []byte(msg), nil); oc != Deferred {
			t.Fatalf("%s: outcome %v, want Deferred", msg, oc)
		}
		tab.Dispatch(ctx, nil, []byte(msg))
		mxRead(t, tab).check(t, "work", 1, mxH(0, 1))
	}
}

// TestMetrics_deferredCallCountsItsOwnCode: a Pending reused across
// DispatchInline calls (an event loop's) runs a deferred blocking call
// after an error reply: the call's success counts 0, not the code left
// from the message before.
func TestMetrics_deferredCallCountsItsOwnCode(t *testing.T) {
	ctx := context.Background()
	tab := mxTable()
	var later Pending
	out, oc := tab.DispatchInline(ctx, nil, []byte(mxReq(1, "fail", "[7]")), &later)
	if oc != Replied {
		t.Fatalf("fail: outcome %v", oc)
	}
	mxCheckReply(t, "fail", out, 7)
	if _, oc = tab.DispatchInline(ctx, nil, []byte(mxReq(2, "work", "[1]")), &later); oc != Deferred {
		t.Fatalf("work: outcome %v, want Deferred", oc)
	}
	p := later.Take()
	mxCheckReply(t, "work", p.Run(ctx, nil), 0)
	s := mxRead(t, tab)
	s.check(t, "fail", 1, mxH(7, 1))
	s.check(t, "work", 1, mxH(0, 1))
}

// TestMetrics_timeoutCountsDeadlineOnce: a blocking call past its Timeout
// counts parser.CodeDeadline when it is answered, alone or as a batch element,
// and its worker's late finish counts nothing more.
func TestMetrics_timeoutCountsDeadlineOnce(t *testing.T) {
	ctx := context.Background()
	tab := mxTable()
	g := newMxGate()
	Register(tab, "stuck", g.fn, Timeout(20*time.Millisecond))
	mxDo(t, tab, mxReq(1, "stuck", "[1]"), -32002)
	out := tab.Dispatch(ctx, nil, []byte(mxBatch(mxReq(1, "stuck", "[1]"), mxReq(2, "ok", ""), mxNote("stuck", "[2]"))))
	if got := mxCodes(t, out); got[-32002] != 1 || got[0] != 1 || len(got) != 2 {
		t.Errorf("batch reply %s", out)
	}
	check := func(when string) {
		t.Helper()
		s := mxRead(t, tab)
		s.check(t, "stuck", 3, mxH(-32002, 3))
		s.check(t, "ok", 1, mxH(0, 1))
		if d := s.methods["stuck"].Duration; d.Sum < 3*0.020 {
			t.Errorf("%s: stuck's durations sum to %vs, want at least its 3 timeouts, 0.06s", when, d.Sum)
		}
	}
	check("answered")
	for range 3 {
		<-g.entered
	}
	close(g.release)
	for range 3 {
		<-g.returned
	}
	time.Sleep(50 * time.Millisecond) // the workers finish
	check("after the methods returned")
}

// TestMetrics_busyCountsServerBusy: a message no worker could take
// counts -32000 for each call answered busy — by Pending.Busy, or when
// the pool had no room for a batch's blocking element — and the usual
// codes for the faults in it.
func TestMetrics_busyCountsServerBusy(t *testing.T) {
	ctx := context.Background()
	busy := func(tab *Table, msg string) []byte {
		t.Helper()
		var later Pending
		out, oc := tab.DispatchInline(ctx, nil, []byte(msg), &later)
		if oc != Deferred {
			t.Fatalf("%s: outcome %v, want Deferred", msg, oc)
		}
		p := later.Take()
		return p.Busy(ctx, out)
	}
	tab := mxTable()
	mxCheckReply(t, "work", busy(tab, mxReq(1, "work", "[1]")), -32000)
	if got := busy(tab, mxNote("work", "[1]")); len(got) != 0 {
		t.Errorf("busy notification: reply %s", got)
	}
	out := busy(tab, mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "ok", ""), mxReq(3, "nope", ""), `1`, mxNote("work", "[2]")))
	if got := mxCodes(t, out); got[-32000] != 2 || got[-32601] != 1 || got[-32600] != 1 || len(got) != 3 {
		t.Errorf("busy batch reply %s", out)
	}
	s := mxRead(t, tab)
	s.check(t, "work", 4, mxH(-32000, 4))
	s.check(t, "ok", 1, mxH(-32000, 1))
	s.check(t, stats.UnknownMethod, 1, mxH(-32601, 1))
	s.check(t, stats.InvalidMethod, 1, mxH(-32600, 1))
	s.checkBatches(t, 1, 5, map[int]uint64{2: 1})

	// A pool with one worker, held: a batch's blocking elements find no
	// room and are answered busy; its inline element runs.
	w := pool.NewWorkers(1, 0)
	defer w.Close()
	hold := make(chan struct{})
	for !w.TrySubmit(pool.TaskFunc(func() { <-hold })) {
		time.Sleep(time.Millisecond)
	}
	tab = mxTable(WithWorkers(w))
	out = tab.Dispatch(ctx, nil, []byte(mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "ok", ""), mxReq(3, "failb", "[3]"), mxNote("work", "[2]"))))
	close(hold)
	if got := mxCodes(t, out); got[-32000] != 2 || got[0] != 1 || len(got) != 2 {
		t.Errorf("full pool: batch reply %s", out)
	}
	s = mxRead(t, tab)
	s.check(t, "work", 2, mxH(-32000, 2))
	s.check(t, "failb", 1, mxH(-32000, 1))
	s.check(t, "ok", 1, mxH(0, 1))
}

// TestMetrics_busyCountsNoDuration: stats.Method.Duration says a call
// answered without running (busy) counts 0: alone or in a batch.
func TestMetrics_busyCountsNoDuration(t *testing.T) {
	ctx := context.Background()
	tab := mxTable()
	for _, msg := range []string{mxReq(1, "work", "[1]"), mxBatch(mxReq(1, "failb", "[1]"))} {
		var later Pending
		if _, oc := tab.DispatchInline(ctx, nil, []byte(msg), &later); oc != Deferred {
			t.Fatalf("%s: outcome %v, want Deferred", msg, oc)
		}
		p := later.Take()
		p.Busy(ctx, nil)
	}
	s := mxRead(t, tab)
	for _, name := range []string{"work", "failb"} {
		d := s.methods[name].Duration
		if d.Count != 1 || d.Sum != 0 || d.Buckets[0] != 1 {
			t.Errorf("%s: busy: Duration Count %d, Sum %vs, first bucket %d; want 1, 0, 1", name, d.Count, d.Sum, d.Buckets[0])
		}
	}
}

// TestMetrics_maxConcurrentRefusals: calls past a method's MaxConcurrent
// count -32000 and a concurrency refusal each, notifications too.
func TestMetrics_maxConcurrentRefusals(t *testing.T) {
	ctx := context.Background()
	tab := mxTable()
	g := newMxGate()
	Register(tab, "gate", g.fn, MaxConcurrent(1))
	done := make(chan []byte)
	go func() { done <- tab.Dispatch(ctx, nil, []byte(mxReq(1, "gate", "[1]"))) }()
	<-g.entered
	mxDo(t, tab, mxReq(2, "gate", "[1]"), -32000)
	mxDo(t, tab, mxNote("gate", "[1]"), mxNone)
	out := tab.Dispatch(ctx, nil, []byte(mxBatch(mxReq(3, "gate", "[1]"), mxReq(4, "ok", ""))))
	if got := mxCodes(t, out); got[-32000] != 1 || got[0] != 1 {
		t.Errorf("batch reply %s", out)
	}
	s := mxRead(t, tab)
	if n := s.inProgress("gate"); n != 1 {
		t.Errorf("in progress %d, want 1", n)
	}
	close(g.release)
	mxCheckReply(t, "gate", <-done, 0)
	s = mxRead(t, tab)
	s.check(t, "gate", 4, mxH(0, 1, -32000, 3))
	if r := tab.LimitRefusals(); r != (stats.Refusals{Concurrency: 3}) {
		t.Errorf("LimitRefusals %+v, want Concurrency 3", r)
	}
}

// TestMetrics_responseTooLarge: a reply over MaxResponseSize counts
// -32008, and so does each batch element answered so once the batch's
// replies pass MaxBatchResponseSize — on the caller or joined from
// parallel segments; each is a ResponseSize refusal.
func TestMetrics_responseTooLarge(t *testing.T) {
	ctx := context.Background()
	for _, parallel := range []int{0, 2} {
		opts := []Option{WithMaxResponseSize(100, 300)}
		if parallel > 0 {
			opts = append(opts, WithParallelBatch(parallel))
		}
		tab := mxTable(opts...)
		Register(tab, "big", func(_ context.Context, p [1]int) (string, error) { return strings.Repeat("x", p[0]), nil }, Inline())
		Register(tab, "bigb", func(_ context.Context, p [1]int) (string, error) { return strings.Repeat("x", p[0]), nil })
		mxDo(t, tab, mxReq(1, "big", "[200]"), -32008)
		mxDo(t, tab, mxReq(1, "bigb", "[200]"), -32008)
		mxDo(t, tab, mxReq(1, "big", "[10]"), 0)
		out := tab.Dispatch(ctx, nil, []byte(mxBatch(mxReq(1, "big", "[200]"), mxReq(2, "big", "[10]"))))
		if got := mxCodes(t, out); got[-32008] != 1 || got[0] != 1 {
			t.Errorf("batch reply %s", out)
		}
		elems := make([]string, 10)
		for i := range elems {
			elems[i] = mxReq(i, "big", "[50]")
		}
		out = tab.Dispatch(ctx, nil, []byte(mxBatch(elems...)))
		codes := mxCodes(t, out)
		k := codes[-32008]
		if k == 0 || codes[0] != 10-k {
			t.Fatalf("parallel %d: batch over its limit: reply %s", parallel, out)
		}
		s := mxRead(t, tab)
		s.check(t, "big", 14, mxH(0, 2+10-k, -32008, 2+k))
		s.check(t, "bigb", 1, mxH(-32008, 1))
		if r := tab.LimitRefusals(); r != (stats.Refusals{ResponseSize: uint64(3 + k)}) {
			t.Errorf("parallel %d: LimitRefusals %+v, want ResponseSize %d", parallel, r, 3+k)
		}
	}
}

// TestMetrics_rateLimit: calls over the rate limit count -32005, and
// dropped notifications too (the code their reply would have had); the
// limiter counts refusals and drops apart.
func TestMetrics_rateLimit(t *testing.T) {
	tab := mxTable(WithRateLimit(ratelimit.Limits{Rate: 1e-9, Burst: 1})) // no refill for 30 years
	mxDo(t, tab, mxReq(1, "ok", ""), 0)
	for i := range 3 {
		mxDo(t, tab, mxReq(i, "ok", ""), -32005)
	}
	mxDo(t, tab, mxNote("ok", ""), mxNone)
	mxDo(t, tab, mxNote("work", "[1]"), mxNone)
	out := tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "ok", ""), mxReq(2, "work", "[1]"), mxReq(3, "nope", ""))))
	if got := mxCodes(t, out); got[-32005] != 2 || got[-32601] != 1 {
		t.Errorf("batch reply %s", out)
	}
	s := mxRead(t, tab)
	s.check(t, "ok", 6, mxH(0, 1, -32005, 5))
	s.check(t, "work", 2, mxH(-32005, 2))
	s.check(t, stats.UnknownMethod, 1, mxH(-32601, 1))
	if r := tab.LimitRefusals(); r != (stats.Refusals{Rate: 5, RateDropped: 2}) {
		t.Errorf("LimitRefusals %+v, want Rate 5, RateDropped 2", r)
	}
}

// mxConn is a Conn that can push and drops what it is sent.
type mxConn struct{ ctx context.Context }

func (c *mxConn) Send([]byte) error        { return nil }
func (c *mxConn) CanPush() bool            { return true }
func (c *mxConn) Context() context.Context { return c.ctx }

// TestMetrics_subscriptionLimit: a subscribe call past the limits counts
// -32006 and a Subscriptions refusal.
func TestMetrics_subscriptionLimit(t *testing.T) {
	tab := NewTable(WithMetrics(true), WithMaxSubscriptions(1, 10), WithLogger(mxQuiet()))
	RegisterSubscription(tab, "s", func(context.Context, [1]int, *Subscription) error { return nil }, Inline())
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := ContextWithConn(cctx, &mxConn{ctx: cctx})
	msg := mxReq(1, "s_subscribe", "[0]")
	if out := tab.Dispatch(ctx, nil, []byte(msg)); strings.Contains(string(out), "error") {
		t.Fatalf("first subscribe: %s", out)
	}
	mxCheckReply(t, msg, tab.Dispatch(ctx, nil, []byte(msg)), -32006)
	s := mxRead(t, tab)
	s.check(t, "s_subscribe", 2, mxH(0, 1, -32006, 1))
	if r := tab.LimitRefusals(); r != (stats.Refusals{Subscriptions: 1}) {
		t.Errorf("LimitRefusals %+v, want Subscriptions 1", r)
	}
}

// mxRefuser is an interceptor that refuses calls of "ok" before they run
// (4001), replaces fail's code 7 after (4002), refuses unknown methods
// (4003), parse errors (4004) and batches too long (4005).
func mxRefuser(ctx context.Context, c *Call) error {
	switch {
	case c.Method() == "ok":
		return NewError(4001, "refused")
	case c.Method() == "fail":
		c.Next(ctx)
		if c.Code() == 7 {
			return NewError(4002, "replaced")
		}
		return nil
	case c.Fault() == parser.CodeMethodNotFound:
		return NewError(4003, "refused")
	case c.Fault() == parser.CodeParseError:
		return NewError(4004, "refused")
	case c.Fault() == parser.CodeInvalidRequest && c.Method() == "" && c.ID() == nil:
		return NewError(4005, "refused")
	}
	return nil
}

// TestMetrics_interceptorRefusalCode: a call an interceptor refuses, or
// whose outcome it replaces, counts the code of the reply it gave.
func TestMetrics_interceptorRefusalCode(t *testing.T) {
	tab := mxTable()
	tab.Use(mxRefuser)
	mxDo(t, tab, mxReq(1, "ok", ""), 4001)
	mxDo(t, tab, mxNote("ok", ""), mxNone)
	mxDo(t, tab, mxReq(1, "fail", "[7]"), 4002)
	mxDo(t, tab, mxReq(1, "fail", "[8]"), 8)
	mxDo(t, tab, mxReq(1, "nope", ""), 4003)
	mxDo(t, tab, mxReq(1, "work", "[1]"), 0)
	out := tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "ok", ""), mxReq(2, "fail", "[7]"), mxReq(3, "nope", ""), mxReq(4, "work", "[1]"))))
	if got := mxCodes(t, out); got[4001] != 1 || got[4002] != 1 || got[4003] != 1 || got[0] != 1 {
		t.Errorf("batch reply %s", out)
	}
	s := mxRead(t, tab)
	s.check(t, "ok", 3, mxH(4001, 3))
	s.check(t, "fail", 3, mxH(8, 1, 4002, 2))
	s.check(t, stats.UnknownMethod, 2, mxH(4003, 2))
	s.check(t, "work", 2, mxH(0, 2))
}

// TestMetrics_interceptorRefusalOfFaultCode: faults of the whole message
// pass through the interceptors too; when one refuses, the code counted
// is its reply's, as for any other call.
func TestMetrics_interceptorRefusalOfFaultCode(t *testing.T) {
	tab := mxTable(WithMaxBatch(2))
	tab.Use(mxRefuser)
	mxDo(t, tab, `{"jsonrpc":`, 4004)
	mxDo(t, tab, mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "work", "[1]"), mxReq(3, "work", "[1]")), 4005)
	mxRead(t, tab).check(t, stats.InvalidMethod, 2, mxH(4004, 1, 4005, 1))
}

// mxBucket returns the index of the duration bucket whose bound is d.
func mxBucket(t testing.TB, d time.Duration) int {
	t.Helper()
	i := slices.Index(stats.DurationBuckets(), d)
	if i < 0 {
		t.Fatalf("no bucket bound %v in %v", d, stats.DurationBuckets())
	}
	return i
}

// TestMetrics_durationHistogram: a blocking call sleeping 30 ms lands in
// the 50 ms bucket — or, on a slow machine, a later one, never an
// earlier one; Count is the calls, Sum at least their sleep and at most
// what the caller measured. No wall-clock upper bound is assumed: a call
// lands in the 50 ms bucket for sure only when its Dispatch took at most
// 50 ms.
func TestMetrics_durationHistogram(t *testing.T) {
	tab := mxTable()
	Register(tab, "nap", func(context.Context, struct{}) (int, error) {
		time.Sleep(30 * time.Millisecond)
		return 1, nil
	})
	const n = 4
	var total time.Duration
	sure := 0
	for i := range n {
		start := time.Now()
		mxDo(t, tab, mxReq(i, "nap", ""), 0)
		d := time.Since(start)
		total += d
		if d <= 50*time.Millisecond {
			sure++
		}
	}
	h := mxRead(t, tab).methods["nap"].Duration
	b50 := mxBucket(t, 50*time.Millisecond)
	var below, from uint64
	for i, k := range h.Buckets {
		if i < b50 {
			below += k
		} else {
			from += k
		}
	}
	if h.Count != n || below != 0 || from != n || h.Buckets[b50] < uint64(sure) {
		t.Errorf("Count %d, buckets %v; want %d calls, none below bucket %d (50ms), at least %d in it", h.Count, h.Buckets, n, b50, sure)
	}
	if h.Sum < n*0.030 || h.Sum > total.Seconds() {
		t.Errorf("Sum %vs, want between %vs and %vs", h.Sum, n*0.030, total.Seconds())
	}
}

// TestMetrics_histogramBounds: a duration equal to a bucket's bound
// counts in that bucket, one nanosecond more in the next; beyond the last
// bound, in +Inf. Same for batch sizes. White-box: real clocks cannot hit
// a bound.
func TestMetrics_histogramBounds(t *testing.T) {
	bounds := stats.DurationBuckets()
	if len(bounds) == 0 || bounds[len(bounds)-1] != 10*time.Second || !slices.IsSorted(bounds) || slices.Index(bounds, 50*time.Millisecond) < 0 {
		t.Errorf("stats.DurationBuckets() = %v, want increasing bounds up to 10s, 50ms among them", bounds)
	}
	first := bounds[0]
	stats.DurationBuckets()[0] = -1 // a copy: the table's bounds stay
	if got := stats.DurationBuckets()[0]; got != first {
		t.Errorf("stats.DurationBuckets()[0] = %v after writing a copy, want %v", got, first)
	}
	wantB := []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
	if got := stats.BatchSizeBuckets(); !slices.Equal(got, wantB) {
		t.Errorf("stats.BatchSizeBuckets() = %v, want %v", got, wantB)
	}
	wantD := bounds

	tab := mxTable()
	mxDo(t, tab, mxReq(1, "ok", ""), 0) // sealed: counters made
	tm, m := tab.obs.metrics, tab.methods["work"]
	var sum int64
	for _, b := range wantD {
		for _, d := range []int64{int64(b), int64(b) + 1} {
			tm.handled(m.stats, 0, 0, d)
			sum += d
		}
	}
	tm.handled(m.stats, 0, 0, 0)
	tm.handled(m.stats, 0, 0, -5) // a clock that went back: the first bucket, nothing summed
	h := mxRead(t, tab).methods["work"].Duration
	want := make([]uint64, len(wantD)+1)
	want[0] = 1 + 2
	for i := 1; i < len(want); i++ {
		want[i] = 2 // its bound, and one more than the bound before
	}
	want[len(wantD)] = 1
	if !slices.Equal(h.Buckets, want) || h.Count != uint64(2*len(wantD)+2) || math.Abs(h.Sum-float64(sum)/1e9) > 1e-9 {
		t.Errorf("Buckets %v Count %d Sum %v; want %v, %d, %v", h.Buckets, h.Count, h.Sum, want, 2*len(wantD)+2, float64(sum)/1e9)
	}

	sumB := 0
	for _, b := range wantB {
		tm.batch(0, b)
		tm.batch(0, b+1)
		sumB += 2*b + 1
	}
	bs := mxRead(t, tab).batches.Sizes
	wantS := make([]uint64, len(wantB)+1)
	wantS[0] = 1
	for i := 1; i < len(wantS); i++ {
		wantS[i] = 2
	}
	wantS[len(wantB)] = 1
	if !slices.Equal(bs.Buckets, wantS) || bs.Count != uint64(2*len(wantB)) || bs.Sum != float64(sumB) {
		t.Errorf("batch Buckets %v Count %d Sum %v; want %v, %d, %d", bs.Buckets, bs.Count, bs.Sum, wantS, 2*len(wantB), sumB)
	}
}

// TestMetrics_disabled: a table without Options.Metrics reports nothing
// and counts only the refusals its limits keep anyway.
func TestMetrics_disabled(t *testing.T) {
	for _, opts := range [][]Option{
		nil,
		{WithMetrics(false)},
		{WithAccessLog(AccessLog{Logger: mxQuiet(), Sample: 1})},
	} {
		tab := NewTable(append(opts, WithRateLimit(ratelimit.Limits{Rate: 1e-9, Burst: 1}), WithMaxBatch(1))...)
		RegisterNoParams(tab, "ok", func(context.Context) (int, error) { return 1, nil }, Inline(), MaxConcurrent(1))
		mxDo(t, tab, mxReq(1, "ok", ""), 0)
		mxDo(t, tab, mxReq(1, "ok", ""), -32005)
		mxDo(t, tab, mxBatch(mxReq(1, "ok", ""), mxReq(2, "ok", "")), -32600)
		called := false
		if b, ok := tab.Metrics(func(*stats.Method) { called = true }); ok || called || b.Sizes.Count != 0 || b.Sizes.Buckets != nil {
			t.Errorf("Metrics: %v, called %v, %+v; want false, not called, zero", ok, called, b)
		}
		if metricsOn(tab) {
			t.Error("metrics on without Options.Metrics")
		}
		if r := tab.LimitRefusals(); r != (stats.Refusals{Rate: 1}) {
			t.Errorf("LimitRefusals %+v, want Rate 1 alone", r)
		}
	}
	if !metricsOn(mxTable()) {
		t.Error("metrics off with WithMetrics(true)")
	}
}

// TestMetrics_listsMethodsBeforeFirstCall: Metrics reports each of the
// table's methods, with zero counts, before any call — as a scrape
// right after start-up does.
func TestMetrics_listsMethodsBeforeFirstCall(t *testing.T) {
	tab := mxTable()
	s := mxRead(t, tab)
	if !slices.Equal(s.names, mxStdNames) {
		t.Errorf("before any call: reported %q, want %q", s.names, mxStdNames)
	}
}

// TestMetrics_concurrentDispatchAndReads: calls from many goroutines,
// single and batched, inline and blocking, while Metrics is read again
// and again: counts never go down between reads, and the final ones are
// exact. Run with -race.
func TestMetrics_concurrentDispatchAndReads(t *testing.T) {
	tab := mxTable()
	const G, N = 8, 300
	msgs := []string{
		mxReq(1, "ok", ""),
		mxNote("fail", "[7]"),
		mxReq(2, "work", "[1]"),
		mxReq(3, "nope", ""),
		mxBatch(mxReq(1, "ok", ""), mxReq(2, "work", "[2]"), `1`, mxNote("failb", "[3]")),
		mxCycle(70, mxReq(1, "ok", ""), mxReq(2, "fail", "[9]")),
	}
	stop := make(chan struct{})
	var reads atomic.Int64
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		last := map[string]stats.Method{}
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := mxRead(t, tab)
			reads.Add(1)
			for name, m := range s.methods {
				p, ok := last[name]
				if ok && (m.Started < p.Started || m.Duration.Count < p.Duration.Count) {
					t.Errorf("%s: went down: Started %d → %d, Count %d → %d", name, p.Started, m.Started, p.Duration.Count, m.Duration.Count)
				}
				if m.Method != "work" && m.Method != "failb" && m.Started != m.Duration.Count {
					t.Errorf("%s: inline: Started %d, handled %d", name, m.Started, m.Duration.Count)
				}
				last[name] = m
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var later Pending
			var dst []byte
			for i := range N {
				msg := []byte(msgs[(g+i)%len(msgs)])
				if i%2 == 0 {
					dst = tab.Dispatch(context.Background(), dst[:0], msg)
					continue
				}
				var oc Outcome
				dst, oc = tab.DispatchInline(context.Background(), dst[:0], msg, &later)
				later.Flush() // a burst of one message
				if oc == Deferred {
					p := later.Take()
					dst = p.Run(context.Background(), dst)
				}
			}
		}()
	}
	wg.Wait()
	for reads.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-readerDone
	per := G * N / len(msgs) // each message this many times
	s := mxRead(t, tab)
	s.check(t, "ok", per*(1+1+35), mxH(0, per*(1+1+35)))
	s.check(t, "fail", per*(1+35), mxH(7, per, 9, per*35))
	s.check(t, "work", per*2, mxH(0, per*2))
	s.check(t, "failb", per, mxH(3, per))
	s.check(t, stats.UnknownMethod, per, mxH(-32601, per))
	s.check(t, stats.InvalidMethod, per, mxH(-32600, per))
	s.checkBatches(t, 2*per, float64(per*(4+70)), map[int]uint64{2: uint64(per), 6: uint64(per)})
}

// mxRaceEnabled reports whether the test binary was built with -race,
// under which sync.Pool drops objects at random: allocation counts mean
// nothing then.
func mxRaceEnabled() bool { return testkit.RaceEnabled() }

// TestObserve_zeroAllocs: metrics and an access log that logs nothing
// allocate nothing: a call and a small batch of inline methods, through
// Dispatch and through DispatchInline with a Pending kept across calls.
func TestObserve_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	if mxRaceEnabled() {
		t.Skip("the race detector makes sync.Pool drop objects")
	}
	quiet := AccessLog{Logger: slog.New(slog.DiscardHandler), Sample: 0, Slow: time.Hour}
	configs := map[string][]Option{
		"metrics":    {WithMetrics(true)},
		"access log": {WithMetrics(false), WithAccessLog(quiet)},
		"both":       {WithMetrics(true), WithAccessLog(quiet)},
	}
	appErr := NewError(7, "fail") // built once: a method's own allocation is not the table's
	msgs := map[string]string{
		"call":         mxReq(1, "add", "[1,2]"),
		"error":        mxReq(1, "fail7", ""),
		"notification": mxNote("ok", ""),
		"unknown":      mxReq(1, "nope", ""),
		"parse error":  `{"jsonrpc":`,
		"batch":        mxBatch(mxReq(1, "ok", ""), mxReq(2, "add", "[1,2]"), mxReq(3, "fail7", ""), mxNote("ok", ""), mxReq(4, "nope", "")),
	}
	for cname, opts := range configs {
		tab := mxTable(opts...)
		RegisterNoParams(tab, "fail7", func(context.Context) (int, error) { return 0, appErr }, Inline())
		if got := metricsOn(tab); got != (cname != "access log") {
			t.Fatalf("%s: metrics on = %v", cname, got)
		}
		for mname, msg := range msgs {
			ctx := context.Background()
			dst := make([]byte, 0, 4096)
			m := []byte(msg)
			if n := testing.AllocsPerRun(200, func() { dst = tab.Dispatch(ctx, dst[:0], m) }); n != 0 {
				t.Errorf("%s, %s: Dispatch allocates %v times", cname, mname, n)
			}
			var later Pending
			if n := testing.AllocsPerRun(200, func() {
				dst, _ = tab.DispatchInline(ctx, dst[:0], m, &later)
				later.Flush()
			}); n != 0 {
				t.Errorf("%s, %s: DispatchInline allocates %v times", cname, mname, n)
			}
		}
	}
}

// TestMetrics_burstTalliedUntilFlush: the successes of a burst given one
// Pending reach the counters when the burst is flushed — but its first,
// counted at once — each call once, whatever methods and failures are
// interleaved.
func TestMetrics_burstTalliedUntilFlush(t *testing.T) {
	tab := NewTable(WithMetrics(true))
	Register(tab, "a", func(context.Context, Raw) (int, error) { return 1, nil }, Inline())
	Register(tab, "b", func(context.Context, Raw) (int, error) { return 2, nil }, Inline())
	Register(tab, "bad", func(context.Context, Raw) (int, error) { return 0, NewError(7, "bad") }, Inline())
	counts := func() map[string]string {
		out := map[string]string{}
		tab.Metrics(func(m *stats.Method) {
			h := ""
			for _, c := range m.Handled {
				h += fmt.Sprintf(" %d:%d", int(c.Code), c.Count)
			}
			out[m.Method] = fmt.Sprintf("%d [%s] %d", m.Started, strings.TrimSpace(h), m.Duration.Count)
		})
		return out
	}
	var later Pending
	later.Flush() // its owner flushes its bursts: it tallies
	ctx := context.Background()
	call := func(method string) {
		msg := `{"jsonrpc":"2.0","method":"` + method + `","id":1}`
		if _, oc := tab.DispatchInline(ctx, nil, []byte(msg), &later); oc != Replied {
			t.Fatalf("%s: %v", method, oc)
		}
	}
	for range 3 {
		call("a")
	}
	call("bad") // an error goes straight to the counters
	// The burst's first success is counted at once, the next two tallied.
	if got := counts(); got["a"] != "1 [0:1] 1" || got["bad"] != "1 [7:1] 1" {
		t.Fatalf("before the flush: %v", got)
	}
	call("a")
	call("b") // another method: a's tally is flushed
	if got := counts(); got["a"] != "4 [0:4] 4" || got["b"] != "0 [] 0" {
		t.Fatalf("after a change of method: %v", got)
	}
	later.Flush()
	later.Flush() // nothing left: no change
	if got := counts(); got["a"] != "4 [0:4] 4" || got["b"] != "1 [0:1] 1" || got["bad"] != "1 [7:1] 1" {
		t.Fatalf("after the flush: %v", got)
	}
}

// TestMetrics_pendingNeverFlushedCountsAtOnce: a Pending whose owner
// never calls Flush — one made for a single message, say — leaves no
// call out of the counters, and no idle time in a duration.
func TestMetrics_pendingNeverFlushedCountsAtOnce(t *testing.T) {
	tab := NewTable(WithMetrics(true))
	Register(tab, "a", func(context.Context, Raw) (int, error) { return 1, nil }, Inline())
	var later Pending
	for range 2 {
		if _, oc := tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"a","id":1}`), &later); oc != Replied {
			t.Fatal(oc)
		}
		time.Sleep(20 * time.Millisecond) // idle between messages
	}
	tab.Metrics(func(m *stats.Method) {
		if m.Method != "a" {
			return
		}
		if m.Duration.Count != 2 || m.Started != 2 {
			t.Errorf("a: Started %d, Count %d; want 2, 2", m.Started, m.Duration.Count)
		}
		if m.Duration.Sum >= 0.02 {
			t.Errorf("a: Sum %vs: the idle time between messages was counted", m.Duration.Sum)
		}
	})
}

// TestBucketOf_matchesTheBounds: bucketOf's table gives the bucket a
// search of the bounds from the first gives, at every bound, next to it,
// at every power of two and at the extremes.
func TestBucketOf_matchesTheBounds(t *testing.T) {
	linear := func(d int64) int {
		b := 0
		for b < len(durationBounds) && d > durationBounds[b] {
			b++
		}
		return b
	}
	ds := []int64{-5, 0, 1, math.MaxInt64}
	for _, b := range durationBounds {
		ds = append(ds, b-1, b, b+1)
	}
	for l := range 63 {
		ds = append(ds, 1<<l-1, 1<<l, 1<<l+1)
	}
	for _, d := range ds {
		if got, want := bucketOf(d), linear(d); got != want {
			t.Errorf("bucketOf(%d) = %d, want %d", d, got, want)
		}
	}
}

// metricsOn reports whether tab counts its calls: Metrics answers.
func metricsOn(tab *Table) bool {
	_, ok := tab.Metrics(func(*stats.Method) {})
	return ok
}
