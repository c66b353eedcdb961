package natsbroker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/natsbroker"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// waitFor bounds every wait of the tests: for a reply, a notification or
// a condition polled by eventually.
const waitFor = 10 * time.Second

// startNATS starts an in-process NATS server on 127.0.0.1:port (-1: a
// random port), stopped at the end of the test.
func startNATS(t *testing.T, port int) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(5 * time.Second) {
		t.Fatalf("NATS server on port %d not ready", port)
	}
	return srv
}

// natsPort returns the port srv listens on.
func natsPort(srv *server.Server) int { return srv.Addr().(*net.TCPAddr).Port }

// connect connects a broker named name to srv, with a short reconnect
// wait so that a restart test does not wait a second per attempt; it is
// closed at the end of the test.
func connect(t *testing.T, srv *server.Server, name string, log *slog.Logger, opts ...natsbroker.Option) *natsbroker.Broker {
	t.Helper()
	opts = append([]natsbroker.Option{
		natsbroker.WithName(name),
		natsbroker.WithLogger(log),
		natsbroker.WithNATSOptions(nats.ReconnectWait(20*time.Millisecond), nats.ReconnectJitter(10*time.Millisecond, 10*time.Millisecond)),
	}, opts...)
	b, err := natsbroker.Connect(srv.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// node is one jetrpc node: an engine serving demo's methods and the
// topic methods over a Topics shared through a NATS broker.
type node struct {
	broker *natsbroker.Broker
	topics *topics.Topics
	logs   *logs
	addr   string
}

// startNode starts a node on a loopback port with its own broker named
// name, stopped at the end of the test.
func startNode(t *testing.T, srv *server.Server, name string) *node {
	t.Helper()
	logs := newLogs()
	b := connect(t, srv, name, logs.logger())
	tp := topics.New(b, logs.logger())
	tab := handler.NewTable()
	demo.Register(tab)
	demo.RegisterTopics(tab, tp)
	_, addr := enginetest.Start(t, tab, engine.WithLoops(2))
	return &node{broker: b, topics: tp, logs: logs, addr: addr}
}

// message is one JSON-RPC message a client receives: a reply or a
// notification.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Params struct {
		Subscription string          `json:"subscription"`
		Result       json.RawMessage `json:"result"`
	} `json:"params"`
}

// client is one raw TCP stream connection to a node: JSON values in,
// JSON values out. Its methods are for the test goroutine only.
type client struct {
	t       *testing.T
	conn    net.Conn
	replies chan message // filled by the reader goroutine
	notes   chan message // topic_subscription notifications; filled by the reader goroutine
	id      int
}

// dial connects a client to n, closed at the end of the test.
func dial(t *testing.T, n *node) *client {
	t.Helper()
	conn, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, conn: conn, replies: make(chan message, 16), notes: make(chan message, 1024)}
	go c.read()
	t.Cleanup(func() { conn.Close() })
	return c
}

// read routes what the server sends until the connection ends.
func (c *client) read() {
	dec := json.NewDecoder(c.conn)
	defer close(c.replies)
	defer close(c.notes)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			return
		}
		if m.Method != "" {
			c.notes <- m
		} else {
			c.replies <- m
		}
	}
}

// call sends one request and returns its result; an error reply fails
// the test.
func (c *client) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.id++
	p, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c.conn, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, p); err != nil {
		c.t.Fatal(err)
	}
	select {
	case m, ok := <-c.replies:
		if !ok {
			c.t.Fatalf("%s: connection closed", method)
		}
		if string(m.ID) != fmt.Sprint(c.id) {
			c.t.Fatalf("%s: reply to id %s, want %d", method, m.ID, c.id)
		}
		if m.Error != nil {
			c.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result
	case <-time.After(waitFor):
		c.t.Fatalf("%s: no reply within %v", method, waitFor)
	}
	return nil
}

// subscribe subscribes to topic and returns the subscription id.
func (c *client) subscribe(topic string) string {
	c.t.Helper()
	var id string
	if err := json.Unmarshal(c.call("topic_subscribe", []string{topic}), &id); err != nil {
		c.t.Fatal(err)
	}
	return id
}

// publish publishes payload on topic through the client's node and
// returns the node's local delivery count.
func (c *client) publish(topic string, payload any) int {
	c.t.Helper()
	var n int
	if err := json.Unmarshal(c.call("topic_publish", []any{topic, payload}), &n); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// next returns the client's next notification's result, and its
// subscription id.
func (c *client) next() (result, sub string) {
	c.t.Helper()
	select {
	case m, ok := <-c.notes:
		if !ok {
			c.t.Fatal("connection closed while waiting for a notification")
		}
		if m.Method != "topic_subscription" {
			c.t.Fatalf("notification %q, want topic_subscription", m.Method)
		}
		return string(m.Params.Result), m.Params.Subscription
	case <-time.After(waitFor):
		c.t.Fatalf("no notification within %v", waitFor)
	}
	return "", ""
}

// none fails the test if a notification has arrived and not been read.
func (c *client) none() {
	c.t.Helper()
	select {
	case m := <-c.notes:
		c.t.Fatalf("unexpected notification %s", m.Params.Result)
	default:
	}
}

// eventually polls cond until it holds, failing the test after waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitFor, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serverSubs returns the subscriptions the NATS server holds for the
// connections named name, on the subjects of DefaultPrefix, sorted.
func serverSubs(t *testing.T, srv *server.Server, name string) []string {
	t.Helper()
	cz, err := srv.Connz(&server.ConnzOptions{Subscriptions: true})
	if err != nil {
		t.Fatal(err)
	}
	var subs []string
	for _, ci := range cz.Conns {
		if ci.Name != name {
			continue
		}
		for _, s := range ci.Subs {
			if strings.HasPrefix(s, natsbroker.DefaultPrefix+".") {
				subs = append(subs, s)
			}
		}
	}
	slices.Sort(subs)
	return subs
}

// logs records the messages logged through its logger, for tests that
// check what the broker logs.
type logs struct {
	mu   sync.Mutex
	msgs []string // guarded by mu
}

func newLogs() *logs { return &logs{} }

func (l *logs) logger() *slog.Logger { return slog.New(logHandler{l}) }

// has reports whether a message containing s was logged.
func (l *logs) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// all returns the messages logged.
func (l *logs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs)
}

// logHandler is a slog.Handler recording into logs.
type logHandler struct{ l *logs }

func (h logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h logHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h logHandler) WithGroup(string) slog.Handler            { return h }
func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	h.l.mu.Lock()
	h.l.msgs = append(h.l.msgs, b.String())
	h.l.mu.Unlock()
	return nil
}
