package handler

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jetrpc/jetrpc/parser"
)

// Error is a JSON-RPC error object. A handler that returns an *Error has
// its code, message and data sent to the client as they are.
type Error struct {
	// Code is the error code.
	Code parser.Code
	// Message is a short description; empty means Code.String().
	Message string
	// Data is optional additional information, encoded as JSON (a Raw or
	// json.RawMessage is sent verbatim). nil means no data member.
	Data any
}

// NewError returns an *Error with the code and message.
func NewError(code parser.Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// WithData returns a copy of e with Data set to data.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// Error returns "jetrpc: <message> (code N)".
func (e *Error) Error() string {
	return "jetrpc: " + e.message() + " (code " + strconv.Itoa(int(e.Code)) + ")"
}

func (e *Error) message() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Code.String()
}

// ErrorCode returns e.Code (parser.Coder).
func (e *Error) ErrorCode() parser.Code { return e.Code }

var _ parser.Coder = (*Error)(nil)

// Is reports whether target carries the same code (an *Error, or a
// parser fault), so that errors.Is(err, handler.ErrMethodNotFound) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(parser.Coder)
	return ok && t.ErrorCode() == e.Code
}

// Errors with the standard codes, for use with errors.Is and as handler
// results (return handler.ErrInvalidParams, for instance).
var (
	ErrParse          = &Error{Code: parser.CodeParseError}
	ErrInvalidRequest = &Error{Code: parser.CodeInvalidRequest}
	ErrMethodNotFound = &Error{Code: parser.CodeMethodNotFound}
	ErrInvalidParams  = &Error{Code: parser.CodeInvalidParams}
	ErrInternal       = &Error{Code: parser.CodeInternalError}
	ErrServerBusy     = &Error{Code: parser.CodeServerBusy}
	ErrForbidden      = &Error{Code: parser.CodeForbidden}
	// ErrDeadline answers a call that ran past its timeout (Timeout,
	// WithCallTimeout).
	ErrDeadline = &Error{Code: parser.CodeDeadline}
	// ErrLimitExceeded answers a call a rate limit refused.
	ErrLimitExceeded = &Error{Code: parser.CodeLimitExceeded}
	// ErrTooManySubscriptions answers a subscribe call over the
	// subscription limits.
	ErrTooManySubscriptions = &Error{Code: parser.CodeTooManySubscriptions}
	// ErrResponseTooLarge replaces a reply over the response size limits.
	ErrResponseTooLarge = &Error{Code: parser.CodeResponseTooLarge}
)

// Errors of an Authorizer (see AuthStatus).
var (
	// ErrUnauthenticated: the request carries no credentials, or wrong
	// ones; HTTP answers 401 with WWW-Authenticate: Bearer.
	ErrUnauthenticated = errors.New("jetrpc: missing or invalid credentials")
	// ErrNoCredentials: the request carries no credentials at all — no
	// Authorization field, no token anywhere an Authorizer looks; a
	// stream connection, which has no head, never does. It wraps
	// ErrUnauthenticated: HTTP answers 401, unless the policy lets such
	// callers in anonymous (HTTPPolicy.AuthOptional). An Authorizer
	// returns it, not another ErrUnauthenticated, only when nothing was
	// presented: credentials of another scheme or malformed ones are
	// wrong ones.
	ErrNoCredentials = fmt.Errorf("%w: none presented", ErrUnauthenticated)
	// ErrTokenInURL: the request carries a bearer token in its URL (the
	// access_token query parameter) and is not a WebSocket upgrade, the
	// one request a browser cannot give an Authorization header. A
	// token in a URL ends up in proxies' and servers' logs. It wraps
	// ErrUnauthenticated: HTTP answers 401, with httprules.TextTokenInURL.
	ErrTokenInURL = fmt.Errorf("%w: a token in the URL (access_token) is accepted on a WebSocket upgrade only", ErrUnauthenticated)
	// ErrAccessDenied: the caller is known but may not call this server
	// (an address not allowed, say); HTTP answers 403.
	ErrAccessDenied = errors.New("jetrpc: access denied")
)

// ErrorCode returns the code an error is sent with: the code of an *Error
// or a parser fault (any parser.Coder, found with errors.As), parser.CodeCancelled or parser.CodeDeadline for the context
// errors, 0 for nil, and parser.CodeInternalError for anything else.
func ErrorCode(err error) parser.Code {
	if err == nil {
		return 0
	}
	if e, ok := err.(parser.Coder); ok {
		return e.ErrorCode()
	}
	var e parser.Coder
	if errors.As(err, &e) {
		return e.ErrorCode()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return parser.CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return parser.CodeDeadline
	}
	return parser.CodeInternalError
}

// Registration errors.
var (
	// ErrReservedName is returned for a method name beginning "rpc.".
	ErrReservedName = errors.New("jetrpc: method names beginning with \"rpc.\" are reserved")
	// ErrDuplicateName is returned when a name is registered twice.
	ErrDuplicateName = errors.New("jetrpc: method already registered")
	// ErrEmptyName is returned for an empty method name.
	ErrEmptyName = errors.New("jetrpc: empty method name")
	// ErrSealed is returned when registering on a table that has begun
	// dispatching: the table is read without locks from then on.
	ErrSealed = errors.New("jetrpc: table already dispatching; register methods before serving")
	// ErrBadType is returned for a params or result type that the table
	// cannot decode or encode.
	ErrBadType = errors.New("jetrpc: unsupported type")
)

// Errors of Conn.Send.
var (
	// ErrPushUnsupported: the transport cannot carry server messages.
	ErrPushUnsupported = errors.New("jetrpc: server messages need a WebSocket or stream connection, not HTTP")
	// ErrConnClosed: the connection is closed or closing.
	ErrConnClosed = errors.New("jetrpc: connection closed")
	// ErrSlowConsumer: the client left too much unread; it is disconnected.
	ErrSlowConsumer = errors.New("jetrpc: client too slow to read its messages; disconnected")
	// ErrNotUTF8: a WebSocket carries server messages as text messages,
	// which must be valid UTF-8 (JSON is); the message was not sent.
	ErrNotUTF8 = errors.New("jetrpc: a server message over WebSocket must be valid UTF-8")
)

// Wire errors of the subscription methods (RegisterSubscription).
var (
	// ErrNotificationsUnsupported answers a subscribe request that came
	// over a transport without server push (HTTP). Its code and message
	// are geth's.
	ErrNotificationsUnsupported = NewError(parser.CodeMethodNotFound, "notifications not supported")
	// ErrSubscriptionNotFound answers an unsubscribe request for an id
	// that this connection does not hold.
	ErrSubscriptionNotFound = NewError(-32000, "subscription not found")
)
