//go:build linux && !poll_opt

package engine

// NOTE: real TCP back-pressure on Linux. gnet v2.9.7 reads every
// readable connection into its inbound buffer, held back or not, and has
// no call to stop. Its default epoll poller (pkg/netpoll,
// poller_epoll_default.go) registers a connection level-triggered with
// EPOLLIN|EPOLLPRI, plus EPOLLOUT while output is pending, the event's
// data being the descriptor. gateInput edits that registration with
// epoll_ctl(EPOLL_CTL_MOD) on the loop's own epoll descriptor: while a
// connection is held back its events are EPOLLOUT alone (output pending)
// or none, so gnet never reads it and the kernel's receive window pushes
// back on the client; EPOLLERR and EPOLLHUP are always reported, so a
// client that resets is still closed. No EPOLLRDHUP is ever added (it
// would fire without end, level-triggered, on a half-closed client).
//
// gnet changes the registration itself in two places: conn.write adds
// EPOLLOUT|EPOLLIN when a Write leaves output unsent, and eventloop.write
// goes back to EPOLLIN once the output is flushed. Both only happen when
// the outbound buffer goes from empty to not or back, so the gate is
// asserted again whenever a traffic call wrote, or the output went from
// pending to none since the gate was set; between two traffic calls at
// most one read (one loop buffer, 64 KiB) slips in after a flush, which
// the "sent too much while held back" close bounds.
//
// The epoll descriptor is gnet's unexported conn.loop.poller.fd, found
// by reflection once the types have been checked (gnet's conn, eventloop
// and netpoll.Poller with the fields of v2.9.7); the first epoll_ctl
// proves it. When the layout differs, or epoll_ctl fails, input is never
// gated again (logged once): the engine works as on other systems. The
// build tag poll_opt swaps gnet's poller for one whose events carry a
// pointer, so the gate is left out there (pause_other.go).

import (
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/panjf2000/gnet/v2"
)

// gateSupported: this build can hold input back in the kernel.
const gateSupported = true

// Event sets of gnet's default epoll poller (pkg/netpoll/defs_poller_epoll.go).
const (
	pollRead  = syscall.EPOLLIN | syscall.EPOLLPRI
	pollWrite = syscall.EPOLLOUT
)

// gnetLayout locates the loop's epoll descriptor in gnet's unexported
// types: conn.loop (*eventloop), eventloop.poller (*netpoll.Poller),
// Poller.fd (int). Immutable once published.
type gnetLayout struct {
	typ                reflect.Type // *gnet.conn
	fd, loop, poll, ep int          // field indexes: conn.fd, conn.loop, eventloop.poller, Poller.fd
}

var (
	layoutMu  sync.Mutex
	layoutPtr atomic.Pointer[gnetLayout] // set once a gnet conn matched
	gateOff   atomic.Bool                // the layout differs or epoll_ctl failed: input is never gated
)

// field returns the index of t's field name of kind k, or -1.
func field(t reflect.Type, name string, k reflect.Kind) int {
	f, ok := t.FieldByName(name)
	if !ok || len(f.Index) != 1 || f.Type.Kind() != k {
		return -1
	}
	return f.Index[0]
}

// layoutOf returns the layout of gc's type, checking it on first use; nil
// when gc is not a gnet connection of the known layout (a test fake, or
// another gnet version).
func layoutOf(e *Engine, gc gnet.Conn) *gnetLayout {
	t := reflect.TypeOf(gc)
	if l := layoutPtr.Load(); l != nil {
		if l.typ == t {
			return l
		}
		return nil
	}
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	ct := t.Elem()
	if ct.PkgPath() != "github.com/panjf2000/gnet/v2" || ct.Name() != "conn" {
		return nil // not gnet's: a fake
	}
	layoutMu.Lock()
	defer layoutMu.Unlock()
	if l := layoutPtr.Load(); l != nil {
		return l
	}
	l := &gnetLayout{typ: t, fd: field(ct, "fd", reflect.Int), loop: field(ct, "loop", reflect.Pointer)}
	ok := l.fd >= 0 && l.loop >= 0
	if ok {
		lt := ct.Field(l.loop).Type.Elem()
		l.poll = field(lt, "poller", reflect.Pointer)
		ok = lt.Kind() == reflect.Struct && lt.Name() == "eventloop" && l.poll >= 0
		if ok {
			pt := lt.Field(l.poll).Type.Elem()
			l.ep = field(pt, "fd", reflect.Int)
			ok = pt.Kind() == reflect.Struct && pt.Name() == "Poller" &&
				pt.PkgPath() == "github.com/panjf2000/gnet/v2/pkg/netpoll" &&
				l.ep >= 0 && field(pt, "efd", reflect.Int) >= 0 // the default epoll poller
		}
	}
	if !ok {
		disableGate(e, "gnet's connection layout is not the one known (v2.9.7)", nil)
		return nil
	}
	layoutPtr.Store(l)
	return l
}

// disableGate turns input gating off for the process, logging why once.
func disableGate(e *Engine, why string, err error) {
	if gateOff.Swap(true) {
		return
	}
	e.opts.Logger.Warn("jetrpc: connections held back cannot stop reading; gnet buffers their input instead", "why", why, "err", err)
}

// pollOf finds the descriptors of a connection: its own and its loop's
// epoll. Event loop only.
func (g *readGate) pollOf(e *Engine, gc gnet.Conn) bool {
	if g.epfd > 0 {
		return true
	}
	if g.epfd < 0 || gateOff.Load() {
		return false
	}
	g.epfd = -1
	l := layoutOf(e, gc)
	if l == nil {
		return false
	}
	v := reflect.ValueOf(gc).Elem()
	loop := v.Field(l.loop)
	if loop.IsNil() {
		return false
	}
	poller := loop.Elem().Field(l.poll)
	if poller.IsNil() {
		return false
	}
	ep, fd := poller.Elem().Field(l.ep).Int(), v.Field(l.fd).Int()
	if ep <= 0 || fd <= 0 {
		return false
	}
	g.epfd, g.fd = int32(ep), int32(fd)
	return true
}

// gateInput stops reading the connection's socket (hold) or starts again,
// keeping EPOLLOUT while output is pending as gnet expects. wrote says
// that this traffic call wrote (gnet may have re-registered the
// descriptor). Event loop only.
func (c *conn) gateInput(hold bool, pending int, wrote bool) {
	g := &c.gate
	out := pending > 0
	if hold == g.off && (!hold || !wrote && out == g.out) {
		return // as set, and gnet has not touched it since
	}
	if !g.pollOf(c.e, c.gc) {
		return
	}
	var ev uint32
	switch {
	case !hold:
		ev = pollRead
	case c.codec != nil && c.codec.transport() == transportWebSocket:
		// A WebSocket cannot half-close: a FIN means the client has gone.
		// gnet closes a connection whose only event is EPOLLRDHUP, so a
		// client that leaves while held back is not kept open (and its
		// calls' context is cancelled). Streams and HTTP may half-close
		// and still wait for replies: their FIN is read once the gate
		// opens.
		ev = syscall.EPOLLRDHUP
	}
	if out {
		ev |= pollWrite
	}
	if err := syscall.EpollCtl(int(g.epfd), syscall.EPOLL_CTL_MOD, int(g.fd), &syscall.EpollEvent{Events: ev, Fd: g.fd}); err != nil {
		// ENOENT or EBADF: the descriptor found is not the loop's epoll.
		disableGate(c.e, "epoll_ctl on the loop's poller failed", err)
		g.epfd = -1
		g.off = false
		return
	}
	g.off, g.out = hold, out
}

// gateSlack is what gnet may have read of a held-back connection beyond
// a message and a head while its socket is gated: what it read before
// the gate closed, and after a flush, one read each (its read buffer,
// 64 KiB by default). Without a working gate it is 0: then gnet reads
// on, and a client that sends past a message and a head is closed.
func (c *conn) gateSlack() int {
	if gateOff.Load() {
		return 0
	}
	return 2 * gnetReadBuffer
}

// gnetReadBuffer is the size of gnet's read buffer (its default
// ReadBufferCap, which the engine does not change).
const gnetReadBuffer = 64 << 10
