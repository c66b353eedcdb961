package engine

// NOTE: the connection core: what every protocol shares. traffic() runs
// on the connection's event loop for every read and every Wake: it first
// collects what other goroutines left in the mailbox (replies of work
// that ran on workers, server pushes: work.go, push.go), then checks the
// timers, then hands the buffered input to the connection's codec — the
// protocol, picked from the first byte (sniff) and replaced by the codec
// itself on an upgrade — which frames messages, runs each one (run, in
// work.go) and appends the framed replies to the loop's out buffer; out
// is written with one Write. Input is read with one Peek and released
// with one Discard of what the codec consumed; what it left (a partial
// message) stays in gnet's buffer.
//
// A connection closes in one way: closeAfterFlush(reason) says why; from
// then on no input is served, the codec's last words (a WebSocket close
// frame) go out, and the connection closes once its work in flight is
// answered and its output flushed.

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/panjf2000/gnet/v2"
)

// conn is one connection's state. Fields are event loop only unless
// marked otherwise.
type conn struct {
	e     *Engine     // immutable
	gc    gnet.Conn   // immutable
	loop  *loopState  // the loop's scratch (a private one once the connection finishes off its loop: halfclose.go)
	waker *loopWaker  // its loop's (waker.go); immutable
	gone  atomic.Bool // released, or finishing off its loop: the loop no longer serves it; set on the loop
	codec codec       // the protocol; nil until the first byte picks one
	tport transport   // codec's transport, kept for the counters once the codec is released; 0 until the first byte

	closing closeReason // why the connection closes once flushed; notClosing until closeAfterFlush
	refusal string      // the body of the HTTP answer to the Authorizer's last refusal (authorize)
	paused  bool        // too much unsent output, its own or the server's (budget.go): input is left unread
	gate    readGate    // whether its socket is read (pause_linux.go)

	held   atomic.Int64 // bytes it holds in the server's budget as of its last traffic call: unsent output plus queued pushes; written on the loop, read by the ticker (budget.go)
	doomed atomic.Bool  // the ticker chose it to close for the budget; set by the ticker, cleared on the loop

	work   workState // messages on workers (work.go)
	strm   *job      // the streamed reply open on a WebSocket or a stream, or nil (streamed.go)
	behind []*job    // the replies held while it goes (streamed.go)
	timer  timers    // timeouts; its atomics are read by the ticker
	mail   mailbox   // what workers and pushers hand to the loop; safe from any goroutine (work.go, push.go)

	ctx    context.Context // of every request of the connection; done when it closes; immutable
	cancel context.CancelFunc

	// call is the context of the connection's calls: ctx plus the call's
	// metadata. Event loop only, except that the workers of a WebSocket
	// or stream connection read it: its Meta does not change once the
	// codec has opened and the connection is authorized. An HTTP
	// request's head is set in it per request; its jobs get a copy.
	call handler.CallContext

	direct directConn // call.Conn over WebSocket and streams (push.go)
}

// closeReason says why a connection closes.
type closeReason uint8

const (
	notClosing        closeReason = iota
	closeByClient                 // the client asked: HTTP Connection: close, a WebSocket close frame
	closeProtocol                 // the client broke the protocol, or a message was too large
	closeIdle                     // IdleTimeout
	closeReadTimeout              // ReadTimeout: a message stayed incomplete
	closeStopping                 // the engine stops
	closeWriteTimeout             // WriteTimeout: the client read nothing
	closePushQueue                // a server message would have taken the client's unsent output past MaxPushQueue
	closeBudget                   // chosen to keep the server within MaxOutputBudget
	closeFlood                    // the client sent too much while held back
	closeReasons                  // the number of reasons, for counting
)

// newConn makes the state of a connection accepted on the loop of ls.
func newConn(e *Engine, gc gnet.Conn, ls *loopState) *conn {
	c := &conn{e: e, gc: gc, loop: ls, waker: ls.waker}
	c.ctx, c.cancel = context.WithCancel(e.baseCtx)
	c.ctx = handler.ContextWithConn(c.ctx, c)
	c.call.Parent = c.ctx
	c.call.Meta.Remote, c.call.Meta.Local = gc.RemoteAddr(), gc.LocalAddr()
	if e.opts.TrustedProxies.ContainsAddr(c.call.Meta.Remote) {
		c.call.Meta.Proxies = e.opts.TrustedProxies
	}
	c.call.Meta.Quota = e.table.NewQuota() // the connection's rate limits, if the table has any
	c.timer.lastActive.Store(e.now.Load())
	c.timer.silent.Store(true)
	e.stats.open[0].Add(1) // no transport yet (use)
	return c
}

// traffic serves the connection: finished work, timers, input.
func (c *conn) traffic() gnet.Action {
	e, gc := c.e, c.gc
	now := e.now.Load()
	if why := c.mail.kill.Load(); why != 0 {
		// A client that does not read its pushed messages (logged here, on
		// the loop, where the connection's address is safe to read).
		if why == uint32(closeBudget) {
			c.logBudgetClose()
			return c.closeNow(closeBudget)
		}
		e.opts.Logger.Warn("jetrpc: client too slow to read its server messages: disconnected", "remote", c.remote())
		return c.closeNow(closePushQueue)
	}
	if c.doomed.Load() && c.overBudget() {
		return c.closeNow(closeBudget)
	}
	out := c.loop.out[:0]
	if c.mail.pending() || len(c.work.late) > 0 {
		out = c.collect(out)
	}
	if c.timer.stalled.Load() != 0 {
		c.trackOutput(now) // progress since the last check resets the write timeout before it is judged
	}
	if gc.InboundBuffered() > 0 {
		c.timer.input(now)
	}
	switch c.expired(now) {
	case expiredPing:
		if c.closing == notClosing {
			out = c.codec.ping(out)
			c.timer.pingSent.Store(true)
		}
	case expiredWrite:
		// The client has not read its replies for WriteTimeout: waiting
		// for them to flush would wait forever.
		return c.closeNow(closeWriteTimeout)
	case expiredRead:
		out = c.closeAfterFlush(out, closeReadTimeout) // slowloris: the message never completed
	case expiredIdle:
		if c.work.inflight == 0 {
			out = c.closeAfterFlush(out, closeIdle)
		}
	}
	if c.paused {
		// Paused at the last call: the client may have read its output
		// since (gnet then reads the socket again and calls us with what
		// came), so judge again before leaving the input unserved —
		// nothing else would call us back for it.
		c.paused = c.stillPaused(gc.OutboundBuffered() + len(out))
	}
	// Stopping, a stream or WebSocket runs nothing it reads from then
	// on: its calls in flight are answered, then it closes. An HTTP
	// connection answers the next request it reads, with Connection:
	// close, and closes after it (httpCodec.call).
	stopping := e.draining.Load()
	reads := !stopping || c.codec != nil && c.codec.transport() == transportHTTP
	if c.closing == notClosing && !c.paused && reads {
		handed := c.work.seq
		out = c.serve(out)
		if c.work.seq == handed+1 && e.yield {
			out = c.awaitOne(out)
		}
	}
	if stopping && c.closing == notClosing && c.work.inflight == 0 && (!reads || c.timer.partial.Load() == 0) {
		out = c.closeAfterFlush(out, closeStopping)
	}
	wrote := len(out) > 0
	if wrote {
		c.loop.stats.out[c.tport].Add(uint64(len(out)))
		_, _ = gc.Write(out)
		c.timer.lastActive.Store(now)
	}
	c.loop.out = out[:0]
	if cap(c.loop.out) > maxLoopBuffer {
		c.loop.out = nil
	}

	pending := c.trackOutput(now)
	if p := int64(pending); p != c.mail.unsent.Load() || p+c.mail.queued.Load() != c.held.Load() { // account, by hand
		c.accountSlow(p)
	}
	if c.closing != notClosing {
		if c.work.inflight == 0 && pending == 0 {
			return gnet.Close
		}
		_, _ = gc.Discard(-1)
		if c.gate.off {
			c.gateInput(true, pending, wrote) // still held back: keep gnet from reading again
		}
		c.setWaiting(pending > 0) // the ticker wakes us to check again
		return gnet.None
	}
	// Back-pressure: a client that does not read its replies is not read
	// either, nor one that holds more than its share of the server's
	// budget under pressure (budget.go), nor, while something is left
	// unread, one whose work is at its limit (MaxInFlight, or replies
	// held for order). Its socket is not read (gateInput): the kernel
	// holds what it sends. Where that cannot be done (pause_other.go)
	// gnet goes on buffering what arrives, and after a flush one read may
	// slip in: a client that keeps sending past one message and one head
	// is closed, so memory stays bounded.
	if c.paused {
		c.paused = c.stillPaused(pending)
	} else {
		c.paused = c.mustPause(pending)
	}
	in := gc.InboundBuffered()
	hold := c.paused || in > 0 && !c.canRead()
	if hold && in > e.opts.MaxMessageSize+e.opts.MaxHeaderSize+c.gateSlack() {
		e.opts.Logger.Warn("jetrpc: client sent too much while its connection was held back: disconnected", "remote", c.remote())
		return c.closeNow(closeFlood)
	}
	if hold || c.gate.off {
		c.gateInput(hold, pending, wrote)
	}
	c.setWaiting(c.paused || c.mail.queued.Load() > 0)
	return gnet.None
}

// awaitOne lets the worker that took the one message of this read run
// now, and collects its reply if it is ready: when the event loops take
// every P (Engine.yield), a worker runs only when a loop lets it, and a
// loop busy with other connections would leave the reply for its next
// pass — the latency of every request of a client that sends one at a
// time (HTTP without pipelining, most WebSocket clients). A method that
// blocks lets the loop go on at once; a read that handed off several
// messages does not wait, so that their replies are gathered in one
// pass.
func (c *conn) awaitOne(out []byte) []byte {
	runtime.Gosched()
	if c.mail.pending() {
		out = c.collect(out)
	}
	return out
}

// serve hands the buffered input to the codec, appending replies to out.
func (c *conn) serve(out []byte) []byte {
	gc := c.gc
	if !c.canRun() || c.codec != nil && !c.codec.ready(c) {
		// No message may start, or one of known size is still arriving:
		// leave the input in gnet's buffer (no Peek copy).
		return out
	}
	in, _ := gc.Peek(-1)
	if len(in) == 0 {
		return out
	}
	if c.codec == nil {
		c.use(sniff(in[0]))
		if c.codec.transport() == transportStream && c.e.opts.Authorize != nil {
			if out = c.authorizeStream(out); c.closing != notClosing {
				_, _ = gc.Discard(-1)
				return out
			}
		}
	}
	used := 0
	for used < len(in) && c.closing == notClosing {
		var n int
		var next codec
		out, n, next = c.codec.serve(c, in[used:], out)
		used += n
		if next == nil {
			break
		}
		c.codec.release()
		c.use(next) // an upgrade: the rest is the next protocol's
	}
	c.loop.pending.Flush() // the read's calls into the table's counters; the next read's handling times start afresh
	if used > 0 {
		c.loop.stats.in[c.tport].Add(uint64(used))
		_, _ = gc.Discard(used) // never Discard(0): that discards everything
	}
	return out
}

// sniff picks the codec of a connection from its first byte: HTTP
// begins with a method, an upper-case token; anything else is a JSON
// stream, so that every stream input gets a JSON-RPC answer.
func sniff(first byte) codec {
	if first >= 'A' && first <= 'Z' {
		return newHTTPCodec()
	}
	return newStreamCodec()
}

// use makes k the connection's codec.
func (c *conn) use(k codec) {
	c.codec = k
	c.timer.silent.Store(false)
	t := k.transport()
	open := &c.e.stats.open
	open[c.tport].Add(-1)
	open[t].Add(1)
	c.tport = t
	c.call.Meta.Transport = t.meta()
	if t == transportWebSocket || t == transportStream {
		// What a method sends while it runs goes before its reply.
		c.direct.c = c
		c.call.Conn = &c.direct
	}
	k.open(c)
}

// canRun reports whether another message may start, by the core's
// limits; a codec adds its own (blocked). Kept inlinable: codecs call it
// for every message.
func (c *conn) canRun() bool {
	return c.closing == notClosing && c.work.inflight < c.e.opts.MaxInFlight && len(c.behind) < c.e.opts.MaxInFlight
}

// canRead reports whether the connection's input may be read now: a
// message may start, and the codec is not blocked.
func (c *conn) canRead() bool {
	return c.canRun() && (c.codec == nil || !c.codec.blocked(c))
}

// closeAfterFlush sets the connection to close, for why, once its work in
// flight is answered and its output flushed; the codec's last words
// (a WebSocket close frame) are appended to out. From then on no input
// is served. Only the first call counts.
func (c *conn) closeAfterFlush(out []byte, why closeReason) []byte {
	if c.closing != notClosing {
		return out
	}
	c.closing = why
	if c.codec != nil {
		if why == closeStopping && c.e.notice != nil {
			out = c.codec.push(c, out, c.e.notice) // HTTP cannot push: nothing
		}
		out = c.codec.goodbye(c, out, why)
	}
	return out
}

// closeNow returns gnet.Close, noting why the connection closes unless
// a reason was given before.
func (c *conn) closeNow(why closeReason) gnet.Action {
	if c.closing == notClosing {
		c.closing = why
	}
	return gnet.Close
}

// remote is the client's address, for logs.
func (c *conn) remote() string {
	if a := c.gc.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

// wakeLoop makes the loop call traffic soon. Safe from any goroutine.
func (c *conn) wakeLoop() { c.waker.wake(c) }

// release drops the connection's buffers, its finished work and its
// pushes, and ends its context. Event loop only, from OnClose (or the
// goroutine of a connection finishing off its loop).
func (c *conn) release() {
	c.gone.Store(true)
	if c.work.timed > 0 {
		// Its calls still on workers are released by them (the mailbox is
		// closed below): the loop must not watch them.
		c.loop.scratch = c.loop.deadlines.dropConn(c, c.loop.scratch[:0])
		clear(c.loop.scratch)
	}
	clear(c.work.late)
	c.work.late = c.work.late[:0]
	// The context first: a streamed reply's method, refused its next part
	// by the mailbox's close, finds its context done.
	c.cancel()
	if n := c.mail.close(); n > 0 {
		c.e.stats.pushDrops.Add(n)
	}
	if c.held.Load() != 0 {
		c.setHeld(0)
	}
	if c.codec != nil {
		c.codec.release()
	}
}

// readGate is the state of a connection's socket reading
// (pause_linux.go). Event loop only.
type readGate struct {
	epfd, fd int32 // the loop's epoll and the connection's descriptors; epfd 0: not looked up yet, -1: none usable
	off      bool  // reading is off: the kernel holds the client's bytes
	out      bool  // EPOLLOUT was on when the gate was last set
}

// timers is the timeout state of a connection. Its atomics are read by
// the ticker; the rest is event loop only.
type timers struct {
	lastActive atomic.Int64 // last input or reply (engine clock)
	lastInput  atomic.Int64 // last input, kept only with pings
	partial    atomic.Int64 // since when a message has been incomplete, or 0
	stalled    atomic.Int64 // since when output has waited without progress, or 0
	silent     atomic.Bool  // no byte read yet (no codec): FirstByteTimeout applies
	pings      atomic.Bool  // idle counts from input alone, and the client is pinged (WebSocket)
	pingSent   atomic.Bool  // a ping is unanswered
	lastOut    int          // unsent output at the last check; event loop only
	waiting    bool         // in Engine.waiters: wants a Wake from the ticker; event loop only
}

// input notes that input arrived at now.
func (t *timers) input(now int64) {
	t.lastActive.Store(now)
	if t.pings.Load() {
		t.lastInput.Store(now)
		if t.pingSent.Load() {
			t.pingSent.Store(false)
		}
	}
}

// markPartial notes that a message is incomplete, from now if it was
// not already. Event loop only.
func (c *conn) markPartial() {
	if c.timer.partial.Load() == 0 {
		c.timer.partial.Store(c.e.now.Load())
	}
}

// clearPartial notes that no message is incomplete. Event loop only.
func (c *conn) clearPartial() {
	if c.timer.partial.Load() != 0 {
		c.timer.partial.Store(0)
	}
}

// Timeouts, as expired reports them.
const (
	notExpired = iota
	expiredIdle
	expiredRead
	expiredWrite
	expiredPing
)

// expired reports which timeout has passed, if any. Safe from any
// goroutine.
func (c *conn) expired(now int64) int {
	o, t := &c.e.opts, &c.timer
	if s := t.stalled.Load(); s != 0 && o.WriteTimeout > 0 && now-s > int64(o.WriteTimeout) {
		return expiredWrite
	}
	if p := t.partial.Load(); p != 0 && o.ReadTimeout > 0 && now-p > int64(o.ReadTimeout) {
		return expiredRead
	}
	if t.pings.Load() {
		// The connection is idle when the client has sent nothing, pongs
		// included, for IdleTimeout; a ping goes out after PingInterval.
		idle := now - t.lastInput.Load()
		if o.IdleTimeout > 0 && idle > int64(o.IdleTimeout) {
			return expiredIdle
		}
		if o.PingInterval > 0 && idle > int64(o.PingInterval) && !t.pingSent.Load() {
			return expiredPing
		}
		return notExpired
	}
	if o.IdleTimeout > 0 && now-t.lastActive.Load() > int64(o.IdleTimeout) {
		return expiredIdle
	}
	if o.FirstByteTimeout > 0 && t.silent.Load() && now-t.lastActive.Load() > int64(o.FirstByteTimeout) {
		return expiredIdle // lastActive: when it was accepted
	}
	return notExpired
}

// trackOutput notes the unsent output and returns it. The write timeout
// counts from the last time the output shrank: a client that reads
// slowly but steadily is not cut off.
func (c *conn) trackOutput(now int64) int {
	t := &c.timer
	pending := c.gc.OutboundBuffered()
	switch {
	case pending == 0:
		if t.stalled.Load() != 0 {
			t.stalled.Store(0)
		}
	case t.stalled.Load() == 0 || pending < t.lastOut:
		t.stalled.Store(now)
	}
	t.lastOut = pending
	return pending
}

// pollDue reports whether the ticker, at its tick number tick, wakes a
// connection waiting for its output to drain: at every tick (10 ms)
// while the output moves, at every tenth once it has not moved for
// 100 ms, and from a second on only at the sweep (once a second) — a
// client that reads again is noticed within a second, and thousands that
// never read cost a few wakes each per second. A client that reads its
// output to the end makes gnet read its socket again (pause_linux.go),
// which calls traffic at once. Safe from any goroutine.
func (c *conn) pollDue(now int64, tick uint64) bool {
	s := c.timer.stalled.Load()
	switch age := now - s; {
	case s == 0 || age < int64(100*time.Millisecond):
		return true
	case age < int64(time.Second):
		return tick%10 == 0
	}
	return false
}

// setWaiting adds the connection to, or removes it from, the set the
// ticker wakes to see its output drain (as often as pollDue says).
func (c *conn) setWaiting(on bool) {
	if on == c.timer.waiting {
		return
	}
	c.timer.waiting = on
	c.e.setWaiter(c, on)
}
