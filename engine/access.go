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
	"github.com/jetrpc/jetrpc/engine/http1"
	"github.com/jetrpc/jetrpc/handler"
)

// authorize asks Options.Authorize about the call metadata in c.call —
// an HTTP head, or a stream connection's address — and keeps the grants
// there. It returns the refusal's HTTP status, or 0 to go on.
func (c *conn) authorize() int {
	a := c.e.opts.Authorize
	if a == nil {
		c.call.Meta.Grants = nil
		return 0
	}
	c.call.Meta.Principal = "" // the Authorizer names this request's caller, or none
	g, err := a(&c.call.Meta)
	if err != nil {
		c.call.Meta.Grants = nil
		c.e.opts.Logger.Debug("jetrpc: caller refused", "remote", c.remote(), "transport", c.call.Meta.Transport.String(), "err", err)
		return handler.AuthStatus(err)
	}
	c.call.Meta.Grants = g
	return 0
}

// streamRefused is the message a stream connection gets when the
// Authorizer refuses it, before it is closed.
const streamRefused = `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Forbidden: this connection is not authorized"},"id":null}` + "\n"

// authorizeStream asks the Authorizer about a new stream connection; a
// refused one gets streamRefused and is set to close.
func (c *conn) authorizeStream(out []byte) []byte {
	if c.authorize() == 0 {
		return out
	}
	out = append(out, streamRefused...)
	return c.closeAfterFlush(out, closeProtocol)
}

// hostAllowed applies Options.Hosts to a request of h. A connection
// names one host, request after request: the last one allowed is
// remembered, and the same Host costs one comparison.
func (h *httpCodec) hostAllowed(c *conn, r *http1.Request) bool {
	hosts := c.e.opts.Hosts
	if len(hosts) == 0 || len(h.hostOK) > 0 && string(r.Host) == string(h.hostOK) {
		return true
	}
	if !handler.HostAllowed(hosts, r.Host) {
		return false
	}
	if len(r.Host) <= maxHostOK {
		h.hostOK = append(h.hostOK[:0], r.Host...)
	}
	return true
}

// maxHostOK: a longer Host is checked on every request.
const maxHostOK = 256

// corsOrigin returns the Access-Control-Allow-Origin value for a request
// with the Origin origin, or "" when it gets none.
func corsOrigin(c *conn, origin []byte) string {
	if len(origin) == 0 || !c.e.opts.CORS.Enabled() {
		return ""
	}
	v, _ := handler.AllowOrigin(&c.e.opts.CORS, origin)
	return v
}

// appendPreflight answers a CORS preflight (OPTIONS with an Origin and
// Access-Control-Request-Method): 204 with the allowed methods and
// headers for an allowed origin, 403 otherwise.
func appendPreflight(c *conn, out []byte, r *http1.Request, keep bool) []byte {
	origin := corsOrigin(c, r.Origin)
	if origin == "" {
		return appendStatusText(out, http1.StatusForbidden, handler.TextOriginNotAllowed, keep, r.Minor, "")
	}
	out = appendHeadStart(out, statusLine204, keep, r.Minor, origin)
	out = append(out, c.e.preflight...)
	return append(out, "\r\n"...)
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http1.Request, head []byte) bool {
	return string(r.Method) == "OPTIONS" && len(r.Origin) > 0 && http1.Header(head, "access-control-request-method") != nil
}
