//go:build !race

package textlog_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/textlog"
)

// TestHandler_noAllocation: Handle of a record the fast path covers — 8
// flat attributes, 3 of them past the record's inline ones, through a
// WithAttrs prefix, at a custom level — allocates nothing.
func TestHandler_noAllocation(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	h := textlog.New(io.Discard, nil).WithAttrs([]slog.Attr{slog.String("service", "jetrpc")})
	now := time.Now()
	r := rec(now, slog.LevelWarn+1, "jetrpc: slow call",
		slog.String("method", "add"), slog.String("id", `"a b"`), slog.Int("code", -32601),
		slog.Duration("duration", 1500*time.Microsecond), slog.String("transport", "http"),
		slog.String("remote", "127.0.0.1:5555"), slog.Bool("notification", false), slog.Time("at", now))
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		if err := h.Handle(ctx, r); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Handle allocates %v times", n)
	}
}
