package handler

// NOTE: cancel notifications. A table with Options.Cancel serves each
// named notification as an inline method of its own: it finds the id in
// the member of its params that the CancelMethod names and hands it,
// verbatim, to the connection the call came on (ConnFrom), when that
// connection is a Canceller — the engine's are. The connection finds its
// call in flight with that id, byte for byte, and cancels its context;
// the reply the cancelled call then gets is AppendCancelled's
// (Options.CancelReply). Nothing here costs a call anything while
// Options.Cancel is empty.

import (
	"bytes"
	"context"

	"github.com/jetrpc/jetrpc/parser"
)

// CodeRequestCancelled is the code of the reply of a call cancelled by a
// cancel notification under CancelReplyError: LSP's RequestCancelled.
const CodeRequestCancelled parser.Code = -32800

// CancelMethod names a notification that cancels a call in flight on the
// same connection (Options.Cancel), and the member of its params that
// holds the id of that call.
type CancelMethod struct {
	// Method is the notification's method name.
	Method string
	// IDMember is the member of the notification's params whose value is
	// the id of the call to cancel, compared byte for byte with the
	// call's id as it came (1 and "1" differ, so do 1 and 1.0).
	IDMember string
}

// The cancel notifications of two protocols.
var (
	// LSPCancel is the Language Server Protocol's
	// {"method":"$/cancelRequest","params":{"id":…}}.
	LSPCancel = CancelMethod{Method: "$/cancelRequest", IDMember: "id"}
	// MCPCancel is the Model Context Protocol's
	// {"method":"notifications/cancelled","params":{"requestId":…}}.
	MCPCancel = CancelMethod{Method: "notifications/cancelled", IDMember: "requestId"}
)

// CancelReply says what a call cancelled by a cancel notification
// answers (Options.CancelReply).
type CancelReply uint8

const (
	// CancelReplyError answers CodeRequestCancelled (-32800, "Request
	// cancelled"), as LSP asks. The default.
	CancelReplyError CancelReply = iota
	// CancelReplyNone answers nothing: the reply is dropped, as MCP asks
	// ("receivers should not send a response for the cancelled request").
	CancelReplyNone
)

// Canceller is a connection whose calls in flight a cancel notification
// may cancel: the Conn of a transport that supports Options.Cancel (the
// engine's connections do). CancelCall cancels the context of the call
// in flight on the connection whose id is id (raw JSON, compared byte
// for byte), and reports whether there was one; an unknown or finished
// id does nothing. It must not block. Safe from any goroutine.
type Canceller interface {
	CancelCall(id []byte) bool
}

// Cancels reports whether the table serves cancel notifications
// (Options.Cancel): a transport then runs each call of a blocking method
// with a context of its own that its Canceller can cancel. Safe from any
// goroutine.
func (t *Table) Cancels() bool { return len(t.opts.Cancel) > 0 }

// AppendCancelled appends the reply of the call whose id is id, of
// version v, that a cancel notification cancelled before its method
// returned (whatever the method answered): per Options.CancelReply,
// CodeRequestCancelled with id, or nothing. It appends nothing for a nil
// id (a notification). Safe from any goroutine.
func (t *Table) AppendCancelled(dst, id []byte, v parser.Version) []byte {
	if id == nil || t.opts.CancelReply == CancelReplyNone {
		return dst
	}
	return appendErrorReply(dst, id, v, CodeRequestCancelled, "Request cancelled", "", nil)
}

// registerCancel registers the methods of Options.Cancel. It panics on a
// bad CancelMethod, as Register does.
func (t *Table) registerCancel() {
	for _, cm := range t.opts.Cancel {
		member := []byte(cm.IDMember)
		if len(member) == 0 {
			panic("jetrpc: handler.Options.Cancel: the CancelMethod " + cm.Method + " names no IDMember")
		}
		RegisterNoResult(t, cm.Method, func(ctx context.Context, p Raw) error {
			cancelByID(ctx, p, member)
			return nil
		}, Inline(), Description("Cancels the call in flight on this connection whose id is params."+cm.IDMember+"."))
	}
}

// cancelByID cancels the call whose id is the member named member of
// params, on the connection of ctx.
func cancelByID(ctx context.Context, params, member []byte) {
	c, ok := Connection(ConnFrom(ctx)).(Canceller)
	if !ok {
		return
	}
	m := parser.NewMembers(params)
	for key, _, v, ok := m.Next(); ok; key, _, v, ok = m.Next() {
		if bytes.Equal(key, member) {
			c.CancelCall(v)
			return
		}
	}
}

// CallID returns the id of the call d holds, as it came (raw JSON), and
// its version, when d holds a single request that wants a reply; nil for
// a notification or a batch (whose elements a cancel notification does
// not reach). The returned id is valid until d is run or answered and
// must not be modified; copy it to keep it. Safe from the goroutine that
// holds d, before Run, RunHere or Busy.
func (d *Pending) CallID() ([]byte, parser.Version) {
	st := d.st
	if st == nil || st.msg.Kind != parser.KindSingle || st.req == nil || st.req.Notification {
		return nil, 0
	}
	return st.req.ID, st.req.Version
}
