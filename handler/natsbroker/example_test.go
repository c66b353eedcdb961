package natsbroker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/natsbroker"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// Two nodes share their topics through NATS: a client of node 1
// subscribes to "news", then a message published on node 2, and one
// published as raw JSON by a program that only speaks NATS, reach it.
func Example() {
	// An in-process NATS server stands for the deployment's
	// (nats://nats:4222).
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(5 * time.Second) {
		fmt.Println("NATS not ready")
		return
	}

	// A node: its broker, its topics, a table with the topic methods, an
	// engine.
	quiet := slog.New(slog.DiscardHandler)
	node := func(name string) (addr string, tp *topics.Topics, stop func()) {
		b, err := natsbroker.Connect(srv.ClientURL(), natsbroker.WithName(name), natsbroker.WithLogger(quiet))
		if err != nil {
			panic(err) // names the URL: "natsbroker: connecting to nats://…: nats: no servers available for connection"
		}
		tp = topics.New(b, nil)
		t := handler.NewTable()
		topics.Register(t, "topic", tp)
		e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLoops(1))
		if err := e.Start(); err != nil {
			panic(err)
		}
		return e.Addrs()[0].String(), tp, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = e.Stop(ctx)
			b.Close()
		}
	}
	addr1, _, stop1 := node("node-1")
	defer stop1()
	_, topics2, stop2 := node("node-2")
	defer stop2()

	// A client of node 1 subscribes to "news" over a raw stream.
	c, err := net.Dial("tcp", addr1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	r := bufio.NewReader(c)
	fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"topic_subscribe","params":["news"]}`)
	if _, err := r.ReadString('\n'); err != nil { // the reply: the subscription id
		fmt.Println(err)
		return
	}
	next := func() {
		line, err := r.ReadBytes('\n')
		if err != nil {
			fmt.Println(err)
			return
		}
		var note struct {
			Method string
			Params struct{ Result json.RawMessage }
		}
		_ = json.Unmarshal(line, &note)
		fmt.Println(note.Method, string(note.Params.Result))
	}

	// Node 2 publishes; it has no subscriber of its own, node 1 has one.
	n, err := topics2.Publish("news", map[string]string{"headline": "from node 2"})
	fmt.Println("node 2 delivered to", n, "local subscribers; error:", err)
	next()

	// Any NATS client can publish raw JSON on the topic's subject.
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	_ = nc.Publish("jetrpc.topic.news", []byte(`{"headline":"from a worker"}`))
	next()
	// Output:
	// node 2 delivered to 0 local subscribers; error: <nil>
	// topic_subscription {"headline":"from node 2"}
	// topic_subscription {"headline":"from a worker"}
}
