package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// startQuiet starts an engine on a free loopback port, with opts, and
// returns it and its stop.
func startQuiet(opts ...engine.Option) (*engine.Engine, func()) {
	opts = append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLoops(1), engine.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	e := engine.New(handler.NewTable(), opts...)
	if err := e.Start(); err != nil {
		panic(err)
	}
	return e, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}
}

// printHealth prints the answer to GET /health.
func printHealth(e *engine.Engine) {
	resp, err := http.Get("http://" + e.Addrs()[0].String() + "/health")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
}

// A readiness check: the health check answers 503 with its error while
// it fails. It runs on the event loop at every health check: it reads
// the last answer of a probe that runs apart.
func ExampleWithReady() {
	var lastProbe atomic.Pointer[error] // set by a probe on its own timer
	e, stop := startQuiet(engine.WithReady(func() error {
		if err := lastProbe.Load(); err != nil {
			return *err
		}
		return nil
	}))
	defer stop()
	printHealth(e)
	err := errors.New("database unreachable")
	lastProbe.Store(&err)
	printHealth(e)
	// Output:
	// 200 {"status":"ok"}
	// 503 {"status":"not_ready","reason":"database unreachable"}
}

// The application says it is not ready — while it loads what it serves —
// and ready again; calls are served all the while.
func ExampleEngine_SetNotReady() {
	e, stop := startQuiet()
	defer stop()
	e.SetNotReady("loading snapshot")
	printHealth(e)
	e.SetReady()
	printHealth(e)
	// Output:
	// 503 {"status":"not_ready","reason":"loading snapshot"}
	// 200 {"status":"ok"}
}

// SetReady undoes SetNotReady, not a drain: a drain is for good.
func ExampleEngine_SetReady() {
	e, stop := startQuiet()
	defer stop()
	e.SetNotReady("")
	fmt.Println(e.Ready())
	e.SetReady()
	fmt.Println(e.Ready())
	e.Drain()
	e.SetReady()
	printHealth(e)
	// Output:
	// false
	// true
	// 503 {"status":"draining"}
}

// Undrain puts a drained engine back: a rolling deploy called off before
// its Stop.
func ExampleEngine_Undrain() {
	e, stop := startQuiet()
	defer stop()
	e.Drain()
	printHealth(e)
	fmt.Println(e.Undrain())
	printHealth(e)
	// Output:
	// 503 {"status":"draining"}
	// true
	// 200 {"status":"ok"}
}
