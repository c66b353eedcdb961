package ratelimit_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// addr is a caller's address (handler.Meta is one).
type addr netip.Addr

func (a *addr) ClientIP() netip.Addr { return netip.Addr(*a) }

// A Limiter allows a client Burst calls at once, then Rate a second; a
// connection's Quota caches its identity. handler.Table does this for
// every call when Options.RateLimit is set.
func ExampleLimiter_Allow() {
	lim := ratelimit.New(ratelimit.Limits{Rate: 1, Burst: 3})
	a := addr(netip.MustParseAddr("192.0.2.1"))
	c := ratelimit.Caller{Quota: lim.NewQuota(), Addr: &a}
	for i := range 4 {
		fmt.Println(i, lim.Allow(context.Background(), c, 1, false))
	}
	other := ratelimit.Caller{Principal: "alice"} // another identity, another bucket
	fmt.Println("alice", lim.Allow(context.Background(), other, 1, false))
	refused, dropped := lim.Refusals()
	fmt.Println("refused", refused, "dropped", dropped)
	// Output:
	// 0 true
	// 1 true
	// 2 true
	// 3 false
	// alice true
	// refused 1 dropped 0
}
