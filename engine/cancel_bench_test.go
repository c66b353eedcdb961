package engine

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// BenchmarkCancel_offloaded: a call to a blocking method that looks at
// its context, on a worker, through a stream connection's serve path,
// with cancel notifications off and on (its own context, listed and
// unlisted).
func BenchmarkCancel_offloaded(b *testing.B) { runCancelOffloaded(b) }

// TestBenchmarkCancel_offloaded runs the benchmark's body as a test.
func TestBenchmarkCancel_offloaded(t *testing.T) {
	testing.Benchmark(func(b *testing.B) { runCancelOffloaded(b) })
}

func runCancelOffloaded(b *testing.B) {
	in := []byte(`{"jsonrpc":"2.0","method":"look","params":[0,0],"id":1}` + "\n")
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var opts []handler.Option
			if on {
				opts = append(opts, handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
			}
			tab := handler.NewTable(opts...)
			handler.Register(tab, "look", look)
			cs, fc := newFakeConnOf(b, tab)
			cs.e.workers = pool.NewWorkers(1, 16)
			defer cs.e.workers.Close()
			step := func() {
				fc.in, fc.out = in, fc.out[:0]
				cs.traffic() // queues it on the worker
				for !cs.mail.waking.Load() {
					runtime.Gosched()
				}
				cs.traffic() // writes the reply
				if !bytes.Contains(fc.out, []byte(`"result":0,"id":1}`)) {
					b.Fatalf("out %q", fc.out)
				}
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				step()
			}
		})
	}
}

// look is a blocking method that looks at its context and allocates
// nothing itself: a + b.
func look(ctx context.Context, p [2]int) (int, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	default:
	}
	return p[0] + p[1], nil
}
