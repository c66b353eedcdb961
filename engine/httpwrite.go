package engine

import (
	"strconv"
	"sync/atomic"
	"time"
)

// The Date header, formatted once a second (RFC 9110 5.6.7).
var dateValue atomic.Pointer[[]byte]

func init() { updateDate(time.Now()) }

// updateDate formats now for the Date header. The ticker calls it about
// once a second.
func updateDate(now time.Time) {
	b := now.UTC().AppendFormat(make([]byte, 0, 29), "Mon, 02 Jan 2006 15:04:05 GMT")
	dateValue.Store(&b)
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// appendHeadStart appends a status line and the headers every reply has.
func appendHeadStart(dst []byte, statusLine string, keepAlive bool, minor int) []byte {
	dst = append(dst, statusLine...)
	dst = append(dst, "Server: jetrpc\r\nDate: "...)
	dst = append(dst, *dateValue.Load()...)
	dst = append(dst, "\r\n"...)
	switch {
	case !keepAlive:
		dst = append(dst, "Connection: close\r\n"...)
	case minor == 0:
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	return dst
}

// appendReply appends the HTTP reply carrying a JSON-RPC reply body, or
// 204 No Content when body is empty.
func appendReply(dst, body []byte, keepAlive bool, minor int) []byte {
	if len(body) == 0 {
		dst = appendHeadStart(dst, "HTTP/1.1 204 No Content\r\n", keepAlive, minor)
		return append(dst, "\r\n"...)
	}
	dst = appendHeadStart(dst, "HTTP/1.1 200 OK\r\n", keepAlive, minor)
	dst = append(dst, "Content-Type: application/json\r\nContent-Length: "...)
	dst = appendInt(dst, int64(len(body)))
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// appendHealth answers GET of the health path.
func appendHealth(dst []byte, keepAlive bool, minor int) []byte {
	const body = `{"status":"ok"}`
	dst = appendHeadStart(dst, "HTTP/1.1 200 OK\r\n", keepAlive, minor)
	dst = append(dst, "Content-Type: application/json\r\nContent-Length: 15\r\n\r\n"...)
	return append(dst, body...)
}

// appendStatus answers an HTTP-level error with a short text body.
func appendStatus(dst []byte, status int, keepAlive bool, minor int) []byte {
	line, text := statusText(status)
	dst = appendHeadStart(dst, line, keepAlive, minor)
	if status == statusMethodNotAllowed {
		dst = append(dst, "Allow: POST\r\n"...)
	}
	dst = append(dst, "Content-Type: text/plain; charset=utf-8\r\nContent-Length: "...)
	dst = appendInt(dst, int64(len(text)))
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, text...)
}

func statusText(status int) (line, text string) {
	switch status {
	case statusMethodNotAllowed:
		return "HTTP/1.1 405 Method Not Allowed\r\n", "JSON-RPC requires POST\n"
	case statusPayloadTooLarge:
		return "HTTP/1.1 413 Payload Too Large\r\n", "request body too large\n"
	case statusUnsupportedMedia:
		return "HTTP/1.1 415 Unsupported Media Type\r\n", "JSON-RPC requires Content-Type application/json\n"
	case statusHeaderTooLarge:
		return "HTTP/1.1 431 Request Header Fields Too Large\r\n", "request head too large\n"
	case statusNotImplemented:
		return "HTTP/1.1 501 Not Implemented\r\n", "unsupported transfer encoding\n"
	case statusVersionNotSupported:
		return "HTTP/1.1 505 HTTP Version Not Supported\r\n", "only HTTP/1.0 and HTTP/1.1\n"
	case statusNotFound:
		return "HTTP/1.1 404 Not Found\r\n", "not found\n"
	}
	return "HTTP/1.1 400 Bad Request\r\n", "malformed request\n"
}
