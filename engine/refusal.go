package engine

// NOTE: refusals in the access log. Every place that refuses a request
// or a connection before any JSON-RPC of it is read — an HTTP status
// written by the engine (401, 403, 405, 413, 415, 431, a malformed
// head), a WebSocket handshake refused, a WebSocket or stream message
// over the size limit, a stream the Authorizer refused, a connection
// refused as it is accepted — makes one call here, which reports it to
// the table's access log (handler.Table.Refused) with a fixed reason
// word. Without an access log each costs a nil check: nothing is
// prepared, nothing allocated. The caller's fields come from the
// connection's call metadata (conn.call), which on HTTP is the last
// authorized request's until a request's head is set in it: a refusal
// from a head, before the Authorizer, sets that head and no principal.

import (
	"net"

	"github.com/gobwas/ws"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// authReason is the reason of the Authorizer's refusal with status
// that c just answered (authorize).
func (c *conn) authReason(status int) string {
	if c.refusal == httprules.TextTokenInURL {
		return httprules.ReasonTokenInURL
	}
	return httprules.ReasonOf(status)
}

// refused reports a refusal of c's caller to the access log: status is
// the HTTP status sent (0: none — a WebSocket close frame, a stream's
// error reply), reason one of the reasons above. The caller is c's call
// metadata as it stands: for a WebSocket or a stream connection its own,
// for an HTTP request the one its Authorizer was asked about. Event loop
// only; kept inlinable.
func (c *conn) refused(status int, reason string) {
	if c.e.table.AccessLogEnabled() {
		c.refusedSlow(status, reason)
	}
}

// refusedSlow is refused with an access log; not inlined, so that
// refused is.
//
//go:noinline
func (c *conn) refusedSlow(status int, reason string) { c.e.table.Refused(&c.call, status, reason) }

// refusedHead is refused for the HTTP request of h refused from its
// head, before the Authorizer was asked about it: the call metadata is
// set to its head (the client a trusted proxy names is read from it) and
// no principal — the connection's last request's is not this one's.
// Event loop only; kept inlinable.
func (h *httpCodec) refusedHead(c *conn, status int, reason string) {
	if c.e.table.AccessLogEnabled() {
		h.refusedHeadSlow(c, status, reason)
	}
}

// refusedHeadSlow is refusedHead with an access log.
func (h *httpCodec) refusedHeadSlow(c *conn, status int, reason string) {
	m, r := &c.call.Meta, &h.req
	m.SetHTTPHeadParsed(h.head, r)
	m.Principal = ""
	c.e.table.Refused(&c.call, status, reason)
}

// refusedMalformed is refused for a request of h answered with status by
// refuse: a head that could not be parsed or was over its limit (the
// metadata then has no head and no principal), or a chunked body that
// could not be decoded or was over its limit — once the Authorizer
// accepted its head, whose metadata it is. Event loop only; kept
// inlinable.
func (h *httpCodec) refusedMalformed(c *conn, status int) {
	if c.e.table.AccessLogEnabled() {
		h.refusedMalformedSlow(c, status)
	}
}

// refusedMalformedSlow is refusedMalformed with an access log.
func (h *httpCodec) refusedMalformedSlow(c *conn, status int) {
	if !h.inBody { // the head: there is none to read
		c.call.Meta.SetHTTPHeadParsed(nil, nil)
		c.call.Meta.Principal = ""
	}
	c.e.table.Refused(&c.call, status, httprules.ReasonOf(status))
}

// refusedUpgrade is refused for a WebSocket handshake gobwas refused
// with err, once the Authorizer accepted it: the status is the one
// gobwas wrote (the error's, else 500). Event loop only.
func (c *conn) refusedUpgrade(err error) {
	if !c.e.table.AccessLogEnabled() {
		return
	}
	status := http1.StatusInternalServerError
	if rej, ok := err.(*ws.ConnectionRejectedError); ok && rej.StatusCode() != 0 {
		status = rej.StatusCode() // as gobwas's Upgrade picks it
	}
	c.e.table.Refused(&c.call, status, httprules.ReasonBadUpgrade)
}

// refusedConn reports a connection nc refused as it was accepted, for
// reason, to the access log. Safe from any goroutine.
func (e *Engine) refusedConn(nc net.Conn, reason string) {
	if e.table.AccessLogEnabled() {
		e.table.RefusedConn(nc.RemoteAddr(), reason)
	}
}
