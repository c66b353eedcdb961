package httprules

// NOTE: the vocabulary of refusals in the access log: one word for each
// way a transport refuses a request or a connection before any JSON-RPC
// of it runs.

import "github.com/jetrpc/jetrpc/parser/http1"

// The reasons of refusals, as the access log names them (handler.Table.Refused):
// the same words from the engine and from handler.HTTPHandler.
const (
	ReasonUnauthorized     = "unauthorized"           // 401: the Authorizer found no credentials
	ReasonForbidden        = "forbidden"              // 403: the Authorizer refused the credentials
	ReasonTokenInURL       = "token_in_url"           // 401: a token in the URL of a request other than a WebSocket upgrade (handler.ErrTokenInURL)
	ReasonForbiddenHost    = "forbidden_host"         // 403: a Host not in the policy's Hosts
	ReasonForbiddenOrigin  = "forbidden_origin"       // 403: an Origin CORS does not allow
	ReasonBadRequest       = "bad_request"            // 400: a malformed head or chunked body
	ReasonMethodNotAllowed = "method_not_allowed"     // 405
	ReasonBodyTooLarge     = "body_too_large"         // 413: a body over its size limit
	ReasonUnsupportedType  = "unsupported_media_type" // 415
	// ReasonUnsupportedEncoding: 415, a Content-Encoding the server does not take.
	ReasonUnsupportedEncoding = "unsupported_content_encoding"
	ReasonHeadTooLarge        = "head_too_large"        // 431: a head over its size limit
	ReasonNotImplemented      = "not_implemented"       // 501: a transfer coding other than chunked
	ReasonBadVersion          = "version_not_supported" // 505
	ReasonBadUpgrade          = "bad_upgrade"           // 400, 405, 426, 505: a WebSocket handshake gobwas refused
	ReasonMessageTooLarge     = "message_too_large"     // a WebSocket or stream message over its size limit
	ReasonMalformed           = "malformed"             // a stream that cannot be framed
	ReasonAddress             = "address_refused"       // a connection the engine's AcceptConn refused
	ReasonTooManyConns        = "too_many_connections"  // a connection past the engine's MaxConns
)

// ReasonOf returns the reason of an HTTP refusal with status that has
// no more precise one: bad_request for a status not named here.
func ReasonOf(status int) string {
	switch status {
	case http1.StatusUnauthorized:
		return ReasonUnauthorized
	case http1.StatusForbidden:
		return ReasonForbidden
	case http1.StatusMethodNotAllowed:
		return ReasonMethodNotAllowed
	case http1.StatusPayloadTooLarge:
		return ReasonBodyTooLarge
	case http1.StatusUnsupportedMediaType:
		return ReasonUnsupportedType
	case http1.StatusHeaderTooLarge:
		return ReasonHeadTooLarge
	case http1.StatusNotImplemented:
		return ReasonNotImplemented
	case http1.StatusVersionNotSupported:
		return ReasonBadVersion
	}
	return ReasonBadRequest
}
