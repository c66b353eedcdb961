package engine

// NOTE: writing HTTP responses. Every response is appended to the loop's
// output. A JSON-RPC reply written inline is not copied: its head is
// appended first with room for a Content-Length of as many digits as the
// loop's last reply had, the body is written behind it, and the length
// is filled in; only when the digits differ does the body move.

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// The parts of response heads that hold the Date header, formatted once
// a second (RFC 9110 5.6.7).
var dated atomic.Pointer[datedHeads]

// datedHeads are the parts of response heads that change with the Date
// header, formatted together: a head is appended in one piece where it
// can be, not line by line.
type datedHeads struct {
	serverDate []byte // the Server and Date lines
	// replyHead is the head of an HTTP/1.1 200 reply with a JSON body on a
	// connection that persists, without CORS, up to its Content-Length
	// value, followed by jsonLengthZeros's zeros: appendJSONHead appends
	// it but for the zeros it does not need.
	replyHead []byte
}

func init() { updateDate(time.Now()) }

// updateDate formats now for the Date header. The ticker calls it about
// once a second.
func updateDate(now time.Time) {
	d := &datedHeads{serverDate: make([]byte, 0, 64)}
	d.serverDate = append(d.serverDate, "Server: jetrpc\r\nDate: "...)
	d.serverDate = now.UTC().AppendFormat(d.serverDate, "Mon, 02 Jan 2006 15:04:05 GMT")
	d.serverDate = append(d.serverDate, "\r\n"...)
	d.replyHead = append(append(append(make([]byte, 0, 160), statusLine200...), d.serverDate...), jsonLengthZeros...)
	dated.Store(d)
}

// Status lines of the replies every request may get, as constants: a
// table lookup (http1.AppendStatusLine) is for the refusals.
const (
	statusLine200 = "HTTP/1.1 200 OK\r\n"
	statusLine204 = "HTTP/1.1 204 No Content\r\n"
	statusLine503 = "HTTP/1.1 503 Service Unavailable\r\n"
)

// appendHeadStart appends a status line and the headers every response
// has; cors, when not empty, is the CORS header lines of a reply to an
// allowed origin (Engine.corsLines).
func appendHeadStart(dst []byte, statusLine string, keepAlive bool, minor int, cors string) []byte {
	dst = append(dst, statusLine...)
	dst = append(dst, dated.Load().serverDate...)
	dst = append(dst, cors...)
	switch {
	case !keepAlive:
		dst = append(dst, "Connection: close\r\n"...)
	case minor == 0:
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	return dst
}

// lengthDigits returns the number of decimal digits of n ≥ 0 (1 for 0).
func lengthDigits(n int) int {
	switch {
	case n < 10:
		return 1
	case n < 100:
		return 2
	case n < 1000:
		return 3
	case n < 10000:
		return 4
	case n < 100000:
		return 5
	}
	d := 6
	for n /= 1000000; n > 0; n /= 10 {
		d++
	}
	return d
}

// appendReplyHead appends the head of a 200 reply to a JSON-RPC request
// with room for a Content-Length of digits digits (1 to 19); the body
// follows, and finishReply fills the length in. Kept inlinable.
func appendReplyHead(dst []byte, keepAlive bool, minor, digits int, cors string) []byte {
	dst = appendJSONHead(dst, keepAlive, minor, cors, digits)
	return append(dst, "\r\n\r\n"...)
}

// appendJSONHead appends the head of a 200 reply with a JSON body up to
// its Content-Length value, and zeros zeros (room for the value's digits,
// 0 to 19). The usual head (HTTP/1.1, the connection persists) is
// appended in one piece, formatted with the Date — in three with CORS:
// its lines go between the Date and the body's lines.
func appendJSONHead(dst []byte, keepAlive bool, minor int, cors string, zeros int) []byte {
	if keepAlive && minor == 1 {
		h := dated.Load().replyHead
		if cors == "" {
			return append(dst, h[:len(h)-len(jsonLengthZeros)+len(jsonLength)+zeros]...)
		}
		dst = append(dst, h[:len(h)-len(jsonLengthZeros)]...)
		dst = append(dst, cors...)
		return append(dst, jsonLengthZeros[:len(jsonLength)+zeros]...)
	}
	dst = appendHeadStart(dst, statusLine200, keepAlive, minor, cors)
	return append(dst, jsonLengthZeros[:len(jsonLength)+zeros]...)
}

// The reply head's last lines, and room for the length's digits.
const (
	jsonLength      = "Content-Type: application/json\r\nContent-Length: "
	jsonLengthZeros = jsonLength + "0000000000000000000"
)

// finishReply completes the reply appended at out[mark:], whose body
// starts at out[start:] behind a head with room for digits digits: the
// length is filled in (the body moves if it needs another number of
// digits), or, for an empty body (notifications), the reply becomes 204
// No Content.
func finishReply(out []byte, mark, start, digits int, keepAlive bool, minor int, cors string) []byte {
	n := len(out) - start
	if n == 0 {
		out = appendHeadStart(out[:mark], statusLine204, keepAlive, minor, cors)
		return append(out, "\r\n"...)
	}
	at := start - len("\r\n\r\n") // where the length ends
	if d := lengthDigits(n); d != digits {
		out = moveBody(out, at, at+d-digits) // the blank line and the body
		at += d - digits
	}
	for ; n >= 10; n /= 10 {
		at--
		out[at] = byte('0' + n%10)
	}
	out[at-1] = byte('0' + n)
	return out
}

// appendVaryReplyHead is appendReplyHead for an engine that compresses
// (Options.Compression): the head says Vary: Accept-Encoding.
func appendVaryReplyHead(dst []byte, keepAlive bool, minor, digits int, cors string) []byte {
	dst = appendHeadStart(dst, statusLine200, keepAlive, minor, cors)
	dst = append(dst, varyAcceptEncoding...)
	dst = append(dst, jsonLengthZeros[:len(jsonLength)+digits]...)
	return append(dst, "\r\n\r\n"...)
}

// varyAcceptEncoding is the line of every 200 reply of an engine that
// compresses: the reply depends on the request's Accept-Encoding.
const varyAcceptEncoding = "Vary: Accept-Encoding\r\n"

// appendEncodedReply appends a 200 reply whose JSON body, body, is
// compressed with k.
func appendEncodedReply(dst, body []byte, k coding, keepAlive bool, minor int, cors string) []byte {
	dst = appendHeadStart(dst, statusLine200, keepAlive, minor, cors)
	dst = append(dst, varyAcceptEncoding...)
	dst = append(dst, "Content-Encoding: "...)
	dst = append(dst, k.name()...)
	dst = append(dst, "\r\n"...)
	dst = append(dst, jsonLength...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// appendCodedReply is appendReply for an engine that compresses: body is
// compressed with k (none: codingIdentity) when it is at least
// Options.CompressionMinSize bytes, on the loop's scratch. Event loop
// only.
func (c *conn) appendCodedReply(dst, body []byte, k coding, keepAlive bool, minor int, cors string) []byte {
	switch {
	case len(body) == 0:
		return appendReply(dst, body, keepAlive, minor, cors)
	case k != codingIdentity && len(body) >= c.e.comp.min:
		return appendEncodedReply(dst, c.loop.comp.compress(k, body), k, keepAlive, minor, cors)
	}
	dst = appendHeadStart(dst, statusLine200, keepAlive, minor, cors)
	dst = append(dst, varyAcceptEncoding...)
	dst = append(dst, jsonLength...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// appendReply appends an HTTP reply carrying a JSON-RPC reply body, or
// 204 No Content when body is empty.
func appendReply(dst, body []byte, keepAlive bool, minor int, cors string) []byte {
	if len(body) == 0 {
		dst = appendHeadStart(dst, statusLine204, keepAlive, minor, cors)
		return append(dst, "\r\n"...)
	}
	dst = appendJSONHead(dst, keepAlive, minor, cors, 0)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// health returns the body of the health check's 503, or "" while the
// engine is ready: DrainingBody once it drains or stops, the body of
// SetNotReady, or httprules.NotReadyBody of Options.Ready's error (which
// allocates). While ready it allocates nothing.
func (e *Engine) health() string {
	if !e.serving() {
		return DrainingBody
	}
	if b := e.notReady.Load(); b != nil {
		return *b
	}
	if e.opts.Ready != nil {
		if err := e.opts.Ready(); err != nil {
			return httprules.NotReadyBody(err.Error())
		}
	}
	return ""
}

// appendHealth answers the health check: 200 HealthBody while the
// engine is ready (unready is ""), else 503 unready (Engine.health).
func appendHealth(dst []byte, unready string, keepAlive bool, minor int, cors string) []byte {
	status, body := statusLine200, httprules.HealthBody
	if unready != "" {
		status, body = statusLine503, unready
	}
	dst = appendHeadStart(dst, status, keepAlive, minor, cors)
	dst = append(dst, "Content-Type: application/json\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// DrainingBody is the body of the 503 reply to a health check once the
// engine drains (Engine.Drain) or stops.
const DrainingBody = `{"status":"draining"}`

// appendStatus answers an HTTP-level refusal with its text body
// (httprules.ErrorText, as net/http's adapter sends).
func appendStatus(dst []byte, status int, keepAlive bool, minor int, cors string) []byte {
	return appendStatusText(dst, status, httprules.ErrorText(status), keepAlive, minor, cors)
}

// appendNotAllowed answers 405 to a request for a path that takes allow
// (POST for JSON-RPC, GET for the health check and pages); a HEAD request
// gets the head alone, as it must.
func appendNotAllowed(dst []byte, allow string, head, keepAlive bool, minor int, cors string) []byte {
	text := httprules.ErrorText(http1.StatusMethodNotAllowed)
	if allow != "POST" {
		text = "this path answers " + allow + "\n"
	}
	dst = http1.AppendStatusLine(dst, http1.StatusMethodNotAllowed)
	dst = appendHeadStart(dst, "", keepAlive, minor, cors)
	dst = append(dst, "Allow: "...)
	dst = append(dst, allow...)
	dst = append(dst, "\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(text)), 10)
	dst = append(dst, "\r\n\r\n"...)
	if head {
		return dst
	}
	return append(dst, text...)
}

// appendStatusText answers an HTTP-level refusal with the text body text.
func appendStatusText(dst []byte, status int, text string, keepAlive bool, minor int, cors string) []byte {
	dst = http1.AppendStatusLine(dst, status)
	dst = appendHeadStart(dst, "", keepAlive, minor, cors)
	if status == http1.StatusUnauthorized {
		dst = append(dst, "WWW-Authenticate: Bearer\r\n"...)
	}
	dst = append(dst, "Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(text)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, text...)
}
