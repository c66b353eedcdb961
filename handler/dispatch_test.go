package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// call dispatches one request to tab and returns the reply.
func call(t testing.TB, tab *handler.Table, msg string) string {
	t.Helper()
	return string(tab.Dispatch(context.Background(), nil, []byte(msg)))
}

// replyOf decodes a single reply.
type replyOf struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	ID json.RawMessage `json:"id"`
}

func decodeReply(t testing.TB, s string) replyOf {
	t.Helper()
	var r replyOf
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("reply %q: %v", s, err)
	}
	return r
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestRegister_refusals(t *testing.T) {
	tab := handler.NewTable()
	ok := func(context.Context, struct{ A int }) (int, error) { return 0, nil }
	cases := []struct {
		name string
		err  error
		do   func() error
	}{
		{"reserved", handler.ErrReservedName, func() error { return handler.TryRegister(tab, "rpc.discover", ok) }},
		{"empty", handler.ErrEmptyName, func() error { return handler.TryRegister(tab, "", ok) }},
		{"pointer params", handler.ErrBadType, func() error {
			return handler.TryRegister(tab, "p", func(context.Context, *struct{ A int }) (int, error) { return 0, nil })
		}},
		{"scalar params", handler.ErrBadType, func() error {
			return handler.TryRegister(tab, "s", func(context.Context, int) (int, error) { return 0, nil })
		}},
		{"chan result", handler.ErrBadType, func() error {
			return handler.TryRegister(tab, "c", func(context.Context, struct{}) (chan int, error) { return nil, nil })
		}},
	}
	for _, c := range cases {
		if err := c.do(); !errors.Is(err, c.err) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.err)
		}
	}
	if err := handler.TryRegister(tab, "ok", ok); err != nil {
		t.Fatal(err)
	}
	if err := handler.TryRegister(tab, "ok", ok); !errors.Is(err, handler.ErrDuplicateName) {
		t.Fatalf("duplicate: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Register of a reserved name did not panic")
			}
		}()
		handler.Register(tab, "rpc.x", ok)
	}()
	call(t, tab, `{"jsonrpc":"2.0","method":"ok","params":[1],"id":1}`)
	if err := handler.TryRegister(tab, "late", ok); !errors.Is(err, handler.ErrSealed) {
		t.Fatalf("register after dispatch: %v", err)
	}
	// The refused names are not served.
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("rpc.discover served: %+v", r)
	}
}

func TestTable_methodsInfo(t *testing.T) {
	tab := handler.NewTable()
	type P struct {
		Minuend    int `json:"minuend"`
		Subtrahend int `json:"subtrahend"`
	}
	handler.Register(tab, "sub", func(_ context.Context, p P) (int, error) { return p.Minuend - p.Subtrahend, nil },
		handler.Inline(), handler.Description("difference"))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil },
		handler.ParamNames("a", "b"))
	got := fmt.Sprint(tab.Methods())
	want := `[{add  [a b] false} {sub difference [minuend subtrahend] true}]`
	if got != want {
		t.Fatalf("Methods() = %s, want %s", got, want)
	}
	if found, inline := tab.Lookup("sub"); !found || !inline {
		t.Fatal("Lookup(sub)")
	}
	if found, _ := tab.Lookup("nope"); found {
		t.Fatal("Lookup(nope)")
	}
}

type appError struct{ code handler.Code }

func (e appError) Error() string { return "wrapped app error" }

func TestDispatch_errors(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	handler.Register(tab, "rpcerr", func(context.Context, struct{}) (int, error) {
		return 0, &handler.Error{Code: 42, Message: "the answer", Data: map[string]int{"n": 1}}
	})
	handler.Register(tab, "wrapped", func(context.Context, struct{}) (int, error) {
		return 0, fmt.Errorf("context: %w", handler.NewError(-32050, "custom server error").WithData(handler.Raw(`[1, 2]`)))
	})
	handler.Register(tab, "plain", func(context.Context, struct{}) (int, error) {
		return 0, errors.New("secret database password wrong")
	})
	handler.Register(tab, "cancelled", func(context.Context, struct{}) (int, error) { return 0, context.Canceled })
	handler.Register(tab, "deadline", func(context.Context, struct{}) (int, error) {
		return 0, fmt.Errorf("query: %w", context.DeadlineExceeded)
	})
	handler.Register(tab, "panics", func(context.Context, struct{}) (int, error) { panic("boom") })
	handler.Register(tab, "nan", func(context.Context, struct{}) (float64, error) { return 0 * func() float64 { return 0 }() / 0, nil })
	handler.Register(tab, "badraw", func(context.Context, struct{}) (handler.Raw, error) { return handler.Raw(`{"a":`), nil })
	handler.Register(tab, "baddata", func(context.Context, struct{}) (int, error) {
		return 0, &handler.Error{Code: 7, Message: "m", Data: make(chan int)}
	})
	cases := []struct {
		method string
		code   int
		msg    string // substring of the message
		data   string
	}{
		{"rpcerr", 42, "the answer", `{"n":1}`},
		{"wrapped", -32050, "custom server error", `[1,2]`},
		{"plain", -32603, "Internal error", ""},
		{"cancelled", -32001, "Request cancelled", ""},
		{"deadline", -32002, "Deadline exceeded", ""},
		{"panics", -32603, "panicked", ""},
		{"nan", -32603, "not a finite number", ""},
		{"badraw", -32603, "not valid JSON", ""},
		{"baddata", 7, "m", ""},
	}
	for _, c := range cases {
		r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"`+c.method+`","id":"x"}`))
		if r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.msg) || string(r.Error.Data) != c.data || string(r.ID) != `"x"` || r.Result != nil {
			t.Errorf("%s: got %+v %+v", c.method, r, r.Error)
		}
		if strings.Contains(r.Error.Message, "secret") {
			t.Errorf("%s: internal error text leaked: %q", c.method, r.Error.Message)
		}
		// As notifications: no reply at all, whatever the failure.
		if got := call(t, tab, `{"jsonrpc":"2.0","method":"`+c.method+`"}`); got != "" {
			t.Errorf("%s as a notification replied %q", c.method, got)
		}
	}
	exposed := handler.NewTable(handler.WithExposeErrors(true))
	handler.Register(exposed, "plain", func(context.Context, struct{}) (int, error) { return 0, errors.New("disk full") })
	if r := decodeReply(t, call(t, exposed, `{"jsonrpc":"2.0","method":"plain","id":1}`)); !strings.Contains(r.Error.Message, "disk full") {
		t.Errorf("ExposeErrors: message %q", r.Error.Message)
	}
}

// TestDispatch_panicIsolated: a panic answers -32603 for that request
// alone; its batch siblings are answered normally.
func TestDispatch_panicIsolated(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	handler.Register(tab, "boom", func(context.Context, struct{}) (int, error) { panic("boom") }, handler.Inline())
	handler.Register(tab, "boomBlocking", func(context.Context, struct{}) (int, error) { panic("boom") })
	handler.Register(tab, "one", func(context.Context, struct{}) (int, error) { return 1, nil }, handler.Inline())
	for _, batch := range []string{
		`[{"jsonrpc":"2.0","method":"one","id":1},{"jsonrpc":"2.0","method":"boom","id":2},{"jsonrpc":"2.0","method":"one","id":3}]`,
		`[{"jsonrpc":"2.0","method":"one","id":1},{"jsonrpc":"2.0","method":"boomBlocking","id":2},{"jsonrpc":"2.0","method":"one","id":3}]`,
	} {
		var replies []replyOf
		if err := json.Unmarshal([]byte(call(t, tab, batch)), &replies); err != nil {
			t.Fatal(err)
		}
		if len(replies) != 3 || string(replies[0].Result) != "1" || replies[1].Error == nil || replies[1].Error.Code != -32603 || string(replies[2].Result) != "1" {
			t.Fatalf("replies %+v", replies)
		}
	}
}

// TestDispatch_batchParallel shows that the blocking elements of a batch
// run at the same time: each waits until all have started, which only
// happens if they run in parallel (sequential execution would time out).
func TestDispatch_batchParallel(t *testing.T) {
	const n = 8
	w := pool.NewWorkers(n, 64)
	defer w.Close()
	tab := handler.NewTable(handler.WithWorkers(w))
	var started sync.WaitGroup
	started.Add(n)
	allStarted := make(chan struct{})
	go func() { started.Wait(); close(allStarted) }()
	handler.Register(tab, "barrier", func(_ context.Context, p [1]int) (int, error) {
		started.Done()
		select {
		case <-allStarted:
			return p[0], nil
		case <-time.After(20 * time.Second):
			return 0, errors.New("the batch elements did not run in parallel")
		}
	})
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"barrier","params":[%d],"id":%d}`, i, i)
	}
	b.WriteString("]")
	var replies []replyOf
	if err := json.Unmarshal([]byte(call(t, tab, b.String())), &replies); err != nil {
		t.Fatal(err)
	}
	if len(replies) != n {
		t.Fatalf("%d replies", len(replies))
	}
	for i, r := range replies {
		if r.Error != nil || string(r.Result) != fmt.Sprint(i) || string(r.ID) != fmt.Sprint(i) {
			t.Fatalf("reply %d: %+v %+v", i, r, r.Error)
		}
	}
}

// TestDispatch_busy: when the worker queue is full, blocking batch
// elements are answered -32000 at once instead of waiting; inline ones
// still run.
func TestDispatch_busy(t *testing.T) {
	w := pool.NewWorkers(1, 1)
	defer w.Close()
	tab := handler.NewTable(handler.WithWorkers(w))
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	handler.Register(tab, "hold", func(context.Context, struct{}) (int, error) {
		entered <- struct{}{}
		<-release
		return 1, nil
	})
	handler.Register(tab, "one", func(context.Context, struct{}) (int, error) { return 1, nil }, handler.Inline())
	// Occupy the only worker, then the only queue slot.
	go call(t, tab, `[{"jsonrpc":"2.0","method":"hold","id":0}]`)
	<-entered
	if !w.TrySubmit(pool.TaskFunc(func() { <-release })) {
		t.Fatal("the queue slot was taken")
	}
	got := call(t, tab, `[{"jsonrpc":"2.0","method":"hold","id":1},{"jsonrpc":"2.0","method":"hold"},{"jsonrpc":"2.0","method":"one","id":2}]`)
	close(release)
	var replies []replyOf
	if err := json.Unmarshal([]byte(got), &replies); err != nil {
		t.Fatal(err)
	}
	if len(replies) != 2 || replies[0].Error == nil || replies[0].Error.Code != -32000 || string(replies[0].ID) != "1" || string(replies[1].Result) != "1" {
		t.Fatalf("replies %s", got)
	}
}

func TestDispatch_batchLimits(t *testing.T) {
	tab := handler.NewTable(handler.WithMaxBatch(3), handler.WithParallelBatch(2))
	var calls atomic.Int32
	handler.Register(tab, "n", func(_ context.Context, p [1]int) (int, error) { calls.Add(1); return p[0], nil }, handler.Inline())
	batch := func(k int) string {
		parts := make([]string, k)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":[%d],"id":%d}`, i, i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	r := decodeReply(t, call(t, tab, batch(4)))
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "limit of 3") || string(r.ID) != "null" {
		t.Fatalf("over the limit: %+v", r)
	}
	if calls.Load() != 0 {
		t.Fatal("an element of a refused batch ran")
	}
	// 3 inline elements, above ParallelBatch 2: run in chunks on workers,
	// gathered in request order.
	got := call(t, tab, batch(3))
	want := `[{"jsonrpc":"2.0","result":0,"id":0},{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","result":2,"id":2}]`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if _, ok := tab.DispatchInline(context.Background(), nil, []byte(batch(3))); ok {
		t.Fatal("DispatchInline ran a batch longer than ParallelBatch")
	}
	if out, ok := tab.DispatchInline(context.Background(), nil, []byte(batch(2))); !ok || !bytes.HasPrefix(out, []byte("[")) {
		t.Fatalf("DispatchInline refused a short inline batch: %q", out)
	}
}

func TestDispatchInline_refusesBlocking(t *testing.T) {
	tab := handler.NewTable()
	var ran atomic.Int32
	handler.Register(tab, "slow", func(context.Context, struct{}) (int, error) { ran.Add(1); return 1, nil })
	handler.Register(tab, "fast", func(context.Context, struct{}) (int, error) { ran.Add(1); return 2, nil }, handler.Inline())
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"slow","id":1}`,
		`{"jsonrpc":"2.0","method":"slow"}`,
		`[{"jsonrpc":"2.0","method":"fast","id":1},{"jsonrpc":"2.0","method":"slow","id":2}]`,
	} {
		if out, ok := tab.DispatchInline(context.Background(), []byte("x"), []byte(msg)); ok || string(out) != "x" {
			t.Errorf("%s: ok=%v out=%q", msg, ok, out)
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("DispatchInline ran %d methods while refusing", ran.Load())
	}
	for _, msg := range []string{`{"jsonrpc":"2.0","method":"fast","id":1}`, `{"jsonrpc":"2.0","method":"nope","id":1}`, `{`, `[]`} {
		if _, ok := tab.DispatchInline(context.Background(), nil, []byte(msg)); !ok {
			t.Errorf("%s refused", msg)
		}
	}
}

func TestDispatch_contextPassed(t *testing.T) {
	type key struct{}
	tab := handler.NewTable()
	handler.Register(tab, "who", func(ctx context.Context, _ struct{}) (string, error) {
		v, _ := ctx.Value(key{}).(string)
		return v, nil
	}, handler.Inline())
	ctx := context.WithValue(context.Background(), key{}, "alice")
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"who","id":1}`))); got != `{"jsonrpc":"2.0","result":"alice","id":1}` {
		t.Fatal(got)
	}
	got := string(tab.Dispatch(ctx, nil, []byte(`[{"jsonrpc":"2.0","method":"who","id":1}]`)))
	if got != `[{"jsonrpc":"2.0","result":"alice","id":1}]` {
		t.Fatal(got)
	}
}

func TestDispatch_rejectV1(t *testing.T) {
	tab := handler.NewTable(handler.WithRejectV1(true))
	handler.Register(tab, "one", func(context.Context, [1]int) (int, error) { return 1, nil })
	r := decodeReply(t, call(t, tab, `{"method":"one","params":[1],"id":5}`))
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "5" {
		t.Fatalf("%+v", r)
	}
}

func TestDispatch_maxDepth(t *testing.T) {
	tab := handler.NewTable(handler.WithMaxDepth(4))
	handler.Register(tab, "echo", func(_ context.Context, p handler.Raw) (handler.Raw, error) { return p, nil }, handler.Inline())
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"echo","params":[[[1]]],"id":1}`)); r.Error != nil {
		t.Fatalf("4 levels: %+v", r.Error)
	}
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"echo","params":[[[[1]]]],"id":1}`)); r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("5 levels: %+v", r)
	}
}

// TestDispatch_concurrent runs many goroutines through one table, with
// inline, blocking and batch traffic; run with -race.
func TestDispatch_concurrent(t *testing.T) {
	tab := demoTable(t)
	msgs := []string{
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`,
		`{"jsonrpc":"2.0","method":"subtract","params":{"minuend":3,"subtrahend":1},"id":2}`,
		`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[0],"id":2}]`,
		`{"jsonrpc":"2.0","method":"su\u0062tract","params":[5,1],"id":"s"}`,
		`{"jsonrpc":"2.0","method":"echo","params":["a\nb"],"id":3}`,
	}
	want := make([]string, len(msgs))
	for i, m := range msgs {
		want[i] = call(t, tab, m)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 256)
			for i := range 300 {
				k := (g + i) % len(msgs)
				buf = tab.Dispatch(context.Background(), buf[:0], []byte(msgs[k]))
				if string(buf) != want[k] {
					t.Errorf("goroutine %d: %s, want %s", g, buf, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestServe_outcomes(t *testing.T) {
	tab := demoTable(t)
	ctx := context.Background()
	cases := []struct {
		msg        string
		inlineOnly bool
		want       handler.Outcome
	}{
		{`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, true, handler.Replied},
		{`{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}`, true, handler.Deferred},
		{`{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}`, false, handler.Replied},
		{`{"jsonrpc":"2.0","method":`, true, handler.Malformed},
		{`[1,2`, false, handler.Malformed},
		{`[]`, true, handler.Replied},
		{`{"jsonrpc":"2.0","method":1,"id":1}`, true, handler.Replied},
	}
	for _, c := range cases {
		if _, got := tab.Serve(ctx, []byte("x"), []byte(c.msg), c.inlineOnly); got != c.want {
			t.Errorf("%s inline=%v: outcome %v, want %v", c.msg, c.inlineOnly, got, c.want)
		}
	}
}

func TestAppendBusy(t *testing.T) {
	tab := demoTable(t)
	got := string(tab.AppendBusy(nil, []byte(`[{"jsonrpc":"2.0","method":"sleep","params":[9],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[9]},{"jsonrpc":"2.0","method":1,"id":2}]`)))
	want := `[{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":1},{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: method must be a string (offset 130)"},"id":2}]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := string(tab.AppendBusy(nil, []byte(`{"jsonrpc":"2.0","method":"sleep","params":[9],"id":"a"}`))); got != `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":"a"}` {
		t.Fatal(got)
	}
	if got := tab.AppendBusy(nil, []byte(`[{"jsonrpc":"2.0","method":"sleep"}]`)); len(got) != 0 {
		t.Fatalf("notifications answered: %s", got)
	}
}
