package engine

// NOTE: a connection's loop is woken (to collect finished work and
// server messages) through its loop's waker, not gnet's Conn.Wake. A
// fan-out of one message to the 10,000 subscribers of a topic wakes
// 10,000 connections spread over a few loops: Conn.Wake queues one gnet
// task (and allocates its closure) per connection, and the loops, woken
// by the first, go back to sleep between the next ones. The waker keeps
// the connections waiting for their loop in a list and queues one gnet
// task per loop for all of them (EventLoop.Execute), so that a burst
// costs a list append per connection and a task per loop.

import (
	"context"
	"sync"

	"github.com/panjf2000/gnet/v2"
)

// loopWaker serves the connections of one event loop that were woken.
// wake is safe from any goroutine; Run runs on the loop.
type loopWaker struct {
	el gnet.EventLoop

	mu    sync.Mutex
	ready []*conn // to serve; guarded by mu
	armed bool    // a Run is queued on the loop and has not taken ready yet; guarded by mu

	spare []*conn // the list Run served last, reused; event loop only
}

// wake makes the loop call c.traffic soon.
func (w *loopWaker) wake(c *conn) {
	w.mu.Lock()
	w.ready = append(w.ready, c)
	arm := !w.armed
	w.armed = true
	w.mu.Unlock()
	if arm && w.el.Execute(context.Background(), w) != nil {
		// The loops are stopping: the engine closes every connection.
		w.mu.Lock()
		w.armed = false
		clear(w.ready)
		w.ready = w.ready[:0]
		w.mu.Unlock()
	}
}

// Run serves the woken connections: gnet.Runnable, on the loop.
func (w *loopWaker) Run(context.Context) error {
	w.mu.Lock()
	list := w.ready
	w.ready, w.armed = w.spare[:0], false
	w.mu.Unlock()
	for i, c := range list {
		list[i] = nil
		if c.gone.Load() {
			continue // closed, or finishing off the loop, since it was woken
		}
		if c.traffic() == gnet.Close {
			_ = w.el.Close(c.gc)
		}
	}
	w.spare = list[:0]
	return nil
}
