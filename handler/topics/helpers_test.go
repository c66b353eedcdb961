package topics

// Helpers of the white-box tests: a discarding logger, a wait for a
// condition, the file:line of a table case, whether the race detector
// is on, and live subscriptions made through a table.

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/internal/testkit"
)

// rvLogger returns a logger that discards everything.
func rvLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// rvWait waits up to 10 s for cond.
func rvWait(t *testing.T, cond func() bool) { t.Helper(); testkit.Wait(t, cond) }

// rlHere returns the file:line of its caller, for table cases.
func rlHere() string { return testkit.CallerLine(2) }

// mxRaceEnabled reports whether the test binary runs with the race
// detector.
func mxRaceEnabled() bool { return testkit.RaceEnabled() }

// tpSubscriptions returns n live subscriptions of the namespace "topic"
// (their notifications are topic_subscription), made by topic_subscribe
// calls on a table of their own; the i-th sends to conn(i), which must
// be comparable and able to push.
func tpSubscriptions(t testing.TB, n int, conn func(i int) handler.Conn) []*handler.Subscription {
	t.Helper()
	tab := handler.NewTable(handler.WithLogger(rvLogger()), handler.WithMaxSubscriptions(n, n))
	subs := make([]*handler.Subscription, 0, n)
	handler.RegisterSubscription(tab, "topic", func(_ context.Context, _ [1]string, s *handler.Subscription) error {
		subs = append(subs, s)
		return nil
	}, handler.Inline())
	for i := range n {
		c := conn(i)
		reply := string(tab.Dispatch(handler.ContextWithConn(c.Context(), c), nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["t"],"id":1}`)))
		if !strings.Contains(reply, `"result":"0x`) {
			t.Fatalf("subscription %d: %s", i, reply)
		}
	}
	return subs
}
