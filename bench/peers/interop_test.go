package peers

// Interoperability: real third-party JSON-RPC clients against a running
// jetrpc engine — go-ethereum's rpc.Client (HTTP, WebSocket and IPC, with
// subscriptions over the last two), ybbus/jsonrpc (HTTP),
// sourcegraph/jsonrpc2 (TCP stream) and Node's ws package (WebSocket, in
// node_test.go).

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/enginetest"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/sourcegraph/jsonrpc2"
	"github.com/ybbus/jsonrpc/v3"
)

// serve starts an engine with the demo methods on TCP and a Unix socket.
func serve(t *testing.T) (tcpAddr, unixPath string) {
	t.Helper()
	_, tcpAddr, unixPath = serveTable(t)
	return tcpAddr, unixPath
}

// serveTable is serve that also returns the engine's method table, for
// counting live subscriptions.
func serveTable(t *testing.T, opts ...engine.Option) (tab *handler.Table, tcpAddr, unixPath string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab = handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	unixPath = filepath.Join(t.TempDir(), "jetrpc.ipc")
	_, addr := enginetest.Start(t, tab, append([]engine.Option{engine.WithAddrs("tcp://127.0.0.1:0", "unix://"+unixPath)}, opts...)...)
	return tab, addr, unixPath
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// gethClientChecks runs calls and a batch through a go-ethereum client.
func gethClientChecks(t *testing.T, c *rpc.Client) {
	t.Helper()
	var diff int
	if err := c.CallContext(ctx(t), &diff, "subtract", 42, 23); err != nil || diff != 19 {
		t.Fatalf("subtract: %d %v", diff, err)
	}
	var data []any
	if err := c.CallContext(ctx(t), &data, "get_data"); err != nil || len(data) != 2 || data[0] != "hello" {
		t.Fatalf("get_data: %v %v", data, err)
	}
	err := c.CallContext(ctx(t), nil, "nope")
	var rpcErr rpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != -32601 {
		t.Fatalf("unknown method: %v", err)
	}
	err = c.CallContext(ctx(t), nil, "fail", map[string]string{"why": "test"})
	var dataErr rpc.DataError
	if !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != 1000 || !errors.As(err, &dataErr) {
		t.Fatalf("fail: %v", err)
	}
	var sum, slept int
	var echo []string
	batch := []rpc.BatchElem{
		{Method: "add", Args: []any{1, 2}, Result: &sum},
		{Method: "sleep", Args: []any{5}, Result: &slept},
		{Method: "echo", Args: []any{"a", "b"}, Result: &echo},
		{Method: "subtract", Args: []any{"x", 1}},
	}
	if err := c.BatchCallContext(ctx(t), batch); err != nil {
		t.Fatal(err)
	}
	if sum != 3 || slept != 5 || len(echo) != 2 || batch[0].Error != nil || batch[3].Error == nil {
		t.Fatalf("batch: %d %d %v %v %v", sum, slept, echo, batch[0].Error, batch[3].Error)
	}
	if !errors.As(batch[3].Error, &rpcErr) || rpcErr.ErrorCode() != -32602 {
		t.Fatalf("batch invalid params: %v", batch[3].Error)
	}
}

func TestGeth_HTTP(t *testing.T) {
	tcp, _ := serve(t)
	c, err := rpc.DialHTTP("http://" + tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gethClientChecks(t, c)
}

func TestGeth_IPC(t *testing.T) {
	_, unix := serve(t)
	c, err := rpc.DialIPC(ctx(t), unix)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gethClientChecks(t, c)
}

func TestGeth_WebSocket(t *testing.T) {
	tab, tcp, _ := serveTable(t)
	c, err := rpc.DialWebsocket(ctx(t), "ws://"+tcp+"/", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gethClientChecks(t, c)
	gethClockChecks(t, c, tab)
}

func TestGeth_IPCSubscription(t *testing.T) {
	tab, _, unix := serveTable(t)
	c, err := rpc.DialIPC(ctx(t), unix)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gethClockChecks(t, c, tab)
}

// gethClockChecks subscribes to the demo clock through a go-ethereum
// client: the counter arrives 1, 2, 3 in order, the subscription reports
// no error, and unsubscribing ends it on the server. Done twice on the
// same client, so that the second subscription starts from 1 again.
func gethClockChecks(t *testing.T, c *rpc.Client, tab *handler.Table) {
	t.Helper()
	for round := range 2 {
		ch := make(chan int64)
		sub, err := c.Subscribe(ctx(t), "clock", ch, 5)
		if err != nil {
			t.Fatalf("round %d: subscribe: %v", round, err)
		}
		if n := tab.Subscriptions("clock"); n != 1 {
			t.Fatalf("round %d: %d subscriptions live on the server, want 1", round, n)
		}
		for want := int64(1); want <= 3; want++ {
			select {
			case got := <-ch:
				if got != want {
					t.Fatalf("round %d: notification %d carries %d", round, want, got)
				}
			case err := <-sub.Err():
				t.Fatalf("round %d: subscription failed before notification %d: %v", round, want, err)
			case <-ctx(t).Done():
				t.Fatalf("round %d: notification %d never came", round, want)
			}
		}
		select {
		case err := <-sub.Err():
			t.Fatalf("round %d: subscription error: %v", round, err)
		default:
		}
		sub.Unsubscribe()
		// Unsubscribe closes Err without an error.
		if err, open := <-sub.Err(); open || err != nil {
			t.Fatalf("round %d: after Unsubscribe: %v (open %v)", round, err, open)
		}
		deadline := time.Now().Add(10 * time.Second)
		for tab.Subscriptions("clock") != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := tab.Subscriptions("clock"); n != 0 {
			t.Fatalf("round %d: %d subscriptions live on the server after Unsubscribe", round, n)
		}
	}
	// The connection still serves calls after the subscriptions.
	var sum int
	if err := c.CallContext(ctx(t), &sum, "add", 2, 3); err != nil || sum != 5 {
		t.Fatalf("add after unsubscribe: %d %v", sum, err)
	}
}

func TestYbbus_HTTP(t *testing.T) {
	tcp, _ := serve(t)
	c := jsonrpc.NewClient("http://" + tcp)
	resp, err := c.Call(ctx(t), "subtract", 42, 23)
	if err != nil || resp.Error != nil {
		t.Fatalf("%v %v", err, resp)
	}
	if n, _ := resp.GetInt(); n != 19 {
		t.Fatalf("subtract = %d", n)
	}
	// A single struct is sent by name.
	var diff int
	if err := c.CallFor(ctx(t), &diff, "subtract", demo.SubtractParams{Minuend: 50, Subtrahend: 8}); err != nil || diff != 42 {
		t.Fatalf("by name: %d %v", diff, err)
	}
	resps, err := c.CallBatch(ctx(t), jsonrpc.RPCRequests{
		jsonrpc.NewRequest("add", 1, 2),
		jsonrpc.NewRequest("nope"),
		jsonrpc.NewRequest("echo", "x"),
	})
	if err != nil || len(resps) != 3 {
		t.Fatalf("batch: %v %d", err, len(resps))
	}
	byID := resps.AsMap()
	if n, _ := byID[0].GetInt(); n != 3 || byID[1].Error == nil || byID[1].Error.Code != -32601 || byID[2].Error != nil {
		t.Fatalf("batch replies: %+v %+v %+v", byID[0], byID[1], byID[2])
	}
	resp, err = c.Call(ctx(t), "fail", 7)
	if err != nil || resp.Error == nil || resp.Error.Code != 1000 {
		t.Fatalf("fail: %v %+v", err, resp)
	}
}

func TestSourcegraph_TCP(t *testing.T) {
	tcp, _ := serve(t)
	nc, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc2.NewConn(ctx(t), jsonrpc2.NewPlainObjectStream(nc), jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	defer conn.Close()
	var diff int
	if err := conn.Call(ctx(t), "subtract", []int{42, 23}, &diff); err != nil || diff != 19 {
		t.Fatalf("subtract: %d %v", diff, err)
	}
	if err := conn.Call(ctx(t), "subtract", map[string]int{"minuend": 1, "subtrahend": 2}, &diff); err != nil || diff != -1 {
		t.Fatalf("by name: %d %v", diff, err)
	}
	if err := conn.Notify(ctx(t), "update", []int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	var slept int
	if err := conn.Call(ctx(t), "sleep", map[string]int{"ms": 3}, &slept); err != nil || slept != 3 {
		t.Fatalf("sleep: %d %v", slept, err)
	}
	err = conn.Call(ctx(t), "nope", nil, nil)
	var e *jsonrpc2.Error
	if !errors.As(err, &e) || e.Code != -32601 {
		t.Fatalf("unknown method: %v", err)
	}
}

// serveEth starts an engine whose eth_subscribe serves geth's shape
// through handler.RegisterSubscriptionKinds: ["newHeads"], whose start
// sends heads 1 to 3, and ["logs", {"address":A}], whose start sends one
// log of A.
func serveEth(t *testing.T) (tab *handler.Table, tcpAddr, unixPath string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	tab = handler.NewTable(handler.WithLogger(quiet))
	type filter struct {
		Address string `json:"address"`
	}
	handler.RegisterSubscriptionKinds(tab, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("newHeads", func(_ context.Context, _ struct{}, sub *handler.Subscription) error {
			for i := 1; i <= 3; i++ {
				if err := sub.Notify(ethHead{Number: "0x" + strconv.Itoa(i)}); err != nil {
					return err
				}
			}
			return nil
		}),
		handler.NewSubscriptionKind("logs", func(_ context.Context, p struct{ Filter filter }, sub *handler.Subscription) error {
			return sub.Notify(ethLog{Address: p.Filter.Address, Data: "0x01"})
		}),
	}, handler.Inline())
	unixPath = filepath.Join(t.TempDir(), "jetrpc.ipc")
	_, addr := enginetest.Start(t, tab, engine.WithAddrs("tcp://127.0.0.1:0", "unix://"+unixPath))
	return tab, addr, unixPath
}

// ethHead and ethLog are the results of serveEth's notifications.
type ethHead struct {
	Number string `json:"number"`
}

type ethLog struct {
	Address string `json:"address"`
	Data    string `json:"data"`
}

// TestGeth_EthSubscribeKinds: go-ethereum's client subscribes to the
// kinds of a jetrpc eth_subscribe (EthSubscribe, and Subscribe with the
// "eth" namespace), receives their eth_subscription notifications,
// reads an unknown kind's and bad params' errors as geth's own, and
// unsubscribes with eth_unsubscribe; over WebSocket and IPC.
func TestGeth_EthSubscribeKinds(t *testing.T) {
	tab, tcp, unix := serveEth(t)
	for _, dial := range []struct {
		name string
		dial func() (*rpc.Client, error)
	}{
		{"ws", func() (*rpc.Client, error) { return rpc.DialWebsocket(ctx(t), "ws://"+tcp+"/", "") }},
		{"ipc", func() (*rpc.Client, error) { return rpc.DialIPC(ctx(t), unix) }},
	} {
		t.Run(dial.name, func(t *testing.T) {
			c, err := dial.dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			heads := make(chan ethHead)
			hs, err := c.EthSubscribe(ctx(t), heads, "newHeads")
			if err != nil {
				t.Fatalf("newHeads: %v", err)
			}
			for i := 1; i <= 3; i++ {
				select {
				case h := <-heads:
					if h.Number != "0x"+strconv.Itoa(i) {
						t.Fatalf("head %d: %+v", i, h)
					}
				case err := <-hs.Err():
					t.Fatalf("newHeads failed: %v", err)
				case <-ctx(t).Done():
					t.Fatalf("head %d never came", i)
				}
			}
			logs := make(chan ethLog)
			ls, err := c.Subscribe(ctx(t), "eth", logs, "logs", map[string]string{"address": "0x8320"})
			if err != nil {
				t.Fatalf("logs: %v", err)
			}
			select {
			case l := <-logs:
				if l.Address != "0x8320" || l.Data != "0x01" {
					t.Fatalf("log %+v", l)
				}
			case <-ctx(t).Done():
				t.Fatal("the log never came")
			}
			if n := tab.Subscriptions("eth"); n != 2 {
				t.Fatalf("%d subscriptions live, want 2", n)
			}
			var rpcErr rpc.Error
			if _, err := c.EthSubscribe(ctx(t), make(chan ethHead), "syncing"); !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != -32601 || err.Error() != `no "syncing" subscription in eth namespace` {
				t.Fatalf("unknown kind: %v", err)
			}
			if _, err := c.EthSubscribe(ctx(t), make(chan ethLog), "logs", map[string]int{"address": 1}); !errors.As(err, &rpcErr) || rpcErr.ErrorCode() != -32602 || !strings.Contains(err.Error(), "Filter") {
				t.Fatalf("bad logs params: %v", err)
			}
			hs.Unsubscribe()
			ls.Unsubscribe()
			deadline := time.Now().Add(10 * time.Second)
			for tab.Subscriptions("eth") != 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if n := tab.Subscriptions("eth"); n != 0 {
				t.Fatalf("%d subscriptions live after Unsubscribe", n)
			}
		})
	}
}
