package parser

import "strconv"

// Error is a fault found in a message: its JSON-RPC code, the byte offset
// where it was found and a short static reason. The zero Error (Code 0)
// means no fault.
//
// Error values are returned by value inside Message and Request so that
// parsing never allocates; take the address to use one as an error.
// errors.Is matches an *Error with any Coder of the same code, such as
// handler.ErrParse.
type Error struct {
	// Code is CodeParseError, CodeInvalidRequest, or 0 when there is no
	// fault.
	Code Code
	// Offset is the byte offset of the fault in the message given to Parse.
	Offset int
	// Reason is a short, static, human-readable description.
	Reason string
}

// OK reports whether e records no fault.
func (e *Error) OK() bool { return e.Code == 0 }

// ErrorCode returns e.Code (Coder).
func (e *Error) ErrorCode() Code { return e.Code }

var _ Coder = (*Error)(nil)

// Error formats the fault as "jetrpc: parse error at offset N: reason".
func (e *Error) Error() string {
	var b []byte
	switch e.Code {
	case CodeParseError:
		b = append(b, "jetrpc: parse error"...)
	case CodeInvalidRequest:
		b = append(b, "jetrpc: invalid request"...)
	case 0:
		return "jetrpc: no error"
	default:
		b = append(b, "jetrpc: error "...)
		b = strconv.AppendInt(b, int64(e.Code), 10)
	}
	b = append(b, " at offset "...)
	b = strconv.AppendInt(b, int64(e.Offset), 10)
	b = append(b, ": "...)
	b = append(b, e.Reason...)
	return string(b)
}

// Is reports whether target is a Coder with the same code, so that
// errors.Is(err, handler.ErrParse) holds for every -32700 fault.
func (e *Error) Is(target error) bool {
	t, ok := target.(Coder)
	return ok && e.Code != 0 && t.ErrorCode() == e.Code
}

// FrameFault is the fault of a stream that Framer.Next reported
// Malformed or TooLarge at offset end: -32700 "invalid character looking
// for beginning of value in stream", or -32600 "message exceeds the size
// limit". The offset counts from the first byte given to Next since the
// last complete value. Other statuses give the zero Error.
func FrameFault(st Status, end int) Error {
	switch st {
	case Malformed:
		return fault(CodeParseError, end, reasonFrameStart)
	case TooLarge:
		return fault(CodeInvalidRequest, end, reasonFrameTooLong)
	}
	return Error{}
}

// Reasons. They are constants so that a fault costs no allocation.
const (
	reasonEOF          = "unexpected end of JSON input"
	reasonEmpty        = "empty message"
	reasonValueStart   = "invalid character looking for beginning of value"
	reasonAfterValue   = "invalid character after top-level value"
	reasonObjectKey    = "expected string for object key"
	reasonColon        = "expected ':' after object key"
	reasonObjectNext   = "expected ',' or '}' after object member"
	reasonArrayNext    = "expected ',' or ']' after array element"
	reasonControl      = "control character in string"
	reasonEscape       = "invalid escape in string"
	reasonUTF8         = "invalid UTF-8 in string"
	reasonNumber       = "invalid number"
	reasonLiteral      = "invalid literal"
	reasonDepth        = "nesting too deep"
	reasonNotRequest   = "request must be an object"
	reasonEmptyBatch   = "empty batch"
	reasonVersion      = "jsonrpc must be the string \"2.0\""
	reasonNoVersion    = "missing jsonrpc member"
	reasonMethodType   = "method must be a string"
	reasonNoMethod     = "missing method member"
	reasonParamsType   = "params must be an array or an object"
	reasonIDType       = "id must be a string, a number or null"
	reasonDupJSONRPC   = "duplicate jsonrpc member"
	reasonDupMethod    = "duplicate method member"
	reasonDupParams    = "duplicate params member"
	reasonDupID        = "duplicate id member"
	reasonFrameStart   = "invalid character looking for beginning of value in stream"
	reasonFrameTooLong = "message exceeds the size limit"
)
