package engine

// NOTE: the engine's counters (Engine.Stats), which engine/metrics
// exports to Prometheus. What changes per read or per message — bytes,
// busy answers, pushes written — is counted on the event loop, in the
// loop's own counters (loopState.stats), so that loops never share a
// cache line; what changes per connection or on a worker is counted in
// the engine's. They are always on: an atomic add per read and per write,
// a few per connection.

import (
	"sync/atomic"

	"github.com/jetrpc/jetrpc/handler"
)

// TransportStats are the counters of one transport (Stats).
type TransportStats struct {
	// Conns is the connections open now.
	Conns int64
	// BytesIn counts the bytes of input served: messages and heads,
	// framing included (bytes left unread by a closing connection are
	// not).
	BytesIn uint64
	// BytesOut counts the bytes written: replies, server messages,
	// framing.
	BytesOut uint64
	// Busy counts the messages answered "Server busy" (-32000) at once
	// because no worker could take them (Options.Workers full).
	Busy uint64
}

// CloseCounts counts closed connections by why they closed (Stats).
type CloseCounts struct {
	// Client: the client closed, or asked to (HTTP Connection: close, a
	// WebSocket close frame).
	Client uint64
	// Protocol: the client broke the protocol, sent a message over
	// MaxMessageSize (HTTP 413 included), or was refused by the
	// Authorizer.
	Protocol uint64
	// Idle: IdleTimeout.
	Idle uint64
	// ReadTimeout: a message stayed incomplete for ReadTimeout.
	ReadTimeout uint64
	// WriteTimeout: the client read none of its replies for
	// WriteTimeout (a slow consumer).
	WriteTimeout uint64
	// PushQueue: the client did not read, and a server message would
	// have taken its unsent output and queued server messages past
	// MaxPushQueue (a slow consumer).
	PushQueue uint64
	// OutputBudget: closed to keep the server within MaxOutputBudget (a
	// slow consumer).
	OutputBudget uint64
	// Flood: the client kept sending while held back (see MaxInFlight).
	Flood uint64
	// Stopping: the engine stopped.
	Stopping uint64
}

// Stats is a snapshot of an engine's counters, since it was made
// (Engine.Stats).
type Stats struct {
	// HTTP, WebSocket and Stream are the counters of each transport. A
	// connection counts as HTTP until it upgrades to WebSocket, and as
	// none until its first byte names its protocol.
	HTTP, WebSocket, Stream TransportStats
	// Conns is the connections open now, those whose protocol is not
	// known yet included.
	Conns int64
	// Accepted counts the connections accepted.
	Accepted uint64
	// RefusedAddress, RefusedMaxConns and RefusedStopping count the
	// connections closed as soon as accepted: refused by AcceptConn, past
	// MaxConns, or while the engine stopped.
	RefusedAddress, RefusedMaxConns, RefusedStopping uint64
	// Closed counts the connections closed, by why.
	Closed CloseCounts
	// InFlight is the messages on workers now: queued or running.
	InFlight int64
	// Upgrades counts the WebSocket upgrades.
	Upgrades uint64
	// PushesSent counts the server messages (pushes, subscription
	// notifications) written to their connection.
	PushesSent uint64
	// PushesDropped counts the server messages dropped: refused because
	// the client left too much unread (MaxPushQueue, or the output budget;
	// the client is then disconnected), or still queued when their
	// connection closed.
	PushesDropped uint64
	// TooLarge counts the messages refused for MaxMessageSize (HTTP 413,
	// a stream's -32600, a WebSocket close 1009), and HeadTooLarge the
	// HTTP heads refused for MaxHeaderSize (431).
	TooLarge, HeadTooLarge uint64
	// OutputHeld is the bytes the engine holds for all its connections
	// now — their unsent output and queued server messages, each as of
	// the connection's last read or wake — what MaxOutputBudget bounds.
	OutputHeld int64
	// ConnOutputPeak is the most bytes one connection has held at once,
	// since the engine was made: its unsent output (replies and server
	// messages written but not yet taken by the kernel) plus its queued
	// server messages, as counted at each read and wake of the connection
	// and at each server message sent to it. For a connection that gets
	// server messages it stays within MaxPushQueue, bar their framing and
	// the replies of one read.
	ConnOutputPeak int64
}

// nTransports sizes the arrays indexed by transport (0: not known yet).
const nTransports = int(transportWebSocket) + 1

// loopStats are the counters an event loop keeps alone.
type loopStats struct {
	in, out  [nTransports]atomic.Uint64
	busy     [nTransports]atomic.Uint64
	pushes   atomic.Uint64
	upgrades atomic.Uint64
}

// engineStats are the counters of the whole engine.
type engineStats struct {
	accepted                atomic.Uint64
	refusedAddr, refusedMax atomic.Uint64
	refusedStop             atomic.Uint64
	open                    [nTransports]atomic.Int64
	closed                  [closeReasons]atomic.Uint64
	inflight                atomic.Int64
	pushDrops               atomic.Uint64
	tooLarge, headTooLarge  atomic.Uint64
	connPeak                atomic.Int64 // Stats.ConnOutputPeak
}

// notePeak raises Stats.ConnOutputPeak to held bytes. Safe from any
// goroutine; kept inlinable: one atomic load unless it is a new peak.
func (s *engineStats) notePeak(held int64) {
	if held > s.connPeak.Load() {
		s.raisePeak(held)
	}
}

// raisePeak is notePeak's slow path.
func (s *engineStats) raisePeak(held int64) {
	for {
		p := s.connPeak.Load()
		if held <= p || s.connPeak.CompareAndSwap(p, held) {
			return
		}
	}
}

// Stats returns a snapshot of the engine's counters. Safe from any
// goroutine, at any time; counters read while connections are served
// may be a few events apart.
func (e *Engine) Stats() Stats {
	s := &e.stats
	var st Stats
	e.mu.Lock()
	for _, ls := range e.loops {
		l := ls.stats
		for i, ts := range [...]*TransportStats{nil, &st.HTTP, &st.Stream, &st.WebSocket} {
			if ts == nil {
				continue
			}
			ts.BytesIn += l.in[i].Load()
			ts.BytesOut += l.out[i].Load()
			ts.Busy += l.busy[i].Load()
		}
		st.PushesSent += l.pushes.Load()
		st.Upgrades += l.upgrades.Load()
	}
	e.mu.Unlock()
	st.HTTP.Conns = max(s.open[transportHTTP].Load(), 0)
	st.Stream.Conns = max(s.open[transportStream].Load(), 0)
	st.WebSocket.Conns = max(s.open[transportWebSocket].Load(), 0)
	st.Conns = e.nconns.Load()
	st.Accepted = s.accepted.Load()
	st.RefusedAddress, st.RefusedMaxConns, st.RefusedStopping = s.refusedAddr.Load(), s.refusedMax.Load(), s.refusedStop.Load()
	c := &s.closed
	st.Closed = CloseCounts{
		Client:       c[closeByClient].Load() + c[notClosing].Load(),
		Protocol:     c[closeProtocol].Load(),
		Idle:         c[closeIdle].Load(),
		ReadTimeout:  c[closeReadTimeout].Load(),
		WriteTimeout: c[closeWriteTimeout].Load(),
		PushQueue:    c[closePushQueue].Load(),
		OutputBudget: c[closeBudget].Load(),
		Flood:        c[closeFlood].Load(),
		Stopping:     c[closeStopping].Load(),
	}
	st.InFlight = max(s.inflight.Load(), 0)
	st.PushesDropped = s.pushDrops.Load()
	st.TooLarge, st.HeadTooLarge = s.tooLarge.Load(), s.headTooLarge.Load()
	st.OutputHeld = max(e.budget.used.Load(), 0)
	st.ConnOutputPeak = s.connPeak.Load()
	return st
}

// Table returns the method table the engine serves.
func (e *Engine) Table() *handler.Table { return e.table }
