package engine

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/handler/textlog"
)

// BenchmarkConn_traffic measures the engine's own code per message — the
// protocol's framing, the dispatch of an inline method, the reply's
// framing and write — over a fake connection: no sockets, no syscalls,
// so that two versions of the engine compare on what they do themselves.
func BenchmarkConn_traffic(b *testing.B) {
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	echo4k := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 4096) + `"],"id":1}`
	httpReq := func(body string) string {
		return "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	for _, c := range []struct {
		name string
		ws   bool
		in   string
		n    int // messages per traffic
	}{
		{"http/single", false, httpReq(add), 1},
		{"http/pipelined16", false, strings.Repeat(httpReq(add), 16), 16},
		{"http/echo4k", false, httpReq(echo4k), 1},
		{"stream/single", false, add + "\n", 1},
		{"stream/pipelined16", false, strings.Repeat(add+"\n", 16), 16},
		{"ws/single", true, string(clientFrame(true, ws.OpText, []byte(add))), 1},
		{"ws/echo4k", true, string(clientFrame(true, ws.OpText, []byte(echo4k))), 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cs *conn
			var fc *fakeConn
			if c.ws {
				cs, fc = wsFakeConn(b)
			} else {
				cs, fc = newFakeConn(b)
			}
			in := []byte(c.in)
			buf := make([]byte, len(in))
			step := func() {
				copy(buf, in) // a WebSocket frame is unmasked in place
				fc.in, fc.out = buf, fc.out[:0]
				cs.traffic()
			}
			step()
			if len(fc.in) != 0 || !bytes.Contains(fc.out, []byte(`"id":1}`)) {
				b.Fatalf("out %.80q, left %d", fc.out, len(fc.in))
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			b.ResetTimer()
			for range b.N {
				step()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/msg")
		})
	}
}

// BenchmarkConn_access measures what the access features cost per
// message: the same requests (with Authorization, Origin and Host
// headers) to an engine without them ("off") and with a no-op
// interceptor, an API-key bearer check, CORS and a Host allow list
// ("on"). Streams carry no head: theirs is the interceptor alone.
func BenchmarkConn_access(b *testing.B) {
	const key = "0123456789abcdef0123456789abcdef"
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	httpReq := "POST / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: bench\r\nOrigin: https://app.example\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(add)) + "\r\n\r\n" + add
	for _, c := range []struct {
		name string
		in   string
		n    int
	}{
		{"http/single", httpReq, 1},
		{"http/pipelined16", strings.Repeat(httpReq, 16), 16},
		{"stream/pipelined16", strings.Repeat(add+"\n", 16), 16},
	} {
		for _, on := range []bool{false, true} {
			name := c.name + "/off"
			if on {
				name = c.name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				tab := handler.NewTable()
				demo.Register(tab)
				var opts []Option
				if on {
					tab.Use(func(ctx context.Context, call *handler.Call) error {
						call.Next(ctx)
						return nil
					})
					keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
					loopback, _ := auth.NewIPFilter([]string{"127.0.0.0/8"}, nil) // streams, which carry no key
					opts = []Option{WithCORS("https://app.example"), WithHosts("localhost"), WithAuthorize(auth.Any(keys.Authorize, loopback.Authorize))}
				}
				benchAdd42(b, tab, c.in, c.n, opts...)
			})
		}
	}
}

// benchAdd42 serves in — n messages calling add [40,2] — on a fake
// connection of an engine of tab, again and again, reporting ns/msg.
func benchAdd42(b *testing.B, tab *handler.Table, in string, n int, opts ...Option) {
	cs, fc := newFakeConnOf(b, tab, opts...)
	msg := []byte(in)
	step := func() {
		fc.in, fc.out = msg, fc.out[:0]
		cs.traffic()
	}
	step()
	if len(fc.in) != 0 || !bytes.Contains(fc.out, []byte(`"result":42,"id":1}`)) {
		b.Fatalf("out %.200q, left %d", fc.out, len(fc.in))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
}

// BenchmarkConn_production measures each feature of the production
// configuration — an API-key check, CORS, a rate limit, metrics, a 1 %
// sampled access log with a slow-call log, the call timeout — alone and
// all together ("prod"), against none of them ("bare"), on the same
// requests (they carry the Authorization and Origin fields whether or
// not the engine reads them). The access log formats its records with
// handler/textlog, as jetrpc serve's does. Under callgrind
// (bench/scripts/perfguard.sh's method) each case's instructions per
// message are exact.
func BenchmarkConn_production(b *testing.B) {
	const key = "0123456789abcdef0123456789abcdef"
	add := `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`
	httpReq := "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: jetrpc-bench\r\nAuthorization: Bearer " + key +
		"\r\nOrigin: https://app.example.com\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(add)) + "\r\n\r\n" + add
	keys := auth.NewKeys(map[string]handler.Grants{key: {"admin"}})
	logger := slog.New(textlog.New(io.Discard, nil))
	type feature struct {
		table  []handler.Option
		engine []Option
	}
	features := map[string]feature{
		"auth":    {engine: []Option{WithAuthorize(keys.Authorize)}},
		"cors":    {engine: []Option{WithCORS("https://app.example.com")}},
		"rate":    {table: []handler.Option{handler.WithRateLimit(ratelimit.Limits{Rate: 1e6, Burst: 1e6})}},
		"metrics": {table: []handler.Option{handler.WithMetrics(true)}},
		"log":     {table: []handler.Option{handler.WithAccessLog(handler.AccessLog{Logger: logger, Sample: 0.01, Slow: time.Second})}},
		"timeout": {table: []handler.Option{handler.WithCallTimeout(30 * time.Second)}},
	}
	for _, c := range []struct {
		name string
		in   string
		n    int
	}{
		{"http/single", httpReq, 1},
		{"http/pipelined16", strings.Repeat(httpReq, 16), 16},
		{"stream/pipelined16", strings.Repeat(add+"\n", 16), 16},
	} {
		for _, cfg := range []string{"bare", "auth", "cors", "rate", "metrics", "log", "timeout", "prod"} {
			if c.name == "stream/pipelined16" && (cfg == "auth" || cfg == "cors") {
				continue // a stream carries no head: API keys refuse it, CORS does not apply
			}
			b.Run(c.name+"/"+cfg, func(b *testing.B) {
				var topts []handler.Option
				var eopts []Option
				for name, f := range features {
					if cfg == name || cfg == "prod" && (name != "auth" || c.name != "stream/pipelined16") {
						topts, eopts = append(topts, f.table...), append(eopts, f.engine...)
					}
				}
				tab := handler.NewTable(topts...)
				demo.Register(tab)
				benchAdd42(b, tab, c.in, c.n, eopts...)
			})
		}
	}
}
