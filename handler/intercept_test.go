package handler_test

// Tests of the interceptor chain (intercept.go): the order of the chain
// around single calls, batch elements, notifications and faults; what an
// interceptor may do (refuse, replace the reply, only look, replace the
// context); the outcome it sees after Next; panics; the worker path and
// its concurrency; and the misuses of Use that panic.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// callLog records events from interceptors, from any goroutine.
type callLog struct {
	mu  sync.Mutex
	evs []string // guarded by mu
}

func (l *callLog) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.evs = append(l.evs, s)
	l.mu.Unlock()
}

// take returns the events so far and forgets them.
func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.evs
	l.evs = nil
	return evs
}

// tracer logs "name>method id" before Next and "name<method id code"
// after it.
func tracer(log *callLog, name string) handler.Interceptor {
	return func(ctx context.Context, c *handler.Call) error {
		log.add("%s>%s %s", name, c.Method(), c.ID())
		c.Next(ctx)
		log.add("%s<%s %s %d", name, c.Method(), c.ID(), c.Code())
		return nil
	}
}

type ctxKey struct{}

// icTable is a table of methods for the interceptor tests; runs counts
// the calls of the methods that ran.
type icTable struct {
	*handler.Table
	runs atomic.Int64
}

var errPlain = errors.New("plain failure with secret detail")

var errApp = &handler.Error{Code: 7, Message: "app", Data: handler.Raw(`{"k":1}`)}

func newICTable(t testing.TB, opts ...handler.Option) *icTable {
	t.Helper()
	opts = append([]handler.Option{handler.WithLogger(quietLogger())}, opts...)
	it := &icTable{Table: handler.NewTable(opts...)}
	add := func(_ context.Context, p [2]int) (int, error) { it.runs.Add(1); return p[0] + p[1], nil }
	handler.Register(it.Table, "add", add, handler.Inline())
	handler.Register(it.Table, "slowadd", add)
	handler.RegisterNoParams(it.Table, "apperr", func(context.Context) (int, error) { it.runs.Add(1); return 0, errApp }, handler.Inline())
	handler.RegisterNoParams(it.Table, "plainerr", func(context.Context) (int, error) { it.runs.Add(1); return 0, errPlain }, handler.Inline())
	handler.RegisterNoParams(it.Table, "boom", func(context.Context) (int, error) { it.runs.Add(1); panic("boom") }, handler.Inline())
	handler.RegisterNoParams(it.Table, "value", func(ctx context.Context) (string, error) {
		it.runs.Add(1)
		v, _ := ctx.Value(ctxKey{}).(string)
		return v, nil
	}, handler.Inline())
	handler.RegisterNoParams(it.Table, "deadline", func(ctx context.Context) (string, error) {
		it.runs.Add(1)
		d, ok := ctx.Deadline()
		if !ok {
			return "none", nil
		}
		return d.UTC().Format(time.RFC3339), nil
	}, handler.Inline())
	handler.RegisterNoParams(it.Table, "sleep", func(context.Context) (int, error) {
		it.runs.Add(1)
		time.Sleep(2 * time.Millisecond)
		return 1, nil
	}, handler.Inline())
	return it
}

func (it *icTable) call(t testing.TB, msg string) string {
	t.Helper()
	return string(it.Dispatch(context.Background(), nil, []byte(msg)))
}

// TestUse_orderSingle: the first interceptor added sees the call first
// and its outcome last.
func TestUse_orderSingle(t *testing.T) {
	it := newICTable(t)
	var log callLog
	it.Use(tracer(&log, "a"), tracer(&log, "b"))
	it.Use(tracer(&log, "c"))
	got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	if want := `{"jsonrpc":"2.0","result":3,"id":1}`; got != want {
		t.Fatalf("reply %s, want %s", got, want)
	}
	want := []string{"a>add 1", "b>add 1", "c>add 1", "c<add 1 0", "b<add 1 0", "a<add 1 0"}
	if evs := log.take(); !slices.Equal(evs, want) {
		t.Errorf("events\n got %q\nwant %q", evs, want)
	}
	if n := it.runs.Load(); n != 1 {
		t.Errorf("method ran %d times", n)
	}
}

// TestUse_orderBatch: each element of a batch passes the whole chain in
// turn; an element one interceptor refuses is answered by its error
// among the others, whose replies stay in order with their own ids.
func TestUse_orderBatch(t *testing.T) {
	it := newICTable(t)
	var log callLog
	refuseNines := func(ctx context.Context, c *handler.Call) error {
		if string(c.Params()) == "[9,9]" {
			log.add("refuse %s", c.ID())
			return &handler.Error{Code: 42, Message: "no nines", Data: "x"}
		}
		return nil
	}
	it.Use(tracer(&log, "a"), tracer(&log, "b"), refuseNines, tracer(&log, "c"))
	msg := `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},` +
		`{"jsonrpc":"2.0","method":"add","params":[9,9],"id":2},` +
		`{"jsonrpc":"2.0","method":"add","params":[3,4]},` +
		`{"jsonrpc":"2.0","method":"nope","id":3},` +
		`1,` +
		`{"jsonrpc":"2.0","method":"add","params":[5,6],"id":"x"}]`
	got := it.call(t, msg)
	want := `[{"jsonrpc":"2.0","result":3,"id":1},` +
		`{"jsonrpc":"2.0","error":{"code":42,"message":"no nines","data":"x"},"id":2},` +
		`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3},` +
		`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: request must be an object (offset ` + fmt.Sprint(strings.Index(msg, ",1,")+1) + `)"},"id":null},` +
		`{"jsonrpc":"2.0","result":11,"id":"x"}]`
	if got != want {
		t.Fatalf("reply\n got %s\nwant %s", got, want)
	}
	wantEvs := []string{
		"a>add 1", "b>add 1", "c>add 1", "c<add 1 0", "b<add 1 0", "a<add 1 0",
		"a>add 2", "b>add 2", "refuse 2", "b<add 2 42", "a<add 2 42",
		"a>add ", "b>add ", "c>add ", "c<add  0", "b<add  0", "a<add  0",
		"a>nope 3", "b>nope 3", "c>nope 3", "c<nope 3 -32601", "b<nope 3 -32601", "a<nope 3 -32601",
		"a> ", "b> ", "c> ", "c<  -32600", "b<  -32600", "a<  -32600",
		`a>add "x"`, `b>add "x"`, `c>add "x"`, `c<add "x" 0`, `b<add "x" 0`, `a<add "x" 0`,
	}
	if evs := log.take(); !slices.Equal(evs, wantEvs) {
		t.Errorf("events\n got %q\nwant %q", evs, wantEvs)
	}
	if n := it.runs.Load(); n != 3 {
		t.Errorf("add ran %d times, want 3 (the refused element must not run)", n)
	}
}

// TestUse_notifications: a notification passes the chain like any call,
// and never gets a reply: not on success, not on a fault, not when an
// interceptor refuses it (before or after Next), not when one panics.
func TestUse_notifications(t *testing.T) {
	for _, tc := range []struct {
		at, name string
		icpt     handler.Interceptor
		msg      string
		runs     int64
	}{
		{here(), "passes", nil, `{"jsonrpc":"2.0","method":"add","params":[1,2]}`, 1},
		{here(), "unknown method", nil, `{"jsonrpc":"2.0","method":"nope"}`, 0},
		{here(), "method error", nil, `{"jsonrpc":"2.0","method":"apperr"}`, 1},
		{here(), "invalid params", nil, `{"jsonrpc":"2.0","method":"add","params":[1]}`, 0},
		{here(), "refused before Next", func(context.Context, *handler.Call) error { return errApp }, `{"jsonrpc":"2.0","method":"add","params":[1,2]}`, 0},
		{here(), "refused after Next", func(ctx context.Context, c *handler.Call) error { c.Next(ctx); return errPlain }, `{"jsonrpc":"2.0","method":"add","params":[1,2]}`, 1},
		{here(), "interceptor panics", func(context.Context, *handler.Call) error { panic("icpt") }, `{"jsonrpc":"2.0","method":"add","params":[1,2]}`, 0},
		{here(), "batch of refused", func(context.Context, *handler.Call) error { return errApp },
			`[{"jsonrpc":"2.0","method":"add","params":[1,2]},{"jsonrpc":"2.0","method":"nope"}]`, 0},
	} {
		it := newICTable(t)
		var log callLog
		it.Use(func(ctx context.Context, c *handler.Call) error {
			log.add("%s notification=%v id=%q", c.Method(), c.Notification(), c.ID())
			return nil
		})
		if tc.icpt != nil {
			it.Use(tc.icpt)
		}
		if got := it.call(t, tc.msg); got != "" {
			t.Errorf("%s: %s: reply %s, want none", tc.at, tc.name, got)
		}
		evs := log.take()
		if len(evs) == 0 {
			t.Errorf("%s: %s: the chain never saw the notification", tc.at, tc.name)
		}
		for _, e := range evs {
			if !strings.Contains(e, "notification=true") || !strings.HasSuffix(e, `id=""`) {
				t.Errorf("%s: %s: the chain saw %s", tc.at, tc.name, e)
			}
		}
		if n := it.runs.Load(); n != tc.runs {
			t.Errorf("%s: %s: method ran %d times, want %d", tc.at, tc.name, n, tc.runs)
		}
	}
}

// TestUse_faults: the calls that reach no method pass the chain too,
// with their fault known before Next and the same reply as without
// interceptors; after Next, Code and Err tell the failure.
func TestUse_faults(t *testing.T) {
	for _, tc := range []struct {
		at, name   string
		msg        string
		opts       []handler.Option
		method     string
		registered bool
		id         string
		fault      parser.Code
		code       parser.Code
		err        error
	}{
		{here(), "unknown method", `{"jsonrpc":"2.0","method":"nope","id":1}`, nil, "nope", false, "1", parser.CodeMethodNotFound, parser.CodeMethodNotFound, handler.ErrMethodNotFound},
		{here(), "unknown escaped method", `{"jsonrpc":"2.0","method":"a\u0062c","id":1}`, nil, "abc", false, "1", parser.CodeMethodNotFound, parser.CodeMethodNotFound, handler.ErrMethodNotFound},
		{here(), "escaped registered method", `{"jsonrpc":"2.0","method":"\u0061dd","params":[1,2],"id":1}`, nil, "add", true, "1", 0, 0, nil},
		{here(), "invalid request", `{"jsonrpc":"2.0","method":1,"id":1}`, nil, "", false, "1", parser.CodeInvalidRequest, parser.CodeInvalidRequest, handler.ErrInvalidRequest},
		{here(), "invalid request in a batch", `[1]`, nil, "", false, "", parser.CodeInvalidRequest, parser.CodeInvalidRequest, handler.ErrInvalidRequest},
		{here(), "empty batch", `[]`, nil, "", false, "", parser.CodeInvalidRequest, parser.CodeInvalidRequest, handler.ErrInvalidRequest},
		{here(), "parse error", `{"jsonrpc":"2.0","method":`, nil, "", false, "", parser.CodeParseError, parser.CodeParseError, handler.ErrParse},
		{here(), "batch over MaxBatch", `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}]`,
			[]handler.Option{handler.WithMaxBatch(2)}, "", false, "", parser.CodeInvalidRequest, parser.CodeInvalidRequest, handler.ErrInvalidRequest},
		{here(), "invalid params", `{"jsonrpc":"2.0","method":"add","params":[1,"x"],"id":1}`, nil, "add", true, "1", 0, parser.CodeInvalidParams, handler.ErrInvalidParams},
	} {
		plain := newICTable(t, tc.opts...)
		want := plain.call(t, tc.msg)
		it := newICTable(t, tc.opts...)
		var log callLog
		it.Use(tracer(&log, "outer"), func(ctx context.Context, c *handler.Call) error {
			if c.Method() != tc.method || c.Registered() != tc.registered || string(c.ID()) != tc.id || c.Fault() != tc.fault {
				t.Errorf("%s: %s: before Next: method %q registered %v id %q fault %d; want %q %v %q %d",
					tc.at, tc.name, c.Method(), c.Registered(), c.ID(), c.Fault(), tc.method, tc.registered, tc.id, tc.fault)
			}
			c.Next(ctx)
			if c.Code() != tc.code || c.Err() != tc.err {
				t.Errorf("%s: %s: after Next: code %d err %v; want %d %v", tc.at, tc.name, c.Code(), c.Err(), tc.code, tc.err)
			}
			if tc.err != nil && !errors.Is(c.Err(), tc.err) {
				t.Errorf("%s: %s: errors.Is(%v, %v) false", tc.at, tc.name, c.Err(), tc.err)
			}
			if c.Method() != tc.method {
				t.Errorf("%s: %s: after Next: method %q", tc.at, tc.name, c.Method())
			}
			return nil
		})
		if got := it.call(t, tc.msg); got != want {
			t.Errorf("%s: %s: reply through the chain\n got %s\nwant %s", tc.at, tc.name, got, want)
		}
		if evs := log.take(); len(evs) != 2 {
			t.Errorf("%s: %s: events %q, want one call through the chain", tc.at, tc.name, evs)
		}
	}
}

// TestUse_parseErrorRefusedStaysMalformed: an interceptor may answer a
// message that is not JSON itself; DispatchInline still says Malformed.
func TestUse_parseErrorRefusedStaysMalformed(t *testing.T) {
	it := newICTable(t)
	it.Use(func(ctx context.Context, c *handler.Call) error {
		if c.Fault() == parser.CodeParseError {
			return handler.NewError(-1, "not JSON")
		}
		return nil
	})
	out, oc := it.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":`), nil)
	if want := `{"jsonrpc":"2.0","error":{"code":-1,"message":"not JSON"},"id":null}`; string(out) != want || oc != handler.Malformed {
		t.Errorf("got %v %s, want Malformed %s", oc, out, want)
	}
}

// TestCall_refuse: an interceptor that returns an error without calling
// Next answers the call with it: an *Error as it is, any other error as
// a method's would be; nothing inside it runs.
func TestCall_refuse(t *testing.T) {
	for _, tc := range []struct {
		at   string
		err  error
		opts []handler.Option
		want string
	}{
		{here(), &handler.Error{Code: 42, Message: "go away", Data: map[string]int{"retry": 3}}, nil,
			`{"jsonrpc":"2.0","error":{"code":42,"message":"go away","data":{"retry":3}},"id":1}`},
		{here(), &handler.Error{Code: -32099}, nil, `{"jsonrpc":"2.0","error":{"code":-32099,"message":"error -32099"},"id":1}`},
		{here(), fmt.Errorf("wrapped: %w", errApp), nil, `{"jsonrpc":"2.0","error":{"code":7,"message":"app","data":{"k":1}},"id":1}`},
		{here(), errPlain, nil, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}`},
		{here(), errPlain, []handler.Option{handler.WithExposeErrors(true)},
			`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: plain failure with secret detail"},"id":1}`},
		{here(), context.DeadlineExceeded, nil, `{"jsonrpc":"2.0","error":{"code":-32002,"message":"Deadline exceeded"},"id":1}`},
		{here(), handler.ErrForbidden, nil, `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden"},"id":1}`},
	} {
		it := newICTable(t, tc.opts...)
		var log callLog
		var code parser.Code
		var seen error
		it.Use(func(ctx context.Context, c *handler.Call) error {
			c.Next(ctx)
			code, seen = c.Code(), c.Err()
			return nil
		}, func(context.Context, *handler.Call) error { return tc.err }, tracer(&log, "inner"))
		if got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`); got != tc.want {
			t.Errorf("%s: reply\n got %s\nwant %s", tc.at, got, tc.want)
		}
		if it.runs.Load() != 0 || len(log.take()) != 0 {
			t.Errorf("%s: the chain went on after a refusal", tc.at)
		}
		if seen != tc.err || code != handler.ErrorCode(tc.err) {
			t.Errorf("%s: outer interceptor saw code %d err %v, want %d %v", tc.at, code, seen, handler.ErrorCode(tc.err), tc.err)
		}
	}
}

// TestCall_errorAfterNextReplacesReply: an error returned after Next
// replaces the reply the call made; the method ran once.
func TestCall_errorAfterNextReplacesReply(t *testing.T) {
	it := newICTable(t)
	var outer struct {
		code parser.Code
		err  error
		res  string
	}
	replace := &handler.Error{Code: 99, Message: "replaced"}
	it.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		outer.code, outer.err, outer.res = c.Code(), c.Err(), string(c.Result())
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		if string(c.Result()) != "3" && string(c.Result()) != "7" {
			t.Errorf("inner saw result %q", c.Result())
		}
		if string(c.ID()) == "2" {
			return replace
		}
		return nil
	})
	got := it.call(t, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`)
	want := `[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":99,"message":"replaced"},"id":2}]`
	if got != want {
		t.Errorf("reply\n got %s\nwant %s", got, want)
	}
	if outer.code != 99 || outer.err != replace || outer.res != "" {
		t.Errorf("outer saw code %d err %v result %q after the replacement", outer.code, outer.err, outer.res)
	}
	if n := it.runs.Load(); n != 2 {
		t.Errorf("method ran %d times, want 2", n)
	}
}

// TestCall_lookWithoutNext: an interceptor that returns nil without
// calling Next lets the rest of the chain run after it, with the context
// it was given.
func TestCall_lookWithoutNext(t *testing.T) {
	it := newICTable(t)
	var log callLog
	it.Use(func(ctx context.Context, c *handler.Call) error {
		log.add("outer>")
		c.Next(context.WithValue(ctx, ctxKey{}, "from outer"))
		log.add("outer< %d %s", c.Code(), c.Result())
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		log.add("look %v", ctx.Value(ctxKey{}))
		return nil
	}, tracer(&log, "inner"))
	if got, want := it.call(t, `{"jsonrpc":"2.0","method":"value","id":1}`), `{"jsonrpc":"2.0","result":"from outer","id":1}`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
	want := []string{"outer>", "look from outer", "inner>value 1", "inner<value 1 0", `outer< 0 "from outer"`}
	if evs := log.take(); !slices.Equal(evs, want) {
		t.Errorf("events\n got %q\nwant %q", evs, want)
	}
}

// TestCall_nextTwice: a second Next of the same interceptor does
// nothing: the method runs once and the reply is written once.
func TestCall_nextTwice(t *testing.T) {
	for _, level := range []int{0, 1} {
		it := newICTable(t)
		var log callLog
		twice := func(ctx context.Context, c *handler.Call) error {
			c.Next(ctx)
			first := string(c.Result())
			c.Next(ctx)
			log.add("twice %s %s", first, c.Result())
			return nil
		}
		if level == 0 {
			it.Use(twice, tracer(&log, "inner"))
		} else {
			it.Use(tracer(&log, "outer"), twice)
		}
		got := it.call(t, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2}]`)
		if want := `[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","result":7,"id":2}]`; got != want {
			t.Errorf("level %d: reply\n got %s\nwant %s", level, got, want)
		}
		if n := it.runs.Load(); n != 2 {
			t.Errorf("level %d: method ran %d times, want 2", level, n)
		}
		evs := log.take()
		if len(evs) != 6 || !slices.Contains(evs, "twice 3 3") || !slices.Contains(evs, "twice 7 7") {
			t.Errorf("level %d: events %q", level, evs)
		}
	}
}

// TestCall_contextReplaced: the context given to Next is the one the
// method gets: its values and its deadline.
func TestCall_contextReplaced(t *testing.T) {
	it := newICTable(t)
	deadline := time.Date(2100, 1, 2, 3, 4, 5, 0, time.UTC)
	it.Use(func(ctx context.Context, c *handler.Call) error {
		ctx = context.WithValue(ctx, ctxKey{}, "v")
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		c.Next(ctx)
		return nil
	})
	got := it.call(t, `[{"jsonrpc":"2.0","method":"value","id":1},{"jsonrpc":"2.0","method":"deadline","id":2}]`)
	want := `[{"jsonrpc":"2.0","result":"v","id":1},{"jsonrpc":"2.0","result":"2100-01-02T03:04:05Z","id":2}]`
	if got != want {
		t.Errorf("reply\n got %s\nwant %s", got, want)
	}
}

// TestCall_outcome: Code, Err, Result and Duration after Next, for each
// way a method may end.
func TestCall_outcome(t *testing.T) {
	for _, tc := range []struct {
		at, msg string
		code    parser.Code
		err     error
		result  string
	}{
		{here(), `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, 0, nil, "3"},
		{here(), `{"method":"add","params":[1,2],"id":1}`, 0, nil, "3"}, // 1.0
		{here(), `{"jsonrpc":"2.0","method":"add","params":[1,2]}`, 0, nil, ""},
		{here(), `{"jsonrpc":"2.0","method":"apperr","id":1}`, 7, errApp, ""},
		{here(), `{"jsonrpc":"2.0","method":"plainerr","id":1}`, parser.CodeInternalError, errPlain, ""},
		{here(), `{"jsonrpc":"2.0","method":"plainerr"}`, parser.CodeInternalError, errPlain, ""},
		{here(), `{"jsonrpc":"2.0","method":"boom","id":1}`, parser.CodeInternalError, handler.ErrInternal, ""},
		{here(), `{"jsonrpc":"2.0","method":"boom"}`, parser.CodeInternalError, handler.ErrInternal, ""},
		{here(), `{"jsonrpc":"2.0","method":"add","params":{},"id":1}`, parser.CodeInvalidParams, handler.ErrInvalidParams, ""},
	} {
		it := newICTable(t)
		var seen struct {
			before parser.Code
			code   parser.Code
			err    error
			result string
			dur    time.Duration
		}
		it.Use(func(ctx context.Context, c *handler.Call) error {
			seen.before = c.Code()
			c.Next(ctx)
			seen.code, seen.err, seen.result, seen.dur = c.Code(), c.Err(), string(c.Result()), c.Duration()
			return nil
		})
		reply := it.call(t, tc.msg)
		if seen.before != 0 || seen.code != tc.code || seen.err != tc.err || seen.result != tc.result {
			t.Errorf("%s: saw code %d (before Next %d) err %v result %q; want %d %v %q (reply %s)",
				tc.at, seen.code, seen.before, seen.err, seen.result, tc.code, tc.err, tc.result, reply)
		}
		if seen.dur < 0 {
			t.Errorf("%s: negative duration %v", tc.at, seen.dur)
		}
	}
	// Duration covers the method.
	it := newICTable(t)
	var dur time.Duration
	it.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		dur = c.Duration()
		return nil
	})
	// The table times its calls from the first Duration asked on.
	it.call(t, `{"jsonrpc":"2.0","method":"sleep","id":1}`)
	if dur != 0 {
		t.Errorf("first Duration %v, want 0 (not timed yet)", dur)
	}
	it.call(t, `{"jsonrpc":"2.0","method":"sleep","id":1}`)
	if dur < 2*time.Millisecond || dur > 10*time.Second {
		t.Errorf("Duration %v around a 2ms method", dur)
	}
	// A call refused before Next ran nothing: no duration; asked twice,
	// Duration answers the same.
	rt := newICTable(t)
	var refused, first, second time.Duration = -1, -1, -2
	rt.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		first, second = c.Duration(), c.Duration()
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		refused = c.Duration()
		return handler.ErrForbidden
	})
	rt.call(t, `{"jsonrpc":"2.0","method":"sleep","id":1}`)
	if refused != 0 || first != 0 || second != 0 {
		t.Errorf("refused call: Duration %v inside, %v and %v outside, want 0", refused, first, second)
	}
}

// TestCall_interceptorPanic: a panic in an interceptor, before or after
// Next, is answered -32603 for that call only.
func TestCall_interceptorPanic(t *testing.T) {
	for _, after := range []bool{false, true} {
		it := newICTable(t)
		it.Use(tracer(&callLog{}, "outer"), func(ctx context.Context, c *handler.Call) error {
			if string(c.Params()) != "[6,6]" {
				return nil
			}
			if after {
				c.Next(ctx)
			}
			panic("interceptor bug")
		})
		got := it.call(t, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},`+
			`{"jsonrpc":"2.0","method":"add","params":[6,6],"id":2},`+
			`{"jsonrpc":"2.0","method":"add","params":[6,6]},`+
			`{"jsonrpc":"2.0","method":"add","params":[3,4],"id":3}]`)
		want := `[{"jsonrpc":"2.0","result":3,"id":1},` +
			`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2},` +
			`{"jsonrpc":"2.0","result":7,"id":3}]`
		if got != want {
			t.Errorf("after Next %v: reply\n got %s\nwant %s", after, got, want)
		}
		got = it.call(t, `{"jsonrpc":"2.0","method":"add","params":[6,6],"id":"p"}`)
		if want := `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":"p"}`; got != want {
			t.Errorf("after Next %v: reply %s, want %s", after, got, want)
		}
		// The table still serves.
		if got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,1],"id":9}`); got != `{"jsonrpc":"2.0","result":2,"id":9}` {
			t.Errorf("after Next %v: next call %s", after, got)
		}
	}
}

// TestUse_workers: blocking batch elements run on the worker pool with
// the chain around them there; each element passes it once, and the
// replies are right and in order.
func TestUse_workers(t *testing.T) {
	w := pool.NewWorkers(4, 64)
	defer w.Close()
	it := newICTable(t, handler.WithWorkers(w))
	var log callLog
	it.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		log.add("%s %s %d %s", c.Method(), c.ID(), c.Code(), c.Result())
		return nil
	})
	msg := `[{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1},` +
		`{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2},` +
		`{"jsonrpc":"2.0","method":"slowadd","params":[5,6],"id":3},` +
		`{"jsonrpc":"2.0","method":"slowadd","params":[7,8]},` +
		`{"jsonrpc":"2.0","method":"nope","id":4},` +
		`{"jsonrpc":"2.0","method":"slowadd","params":[1],"id":5}]`
	want := `[{"jsonrpc":"2.0","result":3,"id":1},` +
		`{"jsonrpc":"2.0","result":7,"id":2},` +
		`{"jsonrpc":"2.0","result":11,"id":3},` +
		`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":4},` +
		`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: param 2: missing required param"},"id":5}]`
	wantEvs := []string{"add 2 0 7", "nope 4 -32601 ", "slowadd  0 ", "slowadd 1 0 3", "slowadd 3 0 11", "slowadd 5 -32602 "}
	check := func(how, got string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: reply\n got %s\nwant %s", how, got, want)
		}
		evs := log.take()
		slices.Sort(evs)
		if !slices.Equal(evs, wantEvs) {
			t.Errorf("%s: events\n got %q\nwant %q", how, evs, wantEvs)
		}
	}
	for range 20 {
		check("Dispatch", it.call(t, msg))
		// The path of an event loop: nothing runs in DispatchInline, all
		// of it in Run.
		var later handler.Pending
		out, oc := it.DispatchInline(context.Background(), nil, []byte(msg), &later)
		if oc != handler.Deferred || len(out) != 0 {
			t.Fatalf("DispatchInline: %v %s", oc, out)
		}
		if evs := log.take(); len(evs) != 0 {
			t.Fatalf("DispatchInline ran the chain for a deferred message: %q", evs)
		}
		job := later.Take()
		check("Pending.Run", string(job.Run(context.Background(), nil)))
	}
	// A single blocking request, deferred and run.
	var later handler.Pending
	msg1 := []byte(`{"jsonrpc":"2.0","method":"slowadd","params":[2,2],"id":7}`)
	if _, oc := it.DispatchInline(context.Background(), nil, msg1, &later); oc != handler.Deferred || len(log.take()) != 0 {
		t.Fatalf("single: %v", oc)
	}
	if got := string(later.Run(context.Background(), nil)); got != `{"jsonrpc":"2.0","result":4,"id":7}` {
		t.Errorf("single: %s", got)
	}
	if evs := log.take(); !slices.Equal(evs, []string{"slowadd 7 0 4"}) {
		t.Errorf("single: events %q", evs)
	}
}

// TestUse_concurrentSegments: the chain runs for the segments of a batch
// at the same time, on the workers: each interceptor call waits until
// every blocking element's call has begun, which only happens if they
// run in parallel. Under -race it also checks that the chain's state is
// not shared between them.
func TestUse_concurrentSegments(t *testing.T) {
	const n = 4
	w := pool.NewWorkers(n, 64)
	defer w.Close()
	it := newICTable(t, handler.WithWorkers(w), handler.WithParallelBatch(2))
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	var log callLog
	it.Use(func(ctx context.Context, c *handler.Call) error {
		if c.Method() == "slowadd" {
			started.Done()
			select {
			case <-all:
			case <-time.After(20 * time.Second):
				return errors.New("the interceptors of the batch did not run in parallel")
			}
		}
		c.Next(context.WithValue(ctx, ctxKey{}, string(c.ID())))
		log.add("%s %s %s", c.Method(), c.ID(), c.Result())
		return nil
	}, tracer(&log, "inner"))
	var b strings.Builder
	var want strings.Builder
	b.WriteString("[")
	want.WriteString("[")
	for i := range 3 * n {
		if i > 0 {
			b.WriteString(",")
			want.WriteString(",")
		}
		m := "add"
		if i%3 == 0 {
			m = "slowadd"
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"%s","params":[%d,1],"id":%d}`, m, i, i)
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","result":%d,"id":%d}`, i+1, i)
	}
	b.WriteString("]")
	want.WriteString("]")
	if got := it.call(t, b.String()); got != want.String() {
		t.Fatalf("reply\n got %s\nwant %s", got, want.String())
	}
	if evs := log.take(); len(evs) != 3*3*n {
		t.Errorf("%d events, want %d: %q", len(evs), 3*3*n, evs)
	}
}

// TestUse_misuse: Use panics after the first dispatch, past
// MaxInterceptors, and for a nil interceptor — adding none of them.
func TestUse_misuse(t *testing.T) {
	mustPanic := func(name string, f func()) (v any) {
		t.Helper()
		defer func() {
			if v = recover(); v == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
		return nil
	}
	noop := func(ctx context.Context, c *handler.Call) error { return nil }

	tab := handler.NewTable()
	if v := mustPanic("nil", func() { tab.Use(noop, nil) }); v != nil && !strings.Contains(fmt.Sprint(v), "nil interceptor") {
		t.Errorf("nil: panic %v", v)
	}
	full := make([]handler.Interceptor, handler.MaxInterceptors)
	var count atomic.Int64
	for i := range full {
		full[i] = func(ctx context.Context, c *handler.Call) error { count.Add(1); return nil }
	}
	tab.Use(full...) // exactly MaxInterceptors: the nil call above added nothing
	mustPanic("one too many", func() { tab.Use(noop) })
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	if got := call(t, tab, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`); got != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Errorf("with %d interceptors: %s", handler.MaxInterceptors, got)
	}
	if n := count.Load(); n != handler.MaxInterceptors {
		t.Errorf("%d interceptor calls, want %d", n, handler.MaxInterceptors)
	}
	if v := mustPanic("after dispatch", func() { tab.Use(noop) }); v != nil && v != handler.ErrSealed {
		t.Errorf("after dispatch: panic %v, want ErrSealed", v)
	}

	sealed := handler.NewTable()
	sealed.DispatchInline(context.Background(), nil, []byte(`{`), nil)
	if v := mustPanic("after DispatchInline", func() { sealed.Use(noop) }); v != nil && v != handler.ErrSealed {
		t.Errorf("after DispatchInline: panic %v, want ErrSealed", v)
	}
}

// TestUse_maxInterceptorsNest: a chain of MaxInterceptors that all call
// Next (twice, even) nests to the method and back in order.
func TestUse_maxInterceptorsNest(t *testing.T) {
	it := newICTable(t)
	var depth, deepest atomic.Int64
	var order []int
	for i := range handler.MaxInterceptors {
		it.Use(func(ctx context.Context, c *handler.Call) error {
			order = append(order, i)
			if d := depth.Add(1); d > deepest.Load() {
				deepest.Store(d)
			}
			c.Next(ctx)
			c.Next(ctx)
			depth.Add(-1)
			return nil
		})
	}
	if got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`); got != `{"jsonrpc":"2.0","result":3,"id":1}` {
		t.Errorf("reply %s", got)
	}
	if deepest.Load() != handler.MaxInterceptors || it.runs.Load() != 1 || len(order) != handler.MaxInterceptors || !slices.IsSorted(order) {
		t.Errorf("deepest %d, runs %d, order %v", deepest.Load(), it.runs.Load(), order)
	}
}

// TestCall_recoveredInnerPanicStillAnswered: a request always gets a
// reply. An outer interceptor that recovers a panic of an inner one (a
// "recovery middleware" that only logs) and returns nil leaves the call
// with neither the method's reply nor a refusal: it must still be
// answered, -32603, and the batch around it must keep its replies.
func TestCall_recoveredInnerPanicStillAnswered(t *testing.T) {
	it := newICTable(t)
	it.Use(func(ctx context.Context, c *handler.Call) error {
		defer func() { _ = recover() }() // logs, say, and goes on
		c.Next(ctx)
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		if string(c.Params()) == "[6,6]" {
			panic("inner interceptor bug")
		}
		return nil
	})
	if got, want := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[6,6],"id":1}`),
		`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}`; got != want {
		t.Errorf("single: reply %q, want %s", got, want)
	}
	got := it.call(t, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[6,6],"id":2}]`)
	want := `[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2}]`
	if got != want {
		t.Errorf("batch: reply\n got %q\nwant %s", got, want)
	}
}

// TestCall_idOfNotification: Call.ID is nil for a notification, as its
// doc says — a JSON-RPC 1.0 notification (id null) included.
func TestCall_idOfNotification(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2]}`,
		`{"method":"add","params":[1,2],"id":null}`,
	} {
		it := newICTable(t)
		var id handler.Raw
		var notification bool
		it.Use(func(ctx context.Context, c *handler.Call) error {
			id, notification = slices.Clone(c.ID()), c.Notification()
			return nil
		})
		if got := it.call(t, msg); got != "" || !notification {
			t.Fatalf("%s: reply %q, notification %v", msg, got, notification)
		}
		if id != nil {
			t.Errorf("%s: ID() = %q for a notification, want nil", msg, id)
		}
	}
	// A 2.0 request with id null is no notification: its id is null.
	it := newICTable(t)
	var id string
	it.Use(func(ctx context.Context, c *handler.Call) error { id = string(c.ID()); return nil })
	if got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":null}`); got != `{"jsonrpc":"2.0","result":3,"id":null}` || id != "null" {
		t.Errorf("id null: reply %s, ID %q", got, id)
	}
}

// TestCall_refuseFaultsAndVersions: a refusal keeps what the reply must
// carry of its call — the id of an invalid request when it was read,
// null for a fault of the whole message, the 1.0 form for a 1.0
// request — and the outcome DispatchInline reports.
func TestCall_refuseFaultsAndVersions(t *testing.T) {
	refusal := `"error":{"code":1,"message":"refused"}`
	for _, tc := range []struct {
		at, msg, want string
		oc            handler.Outcome
	}{
		{here(), `{"method":"add","params":[1,2],"id":1}`, `{"result":null,` + refusal + `,"id":1}`, handler.Replied},
		{here(), `{"jsonrpc":"2.0","method":1,"id":5}`, `{"jsonrpc":"2.0",` + refusal + `,"id":5}`, handler.Replied},
		{here(), `[{"jsonrpc":"2.0","method":1,"id":"e"},{"jsonrpc":"2.0","method":"add"}]`, `[{"jsonrpc":"2.0",` + refusal + `,"id":"e"}]`, handler.Replied},
		{here(), `[1,2,3]`, `{"jsonrpc":"2.0",` + refusal + `,"id":null}`, handler.Replied}, // over MaxBatch 2
		{here(), `[]`, `{"jsonrpc":"2.0",` + refusal + `,"id":null}`, handler.Replied},
		{here(), `[1,`, `{"jsonrpc":"2.0",` + refusal + `,"id":null}`, handler.Malformed},
	} {
		for _, after := range []bool{false, true} {
			it := newICTable(t, handler.WithMaxBatch(2))
			it.Use(func(ctx context.Context, c *handler.Call) error {
				if after {
					c.Next(ctx)
				}
				return handler.NewError(1, "refused")
			})
			out, oc := it.DispatchInline(context.Background(), nil, []byte(tc.msg), nil)
			if string(out) != tc.want || oc != tc.oc {
				t.Errorf("%s: after Next %v: %v %s, want %v %s", tc.at, after, oc, out, tc.oc, tc.want)
			}
		}
	}
}

// TestUse_racesFirstDispatch: Use racing the first dispatches either
// lands before them or panics with ErrSealed — never a data race (run
// with -race).
func TestUse_racesFirstDispatch(t *testing.T) {
	for range 20 {
		it := newICTable(t)
		var wg sync.WaitGroup
		var added atomic.Int64
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range handler.MaxInterceptors {
				func() {
					defer func() {
						if v := recover(); v != nil && v != handler.ErrSealed {
							t.Errorf("panic %v", v)
						}
					}()
					it.Use(func(ctx context.Context, c *handler.Call) error { return nil })
					added.Add(1)
				}()
			}
		}()
		for range 10 {
			if got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`); got != `{"jsonrpc":"2.0","result":3,"id":1}` {
				t.Fatalf("reply %s", got)
			}
		}
		wg.Wait()
		if added.Load() > handler.MaxInterceptors {
			t.Fatalf("%d interceptors added", added.Load())
		}
	}
}

// TestCall_typedNilRefusal: an interceptor returning a typed nil *Error
// (a non-nil error whose methods panic) costs only its call a -32603.
func TestCall_typedNilRefusal(t *testing.T) {
	for _, after := range []bool{false, true} {
		it := newICTable(t)
		it.Use(func(ctx context.Context, c *handler.Call) error {
			if string(c.ID()) != "2" {
				return nil
			}
			if after {
				c.Next(ctx)
			}
			var e *handler.Error
			return e
		})
		got := it.call(t, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":3}]`)
		want := `[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2},{"jsonrpc":"2.0","result":7,"id":3}]`
		if got != want {
			t.Errorf("after Next %v: reply\n got %s\nwant %s", after, got, want)
		}
	}
}

// TestPending_busyPassesChain: "every call ... and the calls that fail
// before any method runs (an invalid request, an unknown method ...)
// passes through the chain" (intercept.go). A batch answered with
// Pending.Busy still answers its invalid requests and unknown methods
// ("the usual replies"): the chain must see them, or an interceptor that
// refuses a caller is bypassed under load — its caller then learns which
// names exist (-32000 for a method, -32601 for none).
func TestPending_busyPassesChain(t *testing.T) {
	it := newICTable(t)
	var log callLog
	it.Use(func(ctx context.Context, c *handler.Call) error {
		log.add("%s %s", c.Method(), c.ID())
		return handler.NewError(1, "refused")
	})
	msg := `[{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"nope","id":2},{"jsonrpc":"2.0","method":1,"id":3}]`
	var later handler.Pending
	if _, oc := it.DispatchInline(context.Background(), nil, []byte(msg), &later); oc != handler.Deferred {
		t.Fatalf("outcome %v", oc)
	}
	out := later.Busy(context.Background(), nil)
	evs := log.take()
	if !slices.Contains(evs, "nope 2") || !slices.Contains(evs, " 3") {
		t.Errorf("the chain saw %q of a batch answered busy; want the unknown method and the invalid request (reply %s)", evs, out)
	}
}

// TestCall_Answer: an interceptor answers a call itself — before Next
// (the method and the interceptors inside do not run) or after it (the
// reply is replaced) — and the interceptors outside see a success with
// its result; a notification answered gets no reply, a batch element
// answered leaves its siblings alone, an invalid Raw is answered -32603,
// and an error returned after Answer replaces it.
func TestCall_Answer(t *testing.T) {
	var log callLog
	var runs atomic.Int32
	tab := handler.NewTable(handler.WithMetrics(true))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { runs.Add(1); return p[0] + p[1], nil }, handler.Inline())
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { runs.Add(1); return p[0] + p[1], nil })
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		c.Next(ctx)
		log.add("outer %s code=%d result=%s err=%v", c.ID(), c.Code(), c.Result(), c.Err())
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		p := string(c.Params())
		switch {
		case strings.Contains(p, "42"):
			c.Answer(handler.Raw(` { "answered" : [ 1 , 2 ] } `))
			c.Next(ctx) // does nothing now
		case strings.Contains(p, "43"):
			c.Next(ctx)
			c.Answer(handler.Raw(`"replaced"`))
		case strings.Contains(p, "44"):
			c.Answer(handler.Raw(`{bad`))
		case strings.Contains(p, "45"):
			c.Answer(handler.Raw(`1`))
			return &handler.Error{Code: 7, Message: "no"}
		}
		return nil
	}, func(ctx context.Context, c *handler.Call) error {
		log.add("inner %s", c.ID())
		return nil
	})
	ctx := context.Background()
	for _, tc := range []struct {
		msg, want string
		runs      int32
		log       []string
	}{
		{`{"jsonrpc":"2.0","method":"add","params":[42,0],"id":1}`, `{"jsonrpc":"2.0","result":{"answered":[1,2]},"id":1}`, 0,
			[]string{`outer 1 code=0 result={"answered":[1,2]} err=<nil>`}},
		{`{"jsonrpc":"2.0","method":"slowadd","params":[42,0],"id":"s"}`, `{"jsonrpc":"2.0","result":{"answered":[1,2]},"id":"s"}`, 0,
			[]string{`outer "s" code=0 result={"answered":[1,2]} err=<nil>`}},
		{`{"method":"add","params":[42,0],"id":1}`, `{"result":{"answered":[1,2]},"error":null,"id":1}`, 0,
			[]string{`outer 1 code=0 result={"answered":[1,2]} err=<nil>`}},
		{`{"jsonrpc":"2.0","method":"add","params":[43,0],"id":2}`, `{"jsonrpc":"2.0","result":"replaced","id":2}`, 1,
			[]string{`inner 2`, `outer 2 code=0 result="replaced" err=<nil>`}},
		{`{"jsonrpc":"2.0","method":"add","params":[44,0],"id":3}`, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: raw result is not valid JSON"},"id":3}`, 0,
			[]string{`outer 3 code=-32603 result= err=jetrpc: Internal error (code -32603)`}},
		{`{"jsonrpc":"2.0","method":"add","params":[45,0],"id":4}`, `{"jsonrpc":"2.0","error":{"code":7,"message":"no"},"id":4}`, 0,
			[]string{`outer 4 code=7 result= err=jetrpc: no (code 7)`}},
		{`{"jsonrpc":"2.0","method":"add","params":[42,0]}`, ``, 0,
			[]string{`outer  code=0 result= err=<nil>`}},
		{`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"add","params":[42,0],"id":2},{"jsonrpc":"2.0","method":"add","params":[42,0]}]`,
			`[{"jsonrpc":"2.0","result":3,"id":1},{"jsonrpc":"2.0","result":{"answered":[1,2]},"id":2}]`, 1,
			[]string{`inner 1`, `outer 1 code=0 result=3 err=<nil>`, `outer 2 code=0 result={"answered":[1,2]} err=<nil>`, `outer  code=0 result= err=<nil>`}},
	} {
		runs.Store(0)
		if got := string(tab.Dispatch(ctx, nil, []byte(tc.msg))); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.msg, got, tc.want)
		}
		if got := log.take(); !slices.Equal(got, tc.log) {
			t.Errorf("%s: log\n got %q\nwant %q", tc.msg, got, tc.log)
		}
		if runs.Load() != tc.runs {
			t.Errorf("%s: the method ran %d times, want %d", tc.msg, runs.Load(), tc.runs)
		}
	}
	// The metrics count an answered call as a success of its method.
	var handled []string
	tab.Metrics(func(m *stats.Method) {
		for _, h := range m.Handled {
			handled = append(handled, fmt.Sprintf("%s:%d=%d", m.Method, h.Code, h.Count))
		}
	})
	slices.Sort(handled)
	if want := []string{"add:-32603=1", "add:0=7", "add:7=1", "slowadd:0=1"}; !slices.Equal(handled, want) {
		t.Errorf("metrics %q, want %q", handled, want)
	}
}

// TestCall_Answer_fault: an interceptor may answer the fault of a whole
// message too; its reply has a null id.
func TestCall_Answer_fault(t *testing.T) {
	tab := handler.NewTable()
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		if c.Fault() == parser.CodeParseError {
			c.Answer(handler.Raw(`"not json, but fine"`))
		}
		return nil
	})
	if got, want := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":`))), `{"jsonrpc":"2.0","result":"not json, but fine","id":null}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestCall_Inline: Inline tells the calls that run where they must not
// block: inline methods and faults.
func TestCall_Inline(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.Register(tab, "slowadd", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	var log callLog
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		log.add("%s %v", c.Method(), c.Inline())
		return nil
	})
	tab.Dispatch(context.Background(), nil, []byte(`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":2},{"jsonrpc":"2.0","method":"nope","id":3}]`))
	got := log.take()
	slices.Sort(got)
	if want := []string{"add true", "nope true", "slowadd false"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestCall_version: Version is the request's JSON-RPC version, and 2.0
// for a fault of the whole message.
func TestCall_version(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want parser.Version
	}{
		{`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, parser.Version2},
		{`{"method":"add","params":[1,2],"id":1}`, parser.Version1},
		{`{"jsonrpc":"2.0","method":"nope","id":1}`, parser.Version2},
		{`{"jsonrpc":`, parser.Version2},
	} {
		it := newICTable(t)
		got := parser.Version(99)
		it.Use(func(ctx context.Context, call *handler.Call) error { got = call.Version(); return nil })
		it.call(t, c.msg)
		if got != c.want {
			t.Errorf("%s: Version() = %d, want %d", c.msg, got, c.want)
		}
	}
}
