package engine

// NOTE: running messages. run is the one path every codec takes for a
// complete message: the table runs it inline, now, when it can (inline
// methods, faults, unknown methods, short inline batches), and the reply
// is appended in place behind the head the codec reserved; otherwise the
// table hands back the message already parsed and planned
// (handler.Pending, with its own copy of the bytes), which becomes a job
// on the engine's worker pool — or is answered "Server busy" at once when
// the pool is full. A job's reply comes back through the connection's
// mailbox: the worker queues it and wakes the loop once per burst, and
// collect gives each reply to the codec, which frames it (and, for HTTP,
// keeps request order).

import (
	"sync"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool"
)

var _ pool.Task = (*job)(nil)

// workState counts a connection's messages on workers. Event loop only.
type workState struct {
	inflight int      // messages on workers, or answered but not yet handed to the codec
	seq      uint64   // sequence number of the last message sent to a worker
	running  []uint64 // sequence numbers of the messages on workers
	timed    int      // jobs whose deadline its loop watches (deadline.go)
	late     []*job   // jobs past their deadline, taken from their lanes, to answer (answerLate)

	cancel atomic.Pointer[cancels] // the calls a cancel notification may cancel (cancel.go); nil until the first; written on the loop, read from any goroutine
}

// notLate removes j from the late jobs, if it is there.
func (w *workState) notLate(j *job) {
	for i, x := range w.late {
		if x == j {
			w.late = append(w.late[:i], w.late[i+1:]...)
			return
		}
	}
}

// lowest returns the sequence number of the oldest message still on a
// worker, or the largest number when there is none.
func (w *workState) lowest() uint64 {
	low := ^uint64(0)
	for _, s := range w.running {
		low = min(low, s)
	}
	return low
}

// finished removes seq from the running messages.
func (w *workState) finished(seq uint64) {
	w.inflight--
	if cs := w.cancel.Load(); cs != nil {
		cs.forget(seq)
	}
	for i, s := range w.running {
		if s == seq {
			last := len(w.running) - 1
			w.running[i] = w.running[last]
			w.running = w.running[:last]
			return
		}
	}
}

// job is a message run on a worker (a pool.Task), or a reply a codec
// holds for order.
type job struct {
	c    *conn
	p    handler.Pending // the message and its parse
	out  []byte          // its reply (the body; a codec may keep a framed reply here); kept with the job in its pool
	seq  uint64
	tag  uint8  // what the codec needs to frame the reply (HTTP: keep-alive, version); codec-defined, set before the job runs
	cors string // HTTP: the reply's CORS header lines (Engine.corsLines), or ""
	page *Page  // a page to make (page.go) instead of a message to run
	next *job   // in the mailbox's done list

	// ctx is the context the message runs with: the connection's own
	// (c.call, whose metadata does not change on WebSocket and streams),
	// or call, a copy for an HTTP request with its head copied into head.
	ctx  *handler.CallContext
	call handler.CallContext
	head []byte // kept with the job in its pool

	rs  replyStream // its reply, when streamed in parts (streamed.go)
	sse *sseConn    // the Conn of an HTTP call answered as an event stream (sse.go), or nil

	// A call whose deadline the loop watches (deadline.go). Set on the
	// loop before the job is submitted, read by the worker; the rest is
	// event loop only.
	deadline int64  // when the loop answers it if its reply has not come (a reading of package clock), or, for an event stream, when RunHere does; 0: none
	timeout  int64  // the timeout deadline was set from: the lane it is in
	late     []byte // the reply it gets at its deadline (AppendTimeout); kept with the job in its pool
	answered bool   // the loop answered it at its deadline: its worker's reply is dropped
	lane     *lane  // the lane it is in, or nil
	dprev    *job   // in its lane
	dnext    *job

	cx callCancel // its own context under call, when a cancel notification may cancel it (cancel.go); kept with the job in its pool
}

var jobs = sync.Pool{New: func() any { return new(job) }}

// newJob returns an empty job of c. It must be released.
func newJob(c *conn) *job {
	j := jobs.Get().(*job)
	j.c = c
	return j
}

// maxJobReply: a job keeps a reply buffer up to this size for its next
// use; a larger one is dropped.
const maxJobReply = 64 << 10

// release returns j to its pool. Its Pending was run or answered busy
// (both empty it).
func (j *job) release() {
	out := j.out[:0]
	if cap(out) > maxJobReply {
		out = nil
	}
	head := j.head[:0]
	if cap(head) > maxHeadBuf {
		head = nil
	}
	// Field by field: a job is large and released for every message run
	// on a worker, and two of its parts need no clearing — its Pending,
	// which Run and Busy empty, and its CallContext, which the next HTTP
	// job overwrites whole (CopyTo) and other jobs do not use.
	// TestJob_releaseClearsEveryField checks that no field is missed.
	j.c, j.out, j.head, j.late = nil, out, head, j.late[:0]
	j.seq, j.tag, j.cors, j.page, j.next, j.ctx = 0, 0, "", nil, nil, nil
	j.sse, j.call.Conn = nil, nil // never another connection's Conn (the next HTTP job sets Meta and Parent only)
	j.deadline, j.timeout, j.answered, j.lane, j.dprev, j.dnext = 0, 0, false, nil, nil, nil
	if j.rs.listed.Load() || len(j.rs.parts) > 0 || j.rs.gone || j.rs.sseHeld {
		j.rs.reset() // it streamed
	}
	jobs.Put(j)
}

// run serves one complete message. When it can run now, its reply (or
// nothing, for notifications) is appended to out as a bare body — the
// codec frames it — and j is nil; oc is handler.Malformed when msg was not
// JSON (a stream cannot be framed after that). Otherwise it went to a
// worker and j is its job, tagged with tag, whose reply comes back to the
// codec's reply; the job belongs to the worker until then, and the codec
// must not touch it. Or no worker could take it, and its "Server busy"
// answer was appended. msg is only read, and only until run returns.
func (c *conn) run(out, msg []byte, tag uint8) (o []byte, j *job, oc handler.Outcome) {
	if tag&tagSSE != 0 {
		// An event stream can carry a subscription's notifications: its
		// subscribe call goes to a worker, with a Conn of its own (sse.go).
		c.loop.pending.DeferSubscriptions(true)
		out, oc = c.e.table.DispatchInline(&c.call, out, msg, &c.loop.pending)
		c.loop.pending.DeferSubscriptions(false)
	} else {
		out, oc = c.e.table.DispatchInline(&c.call, out, msg, &c.loop.pending)
	}
	if oc != handler.Deferred {
		return out, nil, oc // every inline message
	}
	out, j = c.handOff(out, tag)
	return out, j, oc
}

// handOff makes the message DispatchInline deferred (in the loop's
// pending) a job and queues it on a worker, or answers it busy when the
// pool is full (j is then nil).
func (c *conn) handOff(out []byte, tag uint8) ([]byte, *job) {
	ls := c.loop
	j := newJob(c)
	j.p = ls.pending.Take() // the job owns the message now; the loop keeps its scratch
	if j.p.Streamed() && tag&tagSSEOnly == 0 {
		// Its reply goes in parts as the method makes them (streamed.go),
		// as JSON where the request takes JSON too: a streamed result and
		// events do not mix (an event is a whole message). Taking only an
		// event stream, it is built whole, one event.
		tag &^= tagSSE
		j.p.StreamTo(j)
	}
	j.tag = tag
	j.ctx = &c.call
	if c.call.Meta.Transport == handler.TransportHTTP {
		// The loop goes on to the next request: the job gets a copy of
		// this one's metadata, the head copied once.
		j.head = c.call.Meta.CopyTo(&j.call.Meta, j.head)
		j.call.Parent = c.ctx
		j.ctx = &j.call
		if tag&tagSSE != 0 {
			// Answered as an event stream: the messages it sends go first.
			j.sse = &sseConn{j: j, c: c}
			j.call.Conn = j.sse
		}
	}
	deadline, timeout := j.p.Deadline()
	if timeout > 0 {
		j.deadline, j.timeout = deadline, int64(timeout)
		j.late = j.p.AppendTimeout(j.late[:0])
	}
	if c.e.table.Cancels() { // inlined: off, a call pays one load
		c.cancellable(j)
	}
	c.e.stats.inflight.Add(1)
	if !c.submit(j) {
		c.forgetCall(j)
		c.e.stats.inflight.Add(-1)
		c.loop.stats.busy[c.tport].Add(1)
		out = j.p.Busy(j.ctx, out)
		j.release()
		return out, nil
	}
	if j.deadline != 0 && tag&tagSSE == 0 {
		// The loop answers it at its deadline. An event stream that has
		// begun cannot become the timeout's reply: its worker answers it
		// (RunHere, its context ending at the deadline) when it returns.
		c.loop.deadlines.add(j, j.timeout)
	}
	return out, j
}

// submit queues j on a worker, its reply to come back through the
// mailbox in order; false when the pool is full (j is then still the
// caller's).
func (c *conn) submit(j *job) bool {
	j.seq = c.work.seq + 1
	c.mail.submitted.Store(j.seq) // before the job can run: a push it causes waits for its reply
	if !c.e.workers.TrySubmit(j) {
		return false
	}
	c.work.seq = j.seq
	c.work.running = append(c.work.running, j.seq)
	c.work.inflight++
	return true
}

// Run executes the job on a worker and hands the reply back to the
// connection's loop. A call whose deadline the loop watches runs here
// too (RunHere): the loop answers it at its deadline.
func (j *job) Run() {
	switch {
	case j.page != nil:
		j.runPage()
	case j.deadline != 0:
		j.out = j.p.RunHere(j.ctx, j.out[:0])
		j.c.e.stats.inflight.Add(-1)
	default:
		j.out = j.p.Run(j.ctx, j.out[:0])
		j.c.e.stats.inflight.Add(-1)
	}
	if j.sse != nil {
		j.sse.finishCall() // its events end with its reply, unless a subscription holds its stream
	}
	if j.ctx == &j.call && j.call.Parent == &j.cx {
		j.answerCancelled() // and ends its own context
	}
	j.c.finish(j)
}

// collect hands the replies of finished jobs to the codec, oldest first,
// answers the calls whose deadline passed without a reply (answerLate),
// then writes the server pushes that may go. Event loop only.
func (c *conn) collect(out []byte) []byte {
	done := c.mail.takeDone()
	if c.mail.queued.Load() > 0 {
		// What the methods sent before they returned goes before their
		// replies: taken after the replies, so that it is all there.
		out = c.drainPushes(out)
	}
	for j := done; j != nil; {
		next := j.next
		j.next = nil
		switch {
		case j.answered: // at its deadline: the late reply is dropped
			j.release()
		default:
			c.loop.deadlines.remove(j)
			if len(c.work.late) > 0 {
				c.work.notLate(j) // its reply came before the loop answered it: the reply goes
			}
			c.work.finished(j.seq)
			if c.strm == nil && !j.rs.listed.Load() {
				out = c.codec.reply(c, out, j) // no streamed reply in the way
			} else {
				out = c.replyDone(out, j)
			}
		}
		j = next
	}
	for i, j := range c.work.late {
		c.work.late[i] = nil
		out = c.answerLate(out, j)
	}
	c.work.late = c.work.late[:0]
	if c.streaming() {
		out = c.pumpStreams(out)
	}
	if c.mail.queued.Load() > 0 {
		out = c.drainPushes(out)
	}
	return out
}

// answerLate answers j, a call whose deadline passed while it runs on
// its worker, with its timeout reply, in its place in the order of
// replies; the worker's reply is dropped when it comes. Event loop
// only.
func (c *conn) answerLate(out []byte, j *job) []byte {
	r := newJob(c)
	r.seq, r.tag, r.cors = j.seq, j.tag, j.cors
	r.out, j.late = j.late, r.out[:0] // j.late is the loop's: the worker never reads it
	j.answered = true
	c.work.finished(j.seq)
	c.codec.swap(j, r)
	return c.codec.reply(c, out, r)
}
