package engine_test

// Tests of Run and Stop (engine.go).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// TestRun_cleanStopIsNil: Run returns nil when its context ends and the
// stop is clean, so that the documented main — if err := e.Run(ctx); err
// != nil { log.Fatal(err) } — exits 0 on SIGTERM (log.Fatal(e.Run(ctx))
// exited 1 printing <nil>).
func TestRun_cleanStopIsNil(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for e.Addrs() == nil {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after a clean stop: %v", err)
	}
}

// TestRun_stopTimeout: Options.StopTimeout bounds how long Run waits for
// the requests in flight (it was a fixed 10 s); past it Run returns the
// deadline's error.
func TestRun_stopTimeout(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 1)
	handler.Register(tab, "stuck", func(context.Context, struct{}) (int, error) {
		started <- struct{}{}
		<-release // ignores its context
		return 1, nil
	})
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet()),
		engine.WithStopTimeout(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for e.Addrs() == nil {
		time.Sleep(time.Millisecond)
	}
	s := dialStream(t, "tcp", e.Addrs()[0].String())
	s.send(t, []byte(`{"jsonrpc":"2.0","method":"stuck","id":1}`+"\n"))
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run with a stuck request: %v, want the deadline", err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("Run did not return within 8 s with a stop timeout of 100 ms")
	}
}
