package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/idempotency"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// payments is a table whose pay method (blocking) counts its runs and
// answers a new receipt number each run; fail fails each run with its
// number; quick is pay's inline twin. gate, when not nil, holds pay
// until it is closed.
type payments struct {
	tab   *handler.Table
	store *idempotency.Store
	runs  atomic.Int32
	gate  chan struct{}
}

func newPayments(t testing.TB, opts idempotency.Options) *payments {
	t.Helper()
	p := newPaymentsTable(t)
	p.store = idempotency.New(opts)
	p.tab.Use(p.store.Intercept)
	return p
}

// newPaymentsTable is newPayments' table without a Store.
func newPaymentsTable(t testing.TB) *payments {
	t.Helper()
	w := pool.NewWorkers(8, 256)
	t.Cleanup(w.Close)
	p := &payments{tab: handler.NewTable(handler.WithWorkers(w), handler.WithLogger(slog.New(slog.DiscardHandler)))}
	type req struct {
		Amount int    `json:"amount"`
		Key    string `json:"key,omitempty"`
	}
	handler.Register(p.tab, "pay", func(ctx context.Context, r req) (string, error) {
		n := p.runs.Add(1)
		if p.gate != nil {
			<-p.gate
		}
		return fmt.Sprintf("receipt-%d", n), nil
	})
	handler.Register(p.tab, "quick", func(ctx context.Context, r req) (string, error) {
		return fmt.Sprintf("receipt-%d", p.runs.Add(1)), nil
	}, handler.Inline())
	handler.Register(p.tab, "fail", func(ctx context.Context, r req) (string, error) {
		return "", &handler.Error{Code: 402, Message: fmt.Sprintf("declined %d", p.runs.Add(1))}
	})
	return p
}

// caller returns the context of an HTTP call by principal (anonymous
// when ""), with the Idempotency-Key header key (none when "").
func caller(principal, key string) context.Context {
	cc := &handler.CallContext{Parent: context.Background()}
	cc.Meta.Transport = handler.TransportHTTP
	cc.Meta.Principal = principal
	head := "POST /rpc HTTP/1.1\r\nHost: h\r\n"
	if key != "" {
		head += "Idempotency-Key: " + key + "\r\n"
	}
	cc.Meta.SetHTTPHead([]byte(head + "\r\n"))
	return cc
}

func (p *payments) call(ctx context.Context, msg string) string {
	return string(p.tab.Dispatch(ctx, nil, []byte(msg)))
}

const pay1 = `{"jsonrpc":"2.0","method":"pay","params":{"amount":100},"id":1}`

func TestStore_retryAnsweredStoredResult(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	want := `{"jsonrpc":"2.0","result":"receipt-1","id":1}`
	for i := range 3 {
		if got := p.call(caller("ann", "k1"), pay1); got != want {
			t.Fatalf("call %d: %s, want %s", i, got, want)
		}
	}
	// The same request with other white space, and another id, is a retry.
	if got, want := p.call(caller("ann", "k1"), `{"jsonrpc":"2.0","method":"pay","params":{ "amount" : 100 },"id":"b"}`), `{"jsonrpc":"2.0","result":"receipt-1","id":"b"}`; got != want {
		t.Fatalf("retry: %s, want %s", got, want)
	}
	if n := p.runs.Load(); n != 1 {
		t.Fatalf("pay ran %d times, want 1", n)
	}
	// Without a key, every call runs.
	p.call(caller("ann", ""), pay1)
	p.call(caller("ann", ""), pay1)
	if n := p.runs.Load(); n != 3 {
		t.Fatalf("pay ran %d times, want 3", n)
	}
	if p.store.Len() != 1 {
		t.Fatalf("Len %d, want 1", p.store.Len())
	}
}

func TestStore_keyReusedForAnotherRequest(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	p.call(caller("ann", "k1"), pay1)
	want := `{"jsonrpc":"2.0","error":{"code":-31001,"message":"Idempotency key reused with a different request"},"id":2}`
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"pay","params":{"amount":101},"id":2}`,
		`{"jsonrpc":"2.0","method":"quick","params":{"amount":100},"id":2}`,
		`{"jsonrpc":"2.0","method":"pay","params":{"amount":"100"},"id":2}`,
	} {
		if got := p.call(caller("ann", "k1"), msg); got != want {
			t.Errorf("%s: %s, want %s", msg, got, want)
		}
	}
	if n := p.runs.Load(); n != 1 {
		t.Fatalf("pay ran %d times, want 1", n)
	}
}

func TestStore_scopedByPrincipal(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	a := p.call(caller("ann", "k1"), pay1)
	b := p.call(caller("bob", "k1"), pay1)
	anon := p.call(caller("", "k1"), pay1) // in process: the shared anonymous scope
	if a == b || a == anon || b == anon || p.runs.Load() != 3 {
		t.Fatalf("ann %s, bob %s, anonymous %s: %d runs, want 3 apart", a, b, anon, p.runs.Load())
	}
	if again := p.call(caller("bob", "k1"), pay1); again != b {
		t.Fatalf("bob's retry %s, want %s", again, b)
	}
}

func TestStore_errorsNotKeptByDefault(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	msg := `{"jsonrpc":"2.0","method":"fail","params":{"amount":1},"id":1}`
	first, second := p.call(caller("ann", "k"), msg), p.call(caller("ann", "k"), msg)
	if first == second || p.runs.Load() != 2 || p.store.Len() != 0 {
		t.Fatalf("%s then %s, %d runs, %d keys: the error was kept", first, second, p.runs.Load(), p.store.Len())
	}
}

func TestStore_cacheError(t *testing.T) {
	p := newPayments(t, idempotency.Options{CacheError: func(code parser.Code, err error) bool {
		return code > -32000 || code < -32768 // the application's own errors
	}})
	msg := `{"jsonrpc":"2.0","method":"fail","params":{"amount":1},"id":1}`
	want := `{"jsonrpc":"2.0","error":{"code":402,"message":"declined 1"},"id":1}`
	for range 2 {
		if got := p.call(caller("ann", "k"), msg); got != want {
			t.Fatalf("%s, want %s", got, want)
		}
	}
	if p.runs.Load() != 1 {
		t.Fatalf("%d runs, want 1", p.runs.Load())
	}
}

func TestStore_ttl(t *testing.T) {
	p := newPayments(t, idempotency.Options{TTL: 30 * time.Millisecond})
	a := p.call(caller("ann", "k"), pay1)
	if b := p.call(caller("ann", "k"), pay1); b != a {
		t.Fatalf("within the TTL: %s, want %s", b, a)
	}
	time.Sleep(50 * time.Millisecond)
	if c := p.call(caller("ann", "k"), pay1); c == a || p.runs.Load() != 2 {
		t.Fatalf("after the TTL: %s (runs %d), want a new run", c, p.runs.Load())
	}
}

func TestStore_maxEntries(t *testing.T) {
	p := newPayments(t, idempotency.Options{MaxEntries: 2})
	for _, k := range []string{"a", "b", "c"} {
		p.call(caller("ann", k), pay1)
	}
	if p.store.Len() != 2 {
		t.Fatalf("Len %d, want 2", p.store.Len())
	}
	p.call(caller("ann", "c"), pay1) // kept
	p.call(caller("ann", "a"), pay1) // dropped, the oldest: runs again
	if p.runs.Load() != 4 {
		t.Fatalf("%d runs, want 4", p.runs.Load())
	}
	// Entries in flight are never dropped: a new key finding only them is refused.
	p.gate = make(chan struct{})
	var wg sync.WaitGroup
	for _, k := range []string{"x", "y"} {
		wg.Go(func() { p.call(caller("ann", k), pay1) })
	}
	waitFor(t, func() bool { return p.runs.Load() == 6 })
	if got, want := p.call(caller("ann", "z"), pay1), `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy: too many requests in progress"},"id":1}`; got != want {
		t.Errorf("full of calls in flight: %s, want %s", got, want)
	}
	close(p.gate)
	wg.Wait()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestStore_concurrentDuplicatesWait: duplicates of a call in flight wait
// for it and answer its result; the method runs once (run with -race).
func TestStore_concurrentDuplicatesWait(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	p.gate = make(chan struct{})
	const n = 32
	replies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { replies[i] = p.call(caller("ann", "k"), pay1) })
	}
	waitFor(t, func() bool { return p.runs.Load() == 1 })
	time.Sleep(10 * time.Millisecond) // let the duplicates reach their wait
	close(p.gate)
	wg.Wait()
	for i, r := range replies {
		if want := `{"jsonrpc":"2.0","result":"receipt-1","id":1}`; r != want {
			t.Errorf("caller %d: %s, want %s", i, r, want)
		}
	}
	if p.runs.Load() != 1 {
		t.Fatalf("pay ran %d times, want 1", p.runs.Load())
	}
}

// TestStore_concurrentDuplicatesRefused: with a negative Wait, a
// duplicate of a call in flight is answered CodeInProgress at once; so is
// one of an inline method whatever Wait says, and one whose wait runs
// out.
func TestStore_concurrentDuplicatesRefused(t *testing.T) {
	for _, wait := range []time.Duration{-1, 20 * time.Millisecond} {
		p := newPayments(t, idempotency.Options{Wait: wait})
		p.gate = make(chan struct{})
		done := make(chan string)
		go func() { done <- p.call(caller("ann", "k"), pay1) }()
		waitFor(t, func() bool { return p.runs.Load() == 1 })
		want := `{"jsonrpc":"2.0","error":{"code":-31002,"message":"A request with this idempotency key is in progress"},"id":1}`
		if got := p.call(caller("ann", "k"), pay1); got != want {
			t.Errorf("wait %v: %s, want %s", wait, got, want)
		}
		close(p.gate)
		if got := <-done; got != `{"jsonrpc":"2.0","result":"receipt-1","id":1}` {
			t.Errorf("wait %v: the first got %s", wait, got)
		}
	}
}

// TestStore_waitHonoursContext: a duplicate waiting for a call in flight
// gives up when its own context is done.
func TestStore_waitHonoursContext(t *testing.T) {
	p := newPayments(t, idempotency.Options{Wait: time.Minute})
	p.gate = make(chan struct{})
	defer close(p.gate)
	go p.call(caller("ann", "k"), pay1)
	waitFor(t, func() bool { return p.runs.Load() == 1 })
	ctx, cancel := context.WithTimeout(caller("ann", "k"), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := p.call(ctx, pay1)
	if !strings.Contains(got, `"code":-32002`) || time.Since(start) > 5*time.Second {
		t.Fatalf("%s after %v, want a deadline error soon", got, time.Since(start))
	}
}

// TestStore_inlineNeverWaits: an inline method's duplicate is refused at
// once rather than block an event loop. The first call is held inside an
// interceptor, as an inline method cannot block here.
func TestStore_inlineNeverWaits(t *testing.T) {
	w := pool.NewWorkers(2, 16)
	t.Cleanup(w.Close)
	tab := handler.NewTable(handler.WithWorkers(w))
	handler.Register(tab, "quick", func(context.Context, [1]int) (int, error) { return 1, nil }, handler.Inline())
	store := idempotency.New(idempotency.Options{Wait: time.Minute})
	tab.Use(store.Intercept)
	gate, in := make(chan struct{}), make(chan struct{}, 1)
	tab.Use(func(ctx context.Context, c *handler.Call) error {
		if string(c.Params()) == "[1]" {
			in <- struct{}{}
			<-gate
		}
		return nil
	})
	msg := []byte(`{"jsonrpc":"2.0","method":"quick","params":[1],"id":1}`)
	done := make(chan []byte)
	go func() { done <- tab.Dispatch(caller("ann", "k"), nil, msg) }()
	<-in
	if got := string(tab.Dispatch(caller("ann", "k"), nil, msg)); !strings.Contains(got, `"code":-31002`) {
		t.Errorf("inline duplicate: %s", got)
	}
	close(gate)
	if got := string(<-done); got != `{"jsonrpc":"2.0","result":1,"id":1}` {
		t.Errorf("first: %s", got)
	}
}

func TestStore_notifications(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	note := `{"jsonrpc":"2.0","method":"pay","params":{"amount":100}}`
	for range 3 {
		if got := p.call(caller("ann", "n"), note); got != "" {
			t.Fatalf("a notification got %s", got)
		}
	}
	if p.runs.Load() != 1 {
		t.Fatalf("%d runs, want 1", p.runs.Load())
	}
	// A request with the key of a notification is another request.
	if got := p.call(caller("ann", "n"), pay1); !strings.Contains(got, `"code":-31001`) {
		t.Fatalf("request after notification: %s", got)
	}
}

// TestStore_batchElements: inside a batch each element has its own key
// (ParamKey) and only the retried elements are answered from the store.
func TestStore_batchElements(t *testing.T) {
	p := newPayments(t, idempotency.Options{Key: idempotency.ParamKey("key")})
	first := p.call(context.Background(), `[{"jsonrpc":"2.0","method":"pay","params":{"amount":1,"key":"a"},"id":1},{"jsonrpc":"2.0","method":"quick","params":{"amount":2},"id":2}]`)
	second := p.call(context.Background(), `[{"jsonrpc":"2.0","method":"pay","params":{"amount":1,"key":"a"},"id":1},{"jsonrpc":"2.0","method":"quick","params":{"amount":2},"id":2},{"jsonrpc":"2.0","method":"pay","params":{"amount":3,"key":"b"},"id":3}]`)
	if p.runs.Load() != 4 {
		t.Fatalf("%d runs, want 4 (%s then %s)", p.runs.Load(), first, second)
	}
	if !strings.HasPrefix(second, strings.TrimSuffix(strings.Split(first, `},{`)[0], "]")) {
		t.Fatalf("the retried element was not answered its first result: %s then %s", first, second)
	}
}

// TestStore_panicInsideDropsEntry: when an interceptor inside panics, the
// key is not left in flight: the retry runs.
func TestStore_panicInsideDropsEntry(t *testing.T) {
	p := newPayments(t, idempotency.Options{Wait: -1})
	var boom atomic.Bool
	boom.Store(true)
	p.tab.Use(func(ctx context.Context, c *handler.Call) error {
		if boom.Swap(false) {
			panic("boom")
		}
		return nil
	})
	if got := p.call(caller("ann", "k"), pay1); !strings.Contains(got, `"code":-32603`) {
		t.Fatalf("first: %s", got)
	}
	if got := p.call(caller("ann", "k"), pay1); got != `{"jsonrpc":"2.0","result":"receipt-1","id":1}` {
		t.Fatalf("retry: %s", got)
	}
}

func TestStore_keyTooLong(t *testing.T) {
	p := newPayments(t, idempotency.Options{})
	got := p.call(caller("ann", strings.Repeat("k", idempotency.MaxKeyLength+1)), pay1)
	if !strings.Contains(got, `"code":-32600`) || p.runs.Load() != 0 {
		t.Fatalf("%s (%d runs)", got, p.runs.Load())
	}
	if !errors.Is(idempotency.ErrKeyReused, &handler.Error{Code: idempotency.CodeKeyReused}) {
		t.Fatal("ErrKeyReused is not its code")
	}
}

// MaxBytes bounds what the Store keeps: the oldest complete entries make
// room for a new outcome, and an outcome larger than MaxBytes alone is
// not kept (its retry runs again). (Results were kept whatever their
// size: 100,000 keys of large results held gigabytes.)
func TestStore_maxBytesBoundsWhatIsKept(t *testing.T) {
	// A "receipt-N" result with a key "kN" and scope "ann" takes about
	// 256+9+2+3 = 270 bytes: two fit in 600, not three.
	p := newPayments(t, idempotency.Options{MaxBytes: 600})
	for _, k := range []string{"k1", "k2", "k3"} {
		p.call(caller("ann", k), pay1)
	}
	if n := p.store.Len(); n != 2 {
		t.Fatalf("Len %d after three outcomes, want 2 (the oldest dropped)", n)
	}
	if got := p.call(caller("ann", "k3"), pay1); got != `{"jsonrpc":"2.0","result":"receipt-3","id":1}` {
		t.Errorf("the newest key's retry: %s, want its kept result", got)
	}
	if got := p.call(caller("ann", "k1"), pay1); got != `{"jsonrpc":"2.0","result":"receipt-4","id":1}` {
		t.Errorf("the dropped key's retry: %s, want a new run", got)
	}

	tiny := newPayments(t, idempotency.Options{MaxBytes: 100})
	tiny.call(caller("ann", "k1"), pay1)
	tiny.call(caller("ann", "k1"), pay1)
	if n, runs := tiny.store.Len(), tiny.runs.Load(); n != 0 || runs != 2 {
		t.Errorf("an outcome larger than MaxBytes: Len %d, runs %d; want 0 kept, 2 runs", n, runs)
	}
}
