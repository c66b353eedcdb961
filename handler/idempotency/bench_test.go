package idempotency_test

import (
	"context"
	"testing"

	"github.com/jetrpc/jetrpc/handler/idempotency"
)

// BenchmarkStore is an HTTP call of pay (blocking, run in place by
// Dispatch) on newPayments' table without a Store, behind a Store with calls that
// carry no key, and a retry the Store answers: the cost of the feature
// beside the feature off, in one run.
func BenchmarkStore(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		p := newPaymentsTable(b)
		benchCalls(b, func(ctx context.Context) string { return p.call(ctx, pay1) }, caller("ann", ""))
	})
	for _, c := range []struct{ name, key string }{{"no-key", ""}, {"retry", "k1"}} {
		b.Run(c.name, func(b *testing.B) {
			p := newPayments(b, idempotency.Options{})
			ctx := caller("ann", c.key)
			p.call(ctx, pay1) // a key's first call, kept
			benchCalls(b, func(ctx context.Context) string { return p.call(ctx, pay1) }, ctx)
		})
	}
}

func benchCalls(b *testing.B, call func(context.Context) string, ctx context.Context) {
	b.ReportAllocs()
	for b.Loop() {
		if call(ctx) == "" {
			b.Fatal("no reply")
		}
	}
}
