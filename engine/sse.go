package engine

// NOTE: replies as event streams (Server-Sent Events) to HTTP POSTs. With
// Options.SSE, a request whose Accept takes text/event-stream may be
// answered with one: a call that runs on a worker gets a handler.Conn of
// its own (sseConn, in its CallContext: handler.ConnFrom returns it), and
// each message the method sends through it while it runs — progress,
// logs, partial results — is an event of the reply, framed here
// (appendEvent) and queued on the job as a part of a streamed reply
// (streamed.go): the head (text/event-stream, no caching, no proxy
// buffering) goes with the first, chunked. The reply itself is the last
// event, and the stream ends with it. A call that sent nothing is
// answered as JSON when the request also takes application/json (or
// */*), and as a one-event stream when it takes only text/event-stream
// (sseOnly) — as are inline calls, which run on the loop and send no
// events meanwhile. Events are bounded as pushes are: past MaxPushQueue
// unsent, Send refuses (handler.ErrSlowConsumer) and the connection
// closes. A Conn kept past its call sends nothing more
// (handler.ErrConnClosed): the stream ended with the reply.

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// How a request's Accept takes a reply: as JSON, as an event stream
// (with Options.SSE), or not at all.
const (
	sseNone         uint8 = iota // not asked: JSON
	sseMay                       // text/event-stream, and JSON too: a stream when the call sends events
	sseOnly                      // text/event-stream alone
	acceptNothing                // neither JSON nor, with Options.SSE, an event stream: refused 406
	acceptMalformed              // not an Accept value: refused 400
)

// acceptOf returns how the Accept value v takes a reply, sse saying
// whether the engine answers event streams: sseNone when it takes JSON
// and not text/event-stream, sseMay when it takes both, sseOnly when it
// takes the stream alone; acceptNothing when it takes neither,
// acceptMalformed when no element of it is a media range. JSON is
// application/json — or, named without it, application/json-rpc or
// application/jsonrequest — application/* or */*; the stream is
// text/event-stream or text/*, named (*/* does not ask for one). Each
// is weighed by the most specific range that names it (RFC 9110
// 12.5.1: "application/json;q=0, */*" refuses JSON); a q of 0 refuses.
// Elements that are not media ranges are passed over, and weights
// written loosely read as meant (http1.NewLenientMediaRanges), so that
// Java's default Accept ("text/html, image/gif, image/jpeg, *; q=.2,
// */*; q=.2") is served. An absent or empty Accept takes anything:
// sseNone.
func acceptOf(v []byte, sse bool) uint8 {
	if string(v) == "*/*" || string(v) == "application/json" {
		return sseNone // what curl, geth and most clients send
	}
	// The weight of each range that matters, -1 where none names it.
	jsonExact, jsonAlias, appAny, anyAny, streamExact, textAny := -1, -1, -1, -1, -1, -1
	ranges := 0
	m := http1.NewLenientMediaRanges(v)
	for typ, sub, q, ok := m.Next(); ok; typ, sub, q, ok = m.Next() {
		ranges++
		switch {
		case typ[0] == '*':
			anyAny = max(anyAny, q)
		case http1.EqualFold(typ, "application"):
			switch {
			case sub[0] == '*':
				appAny = max(appAny, q)
			case http1.EqualFold(sub, "json"):
				jsonExact = max(jsonExact, q)
			case http1.EqualFold(sub, "json-rpc"), http1.EqualFold(sub, "jsonrequest"):
				jsonAlias = max(jsonAlias, q)
			}
		case http1.EqualFold(typ, "text"):
			switch {
			case sub[0] == '*':
				textAny = max(textAny, q)
			case http1.EqualFold(sub, "event-stream"):
				streamExact = max(streamExact, q)
			}
		}
	}
	if ranges == 0 {
		if m.Malformed() {
			return acceptMalformed
		}
		return sseNone
	}
	json := mostSpecific(jsonExact, jsonAlias, appAny, anyAny) > 0
	stream := sse && mostSpecific(streamExact, textAny) > 0
	switch {
	case stream && json:
		return sseMay
	case stream:
		return sseOnly
	case json:
		return sseNone
	}
	return acceptNothing
}

// mostSpecific returns the first weight given (not -1), or -1.
func mostSpecific(weights ...int) int {
	for _, w := range weights {
		if w >= 0 {
			return w
		}
	}
	return -1
}

// sseTag returns the reply tag bits of a request that takes its reply
// as sse says (acceptOf).
func sseTag(sse uint8) uint8 {
	switch sse {
	case sseMay:
		return tagSSE
	case sseOnly:
		return tagSSE | tagSSEOnly
	}
	return 0
}

// sseHeadLines are the lines of an event stream's head after its
// status, date and CORS lines.
const sseHeadLines = "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"

// sseConn is the handler.Conn of one HTTP call answered as an event
// stream: made for the call, it sends while the call runs and refuses
// afterwards — unless held (handler.StreamHolder: a subscription), when
// it sends until its last hold is released. Safe from any goroutine.
type sseConn struct {
	mu    sync.Mutex
	j     *job // the call's job while its stream is open; nil afterwards
	c     *conn
	holds int         // holds not released
	open  bool        // the call returned while held: the stream goes on past its reply
	alive *time.Timer // the keep-alive comments of an open stream
}

var (
	_ handler.Conn         = (*sseConn)(nil)
	_ handler.StreamHolder = (*sseConn)(nil)
)

// Hold implements handler.StreamHolder.
func (s *sseConn) Hold() (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.j == nil {
		return func() {}, false
	}
	s.holds++
	var once sync.Once
	return func() { once.Do(s.release) }, true
}

// release gives back one hold; the last ends an open stream.
func (s *sseConn) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds--
	if s.holds > 0 || s.j == nil || !s.open {
		return // the call still runs: its return ends the stream
	}
	j := s.j
	s.j = nil
	s.alive.Stop()
	j.rs.mu.Lock()
	j.rs.ended = true
	j.rs.mu.Unlock()
	_ = j.listStream() // the loop writes the end
}

// finishCall is called when the call has returned, before its job goes
// back to its loop: the stream ends with the reply, unless held, when it
// stays open with a keep-alive comment every Options.SSEKeepAlive.
func (s *sseConn) finishCall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == 0 {
		s.j = nil
		return
	}
	s.open = true
	s.j.rs.sseHeld = true
	if d := s.c.e.opts.SSEKeepAlive; d > 0 {
		s.alive = time.AfterFunc(d, s.keepAlive)
	}
}

// keepAlive sends a comment on an open stream that has stayed quiet,
// so that proxies and clients do not take it for dead, and re-arms.
func (s *sseConn) keepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.j == nil {
		return
	}
	_ = s.j.queueEvent(sseKeepAlive)
	s.alive.Reset(s.c.e.opts.SSEKeepAlive)
}

// sseKeepAlive is the comment an open stream gets on an interval.
var sseKeepAlive = []byte(": keep-alive\n\n")

// Send implements handler.Conn: msg becomes an event of the reply's
// stream, before the reply. It never blocks.
func (s *sseConn) Send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.j == nil {
		return handler.ErrConnClosed
	}
	return s.j.sendEvent(msg)
}

// CanPush implements handler.Conn: true while the call runs.
func (s *sseConn) CanPush() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.j != nil
}

// Context implements handler.Conn: the connection's context, done when
// the client goes.
func (s *sseConn) Context() context.Context { return s.c.ctx }

// sendEvent queues msg as an event of j's stream, bounded by
// MaxPushQueue (the connection's unsent output and queued parts with
// it): past it, ErrSlowConsumer and the connection closes. Called under
// its sseConn's lock.
func (j *job) sendEvent(msg []byte) error {
	b := pool.Responses.Get()
	b.B = appendEvent(b.B, msg)
	return j.queuePart(b)
}

// queueEvent queues ev, framed already (a comment), as sendEvent does.
func (j *job) queueEvent(ev []byte) error {
	b := pool.Responses.Get()
	b.B = append(b.B, ev...)
	return j.queuePart(b)
}

// queuePart queues b, an event framed, on j's stream, bounded as
// sendEvent says; b is the stream's, or back in its pool on an error.
func (j *job) queuePart(b *pool.Buffer) error {
	c, rs := j.c, &j.rs
	n := len(b.B)
	rs.mu.Lock()
	if rs.gone {
		rs.mu.Unlock()
		pool.Responses.Put(b)
		return handler.ErrConnClosed
	}
	held := c.mail.unsent.Load() + c.mail.queued.Load() + int64(n)
	why := notClosing
	switch {
	case held > int64(c.e.opts.MaxPushQueue):
		why = closePushQueue
	case c.doomed.Load() && c.e.budget.sheds(held):
		why = closeBudget // as Send decides: the budget chose it to close
	case c.e.budget.overHard(held):
		why = closeBudget // past the hard line, at once: a call's events come faster than the ticker looks
	}
	if why != notClosing {
		rs.mu.Unlock()
		pool.Responses.Put(b)
		c.mail.kill.CompareAndSwap(0, uint32(why))
		c.e.stats.pushDrops.Add(1)
		c.wake(nil) // the loop closes the connection
		return handler.ErrSlowConsumer
	}
	rs.pushLocked(&c.mail, b)
	rs.mu.Unlock()
	return j.listStreamGrown(int64(n))
}

// appendEvent appends msg as one event: a data line per line of msg,
// then a blank line.
func appendEvent(dst, msg []byte) []byte {
	for {
		dst = append(dst, "data: "...)
		i := lineEnd(msg)
		if i < 0 {
			dst = append(dst, msg...)
			return append(dst, "\n\n"...)
		}
		dst = append(dst, msg[:i]...)
		dst = append(dst, '\n')
		if msg[i] == '\r' && i+1 < len(msg) && msg[i+1] == '\n' {
			i++
		}
		msg = msg[i+1:]
	}
}

// lineEnd returns the index of msg's first \r or \n, or -1: two
// vectorised scans, as a message rarely has either (bytes.IndexAny
// builds its set on every call).
func lineEnd(msg []byte) int {
	n := bytes.IndexByte(msg, '\n')
	if r := bytes.IndexByte(msg, '\r'); r >= 0 && (n < 0 || r < n) {
		return r
	}
	return n
}

// appendEventChunk appends the reply body as an event of a chunked
// event stream, and with end the stream's end. A notification's empty
// reply is no event.
func appendEventChunk(out, body []byte, end bool) []byte {
	if len(body) > 0 {
		n := eventLen(body)
		out = strconv.AppendUint(out, uint64(n), 16)
		out = append(out, "\r\n"...)
		out = appendEvent(out, body)
		out = append(out, "\r\n"...)
	}
	if end {
		out = append(out, "0\r\n\r\n"...)
	}
	return out
}

// eventLen is the length appendEvent makes of msg.
func eventLen(msg []byte) int {
	n := len("data: ") + len(msg) + len("\n\n")
	if lineEnd(msg) < 0 {
		return n // one line: the usual
	}
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '\r':
			if i+1 < len(msg) && msg[i+1] == '\n' {
				n-- // \r\n is one line end
			}
			n += len("data: ")
		case '\n':
			if i == 0 || msg[i-1] != '\r' {
				n += len("data: ")
			}
		}
	}
	return n
}

// appendSSEReply appends an HTTP reply whose body is the one event of
// body (204 No Content for a notification's empty body), with its
// length: a call that sent no event, to a request that takes only an
// event stream.
func appendSSEReply(dst, body []byte, keepAlive bool, minor int, cors string) []byte {
	if len(body) == 0 {
		return appendReply(dst, body, keepAlive, minor, cors)
	}
	dst = appendHeadStart(dst, statusLine200, keepAlive, minor, cors)
	dst = append(dst, sseHeadLines...)
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(eventLen(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return appendEvent(dst, body)
}

// sseInline rewrites an inline reply — its body at out[start:], behind
// a head reserved at out[mark:] — as a one-event stream, for a request
// that takes only an event stream. Event loop only.
func (c *conn) sseInline(out []byte, mark, start int, keep bool, minor int, cors string) []byte {
	ls := c.loop
	ls.sse = append(ls.sse[:0], out[start:]...)
	out = appendSSEReply(out[:mark], ls.sse, keep, minor, cors)
	if cap(ls.sse) > maxLoopBuffer {
		ls.sse = nil
	}
	return out
}

// ssePart appends a part of an event stream: its head before the first,
// then events as the call sent them, as chunks (HTTP/1.1) or as they are
// (HTTP/1.0: the stream ends when the connection closes); with reply,
// data is the reply's body, which goes as its event, and with end the
// stream's end follows. Event loop only.
func (c *conn) ssePart(out []byte, j *job, data []byte, end, reply bool) []byte {
	chunked := j.tag&tagHTTP11 != 0
	if !j.rs.begun {
		out = c.streamHead(out, j, sseHeadLines)
	}
	switch {
	case reply && chunked:
		return appendEventChunk(out, data, end)
	case reply:
		if len(data) > 0 {
			out = appendEvent(out, data)
		}
		return out
	case !chunked:
		return append(out, data...)
	}
	return appendChunk(out, data)
}

// sseReplied writes the reply of a held event stream as an event, after
// the events queued before it, and keeps the stream open: its job counts
// as in flight until the stream ends (a connection closes only after).
// Event loop only.
func (c *conn) sseReplied(out []byte, j *job) []byte {
	if !j.rs.replied {
		j.rs.replied = true
		c.work.inflight++
		out = c.writeParts(out, j, true)
		out = c.ssePart(out, j, j.out, false, true)
		if c.mail.nstreams.Load() == 0 || !j.rs.listed.Load() {
			_ = j.listStream() // listed: its later events, and its end, come through pumpStreams
		}
	}
	return out
}

// sseEnd writes the end of a held event stream whose last hold was
// released. Event loop only.
func (c *conn) sseEnd(out []byte, j *job) []byte {
	out = c.writeParts(out, j, true)
	if j.tag&tagHTTP11 != 0 {
		out = append(out, "0\r\n\r\n"...)
	}
	c.mail.dropStream(j)
	c.work.inflight--
	return out
}

// The refusals of a request by its Accept, and their access-log reasons.
const (
	reasonNotAcceptable = "not_acceptable"
	reasonBadAccept     = "bad_accept"
	textNotAcceptable   = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Acceptable: the Accept header takes neither application/json nor text/event-stream"},"id":null}`
	textJSONNotAccepted = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Acceptable: the Accept header does not take application/json"},"id":null}`
	textBadAccept       = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the Accept header names no media range"},"id":null}`
)

// refuseAccept answers the request of h, whose Accept takes no reply the
// engine can send (406) or is malformed (400), without reading its body.
// Event loop only.
func (h *httpCodec) refuseAccept(c *conn, out []byte) []byte {
	if h.sse == acceptMalformed {
		return h.refuseWithError(c, out, http1.StatusBadRequest, reasonBadAccept, textBadAccept, "", "", nil)
	}
	body := textNotAcceptable
	if !c.e.opts.SSE {
		body = textJSONNotAccepted
	}
	return h.refuseWithError(c, out, http1.StatusNotAcceptable, reasonNotAcceptable, body, "", "", nil)
}
