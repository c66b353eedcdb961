package handler

import (
	"errors"

	"github.com/jetrpc/jetrpc/handler/httprules"
)

// HTTPPolicy is what a server of JSON-RPC over HTTP decides from a
// request's head, before any JSON-RPC is read: where the health check
// answers and what readiness it reports, which pages of other origins
// may call, which Host names a request may carry, who may call, and
// which proxies name their clients. The engine (engine.Options) and HTTPHandler embed it, so the
// two read one policy with one set of rules and cannot differ.
type HTTPPolicy struct {
	// HealthPath is where HTTP GET answers 200 httprules.HealthBody, or
	// 503 while the server is not ready (Ready, SetNotReady) or, an
	// engine, drains ({"status":"draining"}); "" means
	// httprules.DefaultHealthPath, "-" turns the health check off (httprules.IsHealthCheck).
	HealthPath string
	// Ready, when set, is the readiness check the health check consults:
	// while it returns an error, GET of HealthPath answers 503
	// httprules.NotReadyBody(err.Error()) — {"status":"not_ready",
	// "reason":...} — and calls are still served (it tells a load
	// balancer to send new traffic elsewhere; it refuses nothing). It is
	// called on every health check (the engine's on its event loop) and
	// by engine.Engine.Ready, from any goroutine: it must be fast and
	// must not block — a check that costs (a database ping, say) runs
	// apart, on a timer, and Ready returns its last answer. nil: always
	// ready. An engine that drains answers 503 {"status":"draining"}
	// without asking it.
	Ready func() error
	// CORS lets pages of other origins call (cross-origin requests from
	// browsers): an OPTIONS preflight from an allowed origin is answered
	// 204 with the allowed methods and headers and a max age, and replies
	// to an allowed origin carry Access-Control-Allow-Origin. With a
	// list, any request whose Origin is not in it — a call, a page, a
	// preflight, a WebSocket handshake — gets 403 and runs nothing
	// (requests without an Origin, not from browsers' pages, always go
	// on; list your own origin too if pages served under it call). The
	// zero value allows no cross-origin call and every origin.
	CORS httprules.CORS
	// Hosts, when not empty, is the allow list of Host names (geth's
	// vhosts; "*" for any): a request naming another host gets 403, which
	// defeats DNS rebinding. IP addresses (real ones) and an empty or
	// missing Host pass too — a rebinding attack needs a name, and every
	// browser sends a Host — unless StrictHosts is set (httprules.HostAllowed).
	Hosts []string
	// StrictHosts makes Hosts strict: an IP address passes only when
	// Hosts names it, and a request without a Host, or an empty one, gets
	// 403 (httprules.HostAllowedStrict). For a server reached only under its names,
	// so that a scan of addresses finds nothing to call.
	StrictHosts bool
	// Authorize, when set, decides who may call, before any JSON-RPC is
	// read: it is asked about the head of every HTTP request that carries
	// a call (POST), of every page and of every WebSocket upgrade —
	// refused with 401 or 403 (AuthStatus) — and, by the engine, about
	// every stream connection, from its address alone (refused: one
	// -32003 error message, then closed). The grants it returns are the
	// request's, or the WebSocket's or stream's for the connection's life
	// (Require). Health checks and CORS preflights do not ask it. The
	// engine runs it on its event loop: it must not block. handler/auth
	// builds the usual ones.
	Authorize Authorizer
	// AuthOptional lets callers without credentials in, anonymous:
	// when Authorize refuses a request, a WebSocket upgrade or a stream
	// connection with ErrNoCredentials (nothing presented), it goes on
	// with no grants and no Principal, so that methods registered with
	// Require refuse it (-32003) and the others answer it — open reads,
	// keyed writes. Credentials presented are still checked: wrong ones
	// get 401 (or 403) as without it. A WebSocket upgrade without
	// credentials is anonymous for the connection's life; so is every
	// stream connection, which has no head to carry credentials (with
	// handler/auth's Keys and JWT). The engine's pages (engine.Page,
	// such as metrics) are not calls and have no grants to withhold:
	// they still require credentials. See AdmitsAnonymous.
	AuthOptional bool
	// TrustedProxies are the proxies (load balancers, TLS terminators)
	// whose connections name the client they forward each request for,
	// in X-Forwarded-For or X-Real-IP: the calls of such a connection
	// carry them in Meta.Proxies, and Meta.ClientIP — the rate limits'
	// and the access log's address — is that client's. nil trusts none:
	// a proxy's calls are then counted as its own. The engine's
	// connection-level checks (AcceptConn, MaxConns) still see the
	// proxy's address.
	TrustedProxies httprules.Proxies
}

// HostAllows reports whether the request Host value host passes p's
// Hosts (httprules.HostAllowed, or httprules.HostAllowedStrict with StrictHosts): true
// without a list. It allocates nothing.
func HostAllows[T ~string | ~[]byte](p *HTTPPolicy, host T) bool {
	if len(p.Hosts) == 0 {
		return true
	}
	if p.StrictHosts {
		return httprules.HostAllowedStrict(p.Hosts, host)
	}
	return httprules.HostAllowed(p.Hosts, host)
}

// AdmitsAnonymous reports whether a caller that p's Authorizer refused
// with err goes on anyway, anonymous and with no grants: under
// AuthOptional, when err is ErrNoCredentials (or wraps it). It is the
// one rule of the engine and of HTTPHandler; it allocates nothing.
func (p *HTTPPolicy) AdmitsAnonymous(err error) bool {
	return p.AuthOptional && errors.Is(err, ErrNoCredentials)
}
