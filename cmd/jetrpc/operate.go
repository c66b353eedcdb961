package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/prometheus/client_golang/prometheus"
)

// metricsFlag splits --metrics into an address of a listener of its own
// or a path on the JSON-RPC listeners; both empty when it is off.
func metricsFlag(v string) (addr, path string, err error) {
	switch {
	case v == "":
		return "", "", nil
	case strings.HasPrefix(v, "/"):
		if strings.ContainsAny(v, "?# ") {
			return "", "", errors.New("a path has no query, fragment or space: " + v)
		}
		if v == httprules.DefaultHealthPath {
			return "", "", errors.New(v + " is the health check's path")
		}
		return "", v, nil
	case strings.Contains(v, "://"):
		return "", "", errors.New("want host:port (a listener of its own) or /path (on the JSON-RPC listeners), not a URL: " + v)
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return "", "", errors.New("want host:port (127.0.0.1:9100, say) or /path (/metrics on the JSON-RPC listeners): " + v)
	}
	return v, "", nil
}

// accessLogOf returns the access log of --access-log,
// --access-log-sample and --slow-call.
func (c *serveFlags) accessLogOf(logger *slog.Logger) handler.AccessLog {
	a := handler.AccessLog{Logger: logger, Slow: c.table.AccessLog.Slow}
	if c.accessLog {
		a.Sample = c.logSample
	}
	return a
}

// metricsServer serves the metrics on a listener of their own.
type metricsServer struct {
	addr net.Addr
	srv  *http.Server
}

// startMetricsServer listens on addr and serves g's exposition at
// /metrics (and a pointer to it at /).
func startMetricsServer(addr string, g prometheus.Gatherer, logger *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(g))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("jetrpc: the metrics are at /metrics\n"))
	})
	s := &metricsServer{addr: ln.Addr(), srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("jetrpc: metrics listener failed", "err", err)
		}
	}()
	return s, nil
}

// stop closes the metrics listener, letting a scrape in progress finish
// for a second.
func (s *metricsServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}
