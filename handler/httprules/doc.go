// Package httprules holds the rules of JSON-RPC over HTTP that every HTTP
// transport of jetrpc applies the same way — the engine and
// handler.HTTPHandler, and a transport of one's own: which Content-Type a
// call may carry, which GET is the health check, which pages of other
// origins may call (CORS) and which Host names a request may carry, and
// the texts of the refusals. A service configures them through
// handler.HTTPPolicy (its CORS field is this package's CORS); it calls
// nothing here.
//
// # Overview
//
// AcceptableContentType, IsHealthCheck, HostAllowed and
// HostAllowedStrict decide; AllowOrigin and OriginAllowed answer for a
// CORS configuration, CORS.PreflightHeaders makes the lines of a
// preflight's answer; ErrorText and the Text constants are the plain-text
// bodies of the refusals, HealthBody the health check's and NotReadyBody
// its 503's while the server is not ready.
//
// # Lifetimes
//
// Every function works on a string or on bytes, allocates nothing (but
// NotReadyBody and CORS.PreflightHeaders, which make their strings), and
// keeps nothing of its arguments.
package httprules
