//go:build !race

package engine

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/panjf2000/gnet/v2"
)

const raceEnabled = false

// TestBudget_zeroAllocs: under budget pressure, a request on a connection
// within its share is served without allocating, and one over its share
// is held back without allocating either.
func TestBudget_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	req := []byte(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}` + "\n")
	cs, fc := newFakeConnOf(t, demoTable(), WithMaxOutputBudget(64<<20), WithLogger(slog.New(slog.DiscardHandler)))
	cs.e.budget.used.Store(60 << 20) // under pressure (past 48 MiB)
	step := func() {
		fc.in = req
		fc.out = fc.out[:0]
		if cs.traffic() != gnet.None {
			t.Fatal("connection closed")
		}
	}
	step()
	if !bytes.Contains(fc.out, []byte(`"result":42`)) || cs.paused {
		t.Fatalf("out %q, paused %v", fc.out, cs.paused)
	}
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("within its share: %v allocs per message, want 0", got)
	}
	cs.mail.queued.Store(60 << 20) // as if it held 60 MiB of pushes: over its share
	step()
	if !cs.paused || cs.held.Load() != 60<<20 {
		t.Fatalf("over its share: paused %v, held %d", cs.paused, cs.held.Load())
	}
	fc.out = fc.out[:0]
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("held back: %v allocs per call, want 0", got)
	}
	if len(fc.out) != 0 {
		t.Errorf("a held-back connection was served: %q", fc.out)
	}
	cs.mail.queued.Store(0)
	cs.release()
}
