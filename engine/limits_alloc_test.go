//go:build !race

package engine

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/pool"
)

// TestConn_zeroAllocsWithLimits: with the fair-use limits on — a call
// timeout, rate limits per identity and per connection, a method cost,
// a concurrency bound and the reply caps — a request to an inline
// method, a pipelined burst of them on a stream, a batch and a timed
// call on a worker, whose deadline the loop watches, allocate nothing.
func TestConn_zeroAllocsWithLimits(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	elements := pool.NewWorkers(2, 16)
	defer elements.Close()
	tab := handler.NewTable(handler.WithWorkers(elements), handler.WithCallTimeout(30*time.Second),
		handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9}))
	demo.Register(tab)
	add := func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }
	handler.Register(tab, "costly_add", add, handler.Inline(), handler.Cost(5), handler.MaxConcurrent(4))
	handler.Register(tab, "slowadd", add)
	assertNoAllocsOnConns(t, tab, []allocCase{
		{"http inline", postOf(add42), `{"jsonrpc":"2.0","result":42,"id":1}`, false},
		{"http costly", postOf(`{"jsonrpc":"2.0","method":"costly_add","params":[40,2],"id":1}`), `"result":42`, false},
		{"http batch", postOf(`[` + add42 + `,{"jsonrpc":"2.0","method":"costly_add","params":[1,2],"id":2}]`), `"result":3,"id":2}]`, false},
		{"http timed on a worker", postOf(`{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}`), `"result":42`, true},
	})
	assertNoAllocsOnConns(t, tab, []allocCase{
		{"stream timed on a worker", `{"jsonrpc":"2.0","method":"slowadd","params":[40,2],"id":1}` + "\n", `"result":42`, true},
	})
}

// TestConn_zeroAllocsBehindTrustedProxy: with the connection from a
// trusted proxy and a per-IP rate limit, each call's client is read from
// X-Forwarded-For (the identity looked up per call, as the proxy's
// connection carries many clients), and a request, inline or on a
// worker, still allocates nothing; the client is the one forwarded.
func TestConn_zeroAllocsBehindTrustedProxy(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	proxies, err := httprules.ParseProxies("127.0.0.1") // fakeRemote
	if err != nil {
		t.Fatal(err)
	}
	forwarded, other := handler.Raw(`"forwarded"`), handler.Raw(`"other"`)
	tab := handler.NewTable(handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9}))
	handler.RegisterNoParams(tab, "client", func(ctx context.Context) (handler.Raw, error) {
		if ip := handler.MetaFrom(ctx).ClientIP(); ip == netip.MustParseAddr("198.51.100.7") {
			return forwarded, nil
		}
		return other, nil
	}, handler.Inline())
	handler.RegisterNoParams(tab, "client_worker", func(ctx context.Context) (handler.Raw, error) {
		if ip := handler.MetaFrom(ctx).ClientIP(); ip == netip.MustParseAddr("198.51.100.7") {
			return forwarded, nil
		}
		return other, nil
	})
	cs, fc := newFakeConnOf(t, tab, WithTrustedProxies(proxies))
	cs.e.workers = pool.NewWorkers(1, 16)
	defer cs.e.workers.Close()
	post := func(body string) string {
		return "POST / HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 203.0.113.1, 198.51.100.7\r\nContent-Type: application/json\r\nContent-Length: " +
			itoa(len(body)) + "\r\n\r\n" + body
	}
	assertRequestNoAllocs(t, cs, fc, "inline, forwarded", post(`{"jsonrpc":"2.0","method":"client","id":1}`), false, `"result":"forwarded"`)
	assertRequestNoAllocs(t, cs, fc, "worker, forwarded", post(`{"jsonrpc":"2.0","method":"client_worker","id":1}`), true, `"result":"forwarded"`)
}
