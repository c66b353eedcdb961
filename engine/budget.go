package engine

// NOTE: one memory budget for the whole server (Options.MaxOutputBudget).
// Every connection holds bytes the engine keeps for it: its unsent output
// (gnet's outbound buffer) and its queued server messages (the push
// queue). Each traffic call observes both and moves the difference into
// one atomic sum, budget.used, so the sum is exact as of every
// connection's last traffic call; the ticker wakes every connection
// holding bytes at least once a second, so none is stale for long. A push
// queue also grows between traffic calls, the more so when the loop lags
// behind a flood: Send adds its growth to the sum by steps of budgetStep
// (addHeld), so that what the sum misses is under a step per connection.
// Three lines:
//
//   - pressure (3/4 of the budget): a connection holding more than its
//     share (the pressure line over the connections holding any: when
//     each holds its share the pressure is over, bar one read's replies
//     each) is held back — not read, as when its own output passes
//     MaxPendingOutput — until it is under its share again or the
//     pressure is over (squeezes);
//   - the budget: over it for budgetGrace, the ticker picks the
//     connections holding the most, largest first, until what the others
//     hold is under the pressure line (shed); each one closes on its
//     loop, logged, unless it has drained under its share meanwhile
//     (overBudget) — and a push to one that would close is refused at
//     once, the connection closing then (Send: a loop behind would let
//     it go on growing meanwhile);
//   - the hard line (9/8 of the budget): the same at once.
//
// Once a part of the budget has been given back (by closes, or clients
// that leave), the ticker returns the freed memory to the OS (release),
// at most once a second, so that RSS falls back within about a second
// instead of waiting for the runtime's scavenger (measured: it did not
// fall in 10 s without).

import (
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"
)

// Lines of the budget, as fractions of Options.MaxOutputBudget, and how
// long it may be exceeded.
const (
	budgetPressureNum, budgetPressureDen = 3, 4 // above: connections over their share are held back
	budgetHardNum, budgetHardDen         = 9, 8 // above: the largest holders are closed at once
	budgetGrace                          = 500 * time.Millisecond
	// budgetFreeDen: memory is returned to the OS once the bytes held
	// have fallen by this part of the budget (and at least 4 MiB).
	budgetFreeDen = 8
	// budgetStep: Send adds a connection's queue growth to the budget
	// whenever it reaches this since the loop last looked, so that what
	// the budget does not see yet is at most this per connection. A
	// client that reads takes its messages before this much waits for it:
	// its loop's looks keep the count, at no cost to the budget's shared
	// counters.
	budgetStep = 16 << 10
)

// budget is the engine-wide account of the bytes held for connections.
type budget struct {
	limit    int64 // MaxOutputBudget, or 0: none; immutable
	pressure int64 // limit*3/4, or MaxInt64 with no budget; immutable
	hard     int64 // limit*9/8; immutable
	freeMin  int64 // release when the bytes held fell by this much; immutable

	used    atomic.Int64 // bytes held by every connection: unsent output and queued pushes
	holders atomic.Int64 // connections holding any
	closed  atomic.Int64 // connections closed for the budget, ever

	freeing atomic.Bool // a release is running

	// Ticker only.
	overSince time.Time // since when used is over limit, or zero
	peak      int64     // the most used since the last release
	victims   []victim  // scratch of shed
}

type victim struct {
	c    *conn
	held int64
}

// init sets the lines for a budget of limit bytes (≤ 0: none).
func (b *budget) init(limit int) {
	if limit <= 0 {
		b.pressure = math.MaxInt64
		return
	}
	b.limit = int64(limit)
	b.pressure = b.limit / budgetPressureDen * budgetPressureNum
	b.hard = b.limit / budgetHardDen * budgetHardNum
	b.freeMin = max(b.limit/budgetFreeDen, 4<<20)
}

// share is what one connection may hold under pressure: the pressure
// line over the connections holding any, so that when each holds its
// share the server is under the budget.
func (b *budget) share() int64 {
	return b.pressure / max(b.holders.Load(), 1)
}

// mustPause reports whether the connection is held back for its output:
// pending unsent bytes over MaxPendingOutput, or, with its queued pushes,
// more than its share of the budget under pressure. Kept inlinable.
func (c *conn) mustPause(pending int) bool {
	return pending > c.e.opts.MaxPendingOutput || c.e.budget.squeezes(int64(pending)+c.mail.queued.Load())
}

// stillPaused reports whether a connection held back (mustPause) stays
// so with pending bytes of unsent output. An HTTP or stream connection
// stays held back until its output has drained, not merely fallen under
// the limit: its input, a half-closing client's FIN among it, is then
// read only once nothing is left to write — gnet closes at a FIN and
// drops what is unsent, so a client that sent its last request and shut
// its side while held back lost the end of its replies. A WebSocket
// cannot half-close (its FIN is polled apart: gateInput), and a
// subscriber's backlog may never drain while it keeps up: it is read
// again under the limit, so that its pongs and its close are.
func (c *conn) stillPaused(pending int) bool {
	return c.mustPause(pending) || pending > 0 && (c.codec == nil || c.codec.transport() != transportWebSocket)
}

// squeezes reports whether a connection holding held bytes must be held
// back: the server is under pressure and it holds more than its share.
// Kept inlinable: one atomic load when there is no pressure.
func (b *budget) squeezes(held int64) bool {
	return b.used.Load() > b.pressure && held > b.share()
}

// account notes that the connection holds pending bytes of unsent output
// plus its queued pushes: in the budget (held), and in what Send counts
// against MaxPushQueue (mail.unsent). traffic does the same by hand (on
// the hot path: three atomic loads when nothing has changed). Event loop
// only.
func (c *conn) account(pending int) {
	if p := int64(pending); p != c.mail.unsent.Load() || p+c.mail.queued.Load() != c.held.Load() {
		c.accountSlow(p)
	}
}

// accountSlow is account's slow path.
func (c *conn) accountSlow(pending int64) {
	c.mail.unsent.Store(pending)
	if h := pending + c.mail.queued.Load(); h != c.held.Load() {
		c.setHeld(h)
	}
}

// addHeld adds d bytes of pushes queued since the queue was last empty
// to the connection's holding in the budget (the loop's next look counts
// them exactly: what it adds counts twice at most until then). Safe from
// any goroutine; Send calls it under the mailbox's lock.
func (c *conn) addHeld(d int64) {
	b := &c.e.budget
	if c.held.Add(d) == d {
		b.holders.Add(1)
	}
	b.used.Add(d)
}

// holding reports whether the connection held bytes at its last traffic
// call. Safe from any goroutine.
func (c *conn) holding() bool { return c.held.Load() != 0 }

// budgetState returns what the connection held at its last traffic call,
// and whether the ticker has chosen it to close. Safe from any goroutine.
func (c *conn) budgetState() (held int64, doomed bool) {
	return c.held.Load(), c.doomed.Load()
}

// doom marks the connection to close for the budget; its loop decides
// (overBudget). Safe from any goroutine.
func (c *conn) doom() { c.doomed.Store(true) }

// setHeld moves the connection's holding to h in the budget. Event loop
// only (or release).
func (c *conn) setHeld(h int64) {
	b := &c.e.budget
	old := c.held.Swap(h)
	b.used.Add(h - old)
	if h > old {
		c.e.stats.notePeak(h)
	}
	switch {
	case old == 0 && h != 0:
		b.holders.Add(1)
	case old != 0 && h == 0:
		b.holders.Add(-1)
	}
}

// overBudget decides about a connection the ticker chose to close for
// the budget: it is closed (and logged) unless it has drained under its
// share since and the server is under the hard line. Event loop only.
func (c *conn) overBudget() bool {
	c.doomed.Store(false)
	c.account(c.gc.OutboundBuffered())
	if !c.e.budget.sheds(c.held.Load()) {
		return false
	}
	c.logBudgetClose()
	return true
}

// overHard reports whether a connection holding held bytes must close
// at once: the server is past the budget's hard line and it holds more
// than its share. Safe from any goroutine.
func (b *budget) overHard(held int64) bool {
	return b.limit > 0 && b.used.Load() > b.hard && held > b.share()
}

// sheds reports whether a connection the ticker chose to close, holding
// held bytes, is closed: unless it holds no more than its share and the
// server is under the hard line. Safe from any goroutine.
func (b *budget) sheds(held int64) bool {
	return held > b.share() || b.used.Load() > b.hard
}

// logBudgetClose counts and logs the close of the connection for the
// budget. Event loop only.
func (c *conn) logBudgetClose() {
	b := &c.e.budget
	b.closed.Add(1)
	c.e.opts.Logger.Warn("jetrpc: server output budget exceeded: disconnected the client holding the most unsent output",
		"remote", c.remote(), "held", c.held.Load(), "budget", b.limit, "used", b.used.Load())
}

// checkBudget enforces the budget: over it for budgetGrace, or over the
// hard line, it closes the connections holding the most; sweep (once a
// second) also returns memory to the OS after a large drop. Ticker only.
func (e *Engine) checkBudget(now time.Time, sweep bool) {
	b := &e.budget
	if b.limit == 0 {
		return
	}
	u := b.used.Load()
	b.peak = max(b.peak, u)
	if sweep && b.peak-u >= b.freeMin {
		b.peak = u
		b.release()
	}
	if u <= b.limit {
		b.overSince = time.Time{}
		return
	}
	if b.overSince.IsZero() {
		b.overSince = now
	}
	if u <= b.hard && now.Sub(b.overSince) < budgetGrace {
		return
	}
	e.shed(u)
}

// shed marks the connections holding the most to be closed, largest
// first, until what the others hold is under the pressure line, and wakes
// them: each one decides on its loop (overBudget). Ticker only.
func (e *Engine) shed(used int64) {
	b := &e.budget
	vs := b.victims[:0]
	e.mu.Lock()
	for c := range e.conns {
		h, doomed := c.budgetState()
		switch {
		case h == 0:
		case doomed:
			used -= h // already on its way out
		default:
			vs = append(vs, victim{c, h})
		}
	}
	e.mu.Unlock()
	slices.SortFunc(vs, func(a, b victim) int { return int(b.held - a.held) })
	n := 0
	for ; n < len(vs) && used > b.pressure; n++ {
		vs[n].c.doom()
		used -= vs[n].held
	}
	for _, v := range vs[:n] {
		v.c.wakeLoop()
	}
	clear(vs)
	b.victims = vs[:0]
}

// release returns the memory freed by the connections that gave back
// their bytes to the OS, in the background: two collections (the first
// moves gnet's and the engine's pooled buffers to the pools' victim
// caches, the second frees them), then debug.FreeOSMemory.
func (b *budget) release() {
	if b.freeing.Swap(true) {
		return
	}
	go func() {
		defer b.freeing.Store(false)
		runtime.GC()
		debug.FreeOSMemory()
	}()
}

// defaultOutputBudget is the default of Options.MaxOutputBudget for a
// process that may use mem bytes (0: unknown): a quarter of it, at most
// DefaultMaxOutputBudget. A quarter, because what the budget counts is
// payload: gnet's buffers round it up (up to twice, in the worst case),
// and the garbage collector lets the heap grow past what is live before
// it collects (GOGC), so that a full budget costs about twice itself
// in RSS, and more with many connections holding bytes (see
// DefaultMaxOutputBudget), leaving the process's other memory the
// larger part.
func defaultOutputBudget(mem int64) int {
	if mem <= 0 {
		return DefaultMaxOutputBudget
	}
	return int(min(mem/4, DefaultMaxOutputBudget))
}
