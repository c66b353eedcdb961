package handler_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// slowTable has sleep (blocking: sleeps its param in ms, or until its
// context is done, and reports which), fast (inline) and big (returns a
// string of its param's length).
func slowTable(t testing.TB, opts ...handler.Option) (*handler.Table, *atomic.Int32) {
	t.Helper()
	tab := handler.NewTable(append([]handler.Option{handler.WithLogger(quietLogger())}, opts...)...)
	ended := new(atomic.Int32) // sleeps that saw their context end
	handler.Register(tab, "sleep", func(ctx context.Context, p [1]int) (string, error) {
		select {
		case <-time.After(time.Duration(p[0]) * time.Millisecond):
			return "slept", nil
		case <-ctx.Done():
			ended.Add(1)
			return "", ctx.Err()
		}
	})
	handler.Register(tab, "fast", func(ctx context.Context, p [1]int) (int, error) { return p[0], nil }, handler.Inline())
	handler.Register(tab, "big", func(ctx context.Context, p [1]int) (string, error) { return strings.Repeat("x", p[0]), nil }, handler.Inline())
	return tab, ended
}

// batchReplies decodes a batch reply by id.
func batchReplies(t testing.TB, s string) map[string]replyOf {
	t.Helper()
	var rs []replyOf
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		t.Fatalf("batch reply %q: %v", s, err)
	}
	out := map[string]replyOf{}
	for _, r := range rs {
		out[string(r.ID)] = r
	}
	return out
}

func TestTimeout_answersAtTheDeadline(t *testing.T) {
	tab, ended := slowTable(t, handler.WithCallTimeout(50*time.Millisecond))
	r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","id":7,"method":"sleep","params":[60000]}`))
	if r.Error == nil || r.Error.Code != int(parser.CodeDeadline) || string(r.ID) != "7" {
		t.Fatalf("reply %+v, want -32002 with id 7", r)
	}
	if !strings.Contains(r.Error.Message, "timeout of 50ms") {
		t.Errorf("message %q does not name the timeout", r.Error.Message)
	}
	waitFor(t, func() bool { return ended.Load() == 1 }) // the method's context ended too
	// A call that ends in time is answered as usual.
	if got := call(t, tab, `{"jsonrpc":"2.0","id":8,"method":"sleep","params":[1]}`); !strings.Contains(got, `"result":"slept"`) {
		t.Errorf("in-time call: %s", got)
	}
}

func TestTimeout_insideABatchKeepsTheSiblings(t *testing.T) {
	tab, _ := slowTable(t, handler.WithCallTimeout(50*time.Millisecond))
	got := call(t, tab, `[{"jsonrpc":"2.0","id":1,"method":"sleep","params":[60000]},
		{"jsonrpc":"2.0","id":2,"method":"sleep","params":[1]},
		{"jsonrpc":"2.0","id":3,"method":"fast","params":[3]},
		{"jsonrpc":"2.0","method":"sleep","params":[60000]}]`)
	rs := batchReplies(t, got)
	if len(rs) != 3 {
		t.Fatalf("%d replies, want 3 (the notification gets none): %s", len(rs), got)
	}
	if e := rs["1"].Error; e == nil || e.Code != int(parser.CodeDeadline) {
		t.Errorf("id 1: %+v, want -32002", rs["1"])
	}
	if string(rs["2"].Result) != `"slept"` || string(rs["3"].Result) != "3" {
		t.Errorf("siblings: %s", got)
	}
}

func TestTimeout_perMethodOverridesTheTable(t *testing.T) {
	tab := handler.NewTable(handler.WithCallTimeout(time.Hour), handler.WithLogger(quietLogger()))
	handler.Register(tab, "deadline", func(ctx context.Context, _ [0]int) (bool, error) {
		d, ok := ctx.Deadline()
		return ok && time.Until(d) < time.Minute, nil
	}, handler.Timeout(time.Second), handler.Inline())
	handler.Register(tab, "none", func(ctx context.Context, _ [0]int) (bool, error) {
		_, ok := ctx.Deadline()
		return ok, nil
	}, handler.Timeout(0), handler.Inline())
	if got := call(t, tab, `{"jsonrpc":"2.0","id":1,"method":"deadline"}`); !strings.Contains(got, `"result":true`) {
		t.Errorf("deadline: %s", got)
	}
	if got := call(t, tab, `{"jsonrpc":"2.0","id":1,"method":"none"}`); !strings.Contains(got, `"result":false`) {
		t.Errorf("Timeout(0) still has a deadline: %s", got)
	}
}

func TestTimeout_contextKeepsTheCallersValues(t *testing.T) {
	type key struct{}
	tab := handler.NewTable(handler.WithCallTimeout(time.Second), handler.WithLogger(quietLogger()))
	handler.Register(tab, "value", func(ctx context.Context, _ [0]int) (string, error) {
		s, _ := ctx.Value(key{}).(string)
		if ctx.Err() != nil {
			return "", errors.New("done too early")
		}
		return s, nil
	})
	ctx := context.WithValue(context.Background(), key{}, "kept")
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"value"}`))); !strings.Contains(got, `"result":"kept"`) {
		t.Errorf("got %s", got)
	}
}

// A method with a timeout that derived a context (context.WithCancel, the
// usual WithTimeout for a call it makes) made the context package start a
// goroutine watching the method's context, which read the pooled call
// context after the call, raced with the next call and could panic on the
// deadline context's nil parent.
func TestTimeout_derivedContextIsWatchedWithoutAGoroutine(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	var watched atomic.Int32 // calls where deriving a context started a goroutine
	handler.Register(tab, "derive", func(ctx context.Context, _ struct{}) (bool, error) {
		before := runtime.NumGoroutine()
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		if runtime.NumGoroutine() > before {
			watched.Add(1)
		}
		return handler.CallFrom(c).Method == "derive", nil
	}, handler.Inline(), handler.Timeout(time.Minute))
	const calls = 20
	for range calls {
		got := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"derive","id":1}`)))
		if want := `{"jsonrpc":"2.0","result":true,"id":1}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if n := watched.Load(); n == calls {
		t.Errorf("each of %d calls started a goroutine watching its context", n)
	}
}

func TestMaxConcurrent_answersBusyBeyondTheBound(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	release := make(chan struct{})
	var inside sync.WaitGroup
	inside.Add(2)
	handler.Register(tab, "hold", func(ctx context.Context, _ [0]int) (bool, error) {
		inside.Done()
		<-release
		return true, nil
	}, handler.MaxConcurrent(2))
	replies := make(chan string, 2)
	for range 2 {
		go func() { replies <- call(t, tab, `{"jsonrpc":"2.0","id":1,"method":"hold"}`) }()
	}
	inside.Wait()
	r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","id":3,"method":"hold"}`))
	if r.Error == nil || r.Error.Code != int(parser.CodeServerBusy) || !strings.Contains(r.Error.Message, "hold runs 2 calls at most") {
		t.Fatalf("third call: %+v, want -32000 naming the bound", r)
	}
	close(release)
	for range 2 {
		if got := <-replies; !strings.Contains(got, `"result":true`) {
			t.Errorf("held call: %s", got)
		}
	}
	// The slots came back.
	inside.Add(1)
	if got := call(t, tab, `{"jsonrpc":"2.0","id":4,"method":"hold"}`); !strings.Contains(got, `"result":true`) {
		t.Errorf("after release: %s", got)
	}
}

func TestResponseSize_singleReplyReplaced(t *testing.T) {
	tab, _ := slowTable(t, handler.WithMaxResponseSize(1000, 0))
	if got := call(t, tab, `{"jsonrpc":"2.0","id":1,"method":"big","params":[900]}`); !strings.Contains(got, `"result":"xxx`) {
		t.Fatalf("under the limit: %.80s", got)
	}
	r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","id":2,"method":"big","params":[1000]}`))
	if r.Error == nil || r.Error.Code != int(parser.CodeResponseTooLarge) || string(r.ID) != "2" {
		t.Fatalf("over the limit: %+v, want -32008", r)
	}
	if !strings.Contains(r.Error.Message, "exceed the limit of 1000 bytes") {
		t.Errorf("message %q", r.Error.Message)
	}
}

func TestResponseSize_batchCountsErrorRepliesToo(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		opts := []handler.Option{handler.WithMaxResponseSize(0, 300)}
		if parallel {
			opts = append(opts, handler.WithParallelBatch(2)) // segments on workers, joined in order
		}
		tab, _ := slowTable(t, opts...)
		// Each error reply to an unknown method is about 90 bytes: the
		// fourth reply passes 300 bytes, so the fifth and sixth elements
		// get -32008, whatever they are.
		var b strings.Builder
		b.WriteString("[")
		for i := range 4 {
			b.WriteString(`{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"nope"},`)
		}
		b.WriteString(`{"jsonrpc":"2.0","id":5,"method":"fast","params":[5]},{"jsonrpc":"2.0","id":6,"method":"fast","params":[6]}]`)
		rs := batchReplies(t, call(t, tab, b.String()))
		for _, id := range []string{"1", "2", "3", "4"} {
			if e := rs[id].Error; e == nil || e.Code != int(parser.CodeMethodNotFound) {
				t.Errorf("parallel=%v id %s: %+v, want -32601", parallel, id, rs[id])
			}
		}
		for _, id := range []string{"5", "6"} {
			if e := rs[id].Error; e == nil || e.Code != int(parser.CodeResponseTooLarge) {
				t.Errorf("parallel=%v id %s: %+v, want -32008", parallel, id, rs[id])
			}
		}
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
