package handler_test

// Tests of dispatch (dispatch.go): batches in parallel and on a full
// queue, limits, DispatchInline and Pending, the context, concurrency, and the
// outcomes.

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
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

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
	if _, oc := tab.DispatchInline(context.Background(), nil, []byte(batch(3)), nil); oc != handler.Deferred {
		t.Fatal("DispatchInline ran a batch longer than ParallelBatch")
	}
	if out, oc := tab.DispatchInline(context.Background(), nil, []byte(batch(2)), nil); oc != handler.Replied || !bytes.HasPrefix(out, []byte("[")) {
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
		if out, oc := tab.DispatchInline(context.Background(), []byte("x"), []byte(msg), nil); oc != handler.Deferred || string(out) != "x" {
			t.Errorf("%s: outcome %v, out %q", msg, oc, out)
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("DispatchInline ran %d methods while refusing", ran.Load())
	}
	for _, msg := range []string{`{"jsonrpc":"2.0","method":"fast","id":1}`, `{"jsonrpc":"2.0","method":"nope","id":1}`, `{`, `[]`} {
		if _, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), nil); oc == handler.Deferred {
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

func TestDispatchInline_outcomes(t *testing.T) {
	tab := demoTable(t)
	ctx := context.Background()
	cases := []struct {
		msg  string
		want handler.Outcome
	}{
		{`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, handler.Replied},
		{`{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}`, handler.Deferred},
		{`[{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1}]`, handler.Deferred},
		{`{"jsonrpc":"2.0","method":`, handler.Malformed},
		{`[1,2`, handler.Malformed},
		{`[]`, handler.Replied},
		{`{"jsonrpc":"2.0","method":1,"id":1}`, handler.Replied},
	}
	for _, c := range cases {
		var later handler.Pending
		out, got := tab.DispatchInline(ctx, []byte("x"), []byte(c.msg), &later)
		if got != c.want {
			t.Errorf("%s: outcome %v, want %v", c.msg, got, c.want)
		}
		if later.Empty() != (got != handler.Deferred) {
			t.Errorf("%s: outcome %v, pending empty: %v", c.msg, got, later.Empty())
		}
		if got == handler.Deferred {
			if string(out) != "x" {
				t.Errorf("%s: deferred, but wrote %q", c.msg, out)
			}
			if run, want := string(later.Run(ctx, nil)), string(tab.Dispatch(ctx, nil, []byte(c.msg))); run != want {
				t.Errorf("%s: Run %s, Dispatch %s", c.msg, run, want)
			}
		}
	}
}

// Regression from an adversarial review of dispatch: a method's own -32700 closed the stream (the outcome came from the reply text).
//
// A method may answer -32700 itself (it parsed a document of its own):
// that is a reply like any other, not a message the transport could not
// frame, so a stream must not be closed for it.
func TestDispatchInline_methodsOwnParseErrorIsReplied(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(slog.New(slog.DiscardHandler)))
	handler.Register(tab, "parseInner", func(context.Context, [1]string) (int, error) {
		return 0, &handler.Error{Code: parser.CodeParseError, Message: "inner document is not JSON"}
	}, handler.Inline())
	out, oc := tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"parseInner","params":["{"],"id":1}`), nil)
	if want := `{"jsonrpc":"2.0","error":{"code":-32700,"message":"inner document is not JSON"},"id":1}`; string(out) != want || oc != handler.Replied {
		t.Errorf("got %s, outcome %d; want %s, Replied", out, oc, want)
	}
	out, oc = tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":`), nil)
	if oc != handler.Malformed || len(out) == 0 {
		t.Errorf("truncated JSON: got %s, outcome %d; want a -32700 reply, Malformed", out, oc)
	}
	out, oc = tab.DispatchInline(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":1}`), nil)
	if oc != handler.Replied || len(out) == 0 {
		t.Errorf("invalid request: got %s, outcome %d; want a -32600 reply, Replied", out, oc)
	}
}

// busy answers a deferred message as a transport does when no worker can
// take it.
func busy(t *testing.T, tab *handler.Table, msg string) string {
	t.Helper()
	var later handler.Pending
	out, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), &later)
	if oc != handler.Deferred {
		t.Fatalf("%s: outcome %v, want Deferred", msg, oc)
	}
	return string(later.Busy(context.Background(), out))
}

// TestPending_busy: a message no worker could take is answered without
// running: busy for each request that wants a reply, the usual replies to
// invalid elements and unknown methods, nothing for notifications.
func TestPending_busy(t *testing.T) {
	tab := demoTable(t)
	got := busy(t, tab, `[{"jsonrpc":"2.0","method":"sleep","params":[9],"id":1},{"jsonrpc":"2.0","method":"sleep","params":[9]},{"jsonrpc":"2.0","method":1,"id":2},{"jsonrpc":"2.0","method":"nope","id":3}]`)
	want := `[{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":1},{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: method must be a string (offset 130)"},"id":2},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3}]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := busy(t, tab, `{"jsonrpc":"2.0","method":"sleep","params":[9],"id":"a"}`); got != `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":"a"}` {
		t.Fatal(got)
	}
	if got := busy(t, tab, `[{"jsonrpc":"2.0","method":"sleep"}]`); len(got) != 0 {
		t.Fatalf("notifications answered: %s", got)
	}
}

// TestPending_runsWithoutItsMessage: Run works from the parse and the
// copy the Pending keeps — spans rebased, an escaped method name, string
// params and ids — after the caller's buffer is overwritten.
func TestPending_runsWithoutItsMessage(t *testing.T) {
	tab := demoTable(t)
	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"sle\u0065p","params":{"ms":0},"id":"q\"1"}`,
		`  [{"jsonrpc":"2.0","method":"sleep","params":[0],"id":1},{"jsonrpc":"2.0","method":"echo","params":["a\u00e9"],"id":[]},{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":3}]  `,
	} {
		buf := []byte("xx" + msg + "yy")
		var later handler.Pending
		if _, oc := tab.DispatchInline(ctx, nil, buf[2:len(buf)-2], &later); oc != handler.Deferred {
			t.Fatalf("%s: outcome %v", msg, oc)
		}
		for i := range buf {
			buf[i] = '#'
		}
		if got, want := string(later.Run(ctx, nil)), string(tab.Dispatch(ctx, nil, []byte(msg))); got != want {
			t.Fatalf("Run:      %s\nDispatch: %s", got, want)
		}
	}
}
