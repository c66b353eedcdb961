package engine

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
)

// BenchmarkConn_limits measures what the fair-use limits cost per
// message when they do not trigger: the same requests to a table
// without them ("off"), with a call timeout, with a rate limit per
// identity far above the load, with both ("on"), and with a rate limit
// per connection too ("on+conn").
func BenchmarkConn_limits(b *testing.B) {
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	httpReq := "POST / HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(add)) + "\r\n\r\n" + add
	for _, c := range []struct {
		name string
		in   string
		n    int
	}{
		{"http/single", httpReq, 1},
		{"stream/pipelined16", strings.Repeat(add+"\n", 16), 16},
	} {
		for _, cfg := range []struct {
			name string
			opts []handler.Option
		}{
			{"off", nil},
			{"timeout", []handler.Option{handler.WithCallTimeout(30 * time.Second)}},
			{"rate", []handler.Option{handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9})}},
			{"on", []handler.Option{handler.WithCallTimeout(30 * time.Second), handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9})}},
			{"on+conn", []handler.Option{handler.WithCallTimeout(30 * time.Second),
				handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9})}},
			{"metrics", []handler.Option{handler.WithMetrics(true)}},
			{"metrics+log", []handler.Option{handler.WithMetrics(true), handler.WithAccessLog(handler.AccessLog{Logger: slog.New(slog.DiscardHandler), Slow: time.Hour})}},
		} {
			b.Run(c.name+"/"+cfg.name, func(b *testing.B) {
				tab := handler.NewTable(cfg.opts...)
				demo.Register(tab)
				benchAdd42(b, tab, c.in, c.n)
			})
		}
	}
}

// BenchmarkConn_trustedProxy measures what naming the client behind a
// trusted proxy costs per HTTP call with a rate limit per IP: the same
// request, with an X-Forwarded-For, from a proxy not trusted ("off": the
// proxy is the client, cached per connection) and trusted ("on": the
// client is read from the field at each call).
func BenchmarkConn_trustedProxy(b *testing.B) {
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	req := "POST / HTTP/1.1\r\nHost: localhost:8080\r\nX-Forwarded-For: 203.0.113.1, 198.51.100.7\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(add)) + "\r\n\r\n" + add
	trusted, _ := httprules.ParseProxies("127.0.0.1") // the fake connection's remote
	for _, c := range []struct {
		name    string
		proxies httprules.Proxies
	}{{"off", nil}, {"on", trusted}} {
		b.Run(c.name, func(b *testing.B) {
			tab := handler.NewTable(handler.WithRateLimit(ratelimit.Limits{Rate: 1e9, Burst: 1e9}))
			demo.Register(tab)
			benchAdd42(b, tab, req, 1, WithTrustedProxies(c.proxies))
		})
	}
}
