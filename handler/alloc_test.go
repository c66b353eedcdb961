//go:build !race

package handler_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/pool"
)

// TestDispatch_zeroAllocs guards the promise that a request to an inline
// method with hand-coded params and result allocates nothing, and neither
// do the error replies.
func TestDispatch_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := demoTable(t)
	strs := []string{"a\"b", "é", "\n"}
	handler.Register(tab, "strs", func(context.Context, struct{}) ([]string, error) { return strs, nil }, handler.Inline())
	appErr := &handler.Error{Code: 7, Message: "app", Data: handler.Raw(`{"k":[1,2]}`)}
	handler.Register(tab, "apperr", func(context.Context, struct{}) (int, error) { return 0, appErr }, handler.Inline())
	handler.Register(tab, "floats", func(_ context.Context, p struct {
		X float64 `json:"x"`
		Y float32 `json:"y"`
		B bool    `json:"b"`
		U uint16  `json:"u"`
	}) ([3]float64, error) {
		return [3]float64{p.X, float64(p.Y), float64(p.U)}, nil
	}, handler.Inline())
	handler.Register(tab, "appender", func(context.Context, struct{}) (appendInt, error) { return 7, nil }, handler.Inline())
	cases := map[string]string{
		"add":              string(msgAdd),
		"subtract-named":   string(msgSubtractName),
		"notification":     string(msgNotification),
		"batch10-add":      string(msgBatch10Add),
		"echo":             string(msgEcho),
		"get_data":         `{"jsonrpc":"2.0","method":"get_data","id":9}`,
		"escaped method":   `{"jsonrpc":"2.0","method":"su\u0062tract","params":[42,23],"id":1}`,
		"string results":   `{"jsonrpc":"2.0","method":"strs","id":1}`,
		"floats":           `{"jsonrpc":"2.0","method":"floats","params":{"x":1.5e300,"y":2.5,"b":true,"u":7},"id":1}`,
		"appender":         `{"jsonrpc":"2.0","method":"appender","id":1}`,
		"v1":               `{"method":"add","params":[1,2],"id":1}`,
		"method not found": `{"jsonrpc":"2.0","method":"nope","id":1}`,
		"parse error":      `{"jsonrpc":"2.0","method":`,
		"invalid request":  `{"jsonrpc":"2.0","method":1,"id":1}`,
		"invalid params":   `{"jsonrpc":"2.0","method":"add","params":[1,"x"],"id":1}`,
		"app error":        `{"jsonrpc":"2.0","method":"apperr","id":1}`,
		"batch of faults":  `[1,{"jsonrpc":"2.0","method":"nope","id":1},{"jsonrpc":"2.0","method":"add","params":[1],"id":2}]`,
		"all-notification": `[{"jsonrpc":"2.0","method":"add","params":[1,2]},{"jsonrpc":"2.0","method":"update"}]`,
	}
	assertNoAllocs(t, tab, cases, true)
}

// appendInt is a result type that writes its own JSON.
type appendInt int

func (a appendInt) AppendJSON(dst []byte) ([]byte, error) {
	return append(dst, byte('0'+a)), nil
}

// TestDispatch_zeroAllocsNumbersAndRaw extends TestDispatch_zeroAllocs to
// the demo's arithmetic on any JSON number, and to Raw params fields,
// given and missing.
func TestDispatch_zeroAllocsNumbersAndRaw(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := demoTable(t)
	handler.Register(tab, "rawFields", func(_ context.Context, p struct {
		A handler.Raw `json:"a"`
		B handler.Raw `json:"b"`
	}) (handler.Raw, error) {
		return p.B, nil
	}, handler.Inline())
	cases := map[string]string{
		"subtract integers":       `{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`,
		"subtract fraction":       `{"jsonrpc":"2.0","method":"subtract","params":[42.5,23],"id":1}`,
		"subtract named fraction": `{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":2.25e1,"minuend":42},"id":1}`,
		"subtract overflow":       `{"jsonrpc":"2.0","method":"subtract","params":[9223372036854775807,-1],"id":1}`,
		"subtract not a number":   `{"jsonrpc":"2.0","method":"subtract","params":[1,"x"],"id":1}`,
		"sum":                     `{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":1}`,
		"sum fractions":           `{"jsonrpc":"2.0","method":"sum","params":[1.5,2.25,-0.125e1],"id":1}`,
		"sum no params":           `{"jsonrpc":"2.0","method":"sum","id":1}`,
		"sum not finite":          `{"jsonrpc":"2.0","method":"sum","params":[1e308,1e308],"id":1}`,
		"raw fields":              `{"jsonrpc":"2.0","method":"rawFields","params":{"a":1,"b":[2, 3]},"id":1}`,
		"raw field missing":       `{"jsonrpc":"2.0","method":"rawFields","params":{"a":1},"id":1}`,
	}
	assertNoAllocs(t, tab, cases, false)
}

// assertNoAllocs checks that each message of cases costs no allocation
// through Dispatch, and through DispatchInline when inline is set.
func assertNoAllocs(t *testing.T, tab *handler.Table, cases map[string]string, inline bool) {
	t.Helper()
	ctx := context.Background()
	buf := make([]byte, 0, 8192)
	for name, msg := range cases {
		b := []byte(msg)
		buf = tab.Dispatch(ctx, buf[:0], b)
		if got := testing.AllocsPerRun(200, func() { buf = tab.Dispatch(ctx, buf[:0], b) }); got != 0 {
			t.Errorf("%s: %v allocs per Dispatch, want 0 (reply %s)", name, got, buf)
		}
		if !inline {
			continue
		}
		if got := testing.AllocsPerRun(200, func() { buf, _ = tab.DispatchInline(ctx, buf[:0], b, nil) }); got != 0 {
			t.Errorf("%s: %v allocs per DispatchInline, want 0", name, got)
		}
	}
}

// addTable serves add (inline) and slowadd (blocking) with a pool of its
// own, both allocation-free methods.
func addTable(t *testing.T) *handler.Table {
	w := pool.NewWorkers(2, 16)
	t.Cleanup(w.Close)
	tab := handler.NewTable(handler.WithWorkers(w))
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	return tab
}

// TestPending_zeroAllocs: a message deferred by DispatchInline, then run
// (or answered busy) from its Pending — the path of every blocking method
// on an event loop — allocates nothing in steady state.
func TestPending_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := addTable(t)
	ctx := context.Background()
	buf := make([]byte, 0, 4096)
	for name, msg := range map[string]string{
		"single": `{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`,
		"batch":  `[{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`,
	} {
		b := []byte(msg)
		var later handler.Pending
		for _, busy := range []bool{false, true} {
			step := func() {
				var oc handler.Outcome
				buf, oc = tab.DispatchInline(ctx, buf[:0], b, &later)
				if oc != handler.Deferred {
					t.Fatalf("%s: outcome %v", name, oc)
				}
				if busy {
					buf = later.Busy(context.Background(), buf)
				} else {
					buf = later.Run(ctx, buf)
				}
			}
			step()
			if got := testing.AllocsPerRun(200, step); got != 0 {
				t.Errorf("%s (busy %v): %v allocs per deferred message, want 0 (reply %s)", name, busy, got, buf)
			}
		}
	}
}

// TestPending_takeKeepsScratch: an event loop passes one Pending to
// every DispatchInline and Takes each deferred message out of it into a
// job; the loop's Pending keeps its scratch memory, and neither the
// inline calls nor the deferred ones (taken, then run) allocate.
func TestPending_takeKeepsScratch(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := addTable(t)
	ctx := context.Background()
	inline := []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	deferred := []byte(`{"jsonrpc":"2.0","method":"slowadd","params":[3,4],"id":2}`)
	var loop handler.Pending
	buf := make([]byte, 0, 512)
	step := func() {
		var oc handler.Outcome
		if buf, oc = tab.DispatchInline(ctx, buf[:0], inline, &loop); oc != handler.Replied || string(buf) != `{"jsonrpc":"2.0","result":3,"id":1}` {
			t.Fatalf("inline: %v %s", oc, buf)
		}
		if buf, oc = tab.DispatchInline(ctx, buf[:0], deferred, &loop); oc != handler.Deferred || len(buf) != 0 {
			t.Fatalf("deferred: %v %s", oc, buf)
		}
		job := loop.Take()
		if !loop.Empty() || job.Empty() {
			t.Fatalf("Take: loop empty %v, job empty %v", loop.Empty(), job.Empty())
		}
		if buf = job.Run(ctx, buf[:0]); string(buf) != `{"jsonrpc":"2.0","result":7,"id":2}` {
			t.Fatalf("run: %s", buf)
		}
	}
	step()
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("%v allocs per inline and deferred pair, want 0", got)
	}
}

// TestUse_zeroAllocs: a call through an interceptor that calls Next —
// inline, a fault, a batch, a notification, and a blocking method
// deferred and run from its Pending — allocates nothing.
func TestUse_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := addTable(t)
	var calls int
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		if c.Method() != "" && c.Code() == 0 {
			calls++
		}
		return nil
	})
	cases := map[string]string{
		"add":              `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		"notification":     `{"jsonrpc":"2.0","method":"add","params":[1,2]}`,
		"method not found": `{"jsonrpc":"2.0","method":"nope","id":1}`,
		"escaped unknown":  `{"jsonrpc":"2.0","method":"a\u0062c","id":1}`,
		"invalid params":   `{"jsonrpc":"2.0","method":"add","params":[1],"id":1}`,
		"parse error":      `{"jsonrpc":`,
		"batch":            `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},1,{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`,
	}
	assertNoAllocs(t, tab, cases, true)
	if calls == 0 {
		t.Fatal("the interceptor never saw a call")
	}
	ctx := context.Background()
	buf := make([]byte, 0, 4096)
	msg := []byte(`[{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`)
	var later handler.Pending
	step := func() {
		var oc handler.Outcome
		if buf, oc = tab.DispatchInline(ctx, buf[:0], msg, &later); oc != handler.Deferred {
			t.Fatalf("outcome %v", oc)
		}
		buf = later.Run(ctx, buf)
	}
	step()
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("%v allocs per deferred batch through an interceptor, want 0 (reply %s)", got, buf)
	}
}

// TestMetaFrom_zeroAllocs: a transport's CallContext as the context, with
// the method and an interceptor reading a header of its Meta, allocates
// nothing; nor does Require, granted or refused.
func TestMetaFrom_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "auth", func(ctx context.Context) (bool, error) {
		m := handler.MetaFrom(ctx)
		return m.Header("Authorization") == "Bearer t" && m.Path() == "/rpc" && m.Query("k") == "v", nil
	}, handler.Inline())
	handler.RegisterNoParams(tab, "admin", func(context.Context) (int, error) { return 1, nil }, handler.Inline(), handler.Require("admin"))
	handler.RegisterNoParams(tab, "root", func(context.Context) (int, error) { return 1, nil }, handler.Inline(), handler.Require("root"))
	var seen bool
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		m := handler.MetaFrom(ctx)
		seen = m.Header("x-user") == "ann" && handler.GrantsFrom(ctx).Has("admin")
		c.Next(ctx)
		return nil
	})
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.Transport = handler.TransportHTTP
	cc.Meta.Grants = handler.Grants{"read", "admin"}
	cc.Meta.SetHTTPHead([]byte("POST /rpc?k=v HTTP/1.1\r\nHost: h\r\nX-User: ann\r\nAuthorization: Bearer t\r\n\r\n"))
	buf := make([]byte, 0, 1024)
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"auth","id":1}`:  `{"jsonrpc":"2.0","result":true,"id":1}`,
		`{"jsonrpc":"2.0","method":"admin","id":1}`: `{"jsonrpc":"2.0","result":1,"id":1}`,
		`{"jsonrpc":"2.0","method":"root","id":1}`:  `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: requires permission root"},"id":1}`,
	} {
		b := []byte(msg)
		if buf = tab.Dispatch(cc, buf[:0], b); string(buf) != want || !seen {
			t.Fatalf("%s: %s (interceptor saw the meta: %v)", msg, buf, seen)
		}
		if got := testing.AllocsPerRun(200, func() { buf = tab.Dispatch(cc, buf[:0], b) }); got != 0 {
			t.Errorf("%s: %v allocs per Dispatch, want 0", msg, got)
		}
		if got := testing.AllocsPerRun(200, func() { buf, _ = tab.DispatchInline(cc, buf[:0], b, nil) }); got != 0 {
			t.Errorf("%s: %v allocs per DispatchInline, want 0", msg, got)
		}
	}
}

// TestLimits_zeroAllocs: call timeouts, a rate limit (one identity: no
// transport), costs, a concurrency bound and the response caps cost no
// allocation, on inline calls and on a blocking
// call answered from a worker within its deadline.
func TestLimits_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	w := pool.NewWorkers(2, 16)
	t.Cleanup(w.Close)
	tab := handler.NewTable(handler.WithWorkers(w), handler.WithCallTimeout(time.Minute), handler.WithMaxResponseSize(1<<20, 1<<20),
		handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9}))
	add := func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }
	handler.Register(tab, "add", add, handler.Inline(), handler.MaxConcurrent(8), handler.Cost(2))
	handler.Register(tab, "slowadd", add)
	cases := map[string]string{
		"inline with a deadline": `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		"blocking, timed":        `{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`,
		"batch, timed":           `[{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]`,
	}
	assertNoAllocs(t, tab, cases, false)
	assertNoAllocs(t, tab, map[string]string{"inline": cases["inline with a deadline"]}, true)
}

// TestTable_Refused_zeroAllocs: a refusal reported to a table without an
// access log, or to one whose sampling passes over it, allocates nothing.
func TestTable_Refused_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	cc := &handler.CallContext{Parent: context.Background(), Meta: handler.Meta{Transport: handler.TransportHTTP, Principal: "p"}}
	for name, tab := range map[string]*handler.Table{
		"no access log": handler.NewTable(),
		"not sampled":   handler.NewTable(handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.DiscardHandler), Sample: 1e-12})),
		"slow only":     handler.NewTable(handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.DiscardHandler), Slow: time.Second})),
	} {
		if got := testing.AllocsPerRun(200, func() {
			tab.Refused(cc, 401, "unauthorized")
			tab.RefusedConn(nil, "too_many_connections")
		}); got != 0 {
			t.Errorf("%s: %v allocs per refusal, want 0", name, got)
		}
	}
}

// TestSubscription_NotifyRaw_zeroAllocs: a notification of a result
// already encoded allocates nothing, once the first has made its head.
func TestSubscription_NotifyRaw_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	var sub *handler.Subscription
	handler.RegisterSubscription(tab, "s", func(_ context.Context, _ [1]int, s *handler.Subscription) error {
		sub = s
		return nil
	}, handler.Inline())
	c := &countConn{ctx: context.Background()}
	ctx := handler.ContextWithConn(context.Background(), c)
	tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"s_subscribe","params":[1],"id":1}`))
	result := []byte(`{"price":101.25,"sym":"ABC"}`)
	if err := sub.NotifyRaw(result); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { _ = sub.NotifyRaw(result) }); a != 0 {
		t.Errorf("NotifyRaw: %v allocations per notification, want 0", a)
	}
	if c.n != 102 {
		t.Fatalf("%d notifications sent, want 102", c.n)
	}
}

// TestRegisterSubscriptionKinds_NotifyRaw_zeroAllocs: the notifications
// of a subscription of a kind, under names of its own, allocate nothing
// either.
func TestRegisterSubscriptionKinds_NotifyRaw_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	var sub *handler.Subscription
	handler.RegisterSubscriptionKinds(tab, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("ticks", func(_ context.Context, _ [1]int, s *handler.Subscription) error {
			sub = s
			return nil
		}),
	}, handler.Inline(), handler.SubscriptionMethods(handler.SubscriptionNames{Notification: "eth_tick"}))
	c := &countConn{ctx: context.Background()}
	ctx := handler.ContextWithConn(context.Background(), c)
	tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"eth_subscribe","params":["ticks",1],"id":1}`))
	result := []byte(`{"price":101.25,"sym":"ABC"}`)
	if err := sub.NotifyRaw(result); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { _ = sub.NotifyRaw(result) }); a != 0 {
		t.Errorf("NotifyRaw: %v allocations per notification, want 0", a)
	}
	if c.n != 102 {
		t.Fatalf("%d notifications sent, want 102", c.n)
	}
}

// countConn is a Conn that can push and counts what it is sent.
type countConn struct {
	ctx context.Context
	n   int
}

func (c *countConn) Send([]byte) error        { c.n++; return nil }
func (c *countConn) CanPush() bool            { return true }
func (c *countConn) Context() context.Context { return c.ctx }

// TestCallFrom_zeroAllocs: a method that reads its call (CallFrom) — its
// id, name and notification flag — allocates nothing, inline and on the
// blocking path (deferred, run from its Pending), alone, in a batch and
// through a context derived from its own, with and without an
// interceptor.
func TestCallFrom_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, icept := range []bool{false, true} {
		w := pool.NewWorkers(2, 16)
		t.Cleanup(w.Close)
		tab := handler.NewTable(handler.WithWorkers(w))
		read := func(ctx context.Context, p [2]int) (int, error) {
			c := handler.CallFrom(ctx)
			if c.Method == "" || (c.ID == nil) != c.Notification {
				return 0, handler.ErrInternal
			}
			return p[0] + p[1] + len(c.ID), nil
		}
		handler.Register(tab, "add", read, handler.Inline())
		handler.Register(tab, "slowadd", read)
		if icept {
			tab.Use(func(ctx context.Context, c *handler.Call) error { c.Next(ctx); return nil })
		}
		assertNoAllocs(t, tab, map[string]string{
			"inline":       `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
			"notification": `{"jsonrpc":"2.0","method":"add","params":[1,2]}`,
			"batch":        `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":22}]`,
			"blocking":     `{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`,
		}, false)
		ctx := context.Background()
		buf := make([]byte, 0, 4096)
		for name, msg := range map[string]string{
			"single": `{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`,
			"batch":  `[{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`,
		} {
			b := []byte(msg)
			var later handler.Pending
			step := func() {
				var oc handler.Outcome
				if buf, oc = tab.DispatchInline(ctx, buf[:0], b, &later); oc != handler.Deferred {
					t.Fatalf("%s: outcome %v", name, oc)
				}
				buf = later.Run(ctx, buf)
			}
			step()
			if strings.Contains(string(buf), "error") {
				t.Fatalf("%s: %s", name, buf)
			}
			if got := testing.AllocsPerRun(200, step); got != 0 {
				t.Errorf("%s (interceptor %v): %v allocs per deferred message, want 0 (reply %s)", name, icept, got, buf)
			}
		}
	}
}

// TestCall_Answer_zeroAllocs: an interceptor that does not answer, and
// one that answers with a pre-built Raw, allocate nothing — inline, in a
// batch, for a notification, and on the blocking path.
func TestCall_Answer_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	canned := handler.Raw(`{"cached":true}`)
	for _, answer := range []bool{false, true} {
		tab := addTable(t)
		tab.Use(func(ctx context.Context, c *handler.Call) error {
			if answer && c.Registered() {
				c.Answer(canned)
				return nil
			}
			c.Next(ctx)
			return nil
		})
		assertNoAllocs(t, tab, map[string]string{
			"inline":       `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
			"notification": `{"jsonrpc":"2.0","method":"add","params":[1,2]}`,
			"batch":        `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"nope","id":2}]`,
			"blocking":     `{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`,
		}, true)
		ctx := context.Background()
		buf := make([]byte, 0, 4096)
		b := []byte(`{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`)
		var later handler.Pending
		step := func() {
			buf, _ = tab.DispatchInline(ctx, buf[:0], b, &later)
			if !later.Empty() {
				buf = later.Run(ctx, buf)
			}
		}
		step()
		if want := map[bool]string{false: `{"jsonrpc":"2.0","result":3,"id":1}`, true: `{"jsonrpc":"2.0","result":{"cached":true},"id":1}`}[answer]; string(buf) != want {
			t.Fatalf("answer %v: %s, want %s", answer, buf, want)
		}
		if got := testing.AllocsPerRun(200, step); got != 0 {
			t.Errorf("answer %v: %v allocs per blocking call, want 0", answer, got)
		}
	}
}

// nopConn is a Conn whose Send keeps nothing: what Notify allocates is
// its own.
type nopSendConn struct{ ctx context.Context }

func (c nopSendConn) Send([]byte) error        { return nil }
func (c nopSendConn) CanPush() bool            { return true }
func (c nopSendConn) Context() context.Context { return c.ctx }

// TestNotify_allocations: a notification whose params are raw JSON, a
// scalar or a JSONAppender allocates nothing; one whose params sonic
// encodes (a struct) allocates once, inside sonic (the value it is
// handed), and no buffer.
//
// A struct's params cost 4 allocations: sonic's output slice, grown from nil, and its header moved to the heap.
func TestNotify_allocations(t *testing.T) {
	c := &nopSendConn{context.Background()}
	type progress struct {
		Left int64 `json:"left"`
	}
	p := &progress{Left: 5}
	raw := handler.Raw(`{"left":5}`)
	for _, tc := range []struct {
		name   string
		params any
		want   float64
	}{
		{"raw", raw, 0}, {"int", 5, 0}, {"appender", appendFive{}, 0}, {"struct pointer", p, 1},
	} {
		if a := testing.AllocsPerRun(200, func() { _ = handler.Notify(c, "progress", tc.params) }); a != tc.want {
			t.Errorf("%s: %v allocations per notification, want %v", tc.name, a, tc.want)
		}
	}
}

// appendFive is a JSONAppender.
type appendFive struct{}

func (appendFive) AppendJSON(dst []byte) ([]byte, error) { return append(dst, `{"left":5}`...), nil }
