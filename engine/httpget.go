package engine

// NOTE: calls by HTTP GET. A method registered with handler.HTTPGet may
// be called by GET <any path>?method=NAME&id=ID&params=JSON, for
// idempotent, cacheable reads. The query is decoded (percent escapes,
// '+' as a space) into a pooled buffer, and the JSON-RPC request
// {"jsonrpc":"2.0","id":ID,"method":"NAME","params":JSON} built there;
// from then on the call is a POST's: the Host, CORS and the Authorizer
// are applied first, and the table runs it (grants, rate limits,
// metrics, access log) inline or on a worker. Its reply is held in the
// connection's reply order as any other; its head carries the method's
// Cache-Control when the reply is a result, no-store when it is an
// error (getLines). A GET whose Accept takes text/event-stream (a
// browser's EventSource) is answered as a POST that does (sse.go): an
// event stream, no-cache, that carries a subscription's notifications.
//
// The rule: a GET is a call when the engine has a method marked HTTPGet,
// its target's query has a method parameter, its path is neither the
// health path nor a page's, it has no body and is no WebSocket upgrade
// (those go first). Everything else is answered as before.

import (
	"bytes"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// getMethod is what the engine keeps of a method callable by GET.
type getMethod struct {
	ok   string // the Cache-Control line of a successful reply; immutable
	fail string // the Cache-Control line of an error reply; immutable
}

// lineFor returns the Cache-Control line of the reply body: m.ok for a
// JSON-RPC result, m.fail otherwise.
func (m *getMethod) lineFor(body []byte) string {
	if len(body) >= len(resultPrefix) && string(body[:len(resultPrefix)]) == resultPrefix {
		return m.ok
	}
	return m.fail
}

// resultPrefix begins a JSON-RPC 2.0 success reply as the table writes
// it.
const resultPrefix = `{"jsonrpc":"2.0","result":`

// noStoreLine is the Cache-Control line of every error reply to a GET.
const noStoreLine = "Cache-Control: no-store\r\n"

// getMethods are an engine's methods callable by GET, by name, made
// from its table on the first GET that may be one (the methods are
// registered by then). Immutable once made.
type getMethods struct {
	once sync.Once
	m    map[string]*getMethod // nil when no method is callable by GET
}

// getTable returns the engine's methods callable by GET; nil when none
// is. Safe from any goroutine.
func (e *Engine) getTable() map[string]*getMethod {
	g := &e.gets
	g.once.Do(func() {
		for _, info := range e.table.Methods() {
			if !info.HTTPGet {
				continue
			}
			if g.m == nil {
				g.m = make(map[string]*getMethod)
			}
			g.m[info.Name] = &getMethod{ok: "Cache-Control: " + info.CacheControl + "\r\n", fail: noStoreLine}
		}
	})
	return g.m
}

// getCache is an HTTP connection's last CORS lines and Cache-Control
// line together: a reply carries both, and a connection's requests tend
// to have the same. Event loop only.
type getCache struct {
	cors, line, both string
}

// getLines returns the extra header lines of a reply to a GET call: the
// CORS lines cors and the Cache-Control line line. Event loop only.
func (h *httpCodec) getLines(cors, line string) string {
	if cors == "" {
		return line
	}
	k := &h.get
	if k.cors != cors || k.line != line {
		k.cors, k.line, k.both = cors, line, cors+line
	}
	return k.both
}

// isGetCall reports whether r, a request of h whose head was read, is a
// call by GET (see the NOTE).
func (h *httpCodec) isGetCall(c *conn, r *http1.Request) bool {
	if string(r.Method) != "GET" || r.HasBody() || !hasMethodParam(r.Target) {
		return false
	}
	e := c.e
	if e.getTable() == nil || httprules.IsHealthCheck(r.Method, r.Target, e.opts.HealthPath) || e.pageFor(r.Method, r.Target) != nil {
		return false
	}
	return true
}

// hasMethodParam reports whether the query of target has a parameter
// named method.
func hasMethodParam(target []byte) bool {
	q := bytes.IndexByte(target, '?')
	if q < 0 {
		return false
	}
	for i := q + 1; i < len(target); {
		end := i
		for end < len(target) && target[end] != '&' {
			end++
		}
		if p := target[i:end]; len(p) >= 6 && string(p[:6]) == "method" && (len(p) == 6 || p[6] == '=') {
			return true
		}
		i = end + 1
	}
	return false
}

// getCall answers a call by GET of h's request: refused from its head
// (Host, CORS), its query (400, or 405 for a method not callable by
// GET) or by the Authorizer, else built into a JSON-RPC request and run.
// Event loop only.
func (h *httpCodec) getCall(c *conn, out []byte) []byte {
	e, r := c.e, &h.req
	if !h.hostAllowed(c, r) || h.originRefused(c, r) {
		return h.answerHead(c, out)
	}
	b := pool.Requests.Get()
	var q getQuery
	var reason string
	b.B, q, reason = parseGetQuery(b.B[:0], r.Target)
	var gm *getMethod
	if reason == "" {
		gm = e.getTable()[string(q.method)]
		if gm == nil {
			out = h.refuseGet(c, out, http1.StatusMethodNotAllowed, textNotByGet)
			pool.Requests.Put(b)
			return out
		}
		b.B, reason = appendGetRequest(b.B, &q)
	}
	if reason != "" {
		out = h.refuseGet(c, out, http1.StatusBadRequest, reason)
		pool.Requests.Put(b)
		return out
	}
	c.call.Meta.SetHTTPHeadParsed(h.head, r)
	if e.opts.Authorize == nil {
		c.call.Meta.Grants = nil
	} else if status := h.authorizeHTTP(c, r.Auth); status != 0 {
		pool.Requests.Put(b)
		return h.refuseCaller(c, out, status)
	}
	if h.sse >= acceptNothing {
		pool.Requests.Put(b)
		return h.refuseAccept(c, out)
	}
	out = h.runGet(c, out, b.B[q.msg:], gm)
	pool.Requests.Put(b)
	return out
}

// runGet runs msg, the request of a call by GET of gm, and appends its
// reply, or holds its place while it runs on a worker (the held reply's
// head is made then, in reply, with getLines). Event loop only.
func (h *httpCodec) runGet(c *conn, out, msg []byte, gm *getMethod) []byte {
	r := &h.req
	keep, tag := h.replyTag(c)
	tag |= sseTag(h.sse) // an EventSource: a subscription's notifications follow its reply
	body := pool.Responses.Get()
	var j *job
	body.B, j, _ = c.run(body.B[:0], msg, tag)
	if j != nil {
		j.cors = h.corsLines
		h.held = append(h.held, heldReply{j: j, get: gm})
	} else {
		mark := len(out)
		lines := h.getLines(h.corsLines, gm.lineFor(body.B))
		if tag&tagSSEOnly != 0 {
			out = appendSSEReply(out, body.B, keep, r.Minor, h.corsLines) // an event stream is no-cache
		} else if c.e.comp.on() {
			out = c.appendCodedReply(out, body.B, h.enc, keep, r.Minor, lines)
		} else {
			out = appendReply(out, body.B, keep, r.Minor, lines)
		}
		out = h.emit(c, out, mark)
	}
	pool.Responses.Put(body)
	if !keep {
		out = c.closeAfterFlush(out, h.closeWhy(c))
	}
	return out
}

// refuseGet answers a call by GET refused from its query with status
// (400 or 405) and text; the connection persists as the request allows
// (it has no body).
func (h *httpCodec) refuseGet(c *conn, out []byte, status int, text string) []byte {
	r := &h.req
	keep := r.KeepAlive && c.e.serving()
	mark := len(out)
	h.refusedHead(c, status, httprules.ReasonOf(status))
	if status == http1.StatusMethodNotAllowed {
		out = http1.AppendStatusLine(out, status)
		out = appendHeadStart(out, "", keep, r.Minor, h.corsLines)
		out = append(out, "Allow: POST\r\n"...)
		out = append(out, "Cache-Control: no-store\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: "...)
		out = strconv.AppendInt(out, int64(len(text)), 10)
		out = append(out, "\r\n\r\n"...)
		out = append(out, text...)
	} else {
		out = appendStatusText(out, status, text, keep, r.Minor, h.corsLines)
	}
	out = h.emit(c, out, mark)
	if !keep {
		out = c.closeAfterFlush(out, h.closeWhy(c))
	}
	return out
}

// The refusals of calls by GET.
const (
	textNotByGet     = "this method is not callable by GET: POST it\n"
	textBadEscape    = "the query has a malformed percent escape\n"
	textDupParam     = "the query names method, id or params twice\n"
	textEmptyMethod  = "the query's method is empty\n"
	textBadMethod    = "the query's method is not UTF-8\n"
	textBadParams    = "the query's params is not a JSON array or object\n"
	textBadGetTarget = "the query is not a call\n"
)

// getQuery is the query of a call by GET, decoded: spans of the buffer
// parseGetQuery appended to. A span's end is 0 when the parameter is
// absent.
type getQuery struct {
	methodAt, methodEnd int
	idAt, idEnd         int
	paramsAt, paramsEnd int
	hasID, hasParams    bool
	method              []byte // the method name, a view of the buffer; valid until it grows
	msg                 int    // where appendGetRequest's request begins in the buffer
}

// parseGetQuery decodes the method, id and params parameters of the
// query of target, appending their values to dst (percent escapes and
// '+' decoded), and returns dst, their spans, and "" — or the text of
// the refusal of a malformed query: a bad percent escape, a parameter
// named twice, no method, an empty one or one not UTF-8. Other parameters are ignored
// (a cache buster, say). It allocates nothing beyond growing dst.
func parseGetQuery(dst, target []byte) ([]byte, getQuery, string) {
	var q getQuery
	k := bytes.IndexByte(target, '?')
	if k < 0 {
		return dst, q, textBadGetTarget
	}
	hasMethod := false
	for i := k + 1; i <= len(target); {
		end := i
		for end < len(target) && target[end] != '&' {
			end++
		}
		p := target[i:end]
		i = end + 1
		eq := len(p)
		for j, c := range p {
			if c == '=' {
				eq = j
				break
			}
		}
		var at, stop *int
		switch string(p[:eq]) {
		case "method":
			if hasMethod {
				return dst, q, textDupParam
			}
			hasMethod, at, stop = true, &q.methodAt, &q.methodEnd
		case "id":
			if q.hasID {
				return dst, q, textDupParam
			}
			q.hasID, at, stop = true, &q.idAt, &q.idEnd
		case "params":
			if q.hasParams {
				return dst, q, textDupParam
			}
			q.hasParams, at, stop = true, &q.paramsAt, &q.paramsEnd
		default:
			continue
		}
		*at = len(dst)
		var ok bool
		if eq < len(p) {
			dst, ok = appendUnescaped(dst, p[eq+1:])
			if !ok {
				return dst, q, textBadEscape
			}
		}
		*stop = len(dst)
	}
	switch {
	case !hasMethod:
		return dst, q, textBadGetTarget
	case q.methodEnd == q.methodAt:
		return dst, q, textEmptyMethod
	case !utf8.Valid(dst[q.methodAt:q.methodEnd]):
		return dst, q, textBadMethod // it would not reach the table as the name looked up
	}
	q.method = dst[q.methodAt:q.methodEnd]
	return dst, q, ""
}

// appendUnescaped appends v, a query parameter's value, to dst with its
// percent escapes decoded and '+' as a space; false on a malformed
// escape.
func appendUnescaped(dst, v []byte) ([]byte, bool) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '%':
			if i+2 >= len(v) {
				return dst, false
			}
			hi, lo := unhexByte(v[i+1]), unhexByte(v[i+2])
			if hi > 15 || lo > 15 {
				return dst, false
			}
			dst = append(dst, hi<<4|lo)
			i += 2
		case '+':
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

// unhexByte returns the value of the hex digit c, or 255.
func unhexByte(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// appendGetRequest appends to dst (which holds q's values) the JSON-RPC
// request of the call q describes, and sets q.msg to where it begins:
// {"jsonrpc":"2.0","id":ID,"method":"NAME","params":P}. The id is a
// number when it is a JSON number, else a string; null when absent. The
// params must be one JSON array or object ("" or the refusal's text);
// absent, the member is left out.
func appendGetRequest(dst []byte, q *getQuery) ([]byte, string) {
	if q.hasParams {
		p := dst[q.paramsAt:q.paramsEnd]
		i := 0
		for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
			i++
		}
		if i == len(p) || p[i] != '[' && p[i] != '{' || !parser.Valid(p) {
			return dst, textBadParams
		}
	}
	q.msg = len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	switch id := dst[q.idAt:q.idEnd]; {
	case !q.hasID:
		dst = append(dst, "null"...)
	case isJSONNumber(id):
		dst = append(dst, id...)
	default:
		dst = parser.AppendQuote(dst, bytesView(id))
	}
	dst = append(dst, `,"method":`...)
	dst = parser.AppendQuote(dst, bytesView(dst[q.methodAt:q.methodEnd]))
	if q.hasParams {
		dst = append(dst, `,"params":`...)
		dst = append(dst, dst[q.paramsAt:q.paramsEnd]...)
	}
	return append(dst, '}'), ""
}

// isJSONNumber reports whether b is a JSON number (RFC 8259 6), no
// whitespace around it.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// bytesView is a string viewing b, without a copy: valid while b is
// unchanged.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
