package engine

// NOTE: routing before the body (Options.MethodHeader). A POST whose head
// names its method in the configured header field (Mcp-Method, say) is
// checked by its name before its body is read (routeByHeader, on the
// event loop, after the Host, CORS and the Authorizer): the method
// exists, the caller holds its grants, its rate limits allow it
// (handler.Table.Admit). A refused call's body is never parsed: the
// refusal — the HTTP status and a JSON-RPC error with id null — goes at
// once, and the connection closes when a body follows (it is not read).
// Once the body of an admitted call is in, it must be one request object
// whose method is the header's (checkRoute); anything else — another
// method, a batch, a body without a method — is refused 400 with a
// -32600 reply, and the method does not run. A request without the
// field is served as before.

import (
	"strconv"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// MaxMethodHeaderLen bounds the value of the method header
// (Options.MethodHeader): a longer value is refused 400.
const MaxMethodHeaderLen = 256

// methodRoute is an engine's routing by header, made from
// Options.MethodHeader. Immutable.
type methodRoute struct {
	lower    string // the field name, lower case, as http1.Header takes it
	mismatch string // the reply bodies of the refusals, with the field's name as configured
	batch    string
	noMethod string
	empty    string
	badValue string
	tooLong  string
	twice    string
}

// newMethodRoute returns the routing by the header field name, nil for
// "" (off). It panics when name is not an HTTP token (RFC 9110 5.6.2).
func newMethodRoute(name string) *methodRoute {
	if name == "" {
		return nil
	}
	if !http1.IsToken([]byte(name)) {
		panic("jetrpc: engine.New: Options.MethodHeader " + strconv.Quote(name) + " is not a header field name")
	}
	lower := []byte(name)
	for i, c := range lower {
		if c >= 'A' && c <= 'Z' {
			lower[i] = c + 'a' - 'A'
		}
	}
	body := func(detail string) string {
		b := append([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: `), parser.AppendEscaped(nil, detail)...)
		return string(append(b, `"},"id":null}`...))
	}
	return &methodRoute{
		lower:    string(lower),
		mismatch: "the method differs from the " + name + " header",
		batch:    "a batch cannot be routed by the " + name + " header",
		noMethod: "the body names no method for the " + name + " header",
		empty:    body("the " + name + " header is empty"),
		badValue: body("the " + name + " header is not a method name (visible ASCII)"),
		tooLong:  body("the " + name + " header is longer than " + strconv.Itoa(MaxMethodHeaderLen) + " bytes"),
		twice:    body("the " + name + " header is given twice"),
	}
}

// routeState is the method header of the request of an HTTP connection
// whose body is being read: its value's place in the head (h.head, or
// its copy: the offsets hold for both). Event loop only.
type routeState struct {
	on       bool // the request named its method in the header and was admitted
	at, stop int  // the value: h.head[at:stop]
}

// Reasons of the refusals by the method header, for the access log.
const (
	reasonBadMethodHeader = "bad_method_header"
	reasonMethodMismatch  = "method_header_mismatch"
	reasonRouteNotFound   = "method_not_found"
	reasonRouteForbidden  = "forbidden_method"
	reasonRouteLimited    = "rate_limited"
)

// routeByHeader checks the POST of h, whose head was accepted and whose
// caller was authorized, by its method header: it returns out and true
// to go on and read the body, or out with the refusal and false. Event
// loop only.
func (h *httpCodec) routeByHeader(c *conn, out []byte) ([]byte, bool) {
	rt := c.e.route
	h.route = routeState{}
	at, stop, n := methodField(h.head, rt.lower)
	if n == 0 {
		return out, true
	}
	v := h.head[at:stop]
	var body string
	switch {
	case n > 1:
		body = rt.twice
	case len(v) == 0:
		body = rt.empty
	case len(v) > MaxMethodHeaderLen:
		body = rt.tooLong
	case !visibleASCII(v):
		body = rt.badValue
	}
	if body != "" {
		return h.refuseWithError(c, out, http1.StatusBadRequest, reasonBadMethodHeader, body, "", "", nil), false
	}
	code, detail := c.e.table.Admit(&c.call, v)
	switch code {
	case 0:
		h.route = routeState{on: true, at: at, stop: stop}
		return out, true
	case parser.CodeMethodNotFound:
		return h.refuseWithError(c, out, http1.StatusNotFound, reasonRouteNotFound, "", code.String(), "", nil), false
	case parser.CodeForbidden:
		return h.refuseWithError(c, out, http1.StatusForbidden, reasonRouteForbidden, "", code.String(), detail, nil), false
	default:
		return h.refuseWithError(c, out, http1.StatusTooManyRequests, reasonRouteLimited, "", parser.CodeLimitExceeded.String(), detail, nil), false
	}
}

// methodField returns the place of the first value of the field lower
// in head, and how many fields have that name (0 when none; counted up
// to 2).
func methodField(head []byte, lower string) (at, stop, n int) {
	f := http1.NewFields(head)
	for name, v, ok := f.Next(); ok; name, v, ok = f.Next() {
		if len(name) != len(lower) || !httprules.EqualFold(name, lower) {
			continue
		}
		if n++; n == 1 {
			at = offsetIn(head, v)
			stop = at + len(v)
		} else {
			break
		}
	}
	return at, stop, n
}

// offsetIn returns where v, a subslice of b, begins in b.
func offsetIn(b, v []byte) int { return cap(b) - cap(v) }

// visibleASCII reports whether b holds only visible ASCII (0x21 to
// 0x7e): a method name the header can carry.
func visibleASCII(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// checkRoute checks msg, the body of a request admitted by its method
// header, against it: it reports true when msg is one request object
// whose method is the header's, else appends the 400 refusal (the
// connection persists: the body was read). It forgets the header: it
// applies to this body alone. Event loop only.
func (h *httpCodec) checkRoute(c *conn, out, msg []byte) ([]byte, bool) {
	rt, want := c.e.route, h.head[h.route.at:h.route.stop]
	h.route = routeState{}
	i := 0
	for i < len(msg) && (msg[i] == ' ' || msg[i] == '\t' || msg[i] == '\n' || msg[i] == '\r') {
		i++
	}
	if i < len(msg) && msg[i] == '[' {
		return h.refuseWithError(c, out, http1.StatusBadRequest, reasonMethodMismatch, "", parser.CodeInvalidRequest.String(), rt.batch, nil), false
	}
	var id []byte
	found, same := false, false
	m := parser.NewMembers(msg)
	for k, esc, v, ok := m.Next(); ok; k, esc, v, ok = m.Next() {
		if esc {
			k = parser.AppendUnquote(nil, k) // rare: a key with escapes
		}
		switch string(k) {
		case "method":
			found = true
			same = len(v) >= 2 && v[0] == '"' && sameMethod(v[1:len(v)-1], want)
		case "id":
			id = v
		}
	}
	if found && same {
		return out, true
	}
	detail := rt.mismatch
	if !found {
		detail = rt.noMethod
	}
	if id == nil || !parser.Valid(id) {
		id = nil
	}
	return h.refuseWithError(c, out, http1.StatusBadRequest, reasonMethodMismatch, "", parser.CodeInvalidRequest.String(), detail, id), false
}

// sameMethod reports whether s, the content of a JSON string, is the
// method name want.
func sameMethod(s, want []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return string(parser.AppendUnquote(nil, s)) == string(want) // rare: a name with escapes
		}
	}
	return string(s) == string(want)
}

// refuseWithError answers a request refused from its head — by its
// method header (routeByHeader) or its Accept (refuseAccept) — with
// status and a JSON-RPC error reply: body, made already, or the message
// msg and its detail with id (null when nil). The connection persists
// unless a body follows that was not read.
func (h *httpCodec) refuseWithError(c *conn, out []byte, status int, reason, body, msg, detail string, id []byte) []byte {
	r := &h.req
	keep := r.KeepAlive && c.e.serving() && (!r.HasBody() || h.inBody)
	c.refused(status, reason)
	b := pool.Responses.Get()
	if body == "" {
		code := int64(parser.CodeInvalidRequest)
		switch status {
		case http1.StatusNotFound:
			code = int64(parser.CodeMethodNotFound)
		case http1.StatusForbidden:
			code = int64(parser.CodeForbidden)
		case http1.StatusTooManyRequests:
			code = int64(parser.CodeLimitExceeded)
		}
		b.B = append(b.B[:0], `{"jsonrpc":"2.0","error":{"code":`...)
		b.B = strconv.AppendInt(b.B, code, 10)
		b.B = append(b.B, `,"message":"`...)
		b.B = parser.AppendEscaped(b.B, msg)
		if detail != "" {
			b.B = append(b.B, ": "...)
			b.B = parser.AppendEscaped(b.B, detail)
		}
		b.B = append(b.B, `"},"id":`...)
		if id == nil {
			b.B = append(b.B, "null"...)
		} else {
			b.B = append(b.B, id...)
		}
		b.B = append(b.B, '}')
	} else {
		b.B = append(b.B[:0], body...)
	}
	mark := len(out)
	out = http1.AppendStatusLine(out, status)
	out = appendHeadStart(out, "", keep, r.Minor, h.corsLines)
	out = append(out, jsonLength...)
	out = strconv.AppendInt(out, int64(len(b.B)), 10)
	out = append(out, "\r\n\r\n"...)
	out = append(out, b.B...)
	pool.Responses.Put(b)
	out = h.emit(c, out, mark)
	if !keep {
		out = c.closeAfterFlush(out, h.closeWhy(c))
	}
	return out
}
