package httprules

// NOTE: the rules of a request's head that every HTTP transport applies
// alike: which Content-Type a call may carry, which GET is the health
// check and what it answers, and the texts of the refusals.

import (
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// DefaultHealthPath is the path where GET answers 200 HealthBody, when a
// policy names none.
const DefaultHealthPath = "/health"

// HealthBody is the body of the 200 reply to a health check.
const HealthBody = `{"status":"ok"}`

// NotReadyBody returns the body of the 503 reply to a health check while
// the server is not ready — its readiness check (handler.HTTPPolicy.Ready)
// fails, or the application said so (engine.Engine.SetNotReady,
// handler.HTTPHandler.SetNotReady) —, naming the reason:
// {"status":"not_ready","reason":REASON}, REASON a JSON string ("not
// ready" when empty). It allocates the body.
func NotReadyBody(reason string) string {
	if reason == "" {
		reason = "not ready"
	}
	b := make([]byte, 0, len(`{"status":"not_ready","reason":""}`)+len(reason)+8)
	b = append(b, `{"status":"not_ready","reason":`...)
	b = parser.AppendQuote(b, reason)
	return string(append(b, '}'))
}

// AcceptableContentType reports whether a request's Content-Type value
// is one JSON-RPC over HTTP accepts: empty, or application/json,
// application/json-rpc or application/jsonrequest in any case, with any
// parameters. It is the one rule of the engine and of handler.HTTPHandler, on
// bytes or a string, without allocating.
func AcceptableContentType[T ~string | ~[]byte](v T) bool {
	if len(v) == 0 || string(v) == "application/json" { // the usual ones at once
		return true
	}
	for i := 0; i < len(v); i++ {
		if v[i] == ';' {
			v = v[:i]
			break
		}
	}
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	var want string // the one type of v's length, lower-case
	switch len(v) {
	case len("application/json"):
		want = "application/json"
	case len("application/json-rpc"):
		want = "application/json-rpc"
	case len("application/jsonrequest"):
		want = "application/jsonrequest"
	default:
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// IsHealthCheck reports whether an HTTP request — its method and its
// request target, query included — is the health check at path: a GET
// of path, whatever the query. An empty path means DefaultHealthPath;
// "-" is no path: no request is the health check. It is the one rule of
// the engine and of HTTPHandler, on bytes or a string, without
// allocating.
func IsHealthCheck[T ~string | ~[]byte](method, target T, path string) bool {
	switch path {
	case "":
		path = DefaultHealthPath
	case "-":
		return false
	}
	for i := 0; i < len(target); i++ {
		if target[i] == '?' {
			target = target[:i]
			break
		}
	}
	return string(method) == "GET" && string(target) == path
}

// ErrorText returns the plain-text body jetrpc sends with an HTTP
// status that refuses a request (405, 413, 415 ...), the same from the
// engine and from handler.HTTPHandler; "malformed request" for a status it does
// not name.
func ErrorText(status int) string {
	switch status {
	case http1.StatusMethodNotAllowed:
		return "JSON-RPC requires POST\n"
	case http1.StatusPayloadTooLarge:
		return "request body too large\n"
	case http1.StatusUnsupportedMediaType:
		return "JSON-RPC requires Content-Type application/json\n"
	case http1.StatusHeaderTooLarge:
		return "request head too large\n"
	case http1.StatusNotImplemented:
		return "unsupported transfer encoding\n"
	case http1.StatusVersionNotSupported:
		return "only HTTP/1.0 and HTTP/1.1\n"
	case http1.StatusNotFound:
		return "not found\n"
	case http1.StatusUnauthorized:
		return "missing or invalid credentials\n"
	case http1.StatusForbidden:
		return "access denied\n"
	case http1.StatusInternalServerError:
		return "internal server error\n"
	case http1.StatusServiceUnavailable:
		return "server busy\n"
	}
	return "malformed request\n"
}

// TextTokenInURL is the body of the 401 answering handler.ErrTokenInURL.
const TextTokenInURL = "a token in the URL (access_token) is accepted on a WebSocket upgrade only: send the header Authorization: Bearer TOKEN\n"

// Texts of the 403 refusals of the browser checks, the same from the
// engine and from handler.HTTPHandler.
const (
	// TextOriginNotAllowed refuses a WebSocket handshake or a CORS
	// preflight from an origin not allowed (CORS.Origins).
	TextOriginNotAllowed = "origin not allowed\n"
	// TextHostNotAllowed refuses a request whose Host is not allowed
	// (HostAllowed); geth's words.
	TextHostNotAllowed = "invalid host specified\n"
)

// TextUnsupportedEncoding is the body of the 415 answering a request body
// whose Content-Encoding the server does not take (the engine's
// Options.Compression).
const TextUnsupportedEncoding = "unsupported Content-Encoding\n"
