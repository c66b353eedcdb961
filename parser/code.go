package parser

import "strconv"

// Code is a JSON-RPC error code: the one code type of jetrpc, and its
// constants the one place the codes are defined (package handler uses
// them: handler.Error carries a Code, handler.ErrInvalidParams and the
// other errors of handler carry these). It is not an error itself; an
// Error (a parser fault) or a handler.Error carries one.
type Code int

// Codes reserved by the JSON-RPC 2.0 specification [std], and the
// server codes jetrpc uses from the implementation-defined range
// -32000..-32099. Applications should use codes outside -32768..-32000.
const (
	CodeParseError     Code = -32700 // [std] invalid JSON
	CodeInvalidRequest Code = -32600 // [std] not a valid request object
	CodeMethodNotFound Code = -32601 // [std] no such method
	CodeInvalidParams  Code = -32602 // [std] params do not fit the method
	CodeInternalError  Code = -32603 // [std] the method failed
	CodeServerBusy     Code = -32000 // no worker can take the request now; retry later
	CodeCancelled      Code = -32001 // the request's context was cancelled
	CodeDeadline       Code = -32002 // the request's context deadline passed
	CodeForbidden      Code = -32003 // the caller lacks a permission the method requires
	// CodeLimitExceeded: a rate limit refused the call (EIP-1474's
	// "limit exceeded").
	CodeLimitExceeded Code = -32005
	// CodeTooManySubscriptions: the connection, or the server, holds as
	// many subscriptions as it may (jsonrpsee's code).
	CodeTooManySubscriptions Code = -32006
	// CodeResponseTooLarge: the reply would pass the response size limit
	// (jsonrpsee's code; geth uses -32003, which is CodeForbidden here).
	CodeResponseTooLarge Code = -32008
)

// String returns the standard message of the code ("Parse error",
// "Method not found", "Server busy" ...), or "error N" for a code jetrpc
// does not name.
func (c Code) String() string {
	switch c {
	case CodeParseError:
		return "Parse error"
	case CodeInvalidRequest:
		return "Invalid Request"
	case CodeMethodNotFound:
		return "Method not found"
	case CodeInvalidParams:
		return "Invalid params"
	case CodeInternalError:
		return "Internal error"
	case CodeServerBusy:
		return "Server busy"
	case CodeCancelled:
		return "Request cancelled"
	case CodeDeadline:
		return "Deadline exceeded"
	case CodeForbidden:
		return "Forbidden"
	case CodeLimitExceeded:
		return "Limit exceeded"
	case CodeTooManySubscriptions:
		return "Too many subscriptions"
	case CodeResponseTooLarge:
		return "Response too large"
	}
	return "error " + strconv.Itoa(int(c))
}

// Coder is implemented by the errors that carry a JSON-RPC code (Error
// here, handler.Error): errors.Is matches two of them when their codes
// are equal.
type Coder interface {
	error
	// ErrorCode returns the JSON-RPC code of the error.
	ErrorCode() Code
}
