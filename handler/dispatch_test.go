package handler_test

// Tests of dispatch (dispatch.go): a full queue, the context, the
// protocol version and depth limits, and concurrency.

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// TestDispatch_batchParallel shows that the blocking elements of a batch

// run at the same time: each waits until all have started, which only

// happens if they run in parallel (sequential execution would time out).

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

// Regression from an adversarial review of dispatch: a method's own -32700 closed the stream (the outcome came from the reply text).

//

// A method may answer -32700 itself (it parsed a document of its own):

// that is a reply like any other, not a message the transport could not

// frame, so a stream must not be closed for it.

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

// TestPending_runsWithoutItsMessage: Run works from the parse and the

// copy the Pending keeps — spans rebased, an escaped method name, string

// params and ids — after the caller's buffer is overwritten.
