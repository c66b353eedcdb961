package engine

// NOTE: the mailbox: what other goroutines hand to a connection's loop —
// the replies of jobs that finished on workers, and server pushes. A
// handler.Conn's Send copies the message into a pooled buffer and queues
// it, from any goroutine; a worker queues its finished job; either wakes
// the loop once per burst (one Wake, whatever the number of messages).
// The loop writes queued pushes while the client keeps up (unsent output
// under MaxPendingOutput) and leaves them queued otherwise. One bound,
// MaxPushQueue, holds for both: Send refuses a push that would take the
// connection's unsent output plus its queue past it, and the client is
// disconnected. Send cannot read gnet's buffer, so the loop keeps what it
// saw there in mail.unsent (account), and adds the pushes it writes, as
// it takes them off the queue, under the mailbox's lock: what Send counts
// is never less than what the connection holds, bar the replies of the
// loop's current pass (bounded by MaxPendingOutput). The server's budget
// (budget.go) hears of a queue as it grows, by steps of budgetStep, not
// only when the loop looks (a loop behind its connections would let
// thousands of queues grow unseen), and Send refuses a push to a
// connection the budget chose to close. A push is held
// while a message received before it is still on a worker (its barrier),
// so that a subscription's first notification cannot overtake the
// subscribe reply; a push through the directConn in a call's context
// has none, and collect writes the pushes that may go before the
// replies that came with them, so that what a method sent while it ran
// precedes its reply. SendPrepared (prepared.go) queues a push that
// shares a handler.Prepared's compressed bytes instead of a copy of the
// message; it is counted at the size of the message it will write.

import (
	"context"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

// mailbox is what workers and pushers hand to a connection's loop. Safe
// from any goroutine.
type mailbox struct {
	mu       sync.Mutex    // guards done, dead, pushHead, pushTail, fresh, lameWake; directs changes under it
	done     *job          // finished work, newest first
	dead     bool          // closed: finished work and pushes are dropped
	pushHead *push         // server messages to send, oldest first
	pushTail *push         //
	directs  atomic.Int32  // direct pushes queued (directConn): drainPushes looks past a held one for them; read without the lock by directFirst
	fresh    int64         // bytes queued since the queue was last empty and not yet added to the connection's holding (budgetStep)
	lameWake chan struct{} // set when the connection finishes off its loop (halfclose.go)
	streams  []*job        // jobs whose reply parts came, oldest first, until their replies end (streamed.go)
	nstreams atomic.Int32  // len(streams), read without the lock

	queued    atomic.Int64  // bytes in the push queue
	unsent    atomic.Int64  // the connection's unsent output at the loop's last look (account), plus the pushes it has written since; written on the loop (under mu when pushes are written), read by Send under mu
	submitted atomic.Uint64 // sequence number of the last message given to a worker: a push's barrier
	waking    atomic.Bool   // a Wake is on its way to the loop
	pushable  atomic.Bool   // a stream or a WebSocket: Send works
	textOnly  atomic.Bool   // a WebSocket: a push must be valid UTF-8 (a text message)
	deflate   atomic.Bool   // a WebSocket that negotiated permessage-deflate: SendPrepared may share compressed bytes (prepared.go)
	kill      atomic.Uint32 // why a pusher was refused and the connection must close now (closePushQueue, closeBudget), or 0
	shut      atomic.Bool   // no more server messages (a WebSocket close frame has gone out, or the client is leaving)
}

// pending reports whether the loop has something to collect. Event loop
// only.
func (m *mailbox) pending() bool { return m.waking.Load() || m.queued.Load() > 0 }

// takeDone returns the finished jobs, oldest first, and clears the
// wake-once flag. Event loop only.
func (m *mailbox) takeDone() *job {
	m.waking.Store(false)
	m.mu.Lock()
	list := m.done
	m.done = nil
	m.mu.Unlock()
	var prev *job // reversed: oldest first
	for list != nil {
		next := list.next
		list.next = prev
		prev, list = list, next
	}
	return prev
}

// close drops the finished work and the pushes, and returns the number
// of pushes dropped; what arrives later is dropped too.
func (m *mailbox) close() (dropped uint64) {
	m.mu.Lock()
	m.dead = true
	m.closeStreamsLocked() // before their jobs can be released below
	list := m.done
	m.done = nil
	pushes := m.pushHead
	m.pushHead, m.pushTail = nil, nil
	m.directs.Store(0)
	m.mu.Unlock()
	for list != nil {
		next := list.next
		list.release()
		list = next
	}
	for pushes != nil {
		next := pushes.next
		pushes.release()
		pushes = next
		dropped++
	}
	m.queued.Store(0)
	return dropped
}

// finish queues a finished job and wakes the loop. Safe from any
// goroutine.
func (c *conn) finish(j *job) {
	m := &c.mail
	m.mu.Lock()
	if m.dead {
		m.mu.Unlock()
		j.release()
		return
	}
	j.next = m.done
	m.done = j
	lame := m.lameWake
	m.mu.Unlock()
	c.wake(lame)
}

// wake makes the loop serve the connection soon: one Wake per burst,
// however many jobs and pushes arrive before the loop collects them; or,
// for a connection finishing off its loop, a signal on lame. Safe from any
// goroutine.
func (c *conn) wake(lame chan struct{}) {
	if lame != nil {
		select {
		case lame <- struct{}{}:
		default:
		}
		return
	}
	if c.mail.waking.CompareAndSwap(false, true) {
		c.waker.wake(c)
	}
}

// push is one queued server message: buf, or, when prep is set, the
// prefix buf.B[:split] and suffix buf.B[split:] around prep's shared
// compressed bytes (prepared.go).
type push struct {
	buf     *pool.Buffer
	barrier uint64 // the last message sent to a worker before it was queued; 0 when direct
	direct  bool   // sent through a directConn: held for no reply, nor by MaxPendingOutput
	next    *push
	prep    *handler.Prepared // retained while queued, or nil
	split   int               // with prep: the length of the prefix in buf
	size    int               // the bytes counted for it in the queue and the output: len(buf.B), or with prep the compressed message's
}

var pushes = sync.Pool{New: func() any { return new(push) }}

func (p *push) release() {
	pool.Responses.Put(p.buf)
	if p.prep != nil {
		p.prep.Release()
	}
	*p = push{}
	pushes.Put(p)
}

var _ handler.Conn = (*conn)(nil)

// CanPush implements handler.Conn.
func (c *conn) CanPush() bool { return c.mail.pushable.Load() }

// Context implements handler.Conn: done when the connection closes.
func (c *conn) Context() context.Context { return c.ctx }

// Send implements handler.Conn. Safe from any goroutine.
func (c *conn) Send(msg []byte) error { return c.send(msg, true) }

// directConn is the handler.DirectConn of a WebSocket or stream
// connection, in its calls' contexts (conn.call.Conn): a message sent
// through it is held for no reply, so the messages a method sends while
// it runs go before its reply. One per connection, never pooled: a
// method may keep it past its call.
type directConn struct{ c *conn }

var (
	_ handler.DirectConn     = (*directConn)(nil)
	_ handler.PreparedSender = (*directConn)(nil)
	_ handler.Canceller      = (*directConn)(nil)
)

// Send implements handler.Conn, held for no reply. Safe from any
// goroutine.
func (d *directConn) Send(msg []byte) error { return d.c.send(msg, false) }

// SendPrepared implements handler.PreparedSender, held for no reply.
func (d *directConn) SendPrepared(prefix []byte, msg *handler.Prepared, suffix []byte) error {
	return d.c.sendPrepared(prefix, msg, suffix, false)
}

// CanPush implements handler.Conn.
func (d *directConn) CanPush() bool { return d.c.CanPush() }

// Context implements handler.Conn: the connection's.
func (d *directConn) Context() context.Context { return d.c.ctx }

// Connection implements handler.DirectConn: the connection, whose
// messages wait for the replies before them.
func (d *directConn) Connection() handler.Conn { return d.c }

// CancelCall implements handler.Canceller: the connection's.
func (d *directConn) CancelCall(id []byte) bool { return d.c.CancelCall(id) }

// send is Send; ordered: the message waits for the replies of the
// messages on workers now (its barrier), else for none. Safe from any
// goroutine.
func (c *conn) send(msg []byte, ordered bool) error {
	m := &c.mail
	if !m.pushable.Load() {
		if c.ctx.Err() != nil {
			return handler.ErrConnClosed
		}
		return handler.ErrPushUnsupported
	}
	if m.textOnly.Load() && !utf8.Valid(msg) {
		return handler.ErrNotUTF8
	}
	p := pushes.Get().(*push)
	p.buf = pool.Responses.Get()
	p.buf.B = append(p.buf.B, msg...)
	p.size = len(msg)
	return c.enqueue(p, ordered)
}

// enqueue queues p, a push of p.size bytes, or refuses it (and releases
// it) as Send says; ordered as send. Safe from any goroutine.
func (c *conn) enqueue(p *push, ordered bool) error {
	m := &c.mail
	if ordered {
		p.barrier = m.submitted.Load()
	} else {
		p.direct = true // barrier 0: lower than any message's sequence number
	}
	n := int64(p.size)
	m.mu.Lock()
	if m.dead || m.kill.Load() != 0 || m.shut.Load() {
		m.mu.Unlock()
		p.release()
		return handler.ErrConnClosed
	}
	held := m.unsent.Load() + m.queued.Load() + n
	why := notClosing
	switch {
	case held > int64(c.e.opts.MaxPushQueue):
		why = closePushQueue
	case c.doomed.Load() && c.e.budget.sheds(held):
		why = closeBudget // as its loop would decide (overBudget), without waiting for it
	}
	if why != notClosing {
		m.kill.Store(uint32(why))
		m.mu.Unlock()
		p.release()
		c.e.stats.pushDrops.Add(1)
		c.wake(nil) // the loop closes the connection
		return handler.ErrSlowConsumer
	}
	if m.pushTail == nil {
		m.pushHead = p
	} else {
		m.pushTail.next = p
	}
	m.pushTail = p
	if p.direct {
		m.directs.Add(1)
	}
	m.queued.Add(n)
	if m.fresh += n; m.fresh >= budgetStep {
		// Under the lock: never after release has cleared the holding.
		c.addHeld(m.fresh)
		m.fresh = 0
	}
	m.mu.Unlock()
	c.e.stats.notePeak(held)
	c.wake(nil)
	return nil
}

// drainPushes writes the queued server messages that may go, oldest
// first: those whose barrier has passed, while the client keeps up
// (unsent output under MaxPendingOutput), and every message a method
// sent through its directConn (direct), whatever the client's unsent
// output — it must precede its call's reply, and Send bounded it
// already by MaxPushQueue, whether queued or unsent. A message held
// stays queued in its place; the direct ones behind it may pass
// it (no order binds them: a held one waits for another call's reply),
// and no other can, as barriers only grow along the queue and the
// unsent output only grows in a pass. Codecs that push call it after
// each message they serve, so that the server messages queued while it
// ran go before the replies to later messages; collect calls it before
// the replies it writes, too. Event loop only.
func (c *conn) drainPushes(out []byte) []byte { return c.drain(out, false) }

// directFirst writes the direct pushes queued (those a method sent
// through its directConn) before out[mark:], a framed reply the codec
// just wrote: an inline method's messages go before its reply. Event
// loop only.
func (c *conn) directFirst(out []byte, mark int) []byte {
	if c.mail.directs.Load() == 0 || c.strm != nil || len(out) == mark {
		return out
	}
	ls := c.loop
	ls.moved = append(ls.moved[:0], out[mark:]...)
	out = append(c.drain(out[:mark], true), ls.moved...)
	if cap(ls.moved) > maxLoopBuffer {
		ls.moved = nil
	}
	return out
}

// drain is drainPushes; with directOnly, only the direct pushes go
// (the others wait for a reply being written). Event loop only.
func (c *conn) drain(out []byte, directOnly bool) []byte {
	if c.strm != nil {
		return out // nothing comes between the parts of a streamed reply
	}
	low := c.work.lowest() // the oldest message still on a worker
	limit := c.e.opts.MaxPendingOutput
	unsent := 0
	if c.mail.lameWake == nil { // off the loop, gnet's buffers are gone
		unsent = c.gc.OutboundBuffered()
	}
	m := &c.mail
	var moved int64
	m.mu.Lock()
	var prev *push // the last one held
	for p := m.pushHead; p != nil; {
		next := p.next
		if !p.direct && (directOnly || p.barrier >= low || unsent+len(out) > limit) {
			if m.directs.Load() == 0 {
				break // every one behind is held too
			}
			prev, p = p, next // held
			continue
		}
		if p.direct {
			m.directs.Add(-1)
		}
		if p.prep != nil {
			out = c.pushPrepared(out, p)
		} else {
			out = c.codec.push(c, out, p.buf.B)
		}
		c.loop.stats.pushes.Add(1)
		moved += int64(p.size)
		if prev == nil {
			m.pushHead = next
		} else {
			prev.next = next
		}
		if next == nil {
			m.pushTail = prev
		}
		p.release()
		p = next
	}
	if m.pushHead == nil && moved > 0 {
		// What was queued goes out in this pass: the loop's look at its
		// end counts it (account), and the steps start again. A push
		// queued before that look is counted twice at most, until the
		// next one.
		m.fresh = 0
	}
	if moved > 0 {
		// From the queue to the output, in Send's count (see the NOTE).
		m.queued.Add(-moved)
		m.unsent.Add(moved)
	}
	m.mu.Unlock()
	return out
}
