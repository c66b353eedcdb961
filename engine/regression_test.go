package engine_test

// Regressions found by the review of the WebSocket and push code (stop 7):
// each test failed before its fix.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// blockingResult is a notification result whose encoding (done under the
// subscription's lock) waits for release.
type blockingResult struct {
	inside  chan struct{}
	release chan struct{}
}

func (b blockingResult) AppendJSON(dst []byte) ([]byte, error) {
	close(b.inside)
	<-b.release
	return append(dst, `"late"`...), nil
}

// TestRegression_notificationAfterLaterReply: a notification queued while
// an unsubscribe ran went out after the reply to a later request of the
// same read (pushes were only written at the start of the next pass).
func TestRegression_notificationAfterLaterReply(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	demo.Register(tab)
	subs := make(chan *handler.Subscription, 1)
	handler.RegisterSubscription(tab, "t", func(_ context.Context, _ []int, s *handler.Subscription) error {
		subs <- s
		return nil
	})
	_, tcp, _ := startEngine(t, tab)
	c, r := rawWS(t, tcp)
	if _, err := c.Write(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"t_subscribe","params":[],"id":1}`), true)); err != nil {
		t.Fatal(err)
	}
	_, p, err := readFrame(r, c)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Result string }
	if err := json.Unmarshal(p, &rep); err != nil {
		t.Fatal(err)
	}
	sub := <-subs
	b := blockingResult{make(chan struct{}), make(chan struct{})}
	go func() { _ = sub.Notify(b) }()
	<-b.inside // the notifier holds the subscription's lock
	// The unsubscribe, then a later request, in one write.
	var w []byte
	w = append(w, frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"t_unsubscribe","params":["`+rep.Result+`"],"id":2}`), true)...)
	w = append(w, frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}`), true)...)
	if _, err := c.Write(w); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the loop waits in the unsubscribe for the lock
	close(b.release)
	var got []note
	for range 3 {
		_, p, err := readFrame(r, c)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, decodeNote(t, p))
	}
	if string(got[0].ID) != "2" || got[1].Method != "t_subscription" || string(got[2].ID) != "3" {
		t.Fatalf("want the unsubscribe reply, the late notification, then the later reply: %+v", got)
	}
}

// TestRegression_pingAfterClose: a ping went out after the close frame
// while a job was still in flight.
func TestRegression_pingAfterClose(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "stubborn", func(context.Context, []int) (int, error) {
		time.Sleep(2500 * time.Millisecond) // deaf to the cancelled context: stays in flight
		return 0, nil
	})
	_, tcp, _ := startEngine(t, tab, engine.WithPingInterval(100*time.Millisecond))
	c, r := rawWS(t, tcp)
	var w []byte
	w = append(w, frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"stubborn","params":[],"id":1}`), true)...)
	w = append(w, frame(true, 8, []byte{0x03, 0xe8}, true)...)
	if _, err := c.Write(w); err != nil {
		t.Fatal(err)
	}
	var ops []byte
	for {
		op, _, err := readFrame(r, c)
		if err != nil {
			break
		}
		ops = append(ops, op)
	}
	if len(ops) != 1 || ops[0] != 0x8 {
		t.Fatalf("want only the close frame, got opcodes %x", ops)
	}
}

// TestRegression_remoteRace: the slow-consumer branch of Send read the
// gnet connection's address off the loop while the loop released it.
func TestRegression_remoteRace(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	conns := make(chan handler.Conn, 1)
	handler.Register(tab, "hold", func(ctx context.Context, _ []int) (int, error) {
		conns <- handler.ConnFrom(ctx)
		<-ctx.Done()
		return 0, nil
	})
	_, tcp, _ := startEngine(t, tab, engine.WithMaxPushQueue(4096))
	msg := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	for i := range 300 {
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(`{"jsonrpc":"2.0","method":"hold","params":[],"id":1}` + "\n"))
		hc := <-conns
		for range 3 {
			if err := hc.Send(msg); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				if err := hc.Send(msg); err != nil {
					if !errors.Is(err, handler.ErrSlowConsumer) && !errors.Is(err, handler.ErrConnClosed) {
						t.Error(err)
					}
					return
				}
			}
		}()
		if i%2 == 0 {
			time.Sleep(time.Duration(i%7) * time.Microsecond)
		}
		c.Close()
		<-done
	}
}

// TestRegression_sendAfterCloseFrame: Send returned nil on a WebSocket
// whose close frame had gone out, and the message was dropped.
func TestRegression_sendAfterCloseFrame(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	conns := make(chan handler.Conn, 1)
	handler.Register(tab, "hold", func(ctx context.Context, _ []int) (int, error) {
		conns <- handler.ConnFrom(ctx)
		time.Sleep(500 * time.Millisecond)
		return 0, nil
	})
	_, tcp, _ := startEngine(t, tab)
	c, r := rawWS(t, tcp)
	_, _ = c.Write(frame(true, 1, []byte(`{"jsonrpc":"2.0","method":"hold","params":[],"id":1}`), true))
	hc := <-conns
	_, _ = c.Write(frame(true, 8, []byte{0x03, 0xe8}, true))
	if op, _, err := readFrame(r, c); err != nil || op != 8 {
		t.Fatalf("want close frame: %v %x", err, op)
	}
	if err := hc.Send([]byte(`{"jsonrpc":"2.0","method":"x"}`)); !errors.Is(err, handler.ErrConnClosed) {
		t.Fatalf("Send after the close frame: %v", err)
	}
	if hc.Context().Err() == nil {
		t.Fatal("the connection's context (and its subscriptions) outlived the close frame")
	}
}
