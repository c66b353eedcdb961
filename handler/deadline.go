package handler

// NOTE: call deadlines. A method with a timeout (Timeout, or the table's
// CallTimeout) gets a deadlineCtx: its parent's values and cancellation
// plus the deadline. It lives in the pooled dispatch state or in a batch
// segment, and builds a real context.WithDeadline (a timer and a
// channel) only when the method asks for Done or for Err past the
// deadline: a method that never looks costs no allocation. A blocking
// call with a deadline runs on a worker while its caller waits for it or
// for the deadline (parallel); at the deadline the caller answers
// CodeDeadline and goes on, and the worker drops the late result.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/parser"
)

// deadlineCtx is the context of a call with a deadline.
type deadlineCtx struct {
	parent   context.Context // set before the method runs, then not changed
	deadline int64           // ns after limitEpoch (the clock of coarseNow)

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
func (d *deadlineCtx) when() time.Time { return limitEpoch.Add(time.Duration(d.deadline)) }

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
	if preciseNow() >= d.deadline {
		return d.ctx().Err() // Done is closed from now on, as Err says
	}
	return d.parent.Err()
}

// Value returns the parent's values.
func (d *deadlineCtx) Value(key any) any { return d.parent.Value(key) }

// appendTimeout answers r, whose method ran past its timeout; nothing
// for a notification.
func appendTimeout(dst []byte, r *parser.Request, m *method) []byte {
	if r.Notification {
		return dst
	}
	return appendErrorReply(dst, r.ID, r.Version, CodeDeadline, "Deadline exceeded", m.timedOut, nil)
}
