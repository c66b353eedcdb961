package handler

// NOTE: call deadlines. A method with a timeout (Timeout, or the table's
// CallTimeout) gets a deadlineCtx: its parent's values and cancellation
// plus the deadline. It lives in the pooled dispatch state or in a batch
// segment, and builds a real context.WithDeadline (a timer and a
// channel) only when the method asks for Done or for Err past the
// deadline: a method that never looks costs no allocation. Deadlines are
// readings of package clock.
//
// Who answers a blocking call at its deadline depends on its caller. A
// transport that watches deadlines itself (the engine: Pending.Deadline
// and RunHere) runs the call where it would run anyway, answers
// parser.CodeDeadline when the deadline passes, and drops the late result: no
// goroutine hop. Dispatch and Run, whose caller waits for the reply, run
// a single timed call on a worker of the table's pool while the caller
// waits for it or for the deadline (timedSingle); a batch's timed
// elements are segments of their own on that pool (parallel). At the
// deadline the caller answers parser.CodeDeadline and goes on, and the worker
// drops the late result.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// deadlineCtx is the context of a call with a deadline.
type deadlineCtx struct {
	parent   context.Context // set before the method runs, then not changed
	deadline int64           // a reading of package clock

	built  atomic.Bool // real is set
	mu     sync.Mutex
	real   context.Context // context.WithDeadline(parent), built when asked
	cancel context.CancelFunc
}

var _ context.Context = (*deadlineCtx)(nil)

// start makes d the context of a call under parent until deadline.
func (d *deadlineCtx) start(parent context.Context, deadline int64) {
	d.parent, d.deadline = parent, deadline
}

// end releases what d built; d can start again.
func (d *deadlineCtx) end() {
	if d.built.Load() { // the method asked for Done (or Err past the deadline)
		d.drop()
	}
	d.parent = nil
}

// drop cancels and forgets the real context.
func (d *deadlineCtx) drop() {
	d.mu.Lock()
	d.cancel()
	d.real, d.cancel = nil, nil
	d.built.Store(false)
	d.mu.Unlock()
}

// when returns the deadline as a time.
func (d *deadlineCtx) when() time.Time { return clock.Time(d.deadline) }

// ctx returns the real context, building it on first use.
func (d *deadlineCtx) ctx() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.real == nil {
		d.real, d.cancel = context.WithDeadline(d.parent, d.when())
		d.built.Store(true)
	}
	return d.real
}

// Deadline returns the call's deadline, or the parent's when earlier.
func (d *deadlineCtx) Deadline() (time.Time, bool) {
	when := d.when()
	if p, ok := d.parent.Deadline(); ok && p.Before(when) {
		return p, true
	}
	return when, true
}

// Done is closed at the deadline or when the parent is done.
func (d *deadlineCtx) Done() <-chan struct{} { return d.ctx().Done() }

// Err returns context.DeadlineExceeded past the deadline, else the
// parent's error.
func (d *deadlineCtx) Err() error {
	if d.built.Load() {
		return d.ctx().Err()
	}
	if clock.Now() >= d.deadline {
		return d.ctx().Err() // Done is closed from now on, as Err says
	}
	return d.parent.Err()
}

// Value returns the parent's values — through the real context once
// built, so that a context derived from d (context.WithCancel) finds the
// real one's cancellation and is its child, instead of a goroutine of the
// context package watching d, which is reused after the call.
func (d *deadlineCtx) Value(key any) any {
	if d.built.Load() {
		return d.ctx().Value(key)
	}
	return d.parent.Value(key)
}

// appendTimeout answers r, whose method ran past its timeout; nothing
// for a notification. The error's text was written at registration
// (timeoutText): a reply written at a deadline copies it.
func appendTimeout(dst []byte, r *parser.Request, m *method) []byte {
	if r.Notification {
		return dst
	}
	dst = append(dst, m.timedOut[r.Version&1]...)
	return append(appendID(dst, r.ID), '}')
}

// timeoutHeads are, by parser.Version, the replies to a call past a
// timeout up to their id: what appendErrorReply writes before the id.
type timeoutHeads [2]string

// timeoutReplies returns the timeoutHeads of timeout.
func timeoutReplies(timeout time.Duration) (heads timeoutHeads) {
	for _, v := range []parser.Version{parser.Version1, parser.Version2} {
		b := appendErrorStart(nil, v, parser.CodeDeadline)
		b = parser.AppendEscaped(b, "Deadline exceeded: the call ran past its timeout of "+timeout.String())
		b = append(b, `"},"id":`...)
		heads[v] = string(b)
	}
	return heads
}
