package engine

// NOTE: call deadlines. A blocking call with a timeout runs on the
// engine's worker like any other (handler.Pending.RunHere), with no
// second goroutine waiting beside it; the loop answers it at its
// deadline. The loop keeps the jobs whose deadline it watches in lanes,
// one per timeout: a lane's jobs were handed off in order, so their
// deadlines are in order and its head is the next to expire. A job
// joins its lane's tail when it is handed off and leaves it when its
// reply comes back (both on the loop: a few pointer writes), and one
// timer per loop fires at the earliest head's deadline — re-armed only
// when a new head is earlier than the one it was armed for, so that a
// steady stream of calls costs no timer operation at all. When it
// fires, the loop takes the expired jobs out of their lanes and their
// connections answer them -32002 in their place in the order of replies
// (answerLate); the worker's late reply, when it comes, is dropped.

import (
	"context"
	"time"

	"github.com/jetrpc/jetrpc/pool/clock"
)

// lane is the jobs of one loop with the same timeout, oldest first,
// linked through their dprev and dnext.
type lane struct {
	timeout    int64
	head, tail *job
}

// deadlines is the jobs whose deadline a loop (or a connection finishing
// off its loop) watches. Event loop only, but for fire, which the timer
// calls from its own goroutine.
type deadlines struct {
	lanes []*lane
	timer *time.Timer // fires at armed; nil until first armed
	armed int64       // the deadline the timer is set for (a reading of package clock), 0: not set
	fire  func()      // what the timer does: makes the loop call expire; immutable once set
}

// add makes d watch j's deadline, j.deadline, which is at most timeout
// after now.
func (d *deadlines) add(j *job, timeout int64) {
	var l *lane
	for _, x := range d.lanes {
		if x.timeout == timeout {
			l = x
			break
		}
	}
	if l == nil {
		l = &lane{timeout: timeout}
		d.lanes = append(d.lanes, l)
	}
	j.lane, j.dprev, j.dnext = l, l.tail, nil
	j.c.work.timed++
	if l.tail == nil {
		l.head = j
	} else {
		l.tail.dnext = j
	}
	l.tail = j
	if d.armed == 0 || j.deadline < d.armed {
		d.arm(j.deadline)
	}
}

// remove stops watching j. Kept inlinable: collect calls it for each
// reply.
func (d *deadlines) remove(j *job) {
	if j.lane != nil {
		unlink(j)
	}
}

// unlink takes j out of its lane.
func unlink(j *job) {
	l := j.lane
	if j.dprev == nil {
		l.head = j.dnext
	} else {
		j.dprev.dnext = j.dnext
	}
	if j.dnext == nil {
		l.tail = j.dprev
	} else {
		j.dnext.dprev = j.dprev
	}
	j.lane, j.dprev, j.dnext = nil, nil, nil
	j.c.work.timed--
}

// arm sets the timer to fire at deadline.
func (d *deadlines) arm(deadline int64) {
	d.armed = deadline
	wait := time.Duration(deadline - clock.Now())
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, d.fire)
		return
	}
	d.timer.Reset(wait)
}

// expire takes the jobs whose deadline has passed out of their lanes,
// appends them to late, and re-arms the timer for the earliest deadline
// left. It is called when the timer fired (or may have).
func (d *deadlines) expire(late []*job) []*job {
	now := clock.Now()
	next := int64(0)
	for _, l := range d.lanes {
		for j := l.head; j != nil && j.deadline <= now; j = l.head {
			unlink(j)
			late = append(late, j)
		}
		if l.head != nil && (next == 0 || l.head.deadline < next) {
			next = l.head.deadline
		}
	}
	d.armed = 0
	if next != 0 {
		d.arm(next)
	}
	return late
}

// dropConn stops watching the jobs of c and returns them: the jobs of a
// connection that closes, or that moves off its loop.
func (d *deadlines) dropConn(c *conn, into []*job) []*job {
	for _, l := range d.lanes {
		for j := l.head; j != nil; {
			next := j.dnext
			if j.c == c {
				unlink(j)
				into = append(into, j)
			}
			j = next
		}
	}
	return into
}

// stop stops the timer.
func (d *deadlines) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
	d.armed = 0
}

// deadlineSweep is the task the timer of a loop's deadlines queues on
// the loop (a gnet.Runnable).
type deadlineSweep struct{ ls *loopState }

// Run answers the expired calls of the loop's connections: each
// connection with a late call is served at once (traffic).
func (s deadlineSweep) Run(context.Context) error {
	s.ls.expireDeadlines()
	return nil
}
