package engine

// NOTE: a client may half-close its connection — shutdown(SHUT_WR) after
// its last request, as `nc -N`, socat and `printf ... | tool` do — and
// still read the replies. gnet closes a connection as soon as a read
// returns 0, which would drop the replies of work still on the workers.
// So when that EOF comes with work in flight, the connection goes on off
// the loop: OnClose duplicates its descriptor (gnet then closes only its
// own), and one goroutine writes the replies as they finish and serves
// the complete requests still buffered, then closes. Only that rare case
// costs a goroutine. An HTTP client's EOF is also its going, as for
// net/http: its calls' contexts are cancelled before the connection goes
// off the loop (a stream client's calls run on).

import (
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/jetrpc/jetrpc/pool"
)

// finishesAfterEOF takes the connection off the loop when its client has
// half-closed with work in flight, and reports whether it did. Event loop
// only, from OnClose.
func (c *conn) finishesAfterEOF(err error) bool {
	// Only the EOF of a read: on gnet's other EOF path (a hang-up without
	// readable data) unsent output was already dropped.
	if err == io.EOF || !errors.Is(err, io.EOF) {
		return false
	}
	if c.work.inflight == 0 || c.mail.kill.Load() != 0 || c.codec == nil || c.codec.transport() == transportWebSocket ||
		c.gc.OutboundBuffered() > 0 {
		return false // nothing to finish, a protocol that cannot half-close, or gnet could not write what is pending
	}
	fd, err := c.gc.Dup()
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "jetrpc-half-closed")
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return false
	}
	var rest *pool.Buffer
	if in, _ := c.gc.Peek(-1); len(in) > 0 && c.closing == notClosing {
		rest = pool.Requests.Get()
		rest.B = append(rest.B, in...)
	}
	c.gone.Store(true) // the loop's waker no longer serves it
	if c.codec.transport() == transportHTTP {
		// An HTTP client's EOF is its going away, as for net/http and
		// geth: its calls' contexts are cancelled (the replies, to
		// whatever the methods answer, still go to a client that only
		// half-closed). A stream client's EOF is a half-close: its calls
		// finish.
		c.cancel()
	}
	wake := make(chan struct{}, 1)
	own := &loopState{stats: c.loop.stats} // the loop's scratch stays the loop's; its counters are shared
	own.deadlines.fire = func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if c.work.timed > 0 { // its calls' deadlines are watched off the loop from now on
		ls := c.loop
		ls.scratch = ls.deadlines.dropConn(c, ls.scratch[:0])
		for i, j := range ls.scratch {
			ls.scratch[i] = nil
			own.deadlines.add(j, j.timeout)
		}
		ls.scratch = ls.scratch[:0]
	}
	c.loop = own
	c.mail.shut.Store(true)
	c.mail.mu.Lock()
	c.mail.lameWake = wake
	c.mail.mu.Unlock()
	go c.finishOffLoop(nc, rest, wake)
	return true
}

// finishOffLoop writes the replies of the work in flight as it finishes,
// serves the complete requests left in rest, and closes. It owns the
// connection's state: the loop no longer touches it.
func (c *conn) finishOffLoop(nc net.Conn, rest *pool.Buffer, wake <-chan struct{}) {
	e := c.e
	defer func() {
		_ = nc.Close()
		if rest != nil {
			pool.Requests.Put(rest)
		}
		c.release()
		c.loop.deadlines.stop()
		e.forget(c)
	}()
	var out []byte
	off := 0
	stopping, giveUp := e.baseCtx.Done(), (<-chan time.Time)(nil)
	for {
		if c.work.timed > 0 {
			c.work.late = c.loop.deadlines.expire(c.work.late) // its timer signals wake
		}
		out = c.collect(out[:0]) // whatever the wake-once flag says: off the loop, finish signals wake instead
		if rest != nil && off < len(rest.B) && c.canRead() {
			var used int
			out, used, _ = c.codec.serve(c, rest.B[off:], out) // HTTP or a stream: no upgrade
			c.loop.pending.Flush()
			c.loop.stats.in[c.tport].Add(uint64(used))
			off += used
		}
		if len(out) > 0 {
			if e.opts.WriteTimeout > 0 {
				_ = nc.SetWriteDeadline(time.Now().Add(e.opts.WriteTimeout))
			}
			n, err := nc.Write(out)
			c.loop.stats.out[c.tport].Add(uint64(n))
			if err != nil {
				return
			}
		}
		if c.work.inflight == 0 {
			return // all answered; what is left of rest is incomplete
		}
		select {
		case <-wake:
		case <-stopping:
			// Stop gave up waiting and cancelled the handlers: the grace
			// Stop gives their replies, then give up too.
			stopping, giveUp = nil, time.After(stopGrace)
		case <-giveUp:
			return
		}
	}
}
