package handler_test

// Tests of the deadlines a transport watches itself (Pending.Deadline,
// AppendTimeout, RunHere), as the engine does.

import (
	"context"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/stats"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// deferOne gives msg to DispatchInline and returns the Pending it
// deferred, failing the test when it was not deferred.
func deferOne(t *testing.T, tab *handler.Table, msg string) handler.Pending {
	t.Helper()
	var later handler.Pending
	if out, oc := tab.DispatchInline(context.Background(), nil, []byte(msg), &later); oc != handler.Deferred {
		t.Fatalf("%s was not deferred: %s", msg, out)
	}
	return later.Take()
}

// TestPending_deadlineOfATimedBlockingCall: a single call of a blocking
// method with a timeout has a deadline that counts from DispatchInline;
// other messages have none.
func TestPending_deadlineOfATimedBlockingCall(t *testing.T) {
	tab := handler.NewTable(handler.WithCallTimeout(time.Minute))
	echo := func(_ context.Context, p [1]int) (int, error) { return p[0], nil }
	handler.Register(tab, "timed", echo, handler.Timeout(2*time.Second))
	handler.Register(tab, "table", echo)
	handler.Register(tab, "untimed", echo, handler.Timeout(0))
	for _, c := range []struct {
		msg     string
		timeout time.Duration
	}{
		{`{"jsonrpc":"2.0","method":"timed","params":[1],"id":1}`, 2 * time.Second},
		{`{"jsonrpc":"2.0","method":"timed","params":[1]}`, 2 * time.Second}, // a notification has one too
		{`{"jsonrpc":"2.0","method":"table","params":[1],"id":"a"}`, time.Minute},
		{`{"jsonrpc":"2.0","method":"untimed","params":[1],"id":1}`, 0},
		{`[{"jsonrpc":"2.0","method":"timed","params":[1],"id":1}]`, 0}, // a batch answers its elements itself
	} {
		before := clock.Now()
		d := deferOne(t, tab, c.msg)
		after := clock.Now()
		dl, timeout := d.Deadline()
		if timeout != c.timeout {
			t.Errorf("%s: timeout %v, want %v", c.msg, timeout, c.timeout)
		}
		if c.timeout > 0 && (dl < before+int64(c.timeout) || dl > after+int64(c.timeout)) {
			t.Errorf("%s: deadline %d, not within [%d, %d]", c.msg, dl, before+int64(c.timeout), after+int64(c.timeout))
		}
		if c.timeout == 0 && dl != 0 {
			t.Errorf("%s: deadline %d without a timeout", c.msg, dl)
		}
		d.Run(context.Background(), nil)
	}
}

// TestPending_appendTimeout: the reply of a call past its deadline is
// -32002 with the request's id and version; nothing for a notification.
func TestPending_appendTimeout(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(_ context.Context, _ struct{}) (int, error) { return 1, nil }, handler.Timeout(1500*time.Millisecond))
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"m","id":"a\"b"}`: `{"jsonrpc":"2.0","error":{"code":-32002,"message":"Deadline exceeded: the call ran past its timeout of 1.5s"},"id":"a\"b"}`,
		`{"method":"m","params":[],"id":7}`:          `{"result":null,"error":{"code":-32002,"message":"Deadline exceeded: the call ran past its timeout of 1.5s"},"id":7}`,
		`{"jsonrpc":"2.0","method":"m"}`:             ``,
	} {
		d := deferOne(t, tab, msg)
		if got := string(d.AppendTimeout([]byte("x"))); got != "x"+want {
			t.Errorf("%s:\ngot  %s\nwant x%s", msg, got, want)
		}
		d.Run(context.Background(), nil)
	}
}

// TestPending_runHereRunsOnTheCaller: RunHere runs a timed call on the
// calling goroutine — the table's pool, which Run would hand it to,
// refuses everything here — and answers a call that ends past its
// deadline with the timeout reply, counted as -32002.
func TestPending_runHereRunsOnTheCaller(t *testing.T) {
	w := pool.NewWorkers(1, 0)
	hold, running := make(chan struct{}), make(chan struct{})
	for !w.TrySubmit(pool.TaskFunc(func() { close(running); <-hold })) {
		time.Sleep(time.Millisecond)
	}
	<-running
	defer func() { close(hold); w.Close() }()
	tab := handler.NewTable(handler.WithWorkers(w), handler.WithMetrics(true))
	nap := func(ctx context.Context, p [1]int) (int, error) {
		time.Sleep(time.Duration(p[0]) * time.Millisecond)
		if _, ok := ctx.Deadline(); !ok {
			return -1, nil
		}
		return p[0], nil
	}
	handler.Register(tab, "nap", nap, handler.Timeout(30*time.Millisecond))

	d := deferOne(t, tab, `{"jsonrpc":"2.0","method":"nap","params":[0],"id":1}`)
	if got := string(d.RunHere(context.Background(), nil)); got != `{"jsonrpc":"2.0","result":0,"id":1}` {
		t.Errorf("RunHere in time: %s", got)
	}
	d = deferOne(t, tab, `{"jsonrpc":"2.0","method":"nap","params":[0],"id":2}`)
	if got := string(d.Run(context.Background(), nil)); got != `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Server busy"},"id":2}` {
		t.Errorf("Run, whose timed call goes to the full pool: %s", got)
	}
	d = deferOne(t, tab, `{"jsonrpc":"2.0","method":"nap","params":[60],"id":3}`)
	want := `{"jsonrpc":"2.0","error":{"code":-32002,"message":"Deadline exceeded: the call ran past its timeout of 30ms"},"id":3}`
	if got := string(d.RunHere(context.Background(), nil)); got != want {
		t.Errorf("RunHere past the deadline:\ngot  %s\nwant %s", got, want)
	}
	codes := map[parser.Code]uint64{}
	tab.Metrics(func(m *stats.Method) {
		if m.Method == "nap" {
			for _, c := range m.Handled {
				codes[c.Code] = c.Count
			}
		}
	})
	if codes[0] != 1 || codes[parser.CodeServerBusy] != 1 || codes[parser.CodeDeadline] != 1 {
		t.Errorf("nap's calls by code: %v, want one each of 0, -32000 and -32002", codes)
	}
}
