package handler

// NOTE: HTTPHandler's refusals in the access log, as the engine's
// (engine/refusal.go): each place ServeHTTP refuses a request before
// any JSON-RPC of it is read makes one call here. Without an access log
// it costs a nil check; with one, the caller's metadata is built for the
// record (the same as a call's: callContext).

import (
	"errors"
	"net"
	"net/http"
	"net/netip"

	"github.com/jetrpc/jetrpc/handler/httprules"
)

// refused reports the refusal of r with status, for reason, to the
// table's access log (Table.Refused); cc is r's call context when it
// was built, else nil. Kept inlinable.
func (h *HTTPHandler) refused(r *http.Request, cc *CallContext, status int, reason string) {
	if h.Table.AccessLogEnabled() {
		h.refusedSlow(r, cc, status, reason)
	}
}

// refusedSlow is refused with an access log.
func (h *HTTPHandler) refusedSlow(r *http.Request, cc *CallContext, status int, reason string) {
	if cc == nil {
		cc = h.callContext(r)
	}
	h.Table.Refused(cc, status, reason)
}

// callContext returns the call context of r's calls: its metadata, and
// r's context as the parent.
func (h *HTTPHandler) callContext(r *http.Request) *CallContext {
	cc := &CallContext{Parent: r.Context()}
	cc.Meta.Transport = TransportHTTP
	cc.Meta.SetHTTPRequest(r)
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		cc.Meta.Remote = net.TCPAddrFromAddrPort(ap)
		if h.TrustedProxies.Contains(ap.Addr()) {
			cc.Meta.Proxies = h.TrustedProxies
		}
	}
	cc.Meta.Local, _ = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return cc
}

// authReason is the reason of an Authorizer's refusal with status.
func authReason(err error, status int) string {
	switch {
	case errors.Is(err, ErrTokenInURL):
		return httprules.ReasonTokenInURL
	case status == http.StatusUnauthorized:
		return httprules.ReasonUnauthorized
	}
	return httprules.ReasonForbidden
}
