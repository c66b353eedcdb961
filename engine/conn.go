package engine

// NOTE: one connection's state machine, run on its event loop. traffic()
// first writes the replies that workers finished (the done queue), then
// frames and serves buffered input — HTTP/1.1 or a JSON stream, sniffed
// from the first byte — appending every reply to the loop's out buffer,
// and writes it with one Write. Input is read with one Peek and released
// with one Discard of whole messages; a partial message stays in gnet's
// buffer, its scan state kept here so that it is not scanned again.
//
// A message that needs a worker is copied into a pooled buffer and
// queued on the engine's pool; its reply comes back through done. HTTP
// replies must keep request order, so an HTTP connection reads no further
// while one of its requests is on a worker; a stream goes on with the
// next messages (up to MaxInFlight on workers) and replies as they finish.

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/panjf2000/gnet/v2"
)

// Protocols of a connection.
const (
	protoUnknown = iota
	protoHTTP
	protoStream
	protoWS
)

// Kinds of job, by the framing of their replies.
const (
	kindHTTP = iota
	kindStream
	kindWS
)

// HTTP phases.
const (
	phaseHead = iota // reading a request head
	phaseBody        // head routed, reading its body
)

// conn is one connection's state. Fields are event loop only unless
// marked otherwise.
type conn struct {
	e    *Engine    // immutable
	gc   gnet.Conn  // immutable
	loop *loopState // immutable

	proto   int
	closing bool // close once the output is flushed and nothing is in flight
	paused  bool // too much unsent output: input is left unread

	// HTTP
	phase   int
	head    headScan
	req     httpReq // the request being read (spans valid in phaseHead only)
	sent100 bool
	chunk   chunkState
	body    *pool.Buffer // a chunked body being decoded
	need    int          // bytes that must be buffered before a Peek is worth it
	onWork  bool         // an HTTP request is on a worker

	// streams
	framer parser.Framer
	acc    *pool.Buffer // a large message being gathered, and what follows it

	// WebSocket
	wsFragOp ws.OpCode    // opcode of the fragmented message being gathered, or 0
	wsFrag   *pool.Buffer // its payload so far

	inflight int      // messages on workers
	seq      uint64   // sequence number of the last message sent to a worker
	running  []uint64 // sequence numbers of the messages on workers

	ctx    context.Context // of every request of the connection; done when it closes
	cancel context.CancelFunc

	// Shared with workers, pushers and the ticker.
	mu         sync.Mutex // guards done, dead, pushHead, pushTail
	done       *job       // finished work, newest first
	dead       bool       // closed: finished work and pushes are dropped
	pushHead   *push      // server messages to send, oldest first
	pushTail   *push
	queued     atomic.Int64  // bytes in the push queue
	submitted  atomic.Uint64 // seq, for pushers
	pushable   atomic.Bool   // a stream or a WebSocket: Send works
	isWS       atomic.Bool   // a WebSocket
	kill       atomic.Bool   // a pusher overflowed the queue: close now
	shut       atomic.Bool   // no more server messages: a WebSocket close frame has gone out
	pingSent   atomic.Bool   // a WebSocket ping is unanswered
	lastInput  atomic.Int64  // last input of a WebSocket (engine clock)
	waking     atomic.Bool
	waiting    bool          // in Engine.waiters: wants a Wake from the ticker; event loop only
	lastActive atomic.Int64  // last input or reply (engine clock)
	partial    atomic.Int64  // since when a message has been incomplete, or 0
	stalled    atomic.Int64  // since when output has been waiting without progress, or 0
	lastOut    int           // unsent output at the last check; event loop only
	lameWake   chan struct{} // set when the client half-closed and the connection finishes off the loop (halfclose.go)
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
func (cs *conn) expired(now int64) int {
	o := &cs.e.opts
	if s := cs.stalled.Load(); s != 0 && o.WriteTimeout > 0 && now-s > int64(o.WriteTimeout) {
		return expiredWrite
	}
	if p := cs.partial.Load(); p != 0 && o.ReadTimeout > 0 && now-p > int64(o.ReadTimeout) {
		return expiredRead
	}
	if cs.isWS.Load() {
		// A WebSocket is idle when the client has sent nothing, pongs
		// included, for IdleTimeout; a ping goes out after PingInterval.
		idle := now - cs.lastInput.Load()
		if o.IdleTimeout > 0 && idle > int64(o.IdleTimeout) {
			return expiredIdle
		}
		if o.PingInterval > 0 && idle > int64(o.PingInterval) && !cs.pingSent.Load() {
			return expiredPing
		}
		return notExpired
	}
	if o.IdleTimeout > 0 && now-cs.lastActive.Load() > int64(o.IdleTimeout) {
		return expiredIdle
	}
	return notExpired
}

// traffic serves the connection. Event loop only.
func (cs *conn) traffic() gnet.Action {
	e, gc, ls := cs.e, cs.gc, cs.loop
	now := e.now.Load()
	out := ls.out[:0]
	if cs.kill.Load() {
		// A client that does not read its pushed messages (logged here, on
		// the loop, where the connection's address is safe to read).
		e.opts.Logger.Warn("jetrpc: client too slow to read its server messages: disconnected", "remote", cs.remote())
		return gnet.Close
	}
	if cs.waking.Load() || cs.queued.Load() > 0 {
		out = cs.drain(out)
	}
	if cs.stalled.Load() != 0 {
		cs.trackOutput(now) // progress since the last check resets the write timeout before it is judged
	}
	if gc.InboundBuffered() > 0 {
		cs.lastActive.Store(now)
		if cs.proto == protoWS { // only a WebSocket counts idleness from input alone
			cs.lastInput.Store(now)
			if cs.pingSent.Load() {
				cs.pingSent.Store(false)
			}
		}
	}
	switch cs.expired(now) {
	case expiredPing:
		if !cs.closing { // nothing follows a close frame
			out = appendWSFrame(out, ws.OpPing, nil)
			cs.pingSent.Store(true)
		}
	case expiredWrite:
		// The client has not read its replies for WriteTimeout: waiting
		// for them to flush would wait forever.
		return gnet.Close
	case expiredRead:
		if cs.proto == protoWS && !cs.closing {
			out = cs.closeWS(out, ws.StatusPolicyViolation, "incomplete frame timed out")
		}
		cs.closing = true // slowloris: the message never completed
		_, _ = gc.Discard(-1)
	case expiredIdle:
		if cs.inflight == 0 {
			if cs.proto == protoWS && !cs.closing {
				out = cs.closeWS(out, ws.StatusGoingAway, "idle timeout")
			}
			cs.closing = true
			_, _ = gc.Discard(-1)
		}
	}
	if !cs.closing && !cs.paused {
		out = cs.serve(out)
	}
	if e.draining.Load() && cs.proto == protoWS && !cs.closing && cs.inflight == 0 && cs.partial.Load() == 0 {
		out = cs.closeWS(out, ws.StatusGoingAway, "server stopping")
	}
	if len(out) > 0 {
		_, _ = gc.Write(out)
		cs.lastActive.Store(now)
	}
	ls.out = out[:0]
	if cap(ls.out) > maxLoopBuffer {
		ls.out = nil
	}

	pending := cs.trackOutput(now)
	if e.draining.Load() && cs.inflight == 0 && cs.partial.Load() == 0 {
		cs.closing = true
	}
	if cs.closing {
		if cs.inflight == 0 && pending == 0 {
			return gnet.Close
		}
		_, _ = gc.Discard(-1)
		cs.setWaiting(pending > 0) // the ticker wakes us to check again
		return gnet.None
	}
	// Back-pressure: a client that does not read its replies is not read
	// either. Input is not read either while the connection's work is at
	// its limit (MaxInFlight, or an HTTP request on a worker). gnet goes
	// on buffering what arrives, so a client that keeps sending past one
	// message and one head is closed: memory stays bounded.
	cs.paused = pending > e.opts.MaxPendingOutput
	if (cs.paused || !cs.canRun()) && gc.InboundBuffered() > e.opts.MaxMessageSize+e.opts.MaxHeaderSize {
		e.opts.Logger.Warn("jetrpc: client sent too much while its connection was held back: disconnected", "remote", cs.remote())
		return gnet.Close
	}
	cs.setWaiting(cs.paused || cs.queued.Load() > 0)
	return gnet.None
}

// trackOutput notes the unsent output and returns it. The write timeout
// counts from the last time the output shrank: a client that reads
// slowly but steadily is not cut off. Event loop only.
func (cs *conn) trackOutput(now int64) int {
	pending := cs.gc.OutboundBuffered()
	switch {
	case pending == 0:
		cs.stalled.Store(0)
	case cs.stalled.Load() == 0 || pending < cs.lastOut:
		cs.stalled.Store(now)
	}
	cs.lastOut = pending
	return pending
}

// setWaiting adds the connection to, or removes it from, the set the
// ticker wakes every 10 ms (to see its output drain). Event loop only.
func (cs *conn) setWaiting(on bool) {
	if on == cs.waiting {
		return
	}
	cs.waiting = on
	e := cs.e
	e.mu.Lock()
	if on {
		e.waiters[cs] = struct{}{}
	} else {
		delete(e.waiters, cs)
	}
	e.mu.Unlock()
}

// maxLoopBuffer: a loop's scratch buffer larger than this is dropped.
const maxLoopBuffer = 1 << 20

// serve frames and runs buffered input, appending replies to out.
func (cs *conn) serve(out []byte) []byte {
	gc := cs.gc
	if cs.need > 0 && gc.InboundBuffered() < cs.need {
		return out // a known-size body is still arriving: not worth a Peek
	}
	if !cs.canRun() {
		return out // no message may start: leave the input in gnet's buffer (no Peek copy)
	}
	in, _ := gc.Peek(-1)
	if len(in) == 0 {
		return out
	}
	if cs.acc != nil {
		return cs.serveGathered(in, out)
	}
	if cs.proto == protoUnknown {
		if c := in[0]; (c|0x20) >= 'a' && (c|0x20) <= 'z' {
			cs.proto = protoHTTP
		} else {
			cs.proto = protoStream
			cs.pushable.Store(true)
		}
	}
	var used int
	switch cs.proto {
	case protoHTTP:
		out, used = cs.serveHTTP(in, out)
		if cs.proto == protoWS && used < len(in) && !cs.closing {
			// Frames sent right behind the handshake.
			var n int
			out, n = cs.serveWS(in[used:], out)
			used += n
		}
	case protoWS:
		out, used = cs.serveWS(in, out)
	default:
		out, used = cs.serveStream(in, out)
		if len(in)-used >= gatherAt && cs.framer.Partial() && !cs.closing {
			// A large message is still arriving. gnet's Peek copies all
			// that is buffered at every read once its buffer is in use, a
			// cost quadratic in the message's size; gathered here instead,
			// each read is copied once.
			cs.acc = pool.Requests.Get()
			cs.acc.B = append(cs.acc.B, in[used:]...)
			used = len(in)
		}
	}
	if used > 0 {
		_, _ = gc.Discard(used) // never Discard(0): that discards everything
	}
	return out
}

// gatherAt is the size of a partial stream message from which it is
// gathered in a buffer of the connection's own.
const gatherAt = 64 << 10

// serveGathered serves a stream whose input is gathered in cs.acc: in,
// gnet's new bytes, is appended to it. Back to gnet's buffer once all is
// consumed.
func (cs *conn) serveGathered(in, out []byte) []byte {
	cs.acc.B = append(cs.acc.B, in...)
	_, _ = cs.gc.Discard(len(in))
	var used int
	out, used = cs.serveStream(cs.acc.B, out)
	if used == 0 {
		return out // still partial: nothing to move
	}
	n := copy(cs.acc.B, cs.acc.B[used:])
	cs.acc.B = cs.acc.B[:n]
	if n == 0 {
		pool.Requests.Put(cs.acc)
		cs.acc = nil
	}
	return out
}

// canRun reports whether another message may start.
func (cs *conn) canRun() bool {
	return !cs.closing && !cs.onWork && cs.inflight < cs.e.opts.MaxInFlight
}

// serveStream frames JSON values in in and serves them.
func (cs *conn) serveStream(in, out []byte) ([]byte, int) {
	e := cs.e
	cs.framer.MaxSize = e.opts.MaxMessageSize
	off := 0
	for off < len(in) && cs.canRun() {
		start, end, st := cs.framer.Next(in[off:])
		switch st {
		case parser.NeedMore:
			off += end // whitespace between messages
			if !cs.framer.Partial() {
				cs.partial.Store(0)
			} else if cs.partial.Load() == 0 {
				cs.partial.Store(e.now.Load())
			}
			return out, off
		case parser.Malformed:
			out = appendStreamError(out, handler.CodeParseError, "Parse error: invalid character looking for beginning of value")
			cs.closing = true
			return out, len(in)
		case parser.TooLarge:
			out = appendStreamError(out, handler.CodeInvalidRequest, "Invalid Request: message exceeds the size limit")
			cs.closing = true
			return out, len(in)
		}
		cs.partial.Store(0)
		msg := in[off+start : off+end]
		off += end
		mark := len(out)
		var oc handler.Outcome
		out, oc = e.table.Serve(cs.ctx, out, msg, true)
		switch oc {
		case handler.Deferred:
			if !cs.submit(msg, kindStream, 0) {
				out = e.table.AppendBusy(out, msg)
			}
		case handler.Malformed:
			cs.closing = true // the stream cannot be framed reliably any more
		}
		if len(out) > mark {
			out = append(out, '\n')
		}
		if cs.queued.Load() > 0 {
			// Server messages queued while this one ran go before the
			// replies to later messages.
			out = cs.drainPushes(out)
		}
	}
	return out, off
}

// appendStreamError appends an error reply with a null id and a newline.
func appendStreamError(out []byte, code handler.Code, msg string) []byte {
	out = append(out, `{"jsonrpc":"2.0","error":{"code":`...)
	out = appendInt(out, int64(code))
	out = append(out, `,"message":`...)
	out = handler.AppendString(out, msg)
	return append(out, "},\"id\":null}\n"...)
}

// serveHTTP parses and serves the HTTP requests buffered in in.
func (cs *conn) serveHTTP(in, out []byte) ([]byte, int) {
	e := cs.e
	off := 0
	for off < len(in) && cs.canRun() {
		if cs.phase == phaseHead {
			st := parseHead(in[off:], &cs.head, e.opts.MaxHeaderSize, &cs.req)
			if st == 0 {
				if cs.partial.Load() == 0 {
					cs.partial.Store(e.now.Load())
				}
				return out, off
			}
			if st != statusOK {
				out = appendStatus(out, st, false, 1)
				cs.closing = true
				return out, len(in)
			}
			if cs.isWSUpgrade() {
				out = cs.upgradeWS(out, in[off:off+cs.req.headLen])
				off += cs.req.headLen
				cs.partial.Store(0)
				if cs.closing {
					return out, len(in)
				}
				return out, off
			}
			var done bool
			if out, done = cs.route(out); done {
				off += cs.req.headLen
				cs.partial.Store(0)
				continue
			}
			if cs.closing {
				return out, len(in)
			}
			off += cs.req.headLen
			cs.phase = phaseBody
		}
		// phaseBody: the head was consumed; in[off:] is body.
		r := &cs.req
		var msg []byte
		if r.chunked {
			if cs.body == nil {
				cs.body = pool.Requests.Get()
			}
			var n, st int
			var done bool
			cs.body.B, n, done, st = cs.chunk.decode(cs.body.B, in[off:], int64(e.opts.MaxMessageSize))
			off += n
			if st != 0 {
				out = appendStatus(out, st, false, r.minor)
				cs.closing = true
				return out, len(in)
			}
			if !done {
				out = cs.continue100(out)
				cs.markPartial()
				return out, off
			}
			msg = cs.body.B
		} else {
			n := int(max(r.bodyLen, 0))
			if len(in)-off < n {
				out = cs.continue100(out)
				cs.markPartial()
				cs.need = n
				return out, off
			}
			cs.need = 0
			msg = in[off : off+n]
			off += n
		}
		out = cs.call(out, msg)
		cs.partial.Store(0)
		cs.phase, cs.sent100 = phaseHead, false
		if cs.body != nil {
			pool.Requests.Put(cs.body)
			cs.body = nil
		}
	}
	return out, off
}

func (cs *conn) markPartial() {
	if cs.partial.Load() == 0 {
		cs.partial.Store(cs.e.now.Load())
	}
}

// continue100 answers Expect: 100-continue once the head is in and the
// body is not.
func (cs *conn) continue100(out []byte) []byte {
	if cs.req.expect100 && !cs.sent100 {
		cs.sent100 = true
		out = append(out, "HTTP/1.1 100 Continue\r\n\r\n"...)
	}
	return out
}

// route decides what a parsed head gets. done is true when the request
// was answered without a body to read; cs.closing is set when the
// connection must close.
func (cs *conn) route(out []byte) (o []byte, done bool) {
	r := &cs.req
	e := cs.e
	status := 0
	switch {
	case string(r.method) == "POST":
		switch {
		case !acceptableType(r.contentType):
			status = statusUnsupportedMedia
		case r.bodyLen > int64(e.opts.MaxMessageSize):
			out = appendStatus(out, statusPayloadTooLarge, false, r.minor)
			cs.closing = true
			return out, false
		default:
			return out, false // read the body
		}
	case string(r.method) == "GET" && pathOf(r.target) == e.opts.HealthPath:
		keep := r.keepAlive && !r.hasBody()
		out = appendHealth(out, keep, r.minor)
		if !keep {
			cs.closing = true
			return out, false
		}
		return out, true
	default:
		status = statusMethodNotAllowed
	}
	// An error with the body unread: keep the connection only if there is
	// no body to skip.
	keep := r.keepAlive && !r.hasBody()
	out = appendStatus(out, status, keep, r.minor)
	if !keep {
		cs.closing = true
		return out, false
	}
	return out, true
}

// acceptableType is handler.AcceptableContentType on bytes, without
// allocating: empty, or application/json, application/json-rpc or
// application/jsonrequest with any parameters.
func acceptableType(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	if k := bytes.IndexByte(v, ';'); k >= 0 {
		v = v[:k]
	}
	v = trimOWS(v)
	return equalFold(v, "application/json") || equalFold(v, "application/json-rpc") || equalFold(v, "application/jsonrequest")
}

// pathOf returns the path of a request target, without query.
func pathOf(target []byte) string {
	for i, c := range target {
		if c == '?' {
			return string(target[:i])
		}
	}
	return string(target)
}

// call runs one HTTP request body and appends its reply, or queues it.
func (cs *conn) call(out, msg []byte) []byte {
	e, ls, r := cs.e, cs.loop, &cs.req
	body, oc := e.table.Serve(cs.ctx, ls.body[:0], msg, true)
	if oc == handler.Deferred {
		if cs.submit(msg, kindHTTP, 0) {
			return out
		}
		body = e.table.AppendBusy(body, msg)
	}
	keep := r.keepAlive && !e.draining.Load() // stopping: tell the client not to reuse the connection
	out = appendReply(out, body, keep, r.minor)
	ls.body = body[:0]
	if cap(ls.body) > maxLoopBuffer {
		ls.body = nil
	}
	if !keep {
		cs.closing = true
	}
	return out
}

// job is a message run on a worker; a pool.Task.
type job struct {
	cs        *conn
	req       *pool.Buffer // the message, copied
	out       *pool.Buffer // its reply
	kind      int          // kindHTTP, kindStream, kindWS
	op        ws.OpCode    // WebSocket: the opcode of the message, and of its reply
	keepAlive bool
	minor     int
	seq       uint64
	next      *job // in conn.done
}

var jobs = sync.Pool{New: func() any { return new(job) }}

// submit copies msg and queues it on a worker. It reports false when the
// pool is full.
func (cs *conn) submit(msg []byte, kind int, op ws.OpCode) bool {
	j := jobs.Get().(*job)
	j.cs, j.kind, j.op, j.keepAlive, j.minor = cs, kind, op, cs.req.keepAlive, cs.req.minor
	j.seq = cs.seq + 1
	cs.submitted.Store(j.seq) // before the job can run: a push it causes waits for its reply
	j.req = pool.Requests.Get()
	j.req.B = append(j.req.B, msg...)
	if !cs.e.workers.TrySubmit(j) {
		pool.Requests.Put(j.req)
		*j = job{}
		jobs.Put(j)
		return false
	}
	cs.seq = j.seq
	cs.running = append(cs.running, j.seq)
	cs.inflight++
	if kind == kindHTTP {
		cs.onWork = true
	}
	return true
}

// Run executes the message on a worker and hands the reply back to the
// connection's loop.
func (j *job) Run() {
	e := j.cs.e
	j.out = pool.Responses.Get()
	j.out.B = e.table.Dispatch(j.cs.ctx, j.out.B, j.req.B)
	pool.Requests.Put(j.req)
	j.req = nil
	j.cs.finish(j)
}

// finish queues a finished job and wakes the loop once per burst. Safe
// from any goroutine.
func (cs *conn) finish(j *job) {
	cs.mu.Lock()
	if cs.dead {
		cs.mu.Unlock()
		j.release()
		return
	}
	j.next = cs.done
	cs.done = j
	lame := cs.lameWake
	cs.mu.Unlock()
	if lame != nil {
		select {
		case lame <- struct{}{}:
		default:
		}
		return
	}
	if cs.waking.CompareAndSwap(false, true) {
		_ = cs.gc.Wake(nil)
	}
}

func (j *job) release() {
	if j.req != nil {
		pool.Requests.Put(j.req)
	}
	if j.out != nil {
		pool.Responses.Put(j.out)
	}
	*j = job{}
	jobs.Put(j)
}

// drain writes the replies of finished jobs, oldest first. Event loop
// only.
func (cs *conn) drain(out []byte) []byte {
	cs.waking.Store(false)
	cs.mu.Lock()
	list := cs.done
	cs.done = nil
	cs.mu.Unlock()
	// Reverse to oldest first.
	var prev *job
	for list != nil {
		next := list.next
		list.next = prev
		prev, list = list, next
	}
	for j := prev; j != nil; {
		next := j.next
		switch {
		case j.kind == kindHTTP:
			keep := j.keepAlive && !cs.e.draining.Load()
			out = appendReply(out, j.out.B, keep, j.minor)
			cs.onWork = false
			if !keep {
				cs.closing = true
			}
		case len(j.out.B) == 0 || cs.closing && cs.proto == protoWS:
			// Nothing to say, or a close frame has gone out.
		case j.kind == kindWS:
			out = appendWSFrame(out, j.op, j.out.B)
		default:
			out = append(out, j.out.B...)
			out = append(out, '\n')
		}
		cs.inflight--
		cs.finished(j.seq)
		j.release()
		j = next
	}
	if cs.queued.Load() > 0 {
		out = cs.drainPushes(out)
	}
	return out
}

// finished removes seq from the running messages. Event loop only.
func (cs *conn) finished(seq uint64) {
	for i, s := range cs.running {
		if s == seq {
			last := len(cs.running) - 1
			cs.running[i] = cs.running[last]
			cs.running = cs.running[:last]
			return
		}
	}
}

// release drops the connection's buffers and finished work. Event loop
// only, from OnClose (or the half-closed connection's goroutine).
func (cs *conn) release() {
	cs.mu.Lock()
	cs.dead = true
	list := cs.done
	cs.done = nil
	pushes := cs.pushHead
	cs.pushHead, cs.pushTail = nil, nil
	cs.mu.Unlock()
	cs.cancel()
	for list != nil {
		next := list.next
		list.release()
		list = next
	}
	for pushes != nil {
		next := pushes.next
		pushes.release()
		pushes = next
	}
	cs.queued.Store(0)
	if cs.body != nil {
		pool.Requests.Put(cs.body)
		cs.body = nil
	}
	if cs.wsFrag != nil {
		pool.Requests.Put(cs.wsFrag)
		cs.wsFrag = nil
	}
	if cs.acc != nil {
		pool.Requests.Put(cs.acc)
		cs.acc = nil
	}
}
