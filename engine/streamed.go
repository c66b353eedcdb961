package engine

// NOTE: streamed replies. A call of a streamed method (handler's
// RegisterStream) runs on a worker like any blocking call, with its job
// as the handler.ReplySink of its Pending: the method's reply comes in
// parts of about 32 KiB while it runs (SendPart, on the worker), each
// copied into a pooled buffer, queued on the job (replyStream) and
// counted in the mailbox's queued bytes — so the output budget, the push
// queue's bound and the loop's wake-ups see it as they see pushes. The
// producer waits while the job holds Options.StreamWindow bytes of
// parts: a client that reads slowly pauses the method, not the server's
// memory. The job's last part is its reply as usual (j.out), handed back
// through the mailbox when the method returns.
//
// On the loop, one streamed reply at a time is open on a connection
// (streamNow): over HTTP the one at the head of the replies held for
// order (httpCodec.streamHead), over WebSocket and streams the oldest
// whose parts came (c.strm). Its parts are framed and written while the
// connection's unsent output stays under the window (writeParts):
// chunked transfer over HTTP/1.1 (a close-delimited body over HTTP/1.0),
// fragments of one text message over WebSocket, the bytes themselves on
// a stream. While it is open, nothing else may come between its parts on
// a WebSocket or a stream: the replies that finish meanwhile, inline or
// from workers, are held (c.behind, at most MaxInFlight, reading
// stopping there) and pushes stay queued, until its last part is out
// (endStream). Compression, when negotiated, is per part, with no state
// kept between parts: gzip as one member whose deflate blocks each part
// starts afresh (the CRC and length carried in the job), zstd as one
// frame per part (a zstd stream may hold several), permessage-deflate
// as one message whose blocks each part starts afresh — the same
// property that lets a connection that negotiated compression keep no
// coder of its own.
//
// A connection that closes marks its streams gone (mailbox.close): a
// producer waiting for room, or sending its next part, is refused
// (handler.ErrConnClosed), which ends the method's iteration; the
// connection's context, which the method's derives from, is done too.

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser/pmdeflate"
	"github.com/jetrpc/jetrpc/pool"
	"github.com/klauspost/compress/flate"
)

// replyStream is the streamed reply of a job.
type replyStream struct {
	listed atomic.Bool    // a part came: the job is in its mailbox's streams until its reply ends; cleared by release
	mu     sync.Mutex     // guards parts, head, bytes, gone
	parts  []*pool.Buffer // parts[head:] are queued; those before head were taken (nil)
	head   int
	bytes  int           // the bytes of parts
	gone   bool          // the connection closed: parts are refused
	room   chan struct{} // signalled when parts are taken or the stream is gone; made on the job's first stream, kept in its pool

	sseHeld bool // an event stream held open past its reply (sse.go); set on the worker before the job is finished
	ended   bool // an event stream held open has ended: its last hold was released (guarded by mu)

	// Event loop only.
	sseDone bool   // the held event stream's end is to be written
	replied bool   // the held event stream's reply went
	done    bool   // the job finished: j.out is the reply's last part
	begun   bool   // its first part went out
	deflate bool   // WebSocket: its message is compressed
	crc     uint32 // gzip: the CRC-32 of the bytes sent so far
	size    uint32 // gzip: their length, modulo 2³²
}

var _ handler.ReplySink = (*job)(nil)

// SendPart implements handler.ReplySink: part is copied and queued for
// the loop, once the job holds less than Options.StreamWindow bytes of
// parts (or none: a part larger than the window goes alone). It waits
// meanwhile, and is refused with handler.ErrConnClosed once the
// connection has closed. Called on the job's worker.
func (j *job) SendPart(part []byte) error {
	c, rs, n := j.c, &j.rs, len(part)
	if rs.room == nil {
		rs.room = make(chan struct{}, 1)
	}
	b := pool.Responses.Get() // the copy, made outside the lock the loop takes parts under
	b.B = append(b.B, part...)
	window := c.e.opts.StreamWindow
	rs.mu.Lock()
	for !rs.gone && rs.bytes > 0 && rs.bytes+n > window {
		rs.mu.Unlock()
		<-rs.room
		rs.mu.Lock()
	}
	if rs.gone {
		rs.mu.Unlock()
		pool.Responses.Put(b)
		return handler.ErrConnClosed
	}
	rs.pushLocked(&c.mail, b)
	rs.mu.Unlock()
	return j.listStream()
}

// pushLocked queues b, a part, and counts it in the mailbox's queued
// bytes before the loop can take it. Under rs.mu.
func (rs *replyStream) pushLocked(m *mailbox, b *pool.Buffer) {
	if len(rs.parts) == cap(rs.parts) && rs.head > 0 && rs.head >= len(rs.parts)/2 {
		// Full, half of it taken: the queued parts move to the front
		// (else append doubles it); each part moves once at most per
		// part taken, on average.
		n := copy(rs.parts, rs.parts[rs.head:])
		clear(rs.parts[n:])
		rs.parts, rs.head = rs.parts[:n], 0
	}
	rs.parts = append(rs.parts, b)
	rs.bytes += len(b.B)
	m.queued.Add(int64(len(b.B)))
}

// listStream puts j, whose part was just queued, in its mailbox's
// streams (the first time), and wakes the loop.
func (j *job) listStream() error { return j.listStreamGrown(0) }

// listStreamGrown is listStream for a part of n bytes that the window
// does not bound (an event): the budget hears of the queue's growth by
// steps, as Send's.
func (j *job) listStreamGrown(n int64) error {
	c, rs, m := j.c, &j.rs, &j.c.mail
	m.mu.Lock()
	if m.dead {
		m.mu.Unlock()
		return handler.ErrConnClosed // close marks it gone, and the job's release drops its parts
	}
	if m.fresh += n; m.fresh >= budgetStep {
		c.addHeld(m.fresh) // under the lock, as Send's
		m.fresh = 0
	}
	if !rs.listed.Load() {
		rs.listed.Store(true)
		m.streams = append(m.streams, j)
		m.nstreams.Add(1)
	}
	lame := m.lameWake
	m.mu.Unlock()
	c.wake(lame)
	return nil
}

// endedNow reports whether a held event stream's last hold was
// released and its events are all taken.
func (rs *replyStream) endedNow() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.ended && len(rs.parts) == rs.head
}

// goneStream refuses the job's further parts and wakes its producer.
// Safe from any goroutine.
func (rs *replyStream) goneStream() {
	rs.mu.Lock()
	rs.gone = true
	rs.mu.Unlock()
	rs.signal()
}

// signal wakes the producer, if it waits for room.
func (rs *replyStream) signal() {
	select {
	case rs.room <- struct{}{}:
	default:
	}
}

// reset drops the stream's parts and state, for the job's next use. The
// job's producer has returned.
func (rs *replyStream) reset() {
	for _, b := range rs.parts[rs.head:] {
		pool.Responses.Put(b)
	}
	clear(rs.parts)
	if rs.room != nil {
		select { // a signal left from the last stream
		case <-rs.room:
		default:
		}
	}
	rs.listed.Store(false)
	rs.parts, rs.head, rs.bytes, rs.gone, rs.sseHeld, rs.ended, rs.sseDone, rs.replied = rs.parts[:0], 0, 0, false, false, false, false, false
	rs.done, rs.begun, rs.deflate, rs.crc, rs.size = false, false, false, 0, 0
}

// dropStream takes j, whose reply has ended, off the mailbox's streams.
func (m *mailbox) dropStream(j *job) {
	m.mu.Lock()
	for i, s := range m.streams {
		if s == j {
			m.streams = append(m.streams[:i], m.streams[i+1:]...)
			m.streams[len(m.streams):cap(m.streams)][0] = nil
			m.nstreams.Add(-1)
			break
		}
	}
	m.mu.Unlock()
}

// oldestStream returns the first job whose reply parts came, or nil.
func (m *mailbox) oldestStream() *job {
	if m.nstreams.Load() == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.streams) == 0 {
		return nil
	}
	return m.streams[0]
}

// closeStreams marks every stream gone and forgets them. Under m.mu.
func (m *mailbox) closeStreamsLocked() {
	for i, j := range m.streams {
		j.rs.goneStream()
		m.streams[i] = nil
	}
	m.streams = m.streams[:0]
	m.nstreams.Store(0)
}

// streamNow returns the job whose streamed reply may write now, or nil:
// over HTTP the one at the head of the replies held for order; over
// WebSocket and streams the one open, or else the oldest whose parts
// came, which opens. Event loop only.
func (c *conn) streamNow() *job {
	if c.tport == transportHTTP {
		return c.codec.(*httpCodec).streamHead()
	}
	if c.strm == nil {
		c.strm = c.mail.oldestStream()
	}
	return c.strm
}

// replyDone hands on the reply of a job that finished on a worker: over
// HTTP to the codec, which keeps the order of replies and ends a
// streamed one in its place; over WebSocket and streams, a streamed
// reply ends now if it is open, or waits for the one open before it to
// end, and another reply waits while one is open. Event loop only.
func (c *conn) replyDone(out []byte, j *job) []byte {
	switch {
	case c.tport == transportHTTP:
		return c.codec.reply(c, out, j)
	case j.rs.listed.Load():
		j.rs.done = true
		if c.streamNow() == j {
			return c.endStream(out, j)
		}
		return out // pumpStreams ends it once it is open
	case c.strm != nil:
		c.behind = append(c.behind, j)
		return out
	}
	return c.codec.reply(c, out, j)
}

// pumpStreams writes the parts of the streamed reply that may write now,
// and ends it if its method has returned, then the next. Event loop
// only.
func (c *conn) pumpStreams(out []byte) []byte {
	for {
		j := c.streamNow()
		if j == nil {
			return out
		}
		out = c.writeParts(out, j, false)
		if c.tport == transportHTTP {
			if j.rs.replied && j.rs.endedNow() {
				j.rs.sseDone = true
				out = c.codec.reply(c, out, j) // the held stream's end, then the replies after it
				continue
			}
			return out
		}
		if !j.rs.done {
			return out
		}
		out = c.endStream(out, j)
	}
}

// streaming reports whether streamed replies may have parts to write.
// Kept inlinable.
func (c *conn) streaming() bool { return c.strm != nil || c.mail.nstreams.Load() != 0 }

// writeParts frames the parts queued on j while they fit the
// connection's unsent output within Options.StreamWindow (or it has
// none) and the connection is not held back (mustPause) — or every part,
// with all. Event loop only.
func (c *conn) writeParts(out []byte, j *job, all bool) []byte {
	rs, window := &j.rs, c.e.opts.StreamWindow
	unsent := 0
	if c.mail.lameWake == nil { // off the loop, gnet's buffers are gone
		unsent = c.gc.OutboundBuffered()
	}
	for all || !c.mustPause(unsent+len(out)) {
		rs.mu.Lock()
		if len(rs.parts) == rs.head {
			rs.parts, rs.head = rs.parts[:0], 0
			rs.mu.Unlock()
			break
		}
		b := rs.parts[rs.head]
		if !all && unsent+len(out) > 0 && unsent+len(out)+len(b.B) > window {
			rs.mu.Unlock()
			break // it would not fit the window: the client reads first
		}
		rs.parts[rs.head] = nil
		if rs.head++; rs.head == len(rs.parts) {
			rs.parts, rs.head = rs.parts[:0], 0
		}
		rs.bytes -= len(b.B)
		c.mail.queued.Add(-int64(len(b.B)))
		rs.mu.Unlock()
		rs.signal()
		out = c.framePart(out, j, b.B, false)
		pool.Responses.Put(b)
	}
	return out
}

// streamRest writes the rest of j's streamed reply, whose method has
// returned: its queued parts and its last part, j.out; j leaves the
// mailbox's streams. Event loop only.
func (c *conn) streamRest(out []byte, j *job) []byte {
	out = c.writeParts(out, j, true)
	out = c.framePart(out, j, j.out, true)
	c.mail.dropStream(j)
	return out
}

// endStream ends j's streamed reply (WebSocket, stream), releases j,
// and writes the replies held while it went. Event loop only.
func (c *conn) endStream(out []byte, j *job) []byte {
	out = c.streamRest(out, j)
	if c.strm == j {
		c.strm = nil
	}
	j.release()
	if len(c.behind) > 0 && c.mail.directs.Load() > 0 {
		// What the held replies' methods sent goes before them; the
		// other pushes wait for the drain after them (their barriers
		// are no longer counted among the messages running).
		out = c.drain(out, true)
	}
	for i, h := range c.behind {
		c.behind[i] = nil
		if h.tag&tagFramed != 0 {
			out = append(out, h.out...)
			h.release()
		} else {
			out = c.codec.reply(c, out, h)
		}
	}
	c.behind = c.behind[:0]
	return out
}

// holdBehind moves out[mark:], a framed reply written while a streamed
// reply is open on a WebSocket or a stream, into a job held until that
// reply ends. Event loop only.
func (c *conn) holdBehind(out []byte, mark int) []byte {
	h := newJob(c)
	h.out = append(h.out[:0], out[mark:]...)
	h.tag = tagFramed
	c.behind = append(c.behind, h)
	return out[:mark]
}

// framePart appends data, a part of j's streamed reply (last: the last),
// framed for the connection's transport. Event loop only.
func (c *conn) framePart(out []byte, j *job, data []byte, last bool) []byte {
	switch c.tport {
	case transportHTTP:
		return c.httpPart(out, j, data, last)
	case transportWebSocket:
		return c.codec.(*wsCodec).part(c, out, j, data, last)
	}
	j.rs.begun = true
	out = append(out, data...)
	if last {
		out = append(out, '\n')
	}
	return out
}

// httpPart appends a part of a streamed HTTP reply: the reply's head
// before its first part, then the part as a chunk (HTTP/1.1) or as it is
// (HTTP/1.0: the body ends when the connection closes), compressed with
// the coding the request accepted. Event loop only.
func (c *conn) httpPart(out []byte, j *job, data []byte, last bool) []byte {
	rs := &j.rs
	if j.tag&tagSSE != 0 {
		return c.ssePart(out, j, data, last, last)
	}
	k := codingIdentity
	if c.e.comp.on() {
		k = coding(j.tag >> tagCodingShift & 3)
	}
	chunked := j.tag&tagHTTP11 != 0
	first := !rs.begun
	if first {
		lines := jsonStreamLines
		if c.e.comp.on() {
			lines = codedStreamLines[k]
		}
		out = c.streamHead(out, j, lines)
	}
	switch k {
	case codingGzip:
		data = c.loop.comp.gzipPart(rs, data, first, last)
	case codingZstd:
		data = c.loop.comp.compress(codingZstd, data) // one frame: a zstd stream may hold several
	}
	if !chunked {
		return append(out, data...)
	}
	if len(data) > 0 {
		out = appendChunk(out, data)
	}
	if last {
		out = append(out, "0\r\n\r\n"...)
	}
	return out
}

// streamHead appends the head of j's streamed HTTP reply, its lines
// after the status line and the common ones being lines: chunked over
// HTTP/1.1, kept alive as the request asked; over HTTP/1.0 the body ends
// when the connection closes, which it does once flushed. Event loop
// only.
func (c *conn) streamHead(out []byte, j *job, lines string) []byte {
	j.rs.begun = true
	chunked := j.tag&tagHTTP11 != 0
	minor := 0
	if chunked {
		minor = 1
	}
	keep := chunked && j.tag&tagKeepAlive != 0
	out = appendHeadStart(out, statusLine200, keep, minor, j.cors)
	out = append(out, lines...)
	if chunked {
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	}
	out = append(out, "\r\n"...)
	if !keep {
		out = c.closeAfterFlush(out, closeByClient) // the body ends with the connection
	}
	return out
}

// The head lines of a streamed JSON reply: from an engine without
// compression, and from one with, by the reply's coding.
const jsonStreamLines = "Content-Type: application/json\r\n"

var codedStreamLines = [...]string{
	codingIdentity: varyAcceptEncoding + jsonStreamLines,
	codingGzip:     varyAcceptEncoding + "Content-Encoding: " + CodingGzip + "\r\n" + jsonStreamLines,
	codingZstd:     varyAcceptEncoding + "Content-Encoding: " + CodingZstd + "\r\n" + jsonStreamLines,
}

// appendChunk appends data as one chunk of a chunked body.
func appendChunk(out, data []byte) []byte {
	out = strconv.AppendUint(out, uint64(len(data)), 16)
	out = append(out, "\r\n"...)
	out = append(out, data...)
	return append(out, "\r\n"...)
}

// part appends a part of a streamed WebSocket reply: a fragment of one
// text message, compressed when the connection negotiated
// permessage-deflate (each part's deflate blocks begin afresh; every
// part but the last ends on a sync flush's empty block, the last without
// it, RFC 7692 7.2.1). Nothing follows a close frame. Event loop only.
func (w *wsCodec) part(c *conn, out []byte, j *job, data []byte, last bool) []byte {
	if w.closed {
		return out
	}
	rs, op := &j.rs, ws.OpContinuation
	if !rs.begun {
		rs.begun, rs.deflate, op = true, w.deflate, ws.OpText
	}
	if rs.deflate {
		data = c.loop.comp.deflatePart(data, last)
	}
	return appendWSFragment(out, op, last, rs.deflate && op == ws.OpText, data)
}

// appendWSFragment appends an unmasked frame of a fragmented message:
// fin on its last, RSV1 on the first of a compressed message.
func appendWSFragment(out []byte, op ws.OpCode, fin, compressed bool, payload []byte) []byte {
	var h [10]byte
	hl := wsHeaderLen(len(payload))
	putWSHeader(h[:hl], op, len(payload))
	if !fin {
		h[0] &^= 0x80
	}
	if compressed {
		h[0] |= 0x40
	}
	out = append(out, h[:hl]...)
	return append(out, payload...)
}

// gzipHeader is the header of the gzip member of a streamed reply (RFC
// 1952): deflate, no name, no time, unknown OS.
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// gzipPart returns a part of a streamed reply's gzip member: the header
// before the first, the part's deflate blocks (begun afresh: no window
// kept between parts, the output sync-flushed, the last block final on
// the last part), and the CRC-32 and length of everything sent after the
// last. The returned bytes are valid until the compressor's next use.
// Event loop only.
func (z *compressor) gzipPart(rs *replyStream, data []byte, first, last bool) []byte {
	z.resetOut()
	if first {
		z.out.b = append(z.out.b, gzipHeader[:]...)
	}
	z.deflateInto(data, last)
	rs.crc = crc32.Update(rs.crc, crc32.IEEETable, data)
	rs.size += uint32(len(data))
	if last {
		z.out.b = binary.LittleEndian.AppendUint32(z.out.b, rs.crc)
		z.out.b = binary.LittleEndian.AppendUint32(z.out.b, rs.size)
	}
	return z.out.b
}

// deflatePart returns data as deflate blocks begun afresh: sync-flushed,
// without the flush's empty block on the last part of a permessage-deflate
// message. The returned bytes are valid until the compressor's next use.
// Event loop only.
func (z *compressor) deflatePart(data []byte, last bool) []byte {
	z.resetOut()
	z.deflateInto(data, false)
	if last && len(z.out.b) >= 4 && string(z.out.b[len(z.out.b)-4:]) == pmdeflate.Tail {
		z.out.b = z.out.b[:len(z.out.b)-4]
	}
	return z.out.b
}

// deflateInto appends data to the compressor's output as deflate
// blocks begun afresh, ending with a final block (final) or a sync
// flush.
func (z *compressor) deflateInto(data []byte, final bool) {
	if z.fw == nil {
		z.fw, _ = flate.NewWriter(&z.out, wsDeflateLevel) // the level is valid
	} else {
		z.fw.Reset(&z.out)
	}
	_, _ = z.fw.Write(data) // appendWriter never fails
	if final {
		_ = z.fw.Close()
	} else {
		_ = z.fw.Flush()
	}
}
