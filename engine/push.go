package engine

// NOTE: server push. A handler.Conn's Send copies the message into a
// pooled buffer and queues it on the connection, from any goroutine, then
// wakes the loop once per burst (the same Wake as finished work). The loop
// writes queued messages while the client keeps up (unsent output under
// MaxPendingOutput); the bytes queued beyond that are bounded by
// MaxPushQueue, past which the client is disconnected. A message is held
// while a message received before it is still on a worker (its barrier),
// so that a subscription's first notification cannot overtake the
// subscribe reply.

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// push is one queued server message.
type push struct {
	buf     *pool.Buffer
	barrier uint64 // the last message sent to a worker before it was queued
	next    *push
}

var pushes = sync.Pool{New: func() any { return new(push) }}

func (p *push) release() {
	pool.Responses.Put(p.buf)
	*p = push{}
	pushes.Put(p)
}

var _ handler.Conn = (*conn)(nil)

// CanPush implements handler.Conn.
func (cs *conn) CanPush() bool { return cs.pushable.Load() }

// Context implements handler.Conn: done when the connection closes.
func (cs *conn) Context() context.Context { return cs.ctx }

// Send implements handler.Conn. Safe from any goroutine.
func (cs *conn) Send(msg []byte) error {
	if !cs.pushable.Load() {
		if cs.ctx.Err() != nil {
			return handler.ErrConnClosed
		}
		return handler.ErrPushUnsupported
	}
	p := pushes.Get().(*push)
	p.buf = pool.Responses.Get()
	p.buf.B = append(p.buf.B, msg...)
	p.barrier = cs.submitted.Load()
	cs.mu.Lock()
	switch {
	case cs.dead || cs.kill.Load() || cs.shut.Load():
		cs.mu.Unlock()
		p.release()
		return handler.ErrConnClosed
	case cs.queued.Load()+int64(len(msg)) > int64(cs.e.opts.MaxPushQueue):
		cs.kill.Store(true)
		cs.mu.Unlock()
		p.release()
		cs.wake() // the loop closes the connection
		return handler.ErrSlowConsumer
	}
	if cs.pushTail == nil {
		cs.pushHead = p
	} else {
		cs.pushTail.next = p
	}
	cs.pushTail = p
	cs.queued.Add(int64(len(msg)))
	cs.mu.Unlock()
	cs.wake()
	return nil
}

// wake makes the loop serve the connection soon, once per burst.
func (cs *conn) wake() {
	if cs.waking.CompareAndSwap(false, true) {
		_ = cs.gc.Wake(nil)
	}
}

// remote is the client's address, for logs. Event loop only.
func (cs *conn) remote() string {
	if a := cs.gc.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

// drainPushes writes the queued server messages that may go: those whose
// barrier has passed, while the client keeps up. Event loop only.
func (cs *conn) drainPushes(out []byte) []byte {
	low := ^uint64(0) // the oldest message still on a worker
	for _, s := range cs.running {
		low = min(low, s)
	}
	limit := cs.e.opts.MaxPendingOutput
	unsent := 0
	if cs.lameWake == nil { // off the loop, gnet's buffers are gone
		unsent = cs.gc.OutboundBuffered()
	}
	cs.mu.Lock()
	for p := cs.pushHead; p != nil; p = cs.pushHead {
		if cs.closing && cs.proto == protoWS {
			break // a close frame has gone out: nothing may follow; dropped on close
		}
		if p.barrier >= low || unsent+len(out) > limit {
			break
		}
		if cs.proto == protoWS {
			op := ws.OpText
			if !utf8.Valid(p.buf.B) {
				op = ws.OpBinary // a text frame must be UTF-8
			}
			out = appendWSFrame(out, op, p.buf.B)
		} else {
			out = append(out, p.buf.B...)
			out = append(out, '\n')
		}
		cs.queued.Add(-int64(len(p.buf.B)))
		cs.pushHead = p.next
		if cs.pushHead == nil {
			cs.pushTail = nil
		}
		p.release()
	}
	cs.mu.Unlock()
	return out
}
