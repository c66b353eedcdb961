package engine

// NOTE: the HTTP/1.1 codec. A request head is framed by parser/http1 —
// resumably: a head arriving a byte at a time is scanned once — and
// routed: POST with a JSON body is a JSON-RPC message; GET with a method
// query parameter may be one (httpget.go); GET of the health path answers
// 200; GET with Upgrade: websocket on the WebSocket path is
// handed to the WebSocket codec (ws.go), which the upgrade returns; the
// rest is refused with its status. A body is read where it lies in gnet's
// buffer (Content-Length) or decoded into a pooled buffer (chunked).
//
// Pipelined requests run concurrently — several may be on workers at
// once, up to MaxInFlight — but replies leave in request order: from the
// oldest request whose reply is not ready, every reply is held (in held)
// until those before it are out. A reply written inline when nothing is
// held goes straight out, its body written in place behind a head
// reserved for it (httpwrite.go).

import (
	"sync"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// httpCodec is the state of an HTTP connection.
type httpCodec struct {
	scan      http1.HeadScan
	req       http1.Request // the request being read; its spans are valid only during serve
	inBody    bool          // req's head was consumed: its body is being read
	sent100   bool          // 100 Continue went out for req
	chunks    http1.ChunkedDecoder
	body      *pool.Buffer // a chunked body being decoded
	want      int          // the size of a Content-Length body still arriving
	held      []heldReply  // replies held for order, oldest first, from held[first]
	first     int
	upgrade   bool       // a WebSocket upgrade waits for the replies held before it
	head      []byte     // req's head: a view of the input during serve, or headBuf while its body arrives
	headBuf   []byte     // a copy of the head of a request whose body arrives in later reads
	corsLines string     // the CORS header lines of req's replies (Engine.corsLines), or ""
	enc       coding     // the coding of req's reply (its Accept-Encoding), decided from its head
	sse       uint8      // whether req takes its reply as an event stream (its Accept, with Options.SSE): sseNone, sseMay, sseOnly
	dec       coding     // the coding of req's body (its Content-Encoding)
	badCoding bool       // req's Content-Encoding is not one the engine takes: 415
	hostOK    []byte     // the last Host allowed (Options.Hosts), a copy; empty when none yet
	auth      authCache  // the Authorizer's last answer that holds for the same Authorization (access.go)
	cors      corsCache  // the last Origin's CORS answer (access.go)
	get       getCache   // the last CORS and Cache-Control lines of a call by GET (httpget.go)
	route     routeState // req's method header, when it was admitted by it (methodheader.go)
}

// heldReply is a place in the order of an HTTP connection's replies: a
// job on a worker (its reply not ready yet: the job is the worker's), or a
// reply ready to go out.
type heldReply struct {
	j     *job
	ready bool
	get   *getMethod // a call by GET's method (httpget.go): its head says Cache-Control; nil for others
}

// maxHeadBuf: a codec keeps a head copy buffer up to this size.
const maxHeadBuf = 16 << 10

var httpCodecs = sync.Pool{New: func() any { return new(httpCodec) }}

func newHTTPCodec() *httpCodec { return httpCodecs.Get().(*httpCodec) }

// Bits of a job's tag, for the framing of its reply.
const (
	tagKeepAlive = 1 << iota // the request allows the connection to persist
	tagHTTP11                // HTTP/1.1 (else 1.0)
	tagFramed                // the job holds a whole response, framed when it was held
)

// tagCodingShift: a job's tag holds, from this bit, the coding of its
// reply (two bits).
const tagCodingShift = 3

// Bits of a job's tag above its coding: the request takes its reply as
// an event stream (sse.go).
const (
	tagSSE     = 1 << 5 // text/event-stream: events the call sends go before its reply
	tagSSEOnly = 1 << 6 // and nothing else: a call that sent none is one event
)

func (h *httpCodec) open(*conn) {}

func (h *httpCodec) serve(c *conn, in, out []byte) ([]byte, int, codec) {
	e := c.e
	off := 0
	for off < len(in) && c.canRun() && !h.blocked(c) {
		r := &h.req
		if !h.inBody {
			st := http1.ParseHead(in[off:], &h.scan, e.opts.MaxHeaderSize, r)
			if st == 0 {
				c.markPartial()
				return out, off, nil
			}
			if st != http1.StatusOK {
				out = h.refuse(c, out, st, false, 1)
				return c.closeAfterFlush(out, closeProtocol), len(in), nil
			}
			h.head = in[off : off+r.HeadLen]
			h.corsLines = ""
			if len(r.Origin) > 0 && e.opts.CORS.Enabled() {
				h.corsLines = h.corsLinesOf(c, r.Origin)
			}
			h.enc, h.dec, h.badCoding, h.sse = codingIdentity, codingIdentity, false, sseNone
			if r.Accept != nil {
				h.sse = acceptOf(r.Accept, e.opts.SSE)
			}
			if e.comp.on() {
				h.enc = e.comp.negotiate(r.AcceptEncoding)
			}
			if r.ContentEncoding != nil {
				var ok bool
				h.dec, ok = e.comp.bodyCoding(r.ContentEncoding)
				h.badCoding = !ok
			}
			if isWSUpgrade(c, r) {
				if h.upgrade = h.pending(); h.upgrade {
					return out, off, nil // the replies to earlier requests go first
				}
				var next codec
				out, next = h.upgradeWS(c, out)
				c.clearPartial()
				if next == nil { // refused; closing
					return out, len(in), nil
				}
				return out, off + r.HeadLen, next
			}
			off += r.HeadLen
			c.clearPartial()
			if h.isGetCall(c, r) {
				out = h.getCall(c, out) // httpget.go
				continue
			}
			if string(r.Method) != "POST" || !httprules.AcceptableContentType(r.ContentType) || r.BodyLen > int64(e.opts.MaxMessageSize) || !h.hostAllowed(c, r) || h.originRefused(c, r) || h.badCoding {
				out = h.answerHead(c, out)
				continue
			}
			c.call.Meta.SetHTTPHeadParsed(h.head, &h.req)
			if e.opts.Authorize == nil {
				c.call.Meta.Grants = nil
			} else if status := h.authorizeHTTP(c, h.req.Auth); status != 0 {
				out = h.refuseCaller(c, out, status)
				continue
			}
			if h.sse >= acceptNothing {
				out = h.refuseAccept(c, out)
				continue
			}
			if e.route != nil {
				var ok bool
				if out, ok = h.routeByHeader(c, out); !ok {
					continue
				}
			}
			h.inBody = true
		}
		var msg []byte
		if r.Chunked {
			if h.body == nil {
				h.body = pool.Requests.Get()
			}
			var n, st int
			var done bool
			h.body.B, n, done, st = h.chunks.Decode(h.body.B, in[off:], int64(e.opts.MaxMessageSize), e.opts.MaxHeaderSize)
			off += n
			if st != 0 {
				out = h.refuse(c, out, st, false, r.Minor)
				return c.closeAfterFlush(out, closeProtocol), len(in), nil
			}
			if !done {
				out = h.continue100(c, out)
				c.markPartial()
				h.keepHead(c)
				return out, off, nil
			}
			msg = h.body.B
		} else {
			n := int(max(r.BodyLen, 0))
			if len(in)-off < n {
				out = h.continue100(c, out)
				c.markPartial()
				h.want = n
				h.keepHead(c)
				return out, off, nil
			}
			h.want = 0
			msg = in[off : off+n]
			off += n
		}
		if h.dec != codingIdentity {
			out = h.callInflated(c, out, msg)
		} else {
			out = h.call(c, out, msg)
		}
		c.clearPartial()
		h.inBody, h.sent100, h.head = false, false, nil
		if h.body != nil {
			pool.Requests.Put(h.body)
			h.body = nil
		}
	}
	return out, off, nil
}

// keepHead copies the head of the request whose body is still arriving
// (the input it lies in is released when serve returns), and points the
// call metadata at the copy.
func (h *httpCodec) keepHead(c *conn) {
	if len(h.head) > 0 && (len(h.headBuf) == 0 || &h.head[0] != &h.headBuf[0]) {
		h.headBuf = append(h.headBuf[:0], h.head...)
		h.head = h.headBuf
		c.call.Meta.SetHTTPHead(h.head) // the copy: method and target parsed again
	}
}

// answerHead answers a request that is not a JSON-RPC call from its head
// alone: a Host not allowed, a CORS preflight, the health check, or a
// refusal (405, 415, 413). The connection persists only when no body
// follows that would have to be skipped.
func (h *httpCodec) answerHead(c *conn, out []byte) []byte {
	e, r := c.e, &h.req
	keep := r.KeepAlive && !r.HasBody() && e.serving() // draining or stopping: the last response (call)
	why := h.closeWhy(c)                               // when the connection does not persist
	page := e.pageFor(r.Method, r.Target)
	mark := len(out)
	switch {
	case !h.hostAllowed(c, r):
		h.refusedHead(c, http1.StatusForbidden, httprules.ReasonForbiddenHost)
		out = appendStatusText(out, http1.StatusForbidden, httprules.TextHostNotAllowed, keep, r.Minor, h.corsLines)
	case h.originRefused(c, r): // a preflight too
		h.refusedHead(c, http1.StatusForbidden, httprules.ReasonForbiddenOrigin)
		out = appendStatusText(out, http1.StatusForbidden, httprules.TextOriginNotAllowed, keep, r.Minor, "")
	case string(r.Method) == "POST" && !httprules.AcceptableContentType(r.ContentType):
		h.refusedHead(c, http1.StatusUnsupportedMediaType, httprules.ReasonUnsupportedType)
		out = appendStatus(out, http1.StatusUnsupportedMediaType, keep, r.Minor, h.corsLines)
	case string(r.Method) == "POST" && h.badCoding:
		h.refusedHead(c, http1.StatusUnsupportedMediaType, httprules.ReasonUnsupportedEncoding)
		out = appendStatusText(out, http1.StatusUnsupportedMediaType, httprules.TextUnsupportedEncoding, keep, r.Minor, h.corsLines)
	case string(r.Method) == "POST": // a body over MaxMessageSize
		keep, why = false, closeProtocol // as a chunked body found too large is
		e.stats.tooLarge.Add(1)
		h.refusedHead(c, http1.StatusPayloadTooLarge, httprules.ReasonBodyTooLarge)
		out = appendStatus(out, http1.StatusPayloadTooLarge, false, r.Minor, h.corsLines)
	case httprules.IsHealthCheck(r.Method, r.Target, e.opts.HealthPath):
		out = appendHealth(out, e.health(), keep, r.Minor, h.corsLines)
	case page != nil:
		if e.opts.Authorize != nil {
			c.call.Meta.SetHTTPHeadParsed(h.head, r)
			if status := c.authorize(true); status != 0 {
				c.refused(status, c.authReason(status))
				out = appendStatusText(out, status, c.refusal, keep, r.Minor, h.corsLines)
				break
			}
		}
		out = h.page(c, out, page, keep)
	case e.opts.CORS.Enabled() && isPreflight(r, h.head):
		out = h.appendPreflight(c, out, r, keep)
	default:
		allow := "POST"
		if get := []byte("GET"); httprules.IsHealthCheck(get, r.Target, e.opts.HealthPath) || e.pageFor(get, r.Target) != nil {
			allow = "GET"
		}
		h.refusedHead(c, http1.StatusMethodNotAllowed, httprules.ReasonMethodNotAllowed)
		out = appendNotAllowed(out, allow, string(r.Method) == "HEAD", keep, r.Minor, h.corsLines)
	}
	if len(out) > mark { // a page's response is held already
		out = h.emit(c, out, mark)
	}
	if !keep {
		out = c.closeAfterFlush(out, why)
	}
	return out
}

// refuseCaller answers a request the Authorizer refused with status
// (401 or 403). A body that follows is not read: the connection closes.
func (h *httpCodec) refuseCaller(c *conn, out []byte, status int) []byte {
	r := &h.req
	keep := r.KeepAlive && !r.HasBody() && c.e.serving()
	mark := len(out)
	c.refused(status, c.authReason(status))
	out = appendStatusText(out, status, c.refusal, keep, r.Minor, h.corsLines)
	out = h.emit(c, out, mark)
	if !keep {
		out = c.closeAfterFlush(out, h.closeWhy(c))
	}
	return out
}

// upgradeWS answers a WebSocket upgrade in h.req: the Host, the Origin
// and the Authorizer are checked, then the handshake (ws.go). It returns
// the WebSocket codec, or nil when refused (the connection then closes).
func (h *httpCodec) upgradeWS(c *conn, out []byte) ([]byte, codec) {
	r := &h.req
	switch {
	case !h.hostAllowed(c, r):
		h.refusedHead(c, http1.StatusForbidden, httprules.ReasonForbiddenHost)
		out = appendStatusText(out, http1.StatusForbidden, httprules.TextHostNotAllowed, false, r.Minor, "")
		return c.closeAfterFlush(out, closeProtocol), nil
	case h.originRefused(c, r):
		h.refusedHead(c, http1.StatusForbidden, httprules.ReasonForbiddenOrigin)
		out = appendStatusText(out, http1.StatusForbidden, httprules.TextOriginNotAllowed, false, r.Minor, "")
		return c.closeAfterFlush(out, closeProtocol), nil
	}
	c.call.Meta.SetHTTPHeadParsed(h.head, &h.req)
	if status := c.authorize(false); status != 0 {
		c.refused(status, c.authReason(status))
		out = appendStatusText(out, status, c.refusal, false, r.Minor, "")
		return c.closeAfterFlush(out, closeProtocol), nil
	}
	return upgradeWS(c, out, h.head, r)
}

// refuse answers a malformed request with status (the connection then
// closes).
func (h *httpCodec) refuse(c *conn, out []byte, status int, keep bool, minor int) []byte {
	h.refusedMalformed(c, status)
	switch status {
	case http1.StatusPayloadTooLarge:
		c.e.stats.tooLarge.Add(1)
	case http1.StatusHeaderTooLarge:
		c.e.stats.headTooLarge.Add(1)
	}
	mark := len(out)
	out = appendStatus(out, status, keep, minor, "")
	return h.emit(c, out, mark)
}

// continue100 answers Expect: 100-continue once the head is in and the
// body is not.
func (h *httpCodec) continue100(c *conn, out []byte) []byte {
	if !h.req.Expect100 || h.sent100 {
		return out
	}
	h.sent100 = true
	mark := len(out)
	out = append(out, "HTTP/1.1 100 Continue\r\n\r\n"...)
	return h.emit(c, out, mark)
}

// call runs one request body and appends its reply, or holds its place
// while it runs on a worker.
func (h *httpCodec) call(c *conn, out, msg []byte) []byte {
	if h.route.on {
		var ok bool
		if out, ok = h.checkRoute(c, out, msg); !ok {
			return out
		}
	}
	r := &h.req
	keep, tag := h.replyTag(c)
	tag |= sseTag(h.sse)
	mark := len(out)
	digits := lengthDigits(c.loop.guess.n)
	if c.e.comp.on() {
		out = appendVaryReplyHead(out, keep, r.Minor, digits, h.corsLines)
	} else if h.corsLines != "" && h.corsLines == h.cors.lines && keep && r.Minor == 1 {
		out = h.cors.appendReplyHead(out, digits) // the usual head with this connection's CORS lines, in one piece
	} else {
		out = appendReplyHead(out, keep, r.Minor, digits, h.corsLines)
	}
	start := len(out)
	out, j, _ := c.run(out, msg, tag)
	if j != nil {
		out = out[:mark]
		j.cors = h.corsLines
		h.held = append(h.held, heldReply{j: j})
	} else {
		c.loop.guess.note(len(out) - start)
		if h.sse == sseOnly {
			out = c.sseInline(out, mark, start, keep, r.Minor, h.corsLines)
		} else if h.enc != codingIdentity && len(out)-start >= c.e.comp.min {
			out = appendEncodedReply(out[:mark], c.loop.comp.compress(h.enc, out[start:]), h.enc, keep, r.Minor, h.corsLines)
		} else {
			out = finishReply(out, mark, start, digits, keep, r.Minor, h.corsLines)
		}
		out = h.emit(c, out, mark)
	}
	if !keep {
		out = c.closeAfterFlush(out, h.closeWhy(c))
	}
	return out
}

// replyTag returns whether the connection persists after the reply to
// req — draining or stopping, the reply says Connection: close and is
// the connection's last: nothing read after it is run (RFC 9112 9.6) —
// and the tag its job carries for the reply's framing: keep-alive,
// version, coding. Kept inlinable.
func (h *httpCodec) replyTag(c *conn) (keep bool, tag uint8) {
	r := &h.req
	keep = r.KeepAlive && c.e.serving()
	if keep {
		tag |= tagKeepAlive
	}
	if r.Minor == 1 {
		tag |= tagHTTP11
	}
	return keep, tag | uint8(h.enc)<<tagCodingShift
}

// callInflated runs one request body compressed with h.dec: it is
// inflated into a pooled buffer, at most MaxMessageSize bytes of it, and
// run; a body that inflates past the limit is refused 413, one that does
// not inflate 400 (its bytes were read: the connection persists).
func (h *httpCodec) callInflated(c *conn, out, msg []byte) []byte {
	b := pool.Requests.Get()
	var err error
	b.B, err = c.loop.comp.inflate(b.B[:0], h.dec, msg, c.e.opts.MaxMessageSize)
	switch {
	case err == errInflatedTooLarge:
		c.e.stats.tooLarge.Add(1)
		out = h.refuseBody(c, out, http1.StatusPayloadTooLarge)
	case err != nil:
		out = h.refuseBody(c, out, http1.StatusBadRequest)
	default:
		out = h.call(c, out, b.B)
	}
	pool.Requests.Put(b)
	return out
}

// refuseBody answers a request whose body, read whole, could not be
// taken (status 413 or 400) once its head was accepted; the connection
// persists as the request allows.
func (h *httpCodec) refuseBody(c *conn, out []byte, status int) []byte {
	r := &h.req
	keep := r.KeepAlive && c.e.serving()
	h.refusedMalformed(c, status)
	mark := len(out)
	out = appendStatus(out, status, keep, r.Minor, h.corsLines)
	out = h.emit(c, out, mark)
	if !keep {
		out = c.closeAfterFlush(out, h.closeWhy(c))
	}
	return out
}

// closeWhy is why a connection closes after a reply that says
// Connection: close: the client asked, or the engine drains or stops.
func (h *httpCodec) closeWhy(c *conn) closeReason {
	if h.req.KeepAlive && !c.e.serving() {
		return closeStopping
	}
	return closeByClient
}

func (h *httpCodec) swap(j, r *job) {
	for i := h.first; i < len(h.held); i++ {
		if h.held[i].j == j {
			h.held[i].j = r
			return
		}
	}
}

// pending reports whether replies are held.
func (h *httpCodec) pending() bool { return h.first < len(h.held) }

// emit makes out[mark:], a whole response, wait for the replies held
// before it: it is moved into a held job. Without held replies it stays
// where it is, on its way out. Kept inlinable.
func (h *httpCodec) emit(c *conn, out []byte, mark int) []byte {
	if !h.pending() {
		return out
	}
	return h.holdFramed(c, out, mark)
}

// holdFramed moves out[mark:], a whole response, into a held job.
func (h *httpCodec) holdFramed(c *conn, out []byte, mark int) []byte {
	j := newJob(c)
	j.out = append(j.out[:0], out[mark:]...)
	j.tag = tagFramed
	h.held = append(h.held, heldReply{j: j, ready: true})
	return out[:mark]
}

func (h *httpCodec) ready(c *conn) bool {
	return (h.want == 0 || c.gc.InboundBuffered() >= h.want) && !h.blocked(c)
}

// blocked: a connection holds at most MaxInFlight replies for order, and
// reads nothing past an upgrade until the replies before it are out.
func (h *httpCodec) blocked(c *conn) bool {
	return len(h.held)-h.first >= c.e.opts.MaxInFlight || h.upgrade && h.pending()
}

// reply marks a job's reply ready and sends every ready reply at the head
// of the held ones.
func (h *httpCodec) reply(c *conn, out []byte, j *job) []byte {
	for i := h.first; i < len(h.held); i++ {
		if h.held[i].j == j {
			h.held[i].ready = true
			break
		}
	}
	for h.pending() && h.held[h.first].ready {
		j, get := h.held[h.first].j, h.held[h.first].get
		if j.rs.sseHeld && !j.rs.sseDone {
			// An event stream held open past its reply (a subscription's):
			// the reply goes as an event, and the stream stays at the head,
			// its events to come, until it ends (sse.go).
			out = c.sseReplied(out, j)
			h.held[h.first].ready = false
			break
		}
		h.held[h.first] = heldReply{}
		h.first++
		switch {
		case j.tag&tagFramed != 0:
			out = append(out, j.out...)
		case j.rs.sseDone:
			out = c.sseEnd(out, j)
		case j.rs.listed.Load():
			out = c.streamRest(out, j) // a streamed reply: its head went with its first part
		default:
			minor := 0
			if j.tag&tagHTTP11 != 0 {
				minor = 1
			}
			// The keep-alive the request was read under: replies to the
			// requests after it may follow. The last reply of a connection
			// set to close (stopping, a timeout) says so, and, stopping,
			// nothing read after it is run.
			keep := j.tag&tagKeepAlive != 0
			if keep && !h.pending() && (c.closing != notClosing || c.e.draining.Load()) {
				keep = false
				out = c.closeAfterFlush(out, closeStopping)
			}
			cors := j.cors
			if get != nil && j.tag&tagSSE == 0 { // an event stream is no-cache
				cors = h.getLines(cors, get.lineFor(j.out))
			}
			switch {
			case j.tag&tagSSEOnly != 0:
				out = appendSSEReply(out, j.out, keep, minor, cors) // it sent no event
			case c.e.comp.on():
				out = c.appendCodedReply(out, j.out, coding(j.tag>>tagCodingShift&3), keep, minor, cors)
			default:
				out = appendReply(out, j.out, keep, minor, cors)
			}
		}
		j.release()
	}
	if !h.pending() {
		h.held, h.first = h.held[:0], 0
	}
	return out
}

// streamHead returns the job at the head of the replies held for order
// when its reply is being streamed and its method still runs: its parts
// may go now (streamed.go). Once it has returned, reply ends it in
// place.
func (h *httpCodec) streamHead() *job {
	if !h.pending() || h.held[h.first].ready {
		return nil
	}
	if j := h.held[h.first].j; j.rs.listed.Load() {
		return j
	}
	return nil
}

func (h *httpCodec) push(_ *conn, out, _ []byte) []byte { return out } // Send refuses: HTTP cannot push

func (h *httpCodec) ping(out []byte) []byte { return out }

func (h *httpCodec) goodbye(_ *conn, out []byte, _ closeReason) []byte { return out }

func (h *httpCodec) transport() transport { return transportHTTP }

// release drops the codec's buffers. A held job still on its worker is
// the worker's to release (its mailbox is closed); the others are the
// codec's.
func (h *httpCodec) release() {
	if h.body != nil {
		pool.Requests.Put(h.body)
	}
	for _, r := range h.held[h.first:] {
		if r.ready {
			r.j.release()
		}
	}
	clear(h.held)
	held := h.held[:0]
	h.chunks.Reset()
	headBuf := h.headBuf[:0]
	if cap(headBuf) > maxHeadBuf {
		headBuf = nil
	}
	*h = httpCodec{held: held, chunks: h.chunks, headBuf: headBuf, hostOK: h.hostOK[:0], auth: authCache{field: h.auth.field[:0]}, cors: corsCache{origin: h.cors.origin[:0], head: h.cors.head[:0]}, get: h.get}
	httpCodecs.Put(h)
}
