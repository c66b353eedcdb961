package demo_test

// Tests of the topic methods (topics.go): topic_publish's params and
// error replies, and a publication reaching a topic_subscribe of the same
// table.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// pushConn is a push-capable handler.Conn that passes on what it is
// sent.
type pushConn struct {
	ctx  context.Context
	sent chan string
}

func newPushConn(ctx context.Context) *pushConn {
	return &pushConn{ctx: ctx, sent: make(chan string, 100)}
}

func (c *pushConn) Send(msg []byte) error {
	c.sent <- string(msg)
	return nil
}
func (c *pushConn) CanPush() bool            { return true }
func (c *pushConn) Context() context.Context { return c.ctx }

// next returns the next message sent to c, failing after 5 s.
func (c *pushConn) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-c.sent:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message sent")
		return ""
	}
}

// refusingBroker is a one-node broker whose Publish fails.
type refusingBroker struct{}

var errBrokerDown = errors.New("broker down")

func (refusingBroker) Subscribe(string, func([]byte)) (func(), error) { return func() {}, nil }
func (refusingBroker) Publish(string, []byte) error                   { return errBrokerDown }

// blockingBroker is a one-node broker whose Publish waits for release.
type blockingBroker struct{ release chan struct{} }

func (blockingBroker) Subscribe(string, func([]byte)) (func(), error) { return func() {}, nil }
func (b blockingBroker) Publish(string, []byte) error {
	<-b.release
	return nil
}

func topicsTable(b topics.Broker, opts ...topics.Option) (*handler.Table, *topics.Topics) {
	tab := handler.NewTable()
	h := topics.New(b, slog.New(slog.DiscardHandler), opts...)
	demo.RegisterTopics(tab, h)
	return tab, h
}

// topic_publish takes [name, payload] or {"name","payload"} and answers
// the number of local subscribers; they get the payload as the result of
// their notification.
func TestRegisterTopics_publish(t *testing.T) {
	tab, _ := topicsTable(nil)
	cctx, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	c := newPushConn(cctx)
	ctx := handler.ContextWithConn(cctx, c)
	call := func(msg string) string { return string(tab.Dispatch(ctx, nil, []byte(msg))) }

	var r struct{ Result string }
	if err := json.Unmarshal([]byte(call(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["news"],"id":1}`)), &r); err != nil || len(r.Result) != 34 {
		t.Fatalf("topic_subscribe: %q %v", r.Result, err)
	}
	for _, tc := range []struct{ params, result, message string }{
		{`["quiet", 1]`, `0`, ``},
		{`["news", {"a": [1, 2]}]`, `1`, `{"a":[1,2]}`},
		{`{"name":"news","payload":"x"}`, `1`, `"x"`},
		{`{"payload":null,"name":"news"}`, `1`, `null`},
	} {
		got := call(`{"jsonrpc":"2.0","method":"topic_publish","params":` + tc.params + `,"id":2}`)
		if want := `{"jsonrpc":"2.0","result":` + tc.result + `,"id":2}`; got != want {
			t.Errorf("topic_publish %s: %s, want %s", tc.params, got, want)
		}
		if tc.message == "" {
			continue
		}
		// "quiet" had no subscriber: the first message sent is news's.
		want := `{"jsonrpc":"2.0","method":"topic_subscription","params":{"subscription":"` + r.Result + `","result":` + tc.message + `}}`
		if got := c.next(t); got != want {
			t.Errorf("topic_publish %s sent %s, want %s", tc.params, got, want)
		}
	}
}

// The messages one caller publishes reach the subscriber in the order it
// published them, though each call returns before its fan-out.
func TestRegisterTopics_publishKeepsOrder(t *testing.T) {
	tab, _ := topicsTable(nil)
	cctx, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	c := newPushConn(cctx)
	ctx := handler.ContextWithConn(cctx, c)
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["seq"],"id":1}`))); !strings.Contains(got, `"result":"0x`) {
		t.Fatal(got)
	}
	const n = 500
	go func() {
		for i := range n {
			tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_publish","params":["seq",`+strconv.Itoa(i)+`],"id":2}`))
		}
	}()
	for i := range n {
		if got := c.next(t); !strings.HasSuffix(got, `"result":`+strconv.Itoa(i)+`}}`) {
			t.Fatalf("message %d: %s", i, got)
		}
	}
}

// topic_publish answers -32602 for a name topics.Valid refuses and for
// params that do not fit (-32600 for params that are not structured).
func TestRegisterTopics_publishErrors(t *testing.T) {
	tab, _ := topicsTable(nil)
	invalidTopic := `{"jsonrpc":"2.0","error":{"code":-32602,"message":"` + topics.ErrInvalidTopic.Message + `"},"id":3}`
	for _, tc := range []struct{ params, want string }{
		{`["a..b", 1]`, invalidTopic},
		{`["", 1]`, invalidTopic},
		{`{"name":"a b","payload":1}`, invalidTopic},
		{`["news"]`, `"code":-32602`},
		{`[1, 2]`, `"code":-32602`},
		{`{"name":"news"}`, `"code":-32602`},
		{`"news"`, `"code":-32600`}, // params neither array nor object: not a valid request
	} {
		got := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"topic_publish","params":`+tc.params+`,"id":3}`)))
		if tc.want == invalidTopic && got != tc.want || !strings.Contains(got, tc.want) {
			t.Errorf("topic_publish %s: %s, want %s", tc.params, got, tc.want)
		}
	}
}

// A broker's refusal does not reach the caller, whose call returned
// before: the local subscriber gets the message, and the refusal is
// counted.
func TestRegisterTopics_brokerRefusesPublish(t *testing.T) {
	tab, h := topicsTable(refusingBroker{})
	cctx, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	c := newPushConn(cctx)
	ctx := handler.ContextWithConn(cctx, c)
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_subscribe","params":["news"],"id":1}`))); !strings.Contains(got, `"result":"0x`) {
		t.Fatal(got)
	}
	if got := string(tab.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"topic_publish","params":["news",1],"id":4}`))); got != `{"jsonrpc":"2.0","result":1,"id":4}` {
		t.Fatal(got)
	}
	if got := c.next(t); !strings.HasSuffix(got, `"result":1}}`) {
		t.Fatalf("the local subscriber got %s", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.Stats().PublishFail != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("publish failures %d, want 1", h.Stats().PublishFail)
		}
		time.Sleep(time.Millisecond)
	}
}

// While the queue holds the backlog (here: a broker that does not take
// the first message), topic_publish is answered -32000, and publishes
// again once the broker has taken it.
func TestRegisterTopics_publishBacklogFull(t *testing.T) {
	b := blockingBroker{release: make(chan struct{})}
	tab, h := topicsTable(b, topics.WithPublishBacklog(64))
	publish := func(id int) string {
		return string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"topic_publish","params":["news","`+strings.Repeat("x", 50)+`"],"id":`+strconv.Itoa(id)+`}`)))
	}
	if got := publish(1); got != `{"jsonrpc":"2.0","result":0,"id":1}` {
		t.Fatal(got) // the first message is taken, whatever its size
	}
	want := `{"jsonrpc":"2.0","error":{"code":-32000,"message":"` + topics.ErrPublishBacklog.Message + `"},"id":2}`
	if got := publish(2); got != want {
		t.Fatalf("backlog full:\n got %s\nwant %s", got, want)
	}
	if s := h.Stats(); s.BacklogFull != 1 || s.Backlog == 0 || s.Published != 1 {
		t.Fatalf("stats %+v", s)
	}
	close(b.release)
	deadline := time.Now().Add(5 * time.Second)
	for h.Stats().Backlog != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the backlog did not drain")
		}
		time.Sleep(time.Millisecond)
	}
	if got := publish(3); got != `{"jsonrpc":"2.0","result":0,"id":3}` {
		t.Fatal(got)
	}
}
