// Command geth serves the benchmark methods with go-ethereum's rpc
// package over HTTP, WebSocket and a TCP stream (geth's IPC codec). geth
// names methods service_method: they are calc_add, calc_echo and
// calc_sleep.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
)

// Calc is the service.
type Calc struct{}

// Add returns a+b.
func (Calc) Add(a, b int) int { return a + b }

// Echo returns its argument.
func (Calc) Echo(v json.RawMessage) json.RawMessage { return v }

// Sleep sleeps ms milliseconds.
func (Calc) Sleep(ctx context.Context, ms int) (int, error) {
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return ms, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func main() {
	httpAddr := flag.String("http", "", "HTTP address")
	wsAddr := flag.String("ws", "", "WebSocket address")
	tcpAddr := flag.String("tcp", "", "TCP address (geth's stream codec)")
	flag.Parse()
	srv := rpc.NewServer()
	if err := srv.RegisterName("calc", Calc{}); err != nil {
		log.Fatal(err)
	}
	if *tcpAddr != "" {
		ln, err := net.Listen("tcp", *tcpAddr)
		if err != nil {
			log.Fatal(err)
		}
		go func() { log.Fatal(srv.ServeListener(ln)) }()
	}
	if *wsAddr != "" {
		go func() { log.Fatal(http.ListenAndServe(*wsAddr, srv.WebsocketHandler([]string{"*"}))) }()
	}
	if *httpAddr != "" {
		log.Fatal(http.ListenAndServe(*httpAddr, srv))
	}
	select {}
}
