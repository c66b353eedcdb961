package topics

import (
	"errors"
	"strconv"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// NOTE: the errors of topics: the wire errors a method answers
// (ErrInvalidTopic, ErrPublishBacklog), built once; the refusals that
// stay in Go (a payload that is not JSON, a panicking broker); and Error,
// a broker's refusal.

// ErrInvalidTopic is the error for a topic name Valid refuses; a method
// answers it as -32602.
var ErrInvalidTopic = &handler.Error{Code: parser.CodeInvalidParams, Message: "Invalid params: a topic name is 1 to 255 of A-Z a-z 0-9 _ - : / = + @, in parts separated by single dots"}

// ErrPublishBacklog is Enqueue's refusal while its queues hold the
// backlog's bytes (the fan-out or the broker is behind); a method
// answers it as -32000, to be retried.
var ErrPublishBacklog = &handler.Error{Code: parser.CodeServerBusy, Message: "Server busy: too many topic messages wait to be sent; retry later"}

// errInvalidPayload refuses a PublishRaw or Enqueue payload that is not
// one JSON value.
var errInvalidPayload = errors.New("jetrpc: a topic message must be one valid JSON value")

// errBrokerPanicked is the error of a topic whose broker panicked in
// Subscribe.
var errBrokerPanicked = errors.New("the broker panicked")

// Error is a broker's refusal to subscribe to or publish on a topic.
type Error struct {
	Op    string // "subscribe" or "publish"
	Topic string
	Err   error // the broker's error
}

// Error implements error.
func (e *Error) Error() string {
	return "jetrpc: broker: " + e.Op + " on topic " + strconv.Quote(e.Topic) + ": " + e.Err.Error()
}

// Unwrap returns the broker's error.
func (e *Error) Unwrap() error { return e.Err }
