package handler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// cancelConn is a handler.Conn and handler.Canceller that records the
// ids it is asked to cancel.
type cancelConn struct{ ids []string }

func (c *cancelConn) Send([]byte) error        { return handler.ErrPushUnsupported }
func (c *cancelConn) CanPush() bool            { return false }
func (c *cancelConn) Context() context.Context { return context.Background() }
func (c *cancelConn) SendPrepared([]byte, *handler.Prepared, []byte) error {
	return handler.ErrPushUnsupported
}
func (c *cancelConn) CancelCall(id []byte) bool {
	c.ids = append(c.ids, string(id))
	return true
}

// A cancel notification hands the id in its params' member, verbatim, to
// its connection's CancelCall; params without it, or a connection that
// is no Canceller, do nothing; the notification gets no reply.
func TestTable_cancelNotificationCallsCancelCall(t *testing.T) {
	tab := handler.NewTable(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel, handler.MCPCancel))
	c := &cancelConn{}
	ctx := handler.ContextWithConn(context.Background(), c)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"1"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"x","requestId":{"a":[1]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"id":3}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":[1]}`,
	} {
		if out := tab.Dispatch(ctx, nil, []byte(msg)); len(out) != 0 {
			t.Errorf("%s: reply %s", msg, out)
		}
	}
	if got, want := strings.Join(c.ids, " "), `1 "1" {"a":[1]}`; got != want {
		t.Errorf("cancelled %s, want %s", got, want)
	}
	if out := tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)); len(out) != 0 {
		t.Errorf("without a Canceller: reply %s", out)
	}
}

// AppendCancelled answers -32800 with the id under CancelReplyError,
// nothing under CancelReplyNone, and nothing for a notification.
func TestTable_AppendCancelled(t *testing.T) {
	errTab := handler.NewTable(handler.WithCancel(handler.CancelReplyError, handler.LSPCancel))
	noneTab := handler.NewTable(handler.WithCancel(handler.CancelReplyNone, handler.MCPCancel))
	if got, want := string(errTab.AppendCancelled(nil, []byte(`"x"`), parser.Version2)), `{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"x"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := errTab.AppendCancelled(nil, nil, parser.Version2); len(got) != 0 {
		t.Errorf("notification: %s", got)
	}
	if got := noneTab.AppendCancelled(nil, []byte(`1`), parser.Version2); len(got) != 0 {
		t.Errorf("CancelReplyNone: %s", got)
	}
	if !errTab.Cancels() || handler.NewTable().Cancels() {
		t.Error("Cancels wrong")
	}
}

// Pending.CallID is the id of a deferred single request as it came;
// nil for a notification and a batch.
func TestPending_CallID(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "block", func(context.Context, []int) (int, error) { return 0, nil })
	for _, tc := range []struct{ msg, id string }{
		{`{"jsonrpc":"2.0","method":"block","params":[1],"id": "a\u0041" }`, `"a\u0041"`},
		{`{"jsonrpc":"2.0","method":"block","params":[1]}`, ""},
		{`[{"jsonrpc":"2.0","method":"block","params":[1],"id":1}]`, ""},
	} {
		var p handler.Pending
		if _, oc := tab.DispatchInline(context.Background(), nil, []byte(tc.msg), &p); oc != handler.Deferred {
			t.Fatalf("%s: not deferred", tc.msg)
		}
		d := p.Take()
		id, _ := d.CallID()
		if string(id) != tc.id {
			t.Errorf("%s: id %q, want %q", tc.msg, id, tc.id)
		}
		d.Busy(context.Background(), nil)
	}
}

// A CancelMethod without an IDMember is refused at NewTable.
func TestNewTable_cancelMethodWithoutMemberPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	handler.NewTable(handler.WithCancel(handler.CancelReplyError, handler.CancelMethod{Method: "cancel"}))
}
