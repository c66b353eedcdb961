package engine

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// BenchmarkConn_limits measures what the fair-use limits cost per
// message when they do not trigger: the same requests to a table
// without them ("off") and with a call timeout and rate limits per
// identity and per connection far above the load ("on").
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
		for _, on := range []bool{false, true} {
			name := c.name + "/off"
			if on {
				name = c.name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				var opts []handler.Option
				if on {
					opts = []handler.Option{handler.WithCallTimeout(30 * time.Second),
						handler.WithRateLimit(handler.RateLimit{Rate: 1e9, Burst: 1e9, ConnRate: 1e9, ConnBurst: 1e9})}
				}
				tab := handler.NewTable(opts...)
				demo.Register(tab)
				cs, fc := newFakeConnOf(b, tab)
				in := []byte(c.in)
				step := func() {
					fc.in, fc.out = in, fc.out[:0]
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
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/msg")
			})
		}
	}
}
