package handler

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"

	"github.com/bytedance/sonic/encoder"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// Conn is the client connection a request arrived on, as its method sees
// it: the way to send that client messages later (server push). A server
// (the engine) puts it in the context of every request it serves;
// ConnFrom takes it out. Its methods are safe from any goroutine, during
// the request and after it.
type Conn interface {
	// Send queues one complete JSON-RPC message for the client (a
	// notification, usually), copying msg; it never blocks. msg must be
	// one valid JSON value; it is framed for the transport (a WebSocket
	// text message, or a line of a stream).
	//
	// A message sent while requests of this connection received before it
	// are still running is held until their replies are written: a
	// subscription's notifications never precede its subscribe reply.
	// The Conn a method's context carries may differ (DirectConn): the
	// messages a method sends while it runs go before its own reply.
	//
	// Send returns ErrPushUnsupported where the transport cannot carry
	// server messages (HTTP), ErrConnClosed once the connection is closed
	// or closing, and ErrSlowConsumer when the client has left too much
	// unread: the connection is then closed, so that one client that does
	// not read cannot make the server hold unbounded memory.
	Send(msg []byte) error

	// CanPush reports whether Send can work on this connection's transport.
	CanPush() bool

	// Context is done when the connection closes.
	Context() context.Context
}

// PreparedSender is implemented by a Conn that can send a Prepared
// message without building it anew for each connection: the engine's
// connections do, so that a WebSocket client that negotiated
// permessage-deflate gets the payload's bytes compressed once
// (Prepared.Deflated), shared by every connection it is sent to, behind
// prefix and suffix sent uncompressed (DEFLATE stored blocks). Others get
// the message as Send sends it. Subscription.NotifyPrepared uses it when
// the subscription's Conn has it, and NotifyRaw's message otherwise.
type PreparedSender interface {
	// SendPrepared queues prefix, p's payload and suffix as one message,
	// as Send of their concatenation would, with Send's errors and
	// ordering; the message must be one valid JSON value. It copies
	// prefix and suffix and retains p while the message is queued (p
	// must hold a reference during the call). It never blocks.
	SendPrepared(prefix []byte, p *Prepared, suffix []byte) error
}

// StreamHolder is implemented by a Conn whose stream ends with its
// call's reply unless something holds it open: the engine's Conn of an
// HTTP call answered as an event stream. A subscription holds its Conn
// while it lives, so that its notifications follow the subscribe reply
// on the same stream, which ends once the last hold is released.
type StreamHolder interface {
	// Hold keeps the stream open past the call's reply until release is
	// called (once; later calls do nothing). Called once the stream has
	// ended, it returns ok false and a release that does nothing.
	Hold() (release func(), ok bool)
}

// DirectConn is implemented by the Conn that ConnFrom gives a method
// when the messages sent through it go out as they are sent, held for
// no reply: a method's progress, partial results and logs reach its
// client before its reply. The engine's, over WebSocket and streams,
// is one (an HTTP call answered as an event stream gets its own Conn,
// whose events go before its reply too).
//
// Connection returns the connection's own Conn, whose messages wait for
// the replies of the requests received before them (Conn.Send). A
// Subscription sends through it, so that its notifications never
// precede its subscribe reply, and an unsubscribe compares it; code
// that starts sending in a goroutine before its method returns — a
// subscription made by hand — wants it too (Connection).
type DirectConn interface {
	Conn
	// Connection returns the Conn of the connection, as above.
	Connection() Conn
}

// Connection returns the Conn of c's connection, whose messages wait for
// the replies of the requests received before them: c itself, unless it
// is a DirectConn. nil gives nil.
func Connection(c Conn) Conn {
	if d, ok := c.(DirectConn); ok {
		return d.Connection()
	}
	return c
}

type connKey struct{}

// ContextWithConn returns a context carrying c, for ConnFrom. Servers call
// it once per connection. c's dynamic type must be comparable (a pointer,
// typically): subscriptions tell connections apart with ==. It panics
// otherwise, as that is a programming error.
func ContextWithConn(ctx context.Context, c Conn) context.Context {
	if c != nil && !reflect.TypeOf(c).Comparable() {
		panic("jetrpc: handler.ContextWithConn: the Conn's type " + reflect.TypeOf(c).String() + " is not comparable; use a pointer")
	}
	return context.WithValue(ctx, connKey{}, c)
}

// ConnFrom returns the connection of the request whose context is ctx, or
// nil where there is none (a direct Dispatch, or net/http's HTTPHandler).
func ConnFrom(ctx context.Context) Conn {
	c, _ := ctx.Value(connKey{}).(Conn)
	return c
}

// Notify sends c the notification {"jsonrpc":"2.0","method":method,
// "params":params}. params is encoded as JSON now (Raw and
// json.RawMessage verbatim, JSONAppender by its method, anything else by
// sonic); nil params are left out.
func Notify(c Conn, method string, params any) error {
	if c == nil {
		return ErrConnClosed
	}
	b := pool.Responses.Get()
	defer pool.Responses.Put(b)
	b.B = append(b.B, `{"jsonrpc":"2.0","method":`...)
	b.B = parser.AppendQuote(b.B, method)
	if params != nil {
		b.B = append(b.B, `,"params":`...)
		var err error
		if b.B, err = AppendJSON(b.B, params); err != nil {
			return err
		}
	}
	b.B = append(b.B, '}')
	return c.Send(b.B)
}

// AppendJSON appends v as compact JSON: Raw and json.RawMessage after a
// validity check, strings, integers and booleans by hand, a JSONAppender
// by its method, anything else by sonic.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case Raw:
		out, reason := appendRaw(dst, x)
		if reason != "" {
			return dst, errors.New("jetrpc: " + reason)
		}
		return out, nil
	case json.RawMessage:
		out, reason := appendRaw(dst, x)
		if reason != "" {
			return dst, errors.New("jetrpc: " + reason)
		}
		return out, nil
	case string:
		return parser.AppendQuote(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case JSONAppender:
		return x.AppendJSON(dst)
	}
	scratch := pool.Responses.Get() // sonic's buffer: encoding into dst would move dst to the heap
	defer pool.Responses.Put(scratch)
	if err := encoder.EncodeInto(&scratch.B, v, sonicOptions); err != nil {
		return dst, err
	}
	return append(dst, scratch.B...), nil
}
