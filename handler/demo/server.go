package demo

// NOTE: the bundled server as one piece: jetrpc serve, jetrpc openrpc
// and jetrpc bench's in-process server all register RegisterServer's
// methods, and the first two describe them with package demodoc's
// options, so that the server one runs, the one a load test starts and
// the document printed are the same.

import (
	"context"
	"runtime"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// RegisterServer registers the methods of the bundled server on t:
// Register's, the topic methods over node's topics (RegisterTopics), and
// admin_stats (RegisterAdmin), whose connection count is conns (nil:
// none known, 0).
func RegisterServer(t *handler.Table, node *topics.Topics, conns func() int) {
	Register(t)
	RegisterTopics(t, node)
	RegisterAdmin(t, conns)
}

// AdminStats is the result of admin_stats: the server's connections,
// goroutines and uptime, and who asked.
type AdminStats struct {
	Connections   int     `json:"connections"`
	Goroutines    int     `json:"goroutines"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	Caller        struct {
		Transport string `json:"transport"`
		Remote    string `json:"remote"`
		Client    string `json:"client,omitempty"` // through a trusted proxy: the client it names
	} `json:"caller"`
}

// RegisterAdmin registers admin_stats on t, the demo of a method that
// needs a grant ("admin"): AdminStats, with the connection count conns
// gives (nil: 0). Inline; it costs 10 rate-limit units.
func RegisterAdmin(t *handler.Table, conns func() int) {
	start := time.Now()
	handler.RegisterNoParams(t, "admin_stats", func(ctx context.Context) (AdminStats, error) {
		var s AdminStats
		if conns != nil {
			s.Connections = conns()
		}
		s.Goroutines = runtime.NumGoroutine()
		s.UptimeSeconds = time.Since(start).Seconds()
		m := handler.MetaFrom(ctx)
		s.Caller.Transport = m.Transport.String()
		if m.Remote != nil {
			s.Caller.Remote = m.Remote.String()
		}
		if ip := m.ClientIP(); m.Proxies != nil && ip.IsValid() {
			s.Caller.Client = ip.String()
		}
		return s, nil
	}, handler.Inline(), handler.Require("admin"), handler.Cost(10), handler.Description("server statistics; needs the admin grant"))
}
