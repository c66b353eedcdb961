package engine

// NOTE: cancelling calls in flight. With the table's Options.Cancel on
// (handler.Table.Cancels), every single call of a blocking method that
// goes to a worker runs with a context of its own, callCancel, kept in
// its job (pooled with it): the job's CallContext (its Meta, a copy of
// the connection's or the HTTP request's) over a callCancel over the
// connection's context. The connection lists those jobs, with a copy of
// their ids, in its calls (a small slice that MaxInFlight bounds,
// guarded by its mutex: a cancel notification runs on the event loop,
// or, inside a batch on a worker, there); CancelCall finds the id, byte
// for byte, and cancels the job's context. A callCancel makes its Done
// channel once and keeps it, with its job, from call to call until it
// is closed: a call that waits on Done costs no allocation either. Its
// parent's cancellation (the connection closes) reaches it through one
// context.AfterFunc per connection, made on the connection's first such
// call, which cancels every call the connection lists. Entries carry the
// generation of their job's context, so that a late cancel never reaches
// the next call a pooled job runs.
//
// A call cancelled by a notification before its method returned gets
// Table.AppendCancelled's reply (-32800, or nothing), whatever its
// method answered; one cancelled because its connection closed answers
// as its method does (the reply has nowhere to go but a half-closed
// client). With Options.Cancel off none of this runs: the job's context
// is the connection's, as before.

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/jetrpc/jetrpc/parser"
)

// closedChan is the Done of a callCancel cancelled before anyone asked
// for Done.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// callCancel is the context of one call that can be cancelled on its
// own. Its fields are guarded by mu; it is never cleared outside mu, and
// is reused by its job's next call (start).
type callCancel struct {
	mu       sync.Mutex
	parent   context.Context // the connection's context; nil while no call runs
	done     chan struct{}   // made on first Done and kept from call to call until closed
	closed   bool            // done is closed (or closedChan): the next start drops it
	err      error           // context.Canceled once cancelled
	byClient bool            // cancelled by a cancel notification (not by the connection's end)
	gen      uint64          // counts the calls the job ran with it
	id       []byte          // the call's id; kept with the job
	ver      parser.Version  // the call's version
}

var _ context.Context = (*callCancel)(nil)

// start makes x the context of a new call under parent, whose id is id;
// it returns the call's generation. Event loop only.
func (x *callCancel) start(parent context.Context, id []byte, v parser.Version) uint64 {
	x.mu.Lock()
	x.gen++
	x.parent, x.err, x.byClient = parent, nil, false
	if x.closed {
		x.done, x.closed = nil, false
	}
	x.id, x.ver = append(x.id[:0], id...), v
	g := x.gen
	x.mu.Unlock()
	return g
}

// cancel cancels the call of generation gen, if it is still x's and not
// cancelled yet; byClient says a notification asked. Safe from any
// goroutine.
func (x *callCancel) cancel(gen uint64, byClient bool) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if gen != x.gen || x.err != nil || x.parent == nil {
		return false
	}
	x.err, x.byClient = context.Canceled, byClient
	if x.done == nil {
		x.done = closedChan
	} else {
		close(x.done)
	}
	x.closed = true
	return true
}

// end ends the call: x no longer refers to its connection (a goroutine
// the method left behind sees Err and Done as they were, and no values).
// It reports whether a cancel notification cancelled the call, and
// returns its id and version. On the worker, once the method returned.
func (x *callCancel) end() ([]byte, parser.Version, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.parent = nil
	return x.id, x.ver, x.byClient
}

// Deadline returns the parent's deadline.
func (x *callCancel) Deadline() (time.Time, bool) { return x.parentCtx().Deadline() }

// Done is closed when the call is cancelled, by a notification or by its
// connection's end.
func (x *callCancel) Done() <-chan struct{} {
	x.mu.Lock()
	if x.done == nil {
		x.done = make(chan struct{})
	}
	d := x.done
	x.mu.Unlock()
	return d
}

// Err returns context.Canceled once the call is cancelled, or once its
// connection's context is done.
func (x *callCancel) Err() error {
	x.mu.Lock()
	err, p := x.err, x.parent
	x.mu.Unlock()
	if err != nil || p == nil {
		return err
	}
	return p.Err()
}

// Value returns the parent's values.
func (x *callCancel) Value(key any) any { return x.parentCtx().Value(key) }

func (x *callCancel) parentCtx() context.Context {
	x.mu.Lock()
	p := x.parent
	x.mu.Unlock()
	if p == nil {
		return context.Background() // the call has ended: nothing of the connection
	}
	return p
}

// runningCall is a call of the connection that CancelCall may cancel.
type runningCall struct {
	j   *job
	gen uint64 // j.cx's generation for this call
	seq uint64 // j.seq
	id  []byte // the call's id; the buffer is kept with the entry
}

// cancels is a connection's calls in flight that can be cancelled.
type cancels struct {
	mu    sync.Mutex
	calls []runningCall // guarded by mu
	ended bool          // the connection's context is done: every call was cancelled; guarded by mu
}

// cancellable gives j, a call about to go to a worker, a context of its
// own that CancelCall can cancel, when the table serves cancel
// notifications and j is a single call of a blocking method (not a
// batch, a notification or a streamed reply). Event loop only, just
// before j is submitted; forgetCall undoes it if it is not.
func (c *conn) cancellable(j *job) {
	if !c.e.table.Cancels() || j.p.Streamed() {
		return
	}
	id, v := j.p.CallID()
	if id == nil {
		return
	}
	if j.ctx != &j.call { // a WebSocket or a stream: the connection's Meta does not change
		j.call.Meta, j.call.Conn = c.call.Meta, c.call.Conn
	}
	gen := j.cx.start(c.ctx, id, v)
	j.call.Parent = &j.cx
	j.ctx = &j.call
	cs := c.work.cancel.Load()
	if cs == nil {
		cs = new(cancels)
		c.work.cancel.Store(cs)
		context.AfterFunc(c.ctx, cs.end)
	}
	cs.mu.Lock()
	n := len(cs.calls)
	if n < cap(cs.calls) {
		cs.calls = cs.calls[:n+1]
	} else {
		cs.calls = append(cs.calls, runningCall{})
	}
	e := &cs.calls[n]
	e.j, e.gen, e.seq, e.id = j, gen, c.work.seq+1, append(e.id[:0], id...) // submit gives j the next number
	if cs.ended {
		j.cx.cancel(gen, false) // the connection's context is done already
	}
	cs.mu.Unlock()
}

// forgetCall undoes cancellable for j, which was not submitted. Event
// loop only.
func (c *conn) forgetCall(j *job) {
	if cs := c.work.cancel.Load(); cs != nil && j.ctx == &j.call && j.call.Parent == &j.cx {
		cs.forget(c.work.seq + 1)
		j.cx.end()
	}
}

// forget removes the call of sequence number seq, if listed. Event loop
// only.
func (cs *cancels) forget(seq uint64) {
	cs.mu.Lock()
	for i := range cs.calls {
		if e := &cs.calls[i]; e.seq == seq {
			last := len(cs.calls) - 1
			id := e.id
			*e = cs.calls[last]
			cs.calls[last] = runningCall{id: id[:0]} // the buffer stays for the next entry
			cs.calls = cs.calls[:last]
			break
		}
	}
	cs.mu.Unlock()
}

// end cancels every call listed: the connection's context is done.
func (cs *cancels) end() {
	cs.mu.Lock()
	cs.ended = true
	for i := range cs.calls {
		cs.calls[i].j.cx.cancel(cs.calls[i].gen, false)
	}
	cs.mu.Unlock()
}

// CancelCall cancels the call in flight on the connection whose id is
// id, byte for byte (handler.Canceller). Safe from any goroutine.
func (c *conn) CancelCall(id []byte) bool {
	cs := c.work.cancel.Load()
	if cs == nil || len(id) == 0 {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for i := range cs.calls {
		if e := &cs.calls[i]; bytes.Equal(e.id, id) {
			return e.j.cx.cancel(e.gen, true)
		}
	}
	return false
}

// answerCancelled ends j's own context and replaces j's reply by the
// table's answer to a call cancelled by a notification, when one
// cancelled it. On the worker, once the method has returned, for a job
// cancellable made so.
func (j *job) answerCancelled() {
	if id, v, by := j.cx.end(); by {
		j.out = j.c.e.table.AppendCancelled(j.out[:0], id, v)
	}
}
