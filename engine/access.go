package engine

// NOTE: who may call, the engine's side: the connection hook
// (Options.AcceptConn, in loop.go's OnOpen), the Host check and the CORS
// preflight of HTTP requests, and the Authorizer asked about each HTTP
// request that carries a call, each WebSocket upgrade and each stream
// connection. Everything here runs on the event loop before any
// JSON-RPC of the request is read. The grants the Authorizer gives land
// in the connection's call metadata (conn.call), where the table's
// Require checks them.

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// authorize asks Options.Authorize about the call metadata in c.call —
// an HTTP head, or a stream connection's address — and keeps the grants
// there. It returns the refusal's HTTP status, or 0 to go on. A caller
// without credentials goes on anonymous, with no grants, under
// Options.AuthOptional (HTTPPolicy.AdmitsAnonymous) — unless page: a
// page has no grants to withhold, and needs credentials all the same.
func (c *conn) authorize(page bool) int {
	a := c.e.opts.Authorize
	if a == nil {
		c.call.Meta.Grants = nil
		return 0
	}
	c.call.Meta.Principal = "" // the Authorizer names this request's caller, or none
	c.call.Meta.AuthorizedUntil = 0
	g, err := a(&c.call.Meta)
	if err != nil {
		c.call.Meta.Grants = nil
		if !page && c.e.opts.AdmitsAnonymous(err) {
			// Anonymous: no grants, no principal, whatever the Authorizer left.
			c.call.Meta.Principal, c.call.Meta.AuthorizedUntil = "", 0
			return 0
		}
		c.e.opts.Logger.Debug("jetrpc: caller refused", "remote", c.remote(), "transport", c.call.Meta.Transport.String(), "err", err)
		c.refusal = handler.AuthText(err)
		return handler.AuthStatus(err)
	}
	c.call.Meta.Grants = g
	return 0
}

// authCache is an HTTP connection's last answer of an Authorizer that
// said it holds for the same Authorization field
// (handler.Meta.AuthorizedUntil): a keep-alive connection sends the same
// token request after request, and the answer is given again without
// asking. Only acceptances are kept. Event loop only.
type authCache struct {
	field     []byte // the Authorization value the answer is for; empty: none
	grants    handler.Grants
	principal string
	until     int64 // a reading of package clock; math.MaxInt64 for good
}

// maxAuthField: a longer Authorization value is never kept.
const maxAuthField = 4 << 10

// authorizeHTTP is authorize for an HTTP request whose Authorization
// value is field (nil when absent), answered from h's cache when the
// Authorizer's last answer on the connection holds for it. The field is
// compared in constant time: behind a proxy one connection carries many
// clients, and the cache holds another's key.
func (h *httpCodec) authorizeHTTP(c *conn, field []byte) int {
	m, a := &c.call.Meta, &h.auth
	if len(field) > 0 && len(field) == len(a.field) && sameBytes(field, a.field) && c.e.now.Load() < a.until {
		m.Grants, m.Principal = a.grants, a.principal
		return 0
	}
	status := c.authorize(false)
	if status != 0 || m.AuthorizedUntil <= 0 || len(field) == 0 || len(field) > maxAuthField {
		a.field = a.field[:0]
		return status
	}
	a.field = append(a.field[:0], field...)
	a.grants, a.principal, a.until = m.Grants, m.Principal, m.AuthorizedUntil
	return 0
}

// sameBytes reports whether a and b are equal, in time that depends on
// their length only (crypto/subtle's ConstantTimeCompare, eight bytes at
// a time): no branch and no memory access depends on their contents.
func sameBytes(a, b []byte) bool {
	n := len(a)
	if len(b) != n {
		return false
	}
	var d uint64
	if n >= 8 {
		for i := 0; i+8 <= n; i += 8 {
			d |= binary.LittleEndian.Uint64(a[i:i+8]) ^ binary.LittleEndian.Uint64(b[i:i+8])
		}
		d |= binary.LittleEndian.Uint64(a[n-8:]) ^ binary.LittleEndian.Uint64(b[n-8:]) // the last word, overlapping
	} else {
		for i := range n {
			d |= uint64(a[i] ^ b[i])
		}
	}
	return subtle.ConstantTimeEq(int32(d>>32|d&0xffffffff), 0) == 1
}

// streamRefused is the message a stream connection gets when the
// Authorizer refuses it, before it is closed.
const streamRefused = `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: this connection is not authorized"},"id":null}` + "\n"

// authorizeStream asks the Authorizer about a new stream connection; a
// refused one gets streamRefused and is set to close.
func (c *conn) authorizeStream(out []byte) []byte {
	status := c.authorize(false)
	if status == 0 {
		return out
	}
	c.refused(0, httprules.ReasonOf(status)) // the stream gets streamRefused, not the status
	out = append(out, streamRefused...)
	return c.closeAfterFlush(out, closeProtocol)
}

// hostAllowed applies Options.Hosts to a request of h. A connection
// names one host, request after request: the last one allowed is
// remembered, and the same Host costs one comparison.
func (h *httpCodec) hostAllowed(c *conn, r *http1.Request) bool {
	if len(c.e.opts.Hosts) == 0 || len(h.hostOK) > 0 && string(r.Host) == string(h.hostOK) {
		return true
	}
	if !handler.HostAllows(&c.e.opts.HTTPPolicy, r.Host) {
		return false
	}
	if len(r.Host) <= maxHostOK {
		h.hostOK = append(h.hostOK[:0], r.Host...)
	}
	return true
}

// maxHostOK: a longer Host is checked on every request.
const maxHostOK = 256

// corsCache is an HTTP connection's last Origin and its CORS header
// lines: a browser's connection sends the same Origin request after
// request. Event loop only.
type corsCache struct {
	origin []byte // empty: none yet
	lines  string
	head   []byte      // the usual reply head (appendJSONHead's) with lines, up to the Content-Length value and its room; made for dated
	dated  *datedHeads // the Date head was made with
}

// appendReplyHead is the package's appendReplyHead for a reply on an
// HTTP/1.1 connection that persists, with the CORS lines of k: the head
// is made once a Date, and appended in one piece.
func (k *corsCache) appendReplyHead(dst []byte, digits int) []byte {
	if d := dated.Load(); k.dated != d {
		k.head = append(appendJSONHead(k.head[:0], true, 1, k.lines, 0), jsonLengthZeros[len(jsonLength):]...)
		k.dated = d
	}
	dst = append(dst, k.head[:len(k.head)-len(jsonLengthZeros)+len(jsonLength)+digits]...)
	return append(dst, "\r\n\r\n"...)
}

// corsLinesOf returns the CORS header lines of the replies to a request
// of h with the Origin origin (Engine.corsLines), or "" when it gets
// none; the same Origin as the last one costs a comparison. Kept
// inlinable.
func (h *httpCodec) corsLinesOf(c *conn, origin []byte) string {
	if len(origin) > 0 && string(origin) == string(h.cors.origin) {
		return h.cors.lines
	}
	return h.corsLinesSlow(c, origin)
}

// corsLinesSlow is corsLinesOf for an Origin other than the last one.
func (h *httpCodec) corsLinesSlow(c *conn, origin []byte) string {
	if len(origin) == 0 || !c.e.opts.CORS.Enabled() {
		return ""
	}
	k := &h.cors
	v, _ := httprules.AllowOrigin(&c.e.opts.CORS, origin)
	lines := c.e.corsLines[v]
	if len(origin) <= maxHostOK {
		if lines != k.lines {
			k.dated = nil // its head is another's
		}
		k.origin, k.lines = append(k.origin[:0], origin...), lines
	}
	return lines
}

// originRefused reports whether the request r of h comes from a page of
// an origin CORS does not allow: it is answered 403, whatever it asks
// (a request without an Origin, not from a browser's cross-origin page,
// is not). Kept inlinable: h.corsLines is r's answer already.
func (h *httpCodec) originRefused(c *conn, r *http1.Request) bool {
	return h.corsLines == "" && len(r.Origin) > 0 && c.e.opts.CORS.Enabled()
}

// appendPreflight answers the CORS preflight of an allowed origin (one
// not allowed is refused before: originRefused): 204 with the allowed
// methods and headers, and h.corsLines, the origin's.
func (h *httpCodec) appendPreflight(c *conn, out []byte, r *http1.Request, keep bool) []byte {
	out = appendHeadStart(out, statusLine204, keep, r.Minor, h.corsLines)
	out = append(out, c.e.preflight...)
	return append(out, "\r\n"...)
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http1.Request, head []byte) bool {
	return string(r.Method) == "OPTIONS" && len(r.Origin) > 0 && http1.Header(head, "access-control-request-method") != nil
}
