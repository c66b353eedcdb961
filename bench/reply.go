package bench

import (
	"math"

	"github.com/jetrpc/jetrpc/parser"
)

// Kinds of errors, as counted in Result.Errors.
const (
	ErrConnect         = "connect"             // could not connect
	ErrTLS             = "tls"                 // the TLS handshake failed (https://, wss://)
	ErrTransport       = "transport"           // read or write failed, or the server closed
	ErrTimeout         = "timeout"             // no reply within Config.Timeout, or by the end of the run
	ErrHTTPStatus      = "http status"         // not 200 (or 204 for notifications)
	ErrHTTPFraming     = "http framing"        // a malformed HTTP response
	ErrNotJSON         = "not json"            // a reply that is not valid JSON
	ErrNotJSONRPC      = "not json-rpc"        // JSON, but not a JSON-RPC 2.0 reply
	ErrUnknownID       = "unknown id"          // an id no request in flight has
	ErrDuplicate       = "duplicate reply"     // a second reply to one call
	ErrMissing         = "missing reply"       // a call of the request got no reply
	ErrUnexpectedError = "unexpected error"    // an error reply when a result was expected
	ErrUnexpectedOK    = "unexpected result"   // a result when an error was expected
	ErrWrongReply      = "wrong reply"         // a result or an error code other than the workload expects
	ErrUnexpectedReply = "reply to no request" // a reply where none was expected: id null, or nothing in flight
	ErrShape           = "wrong shape"         // an array answering a single call, or separate objects answering a batch
	ErrUnsent          = "not sent"            // open loop: due in the measured window, never sent (every pipeline slot waiting)
	ErrWebSocket       = "websocket"           // a failed handshake, a bad frame or a close from the server
	ErrEncoding        = "encoding"            // a compressed reply that does not decode, or in a coding not asked for (Config.Compression, WSCompression)
)

// errKinds are the kinds of errors, in the order the live line names
// them; errKind indexes them.
var errKinds = [...]string{ErrConnect, ErrTLS, ErrWebSocket, ErrTransport, ErrTimeout, ErrUnsent, ErrHTTPStatus, ErrHTTPFraming,
	ErrEncoding, ErrNotJSON, ErrNotJSONRPC, ErrUnknownID, ErrDuplicate, ErrMissing, ErrUnexpectedError, ErrUnexpectedOK, ErrWrongReply,
	ErrUnexpectedReply, ErrShape}

// unanswered are the kinds of errors whose request got no answer at all
// (the others are answers that were wrong): error_rate counts them
// beside the calls answered.
var unanswered = [...]string{ErrConnect, ErrTLS, ErrWebSocket, ErrTransport, ErrTimeout, ErrUnsent, ErrHTTPStatus, ErrHTTPFraming}

// errKind returns the index of kind in errKinds.
func errKind(kind string) int {
	for i, k := range errKinds {
		if k == kind {
			return i
		}
	}
	panic("bench: no error kind " + kind)
}

// maxErrorCodes bounds the JSON-RPC codes told apart in
// Result.ErrorCodes; the others count as "other".
const maxErrorCodes = 32

// maxMessage bounds one reply: a WebSocket payload, a framed stream
// message or an HTTP body (the framer's MaxSize, the HTTP response
// reader's MaxBody).
const maxMessage = 64 << 20

// replyItem is what a reply object says.
type replyItem struct {
	id      uint64
	idOK    bool // the id is a number the tool could have sent
	idNull  bool // the id is null: the server could not read a request
	isError bool
	code    int64  // the error's code, when isError and valid
	result  []byte // the result's JSON text, a view of the reply
	valid   bool   // a JSON-RPC 2.0 reply: jsonrpc "2.0", an id, result xor error, a well-formed error
}

// eachReply calls fn for every reply object of a reply body (an object
// or an array of them). ok is false if the body is not JSON; array
// reports whether it is an array (a batch's reply).
func eachReply(body []byte, fn func(replyItem)) (ok, array bool) {
	if !parser.Valid(body) {
		return false, false
	}
	i := 0
	for i < len(body) && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t') {
		i++
	}
	if i < len(body) && body[i] == '[' {
		vals := parser.NewValues(body)
		for v, ok := vals.Next(); ok; v, ok = vals.Next() {
			fn(inspect(v))
		}
		return true, true
	}
	fn(inspect(body))
	return true, false
}

// inspect reads the members of one reply object, already validated as
// JSON. A valid reply has jsonrpc "2.0", an id member, exactly one of
// result and error (null counts as present), and an error that is an
// object with an integer code and a string message. It allocates
// nothing.
func inspect(obj []byte) replyItem {
	var it replyItem
	var hasResult, hasError, hasID, version, errorOK bool
	mems := parser.NewMembers(obj)
	for k, esc, v, ok := mems.Next(); ok; k, esc, v, ok = mems.Next() {
		if esc {
			continue // no member the tool reads is spelled with escapes
		}
		switch string(k) {
		case "jsonrpc":
			version = string(v) == `"2.0"`
		case "result":
			hasResult = true
			it.result = v
		case "error":
			hasError = true
			it.code, errorOK = wellFormedError(v)
		case "id":
			hasID = true
			it.idNull = string(v) == "null"
			it.id, it.idOK = parseID(v)
		}
	}
	it.isError = hasError
	it.valid = version && hasID && hasResult != hasError && (!hasError || errorOK)
	return it
}

// wellFormedError reports whether v, valid JSON, is an error object: an
// integer code and a string message; and returns the code.
func wellFormedError(v []byte) (int64, bool) {
	if len(v) == 0 || v[0] != '{' {
		return 0, false
	}
	var code int64
	var codeOK, message bool
	mems := parser.NewMembers(v)
	for k, esc, m, ok := mems.Next(); ok; k, esc, m, ok = mems.Next() {
		if esc {
			continue
		}
		switch string(k) {
		case "code":
			if codeOK = isInteger(m); codeOK {
				code = parseCode(m)
			}
		case "message":
			message = len(m) > 0 && m[0] == '"'
		}
	}
	return code, codeOK && message
}

// parseCode reads an integer code, saturating past int64.
func parseCode(v []byte) int64 {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	var n int64
	for _, c := range v {
		if n > (math.MaxInt64-9)/10 {
			n = math.MaxInt64
			break
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// isInteger reports whether the JSON value v is a number without
// fraction or exponent.
func isInteger(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseID reads an id the tool sent: a positive integer.
func parseID(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n > 0
}
