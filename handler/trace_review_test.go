package handler

// Tests of the tracing mechanisms' interplay with dispatch paths found
// wrong in review: a given-up batch element's span, an element answered
// too large, and Filtered's answer for an interceptor added with Use.

import (
	"context"
	"testing"
	"time"
)

// TestSetSpan_lateBatchElementNoRace: a batch element given up at its
// deadline is noted by the caller while its worker still runs it; the
// caller must not read what the worker writes of the element (its span)
// — under -race this reports a data race when it does.
func TestSetSpan_lateBatchElementNoRace(t *testing.T) {
	tab := mxTable()
	Register(tab, "slow", func(_ context.Context, p [1]int) (int, error) {
		time.Sleep(60 * time.Millisecond) // no synchronisation with the caller
		return p[0], nil
	}, Timeout(10*time.Millisecond))
	tab.Use(trSpanner)
	out := tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "slow", "[1]"), mxReq(2, "ok", ""))))
	if got := mxCodes(t, out); got[-32002] != 1 || got[0] != 1 {
		t.Fatalf("batch reply %s", out)
	}
	time.Sleep(150 * time.Millisecond) // the worker finishes the late call
	if ex := trExemplars(t, tab, "slow"); trHas(ex, 1) {
		// The element was answered -32002 by its caller, before the call
		// named its span: no exemplar may link to it.
		t.Errorf("a given-up element left the exemplar %v", ex)
	}
}

// TestSetSpan_tooLargeElementHasNoSpan: an element answered -32008
// without running (the batch's replies passed MaxBatchResponseSize)
// ran in no span: its method gets no exemplar of the element before it.
func TestSetSpan_tooLargeElementHasNoSpan(t *testing.T) {
	tab := mxTable(WithMaxResponseSize(0, 10))
	tab.Use(trSpanner)
	out := tab.Dispatch(context.Background(), nil, []byte(mxBatch(mxReq(1, "add", "[1,2]"), mxReq(2, "ok", ""))))
	if got := mxCodes(t, out); got[0] != 1 || got[-32008] != 1 {
		t.Fatalf("batch reply %s", out)
	}
	if ex := trExemplars(t, tab, "ok"); len(ex) != 0 {
		t.Errorf("the element answered too large has exemplars %v (the span of the element before it)", ex)
	}
}

// TestUseWhen_filteredIsZeroForUse: Filtered is 0 for an interceptor
// added with Use, even when the pooled state last ran a call of a table
// whose filter returned something else.
func TestUseWhen_filteredIsZeroForUse(t *testing.T) {
	ctx := context.Background()
	filtered := NewTable(WithLogger(mxQuiet()))
	RegisterNoParams(filtered, "ok", func(context.Context) (int, error) { return 1, nil }, Inline())
	filtered.UseWhen(func(context.Context, *Call) uint8 { return 7 }, func(ctx context.Context, c *Call) error { return nil })
	plain := NewTable(WithLogger(mxQuiet()))
	RegisterNoParams(plain, "ok", func(context.Context) (int, error) { return 1, nil }, Inline())
	var got []uint8
	plain.Use(func(ctx context.Context, c *Call) error {
		got = append(got, c.Filtered())
		return nil
	})
	for range 20 {
		filtered.Dispatch(ctx, nil, []byte(mxReq(1, "ok", "")))
		plain.Dispatch(ctx, nil, []byte(mxReq(1, "ok", "")))
	}
	for _, v := range got {
		if v != 0 {
			t.Fatalf("Filtered in an interceptor added with Use: %v, want all 0", got)
		}
	}
}

// TestUseWhen_filterPanicInBusyFailsTheMessage: a Filter that panics
// fails the message -32603, as its doc says — also when the message is
// answered busy (Pending.Busy runs a batch's faults through the chain),
// rather than panicking out of Busy into its transport.
func TestUseWhen_filterPanicInBusyFailsTheMessage(t *testing.T) {
	ctx := context.Background()
	tab := mxTable()
	tab.UseWhen(func(_ context.Context, c *Call) uint8 {
		if c.Fault() != 0 {
			panic("filter")
		}
		return 0
	}, func(ctx context.Context, c *Call) error { return nil })
	var later Pending
	if _, oc := tab.DispatchInline(ctx, nil, []byte(mxBatch(mxReq(1, "work", "[1]"), mxReq(2, "nope", ""))), &later); oc != Deferred {
		t.Fatalf("outcome %v, want Deferred", oc)
	}
	p := later.Take()
	var out []byte
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("Busy panicked: %v", v)
			}
		}()
		out = p.Busy(ctx, nil)
	}()
	if want := `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}`; string(out) != want {
		t.Errorf("reply %s, want the message failed: %s", out, want)
	}
}
