// Package auth builds handler.Authorizer values for the usual ways a
// caller proves who it is: bearer tokens and API keys, and JSON Web
// Tokens signed with HS256 as geth's engine API uses them; and an IP
// allow and deny list for the engine's connection hook.
//
// # Overview
//
// An Authorizer runs once per HTTP request that carries a call, once per
// WebSocket upgrade and once per stream connection, before any JSON-RPC
// is read (see handler.Authorizer). This package gives four:
//
//   - Keys.Authorize: static API keys, from a file (LoadKeys) or a map
//     (NewKeys), each with its grants.
//   - JWT.Authorize: geth's engine API authentication — an HS256 token
//     whose iat claim is within 60 seconds of now, signed with a shared
//     32-byte secret (LoadJWTSecret, NewJWTToken).
//   - IPFilter.Authorize: the caller's address against allow and deny
//     lists; IPFilter.Allowed is the same test for engine.Options.AcceptConn,
//     which refuses a connection before reading from it.
//   - Any: the first of several that accepts, so that API keys and JWT
//     can both open one server.
//
// Keys and JWT also name the caller they accept in Meta.Principal — a
// key by KeyName (a fingerprint, not the key), a JWT by its sub claim
// or JWTPrincipal — and the rate limits (handler/ratelimit) count the calls of a
// principal together, from whatever address they come.
//
// A server that wants API keys:
//
//	keys, err := auth.LoadKeys("/etc/jetrpc/keys")
//	if err != nil { ... }
//	engine.WithAuthorize(keys.Authorize)
//
// # Terminology
//
// The bearer token is the credential a request presents (Token finds
// it): the Authorization header's "Bearer" credentials (RFC 6750 2.1),
// or, on a WebSocket upgrade only (browsers' WebSocket cannot set
// headers), a "bearer.<token>" subprotocol or the access_token query
// parameter (RFC 6750 2.3); a token in the URL of any other request is
// refused (handler.ErrTokenInURL: 401), as URLs end up in logs. An
// API key is a bearer token known in advance; a JWT is one the client
// mints itself from a shared secret. Grants are what the caller may do
// (handler.Grants, handler.Require).
//
// A refusal is handler.ErrUnauthenticated (HTTP 401: no credentials, or
// wrong ones), possibly wrapped with its reason ("jetrpc: missing or
// invalid credentials: stale token"), or handler.ErrAccessDenied (HTTP
// 403: the IP filter). Test with errors.Is, or handler.AuthStatus. A
// request that presents nothing at all — no Authorization field, no token
// in its URL or subprotocols — and every stream connection are refused
// with handler.ErrNoCredentials (a 401 too), which
// handler.HTTPPolicy.AuthOptional lets in anonymous, with no grants:
// open reads, keyed writes.
//
// # Concurrency
//
// Keys, JWT and IPFilter are immutable once built: their methods are
// safe from any goroutine, and none blocks, so they may run on the
// engine's event loop. Keys.Authorize for a valid key in the
// Authorization header, and IPFilter.Allowed for a *net.TCPAddr, do not
// allocate; JWT.Authorize does (it decodes JSON), about as much as
// geth's handler.
//
// # Buffer lifetimes
//
// Token returns a view of the request head: the returned string is valid
// until the call returns and must not be modified; copy it
// (strings.Clone) to keep it. The grants an Authorizer returns are
// shared, not copied, and must not be modified.
//
// # Limits
//
// API keys must be at least MinKeyLength (16) bytes long in a keys file.
// A JWT's iat must be within JWTMaxSkew (60 s) of the server's clock, as
// in geth. An IPFilter tests its lists in order, so its cost grows with
// their length; they are meant for tens of entries, not a blocklist of
// thousands.
package auth
