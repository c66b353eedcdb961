// Command jrpc2 serves add, echo and sleep with creachadair/jrpc2 over
// HTTP (jhttp.Bridge) and over TCP (line framing).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
	"github.com/creachadair/jrpc2/jhttp"
	"github.com/creachadair/jrpc2/server"
)

func main() {
	httpAddr := flag.String("http", "", "HTTP address")
	tcpAddr := flag.String("tcp", "", "TCP address (newline-delimited JSON)")
	flag.Parse()
	mux := handler.Map{
		"add": handler.New(func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }),
		"echo": handler.New(func(_ context.Context, req *jrpc2.Request) (json.RawMessage, error) {
			return json.RawMessage(req.ParamString()), nil
		}),
		"sleep": handler.New(func(ctx context.Context, p [1]int) (int, error) {
			time.Sleep(time.Duration(p[0]) * time.Millisecond)
			return p[0], nil
		}),
	}
	if *tcpAddr != "" {
		ln, err := net.Listen("tcp", *tcpAddr)
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			log.Fatal(server.Loop(context.Background(), server.NetAccepter(ln, channel.Line), server.Static(mux), nil))
		}()
	}
	if *httpAddr != "" {
		bridge := jhttp.NewBridge(mux, nil)
		log.Fatal(http.ListenAndServe(*httpAddr, bridge))
	}
	select {}
}
