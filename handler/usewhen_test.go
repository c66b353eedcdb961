package handler_test

// Tests of filtered interceptors (UseWhen, Filter): an interceptor whose
// filter returns 0 is passed by, the others run in order and read what
// their filter returned (Filtered); a call no interceptor wants runs as
// without interceptors — a method's panic answered, faults answered,
// nothing allocated; filters see a batch element's batch.

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// wantIDs returns a Filter that wants the calls whose id is one of ids,
// returning the id's first digit, and logs each call it is asked about.
func wantIDs(log *callLog, name string, ids ...string) handler.Filter {
	return func(_ context.Context, c *handler.Call) uint8 {
		log.add("%s?%s %s", name, c.Method(), c.ID())
		if id := string(c.ID()); slices.Contains(ids, id) {
			return id[0] - '0'
		}
		return 0
	}
}

// marked is tracer (intercept_test.go) that also logs what its filter
// returned.
func marked(log *callLog, name string) handler.Interceptor {
	return func(ctx context.Context, c *handler.Call) error {
		log.add("%s>%s %s mark %d", name, c.Method(), c.ID(), c.Filtered())
		c.Next(ctx)
		log.add("%s<%s %s %d", name, c.Method(), c.ID(), c.Code())
		return nil
	}
}

func TestUseWhen_passesByUnwantedCalls(t *testing.T) {
	it := newICTable(t)
	var log callLog
	it.UseWhen(wantIDs(&log, "a", "1", "3"), marked(&log, "a"))
	it.Use(tracer(&log, "b"))
	it.UseWhen(wantIDs(&log, "c", "2", "3"), marked(&log, "c"))
	for _, c := range []struct {
		id   string
		want []string
	}{
		{"1", []string{"a?add 1", "c?add 1", "a>add 1 mark 1", "b>add 1", "b<add 1 0", "a<add 1 0"}},
		{"2", []string{"a?add 2", "c?add 2", "b>add 2", "c>add 2 mark 2", "c<add 2 0", "b<add 2 0"}},
		{"3", []string{"a?add 3", "c?add 3", "a>add 3 mark 3", "b>add 3", "c>add 3 mark 3", "c<add 3 0", "b<add 3 0", "a<add 3 0"}},
		{"4", []string{"a?add 4", "c?add 4", "b>add 4", "b<add 4 0"}},
	} {
		got := it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":`+c.id+`}`)
		if want := `{"jsonrpc":"2.0","result":3,"id":` + c.id + `}`; got != want {
			t.Errorf("id %s: reply %s", c.id, got)
		}
		if evs := log.take(); !slices.Equal(evs, c.want) {
			t.Errorf("id %s: events\n got %q\nwant %q", c.id, evs, c.want)
		}
	}
}

// TestUseWhen_noneWantsTheCall: with every interceptor filtered and none
// wanting a call, the call runs as without interceptors: its reply, a
// method's panic answered -32603, faults, batches and a blocking method
// on a worker; its interceptors never run.
func TestUseWhen_noneWantsTheCall(t *testing.T) {
	it := newICTable(t)
	var log callLog
	it.UseWhen(wantIDs(&log, "a"), marked(&log, "a"))
	it.UseWhen(wantIDs(&log, "b"), marked(&log, "b"))
	for _, c := range []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, `{"jsonrpc":"2.0","result":3,"id":1}`},
		{`{"jsonrpc":"2.0","method":"slowadd","params":[1,2],"id":1}`, `{"jsonrpc":"2.0","result":3,"id":1}`},
		{`{"jsonrpc":"2.0","method":"boom","id":1}`, `"code":-32603`},
		{`{"jsonrpc":"2.0","method":"apperr","id":1}`, `"code":7`},
		{`{"jsonrpc":"2.0","method":"nope","id":1}`, `"code":-32601`},
		{`{"jsonrpc":"2.0","method":`, `"code":-32700`},
		{`[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"slowadd","params":[3,4],"id":2}]`, `"result":7,"id":2}]`},
	} {
		if got := it.call(t, c.msg); !strings.Contains(got, c.want) {
			t.Errorf("%s: reply %s, want %s", c.msg, got, c.want)
		}
		for _, ev := range log.take() {
			if !strings.Contains(ev, "?") {
				t.Errorf("%s: an interceptor ran: %s", c.msg, ev)
			}
		}
	}
}

type nopHook struct{}

func (nopHook) BeginBatch(context.Context, *handler.Batch) {}
func (nopHook) EndBatch(context.Context, *handler.Batch)   {}

// TestUseWhen_filterSeesTheBatch: a filter sees a batch element's batch
// (Call.Batch), and a single request's none.
func TestUseWhen_filterSeesTheBatch(t *testing.T) {
	it := newICTable(t)
	it.UseBatch(nopHook{}) // a table without batch hooks gives no Batch
	var inBatch []bool
	it.UseWhen(func(_ context.Context, c *handler.Call) uint8 {
		inBatch = append(inBatch, c.Batch() != nil)
		return 0
	}, func(context.Context, *handler.Call) error { t.Error("ran"); return nil })
	it.call(t, `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)
	it.call(t, `[{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}]`)
	if !slices.Equal(inBatch, []bool{false, true}) {
		t.Errorf("in a batch: %v", inBatch)
	}
}

func TestUseWhen_nilFilterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	newICTable(t).UseWhen(nil, func(context.Context, *handler.Call) error { return nil })
}
