package handler

// White-box tests of the per-call limits (deadline.go, dispatch.go,
// intercept.go, ratelimit.go, subscribe.go): what happens to calls that
// outlive their deadline, and to the state they leave.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/internal/testkit"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

func rvLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// rvReply is one reply.
type rvReply struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ID json.RawMessage `json:"id"`
}

// rvBatch decodes a batch reply by id.
func rvBatch(t *testing.T, s string) map[string]rvReply {
	t.Helper()
	var rs []rvReply
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		t.Fatalf("batch reply %q: %v", s, err)
	}
	out := map[string]rvReply{}
	for _, r := range rs {
		out[string(r.ID)] = r
	}
	return out
}

func rvWait(t *testing.T, cond func() bool) { t.Helper(); testkit.Wait(t, cond) }

// TestDeadline_outcomeIsEachCallsOwn: in a batch, an element after one
// whose method returned context.DeadlineExceeded gets its own result.
//
// invokeTimed read the previous element's outcome (found in a review).
func TestDeadline_outcomeIsEachCallsOwn(t *testing.T) {
	tab := NewTable(WithLogger(rvLogger()))
	Register(tab, "downstream", func(ctx context.Context, p [0]int) (int, error) {
		return 0, context.DeadlineExceeded // its own call to a backend timed out
	}, Inline())
	Register(tab, "ok", func(ctx context.Context, p [0]int) (int, error) { return 42, nil },
		Inline(), Timeout(time.Hour))
	Register(tab, "block", func(ctx context.Context, p [0]int) (int, error) { return 7, nil })
	got := string(tab.Dispatch(context.Background(), nil, []byte(`[
		{"jsonrpc":"2.0","id":1,"method":"downstream"},
		{"jsonrpc":"2.0","id":2,"method":"ok"}]`)))
	rs := rvBatch(t, got)
	if r := rs["2"]; r.Error != nil || string(r.Result) != "42" {
		t.Errorf("id 2 (succeeded, an hour before its deadline) answered %s; want result 42\nfull reply: %s", r.Error.Message, got)
	}
	// The same in a batch with a blocking element (inline run on the caller).
	got = string(tab.Dispatch(context.Background(), nil, []byte(`[
		{"jsonrpc":"2.0","id":1,"method":"block"},
		{"jsonrpc":"2.0","id":2,"method":"downstream"},
		{"jsonrpc":"2.0","id":3,"method":"ok"}]`)))
	rs = rvBatch(t, got)
	if r := rs["3"]; r.Error != nil || string(r.Result) != "42" {
		t.Errorf("parallel batch: id 3 answered %+v; want result 42\nfull reply: %s", r.Error, got)
	}
}

// TestDeadline_lateCallKeepsItsMeta: a timed call that outlives its
// deadline keeps reading its own metadata after the transport has
// reused its context for another call.
//
// A Meta pointer taken before the deadline read the next call's (found in a review).
func TestDeadline_lateCallKeepsItsMeta(t *testing.T) {
	tab := NewTable(WithLogger(rvLogger()))
	reused := make(chan struct{})
	seen := make(chan string, 1)
	Register(tab, "slow", func(ctx context.Context, p [0]int) (int, error) {
		m := MetaFrom(ctx) // at the start, as methods do
		<-reused           // the call was answered -32002 and the transport went on
		seen <- m.Principal
		return 1, nil
	}, Timeout(20*time.Millisecond))
	cc := &CallContext{Parent: context.Background(), Meta: Meta{Transport: TransportStream, Principal: "alice"}}
	got := string(tab.Dispatch(cc, nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)))
	if !strings.Contains(got, "-32002") {
		t.Fatalf("reply %s, want -32002", got)
	}
	// The transport reuses its CallContext for the connection's next call.
	cc.Meta.Principal = "mallory"
	close(reused)
	select {
	case p := <-seen:
		if p != "alice" {
			t.Errorf("the detached method read Principal %q from its Meta; want %q (its own call's)", p, "alice")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("method did not finish")
	}
}

// TestDeadline_givenUpCallDoesNotRun: a timed call still queued for a
// worker when its deadline passes is answered -32002 and never runs.
//
// It ran later anyway, spending tokens and slots for nobody (found in a review).
func TestDeadline_givenUpCallDoesNotRun(t *testing.T) {
	w := pool.NewWorkers(1, 4)
	tab := NewTable(WithLogger(rvLogger()), WithWorkers(w))
	release, started := make(chan struct{}), make(chan struct{})
	var ran atomic.Int32
	Register(tab, "hold", func(ctx context.Context, p [0]int) (int, error) {
		close(started)
		<-release
		return 1, nil
	}, Timeout(time.Hour))
	Register(tab, "quick", func(ctx context.Context, p [0]int) (int, error) {
		ran.Add(1)
		return 2, nil
	}, Timeout(20*time.Millisecond))
	held := make(chan string, 1)
	go func() {
		held <- string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"hold"}`)))
	}()
	<-started // hold is on the one worker
	got := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","id":2,"method":"quick"}`)))
	if !strings.Contains(got, "-32002") {
		t.Fatalf("quick, queued behind hold: %s; want -32002", got)
	}
	close(release)
	<-held
	w.Close() // runs what is queued, then waits for the worker
	if n := ran.Load(); n != 0 {
		t.Errorf("quick was answered -32002 before it started, then ran %d time(s) anyway", n)
	}
}

// TestSubscription_timedOutSubscribeEnds: a subscribe given a Timeout
// whose start ends past it is answered -32002 and its subscription ends;
// the table's CallTimeout does not apply to subscribe.
//
// The subscription stayed live after the client was told -32002 (found in a review).
func TestSubscription_timedOutSubscribeEnds(t *testing.T) {
	tab := NewTable(WithLogger(rvLogger()), WithCallTimeout(time.Millisecond))
	release := make(chan struct{})
	returned := make(chan struct{})
	RegisterSubscription(tab, "slow", func(ctx context.Context, p [1]int, sub *Subscription) error {
		defer close(returned)
		<-release // e.g. a backend call that takes longer than the timeout
		return nil
	}, Timeout(20*time.Millisecond))
	RegisterSubscription(tab, "plain", func(ctx context.Context, p [1]int, sub *Subscription) error { return nil })
	for _, m := range tab.Methods() {
		if m.Name == "plain_subscribe" && m.Timeout != 0 {
			t.Errorf("plain_subscribe has the table's timeout %v", m.Timeout)
		}
	}
	c := newLimClient(tab)
	defer c.close()
	got := c.call("slow_subscribe", "[0]", 1)
	if !strings.Contains(got, "-32002") {
		t.Fatalf("subscribe: %s; want -32002", got)
	}
	close(release)
	<-returned
	rvWait(t, func() bool { return tab.SubscriptionCount() == 0 })
}

// TestDeadline_abandonedStatesUnderChurn: batches and
// single calls whose blocking elements end just before, at and after
// their deadline, from Dispatch and from DispatchInline + Pending.Run,
// concurrently, the caller's message buffer scribbled over as soon as
// the call returns. Every reply is valid JSON with each id answered
// once, a result is the method's own params (the late workers read
// their params from the state's copy of the message, never the caller's
// buffer), and no abandoned state is pooled again (-race, and the
// buffer poisoning of -tags jetrpcdebug, would show it).
func TestDeadline_abandonedStatesUnderChurn(t *testing.T) {
	w := pool.NewWorkers(4, 256)
	defer w.Close()
	tab := NewTable(WithLogger(rvLogger()), WithWorkers(w), WithCallTimeout(4*time.Millisecond))
	var torn, nOK, nLate, nBusy atomic.Int32
	nap := func(ctx context.Context, p Raw) (string, error) {
		before := string(p)
		var v []any
		if err := json.Unmarshal(p, &v); err != nil || len(v) != 2 {
			torn.Add(1)
			return "", errors.New("bad params")
		}
		time.Sleep(time.Duration(v[1].(float64)) * time.Millisecond)
		if string(p) != before {
			torn.Add(1)
		}
		return before, nil
	}
	Register(tab, "nap", nap)
	Register(tab, "fast", func(ctx context.Context, p Raw) (string, error) { return string(p), nil }, Inline())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var later Pending
			for it := range 60 {
				var b strings.Builder
				type want struct{ id, params string }
				var wants []want
				n := 1 + (it+g)%4
				batch := n > 1 || it%3 == 0
				if batch {
					b.WriteString("[")
				}
				for k := range n {
					if k > 0 {
						b.WriteString(",")
					}
					id := string(rune('a'+g)) + strings.Repeat("x", k) + string(rune('0'+it%10))
					params := `["` + id + `",` + string(rune('2'+(it+k)%5)) + `]`
					method := "nap"
					if batch && k == n-1 && it%2 == 0 {
						method = "fast"
					}
					b.WriteString(`{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `","params":` + params + `}`)
					wants = append(wants, want{`"` + id + `"`, params})
				}
				if batch {
					b.WriteString(`,{"jsonrpc":"2.0","method":"nap","params":["n",5]}]`)
				}
				msg := []byte(b.String())
				var out []byte
				if it%2 == 0 {
					out = tab.Dispatch(context.Background(), nil, msg)
				} else {
					var oc Outcome
					out, oc = tab.DispatchInline(context.Background(), nil, msg, &later)
					if oc == Deferred {
						job := later.Take()
						for i := range msg {
							msg[i] = '#' // the transport's buffer is reused
						}
						out = job.Run(context.Background(), out)
					}
				}
				for i := range msg {
					msg[i] = '#'
				}
				var rs []rvReply
				if batch {
					if err := json.Unmarshal(out, &rs); err != nil {
						t.Errorf("batch reply %q: %v", out, err)
						return
					}
				} else {
					var r rvReply
					if err := json.Unmarshal(out, &r); err != nil {
						t.Errorf("reply %q: %v", out, err)
						return
					}
					rs = []rvReply{r}
				}
				if len(rs) != len(wants) {
					t.Errorf("%d replies for %d requests: %s", len(rs), len(wants), out)
					return
				}
				for k, r := range rs {
					wt := wants[k]
					if string(r.ID) != wt.id {
						t.Errorf("reply %d has id %s, want %s: %s", k, r.ID, wt.id, out)
						continue
					}
					if r.Error != nil {
						switch r.Error.Code {
						case int(parser.CodeDeadline):
							nLate.Add(1)
						case int(parser.CodeServerBusy): // the pool is full of late sleepers
							nBusy.Add(1)
						default:
							t.Errorf("id %s: %+v", wt.id, r.Error)
						}
						continue
					}
					var res string
					nOK.Add(1)
					if json.Unmarshal(r.Result, &res) != nil || res != wt.params {
						t.Errorf("id %s: result %s, want its params %s", wt.id, r.Result, wt.params)
					}
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d results, %d past the deadline, %d busy", nOK.Load(), nLate.Load(), nBusy.Load())
	w.Close() // the late workers finish
	if n := torn.Load(); n != 0 {
		t.Errorf("%d late method(s) saw their params change", n)
	}
}

// TestMaxConcurrent_neverLeaks: with interceptors
// (one refusing some calls, one panicking after Next), a method that
// panics, calls answered -32002, busy refusals and rate-limited calls,
// in batches and single calls, the MaxConcurrent counter returns to 0.
func TestMaxConcurrent_neverLeaks(t *testing.T) {
	tab := NewTable(WithLogger(rvLogger()), WithRateLimit(ratelimit.Limits{Rate: 1e6, Burst: 50}))
	tab.Use(func(ctx context.Context, c *Call) error {
		if p := string(c.Params()); p == "[2]" {
			return ErrForbidden // refused before Next
		}
		return nil
	}, func(ctx context.Context, c *Call) error {
		c.Next(ctx)
		if string(c.Params()) == "[3]" {
			panic("interceptor after Next")
		}
		return nil
	})
	Register(tab, "m", func(ctx context.Context, p [1]int) (int, error) {
		switch p[0] {
		case 1:
			panic("method")
		case 4:
			<-ctx.Done() // past its deadline
			return 0, ctx.Err()
		}
		return p[0], nil
	}, MaxConcurrent(2), Timeout(5*time.Millisecond))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				p := string(rune('0' + (i+g)%5))
				tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":[`+p+`]}`))
				tab.Dispatch(context.Background(), nil, []byte(`[{"jsonrpc":"2.0","id":1,"method":"m","params":[`+p+`]},{"jsonrpc":"2.0","method":"m","params":[4]},{"jsonrpc":"2.0","id":3,"method":"m","params":[1]}]`))
			}
		}()
	}
	wg.Wait()
	m := tab.methods["m"]
	rvWait(t, func() bool { return m.running.Load() == 0 })
}
