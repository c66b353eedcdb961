package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/engine/metrics"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/prometheus/client_golang/prometheus"
)

// Serve the metrics of a table and its engine at /metrics, on the
// engine's own listener, and read them as Prometheus would.
func ExamplePage() {
	t := handler.NewTable(handler.WithMetrics(true))
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())

	reg := prometheus.NewRegistry()
	e := engine.New(t,
		engine.WithAddrs("tcp://127.0.0.1:0"),
		engine.WithPage(metrics.Page("/metrics", reg)))
	if err := metrics.Register(reg, t, e); err != nil {
		panic(err)
	}
	if err := e.Start(); err != nil {
		panic(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	url := "http://" + e.Addrs()[0].String()

	for range 3 {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "jsonrpc_server_handled_total") || strings.HasPrefix(line, "jsonrpc_server_started_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// jsonrpc_server_handled_total{code="0",method="add"} 3
	// jsonrpc_server_started_total{method="(invalid)"} 0
	// jsonrpc_server_started_total{method="(unknown)"} 0
	// jsonrpc_server_started_total{method="add"} 3
}

// Serve the metrics on an address of their own, with net/http, as
// `jetrpc serve --metrics 127.0.0.1:9100` does.
func ExampleHandler() {
	t := handler.NewTable(handler.WithMetrics(true))
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:0"))
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, t, e); err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(reg))
	_ = &http.Server{Addr: "127.0.0.1:9100", Handler: mux, ReadHeaderTimeout: 10 * time.Second} // then ListenAndServe, and e.Start
	fmt.Println(metrics.Namespace)
	// Output: jsonrpc_server
}
