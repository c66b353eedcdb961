package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// An engine on an ephemeral loopback port, called over HTTP and over a raw
// newline-delimited stream on the same listener, then stopped gracefully.
func ExampleNew() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())

	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLoops(1))
	if err := e.Start(); err != nil {
		fmt.Println(err)
		return
	}
	addr := e.Addrs()[0].String()

	// HTTP: a POST whose body is one message.
	resp, err := http.Post("http://"+addr+"/", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))

	// A stream: JSON values in, one reply per line out.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprintln(c, `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":"a"}`)
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println(e.Stop(ctx))
	// Output:
	// 200 {"jsonrpc":"2.0","result":3,"id":1}
	// {"jsonrpc":"2.0","result":42,"id":"a"}
	// <nil>
}

// The usual main: serve until SIGINT or SIGTERM, then stop gracefully,
// waiting at most the stop timeout for the requests in flight. Run
// returns nil after a clean stop, so the program exits 0 on SIGTERM.
func ExampleEngine_Run() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithStopTimeout(5*time.Second))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		for e.Addrs() == nil { // started
			time.Sleep(time.Millisecond)
		}
		stop() // here, as if a SIGTERM came
	}()
	if err := e.Run(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stopped cleanly")
	// Output: stopped cleanly
}

// The whole configuration in one Options value, keyed fields only: a
// zero field means its default, and a field without a With setter is
// set the same way.
func ExampleWithOptions() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	e := engine.New(t, engine.WithOptions(engine.Options{
		Addrs:          []string{"tcp://127.0.0.1:0"},
		Loops:          1,
		MaxMessageSize: 64 << 10,
		IdleTimeout:    time.Minute,
	}))
	if err := e.Start(); err != nil {
		fmt.Println(err)
		return
	}
	c, err := net.Dial("tcp", e.Addrs()[0].String())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprintln(c, `{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`)
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println(e.Stop(ctx))
	// Output:
	// {"jsonrpc":"2.0","result":42,"id":1}
	// <nil>
}
