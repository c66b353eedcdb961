package parser

import (
	"errors"
	"strconv"
)

// JSON-RPC error codes the parser classifies messages into.
const (
	// CodeParse (-32700) marks text that is not one valid JSON value.
	CodeParse = -32700
	// CodeInvalid (-32600) marks valid JSON that is not a valid request.
	CodeInvalid = -32600
)

// Sentinel errors that an *Error unwraps to, for errors.Is.
var (
	// ErrParse is the class of every -32700 fault.
	ErrParse = errors.New("jetrpc: parse error")
	// ErrInvalid is the class of every -32600 fault.
	ErrInvalid = errors.New("jetrpc: invalid request")
)

// Error is a fault found in a message: its JSON-RPC code, the byte offset
// where it was found and a short static reason. The zero Error (Code 0)
// means no fault.
//
// Error values are returned by value inside Message and Request so that
// parsing never allocates; take the address to use one as an error.
type Error struct {
	// Code is CodeParse, CodeInvalid, or 0 when there is no fault.
	Code int
	// Offset is the byte offset of the fault in the message given to Parse.
	Offset int
	// Reason is a short, static, human-readable description.
	Reason string
}

// OK reports whether e records no fault.
func (e *Error) OK() bool { return e.Code == 0 }

// Error formats the fault as "jetrpc: parse error at offset N: reason".
func (e *Error) Error() string {
	var b []byte
	switch e.Code {
	case CodeParse:
		b = append(b, "jetrpc: parse error"...)
	case CodeInvalid:
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

// Unwrap returns ErrParse or ErrInvalid according to the code.
func (e *Error) Unwrap() error {
	switch e.Code {
	case CodeParse:
		return ErrParse
	case CodeInvalid:
		return ErrInvalid
	}
	return nil
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
