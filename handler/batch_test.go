package handler_test

// Tests of batches (batch.go): blocking elements run in parallel, and
// a batch's limits.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

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
