package http1

// Status codes (RFC 9110 15) that a JSON-RPC server and its clients meet.
// ParseHead returns StatusOK or one of the 4xx and 5xx codes below.
const (
	StatusContinue             = 100 // sent before reading a body the client waits to send (Expect: 100-continue)
	StatusSwitchingProtocols   = 101 // a WebSocket handshake accepted
	StatusOK                   = 200
	StatusNoContent            = 204 // the reply to notifications only
	StatusNotModified          = 304
	StatusBadRequest           = 400 // a malformed request, or one a smuggler could exploit
	StatusUnauthorized         = 401
	StatusForbidden            = 403
	StatusNotFound             = 404
	StatusMethodNotAllowed     = 405
	StatusNotAcceptable        = 406 // an Accept that takes no type the server sends
	StatusRequestTimeout       = 408
	StatusPayloadTooLarge      = 413 // a body over its limit, or chunk extensions over theirs
	StatusUnsupportedMediaType = 415
	StatusUpgradeRequired      = 426
	StatusTooManyRequests      = 429
	StatusHeaderTooLarge       = 431 // a head over its limit, or trailer fields over theirs
	StatusInternalServerError  = 500
	StatusNotImplemented       = 501 // a transfer coding other than chunked
	StatusServiceUnavailable   = 503
	StatusVersionNotSupported  = 505 // HTTP/x.y other than 1.0 and 1.1
)

// StatusText returns the reason phrase of code ("Method Not Allowed"),
// or "" for a code without one here.
func StatusText(code int) string {
	line := statusLine(code)
	if line == "" {
		return ""
	}
	return line[len("HTTP/1.1 200 ") : len(line)-2]
}

// AppendStatusLine appends the HTTP/1.1 status line of code, CRLF
// included ("HTTP/1.1 405 Method Not Allowed\r\n"), to dst and returns
// the extended slice. A code without a reason phrase here is written with
// an empty one ("HTTP/1.1 599 \r\n", as RFC 9112 4 allows). It panics
// when code is not a three-digit number (100 to 999), like net/http's
// WriteHeader. It allocates only when dst must grow.
func AppendStatusLine(dst []byte, code int) []byte {
	if line := statusLine(code); line != "" {
		return append(dst, line...)
	}
	if code < 100 || code > 999 {
		panic("http1: AppendStatusLine: invalid status code")
	}
	return append(dst, 'H', 'T', 'T', 'P', '/', '1', '.', '1', ' ',
		byte('0'+code/100), byte('0'+code/10%10), byte('0'+code%10), ' ', '\r', '\n')
}

// statusLine returns the whole status line of code, or "" for a code
// without a reason phrase here.
func statusLine(code int) string {
	switch code {
	case StatusContinue:
		return "HTTP/1.1 100 Continue\r\n"
	case StatusSwitchingProtocols:
		return "HTTP/1.1 101 Switching Protocols\r\n"
	case StatusOK:
		return "HTTP/1.1 200 OK\r\n"
	case StatusNoContent:
		return "HTTP/1.1 204 No Content\r\n"
	case StatusNotModified:
		return "HTTP/1.1 304 Not Modified\r\n"
	case StatusBadRequest:
		return "HTTP/1.1 400 Bad Request\r\n"
	case StatusUnauthorized:
		return "HTTP/1.1 401 Unauthorized\r\n"
	case StatusForbidden:
		return "HTTP/1.1 403 Forbidden\r\n"
	case StatusNotFound:
		return "HTTP/1.1 404 Not Found\r\n"
	case StatusMethodNotAllowed:
		return "HTTP/1.1 405 Method Not Allowed\r\n"
	case StatusNotAcceptable:
		return "HTTP/1.1 406 Not Acceptable\r\n"
	case StatusRequestTimeout:
		return "HTTP/1.1 408 Request Timeout\r\n"
	case StatusPayloadTooLarge:
		return "HTTP/1.1 413 Payload Too Large\r\n"
	case StatusUnsupportedMediaType:
		return "HTTP/1.1 415 Unsupported Media Type\r\n"
	case StatusUpgradeRequired:
		return "HTTP/1.1 426 Upgrade Required\r\n"
	case StatusTooManyRequests:
		return "HTTP/1.1 429 Too Many Requests\r\n"
	case StatusHeaderTooLarge:
		return "HTTP/1.1 431 Request Header Fields Too Large\r\n"
	case StatusInternalServerError:
		return "HTTP/1.1 500 Internal Server Error\r\n"
	case StatusNotImplemented:
		return "HTTP/1.1 501 Not Implemented\r\n"
	case StatusServiceUnavailable:
		return "HTTP/1.1 503 Service Unavailable\r\n"
	case StatusVersionNotSupported:
		return "HTTP/1.1 505 HTTP Version Not Supported\r\n"
	}
	return ""
}
