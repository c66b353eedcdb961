//go:build !race

package engine

import (
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// TestSendPrepared_zeroAllocs: a message published on a topic allocates
// nothing in steady state, compressed once for the subscribers that
// negotiated permessage-deflate and plain for the others, from the
// publish to the frames in each connection's output.
func TestSendPrepared_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab := handler.NewTable()
	node := topics.New(nil, nil)
	topics.Register(tab, "topic", node)
	var subs []topicConn
	for i := range 8 {
		offer := "permessage-deflate"
		if i%4 == 3 {
			offer = ""
		}
		cs, fc := wsDeflateFakeConnOf(t, tab, offer)
		subs = append(subs, subscribeTopic(t, tab, cs, fc))
	}
	step := func() {
		if n, err := node.PublishRaw("t", fanPayload); err != nil || n != len(subs) {
			t.Fatalf("published to %d: %v", n, err)
		}
		for _, s := range subs {
			s.cs.traffic()
			s.fc.out = s.fc.out[:0]
		}
	}
	step()
	if got := testing.AllocsPerRun(200, step); got != 0 {
		t.Errorf("%v allocs per message to %d subscribers, want 0", got, len(subs))
	}
	// The push path alone: SendPrepared and the loop's write.
	msg := handler.NewPrepared(fanPayload)
	defer msg.Release()
	prefix, suffix := []byte(`{"jsonrpc":"2.0","method":"t","params":`), []byte(`}`)
	s := subs[0]
	if got := testing.AllocsPerRun(200, func() {
		_ = s.cs.SendPrepared(prefix, msg, suffix)
		s.cs.traffic()
		s.fc.out = s.fc.out[:0]
	}); got != 0 {
		t.Errorf("SendPrepared: %v allocs per delivery, want 0", got)
	}
}
