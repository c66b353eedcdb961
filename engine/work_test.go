package engine_test

// Tests of running messages (work.go) over loopback sockets: inline and
// on workers, the copy a worker owns, and replies back from workers.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// TestWork_peekLifetime: a message run on a worker is copied first, so
// the loop reusing its read buffer for other connections does not change
// it (gnet's Peek slices die when OnTraffic returns).
//
// One of gnet's traps listed in ../shared/research/gnet-sonic.md.
func TestWork_peekLifetime(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "slowecho", func(_ context.Context, p handler.Raw) (handler.Raw, error) {
		time.Sleep(50 * time.Millisecond)
		return p, nil
	})
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab, engine.WithLoops(1))
	a := dialStream(t, "tcp", tcp)
	payload := `["` + strings.Repeat("A", 30000) + `"]`
	a.send(t, []byte(`{"jsonrpc":"2.0","method":"slowecho","params":`+payload+`,"id":1}`))
	// Meanwhile other connections of the same loop fill its read buffer.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := dialStream(t, "tcp", tcp)
			for range 20 {
				b.send(t, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"`+strings.Repeat("B", 3000)+`"}`))
				b.line(t)
			}
		}()
	}
	wg.Wait()
	if got := string(a.line(t)); got != `{"jsonrpc":"2.0","result":`+payload+`,"id":1}`+"\n" {
		t.Fatalf("the worker's message changed under it: %.80s...", got)
	}
}

// TestWork_workerReplies: replies of blocking methods come back with
// one Wake per burst, not one AsyncWrite per reply (counted by
// TestMailbox_wakeOncePerBurst, fake_test.go). Shown on the wire:
// 200 pipelined blocking requests on one stream are all answered.
//
// One of gnet's traps listed in ../shared/research/gnet-sonic.md.
func TestWork_workerReplies(t *testing.T) {
	_, tcp, _ := startEngine(t, nil)
	s := dialStream(t, "tcp", tcp)
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"sleep","params":[0],"id":%d}`+"\n", i)
	}
	_, _ = s.c.Write([]byte(b.String()))
	seen := map[string]bool{}
	for range 200 {
		seen[string(s.line(t))] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d distinct replies", len(seen))
	}
}

// TestWork_blockingDoesNotHoldInline: while a blocking method runs on one
// connection, an inline request on another connection — and a later
// inline request on the same stream — is answered first.
func TestWork_blockingDoesNotHoldInline(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	release := make(chan struct{})
	started := make(chan struct{})
	handler.Register(tab, "block", func(context.Context, struct{}) (string, error) {
		close(started)
		<-release
		return "late", nil
	})
	handler.Register(tab, "now", func(context.Context, struct{}) (string, error) { return "now", nil }, handler.Inline())
	_, tcp, _ := startEngine(t, tab)
	a := dialStream(t, "tcp", tcp)
	a.send(t, []byte(`{"jsonrpc":"2.0","method":"block","id":1}`))
	<-started
	b := dialStream(t, "tcp", tcp)
	b.send(t, []byte(`{"jsonrpc":"2.0","method":"now","id":2}`))
	if got := string(b.line(t)); !strings.Contains(got, `"now"`) {
		t.Fatalf("other connection: %s", got)
	}
	a.send(t, []byte(`{"jsonrpc":"2.0","method":"now","id":3}`))
	if got := string(a.line(t)); !strings.Contains(got, `"id":3`) {
		t.Fatalf("same stream: the inline reply did not come first: %s", got)
	}
	close(release)
	if got := string(a.line(t)); !strings.Contains(got, `"late"`) {
		t.Fatalf("blocking reply: %s", got)
	}
}
