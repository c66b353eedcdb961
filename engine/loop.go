package engine

// NOTE: the gnet side of the engine. events is the gnet.EventHandler of
// the engine's client: gnet calls it on the event loops, and it hands
// each event to the connection (conn.go). loopState is the scratch memory
// of one loop.

import (
	"context"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/panjf2000/gnet/v2"
)

// events receives gnet's callbacks for an Engine. Every method runs on an
// event loop and must not block.
type events struct {
	gnet.BuiltinEventEngine
	e *Engine // immutable
}

var _ gnet.EventHandler = (*events)(nil)

// OnOpen sets up a connection's state.
func (ev *events) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	e := ev.e
	c := newConn(e, gc, e.loopOf(gc.EventLoop()))
	e.enroll(c)
	gc.SetContext(c)
	if e.draining.Load() {
		// Accepted while Stop ran, after it listed the connections to
		// wake: close it now rather than leave it to the idle timeout.
		return nil, c.closeNow(closeStopping)
	}
	return nil, gnet.None
}

// OnClose releases a connection's state, unless its client half-closed
// with work in flight: the connection then finishes off the loop
// (halfclose.go).
func (ev *events) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.None
	}
	if c.finishesAfterEOF(err) {
		ev.e.setWaiter(c, false)
		return gnet.None
	}
	c.release()
	ev.e.forget(c)
	return gnet.None
}

// OnTraffic serves a connection's input and its finished work.
func (ev *events) OnTraffic(gc gnet.Conn) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.Close
	}
	return c.traffic()
}

// loopState is the scratch memory of one event loop: used only on that
// loop's goroutine, so it needs no lock.
type loopState struct {
	out     []byte          // replies of one OnTraffic, written with one Write
	pending handler.Pending // given to every DispatchInline: a deferred message until a job Takes it, and the dispatch's scratch between calls
	guess   replyGuess      // the size of the last inline reply, to reserve its head
	comp    compressor      // the HTTP compression scratch, its coders made on first use (compress.go)
	sse     []byte          // an inline reply rewritten as an event (sse.go)
	moved   []byte          // an inline reply moved behind the messages its method sent (directFirst)
	stats   *loopStats      // the loop's counters (stats.go); shared with the private scratch of a connection finishing off the loop
	waker   *loopWaker      // wakes the loop's connections (waker.go); nil in the private scratch of a connection finishing off the loop

	deadlines deadlines // the calls on workers whose deadline the loop watches (deadline.go)
	scratch   []*job    // jobs taken from the deadlines, between uses empty
	touched   []*conn   // connections with late calls, between uses empty
}

// expireDeadlines answers the calls of the loop's connections whose
// deadline has passed: each connection with such a call is served at
// once. Event loop only (a task the deadlines' timer queues).
func (ls *loopState) expireDeadlines() {
	ls.scratch = ls.deadlines.expire(ls.scratch[:0])
	touched := ls.touched[:0]
	for i, j := range ls.scratch {
		ls.scratch[i] = nil
		c := j.c
		if len(c.work.late) == 0 {
			touched = append(touched, c)
		}
		c.work.late = append(c.work.late, j)
	}
	ls.scratch = ls.scratch[:0]
	for i, c := range touched {
		touched[i] = nil
		if c.gone.Load() {
			continue // its deadlines were dropped when it closed: not reached
		}
		if c.traffic() == gnet.Close {
			_ = ls.waker.el.Close(c.gc)
		}
	}
	ls.touched = touched[:0]
}

// newLoopState returns the scratch state of the loop w wakes.
func newLoopState(w *loopWaker) *loopState {
	ls := &loopState{stats: new(loopStats), waker: w}
	ls.deadlines.fire = func() { _ = w.el.Execute(context.Background(), deadlineSweep{ls}) } // fails only once the loops stop
	return ls
}

// maxLoopBuffer: a loop's scratch buffer larger than this is dropped.
const maxLoopBuffer = 1 << 20
