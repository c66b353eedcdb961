package main

// NOTE: the in-process server jetrpc bench measures when it is given no
// target: the bundled server (jetrpc serve's methods) on an engine on a
// free loopback port, quiet, stopped by the func it returns.

import (
	"context"
	"log/slog"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// inProcessServer starts the bundled server (jetrpc serve's methods,
// demo.RegisterServer) on a free port. It compresses what cfg asks for:
// its HTTP replies in cfg.Compression's codings, and with
// cfg.WSCompression its WebSocket messages, the target then a ws:// URL.
func inProcessServer(cfg *bench.Config) (stop func(), target string, err error) {
	scheme := "http"
	if cfg.WSCompression {
		scheme = "ws"
	}
	return inProcess(scheme, registerBundled, engine.WithCompression(cfg.Compression...), engine.WithWSCompression(cfg.WSCompression))
}

// inProcessTopicServer starts the bundled server on a free port and
// returns its WebSocket URL, for its topics; wsDeflate turns on its
// WebSocket compression.
func inProcessTopicServer(wsDeflate bool) (stop func(), target string, err error) {
	return inProcess("ws", registerBundled, engine.WithWSCompression(wsDeflate))
}

// registerBundled registers the bundled server's methods, jetrpc
// serve's, on tab.
func registerBundled(tab *handler.Table, log *slog.Logger) {
	demo.RegisterServer(tab, topics.New(nil, log), nil)
}

// inProcess starts an engine on a free port over a table that register
// fills, with opts, and returns its URL with scheme.
func inProcess(scheme string, register func(*handler.Table, *slog.Logger), opts ...engine.Option) (stop func(), target string, err error) {
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	register(tab, quiet)
	e := engine.New(tab, append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet)}, opts...)...)
	if err := e.Start(); err != nil {
		return nil, "", err
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}
	return stop, scheme + "://" + e.Addrs()[0].String() + "/", nil
}
