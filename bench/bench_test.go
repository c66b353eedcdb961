package bench_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// serve starts the demo methods on TCP and a Unix socket.
func serve(t *testing.T) (tcp, unix string) { return bench.StartDemoServer(t) }

func run(t *testing.T, cfg bench.Config) *bench.Result {
	t.Helper()
	if cfg.Requests == 0 && cfg.Duration == 0 {
		// A count, not a time: a slow start (gnet under -race on a busy
		// machine) must not leave the measured window empty.
		cfg.Requests = 400
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = -1
	}
	if cfg.Conns == 0 {
		cfg.Conns = 4
	}
	res, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRun_againstJetrpc(t *testing.T) {
	tcp, unix := serve(t)
	cases := []struct {
		name string
		cfg  bench.Config
	}{
		{"http", bench.Config{Target: "http://" + tcp + "/"}},
		{"http pipelined", bench.Config{Target: "http://" + tcp + "/", Pipeline: 8}},
		{"http batch", bench.Config{Target: "http://" + tcp + "/", Batch: 10}},
		{"http notify share", bench.Config{Target: "http://" + tcp + "/", Notify: 0.3}},
		{"http batch of notifications", bench.Config{Target: "http://" + tcp + "/", Batch: 5, Notify: 1}},
		{"tcp", bench.Config{Target: "tcp://" + tcp}},
		{"tcp pipelined batch", bench.Config{Target: "tcp://" + tcp, Pipeline: 16, Batch: 4, Notify: 0.25}},
		{"unix", bench.Config{Target: "unix://" + unix, Pipeline: 4}},
		{"websocket", bench.Config{Target: "ws://" + tcp + "/"}},
		{"websocket pipelined batch", bench.Config{Target: "ws://" + tcp + "/", Pipeline: 8, Batch: 4, Notify: 0.25}},
		{"websocket open loop", bench.Config{Target: "ws://" + tcp + "/", Rate: 2000, Conns: 4}},
		{"named params", bench.Config{Target: "tcp://" + tcp, Method: "subtract", Params: `{"minuend":5,"subtrahend":3}`}},
		{"blocking method", bench.Config{Target: "tcp://" + tcp, Method: "sleep", Params: "[1]", Pipeline: 4}},
		{"expected errors", bench.Config{Target: "http://" + tcp + "/", Method: "fail", ExpectError: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, c.cfg)
			if res.TotalErrors() != 0 {
				t.Fatalf("errors %v", res.Errors)
			}
			if res.Requests == 0 || res.RequestsPerSec <= 0 || res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 {
				t.Fatalf("%+v", res)
			}
			batch := max(c.cfg.Batch, 1)
			if res.Calls < res.Requests*int64(batch)*9/10 {
				t.Fatalf("%d calls for %d requests of %d", res.Calls, res.Requests, batch)
			}
		})
	}
}

func TestRun_requestBudget(t *testing.T) {
	tcp, _ := serve(t)
	for _, target := range []string{"http://" + tcp + "/", "tcp://" + tcp} {
		res := run(t, bench.Config{Target: target, Requests: 1000, Pipeline: 3})
		if res.Requests != 1000 || res.TotalErrors() != 0 {
			t.Fatalf("%s: %d requests, errors %v", target, res.Requests, res.Errors)
		}
	}
}

// TestRun_openLoop: at a fixed rate a connection never sends before a
// request's intended time, whatever the server's speed.
func TestRun_openLoop(t *testing.T) {
	tcp, _ := serve(t)
	res := run(t, bench.Config{Target: "http://" + tcp + "/", Rate: 200, Duration: time.Second, Conns: 4})
	if res.TotalErrors() != 0 || res.Requests == 0 {
		t.Fatalf("%+v", res)
	}
	if res.Requests > 200+4 {
		t.Fatalf("%d requests in 1 s at 200/s: the schedule was not kept", res.Requests)
	}
}

// TestRun_bodies sends request bodies from a file, batches and
// notifications among them; the tool's ids replace theirs.
func TestRun_bodies(t *testing.T) {
	tcp, _ := serve(t)
	bodies := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"x"}`),
		[]byte(`[{"jsonrpc":"2.0","method":"echo","params":{"a":1},"id":7},{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"get_data","id":null}]`),
		[]byte(`{"jsonrpc":"2.0","method":"notify_hello","params":[7]}`),
	}
	for _, target := range []string{"http://" + tcp + "/", "tcp://" + tcp} {
		res := run(t, bench.Config{Target: target, Bodies: bodies, Pipeline: 2})
		if res.TotalErrors() != 0 || res.Requests == 0 {
			t.Fatalf("%s: %+v", target, res.Errors)
		}
	}
}

// wrongServer answers newline-delimited requests with the replies made by
// answer, to check that the tool notices.
func wrongServer(t *testing.T, answer func(line string, n int) string) string {
	return "tcp://" + bench.NewLineServer(t, answer)
}

// idOf extracts the id the tool sent.
func idOf(line string) string {
	_, after, _ := strings.Cut(line, `"id":`)
	return strings.TrimSuffix(strings.TrimSpace(after), "}")
}

func TestRun_wrongServersAreCaught(t *testing.T) {
	cases := []struct {
		name   string
		kind   string
		answer func(line string, n int) string
	}{
		{"fixed id", bench.ErrUnknownID, func(string, int) string { return `{"jsonrpc":"2.0","result":3,"id":1}` + "\n" }},
		{"no version", bench.ErrNotJSONRPC, func(l string, _ int) string { return `{"result":3,"id":` + idOf(l) + "}\n" }},
		{"not JSON", bench.ErrNotJSON, func(string, int) string { return "{]\n" }},
		{"error instead of result", bench.ErrUnexpectedError, func(l string, _ int) string {
			return `{"jsonrpc":"2.0","error":{"code":-32603,"message":"x"},"id":` + idOf(l) + "}\n"
		}},
		{"result and error", bench.ErrNotJSONRPC, func(l string, _ int) string {
			return `{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":` + idOf(l) + "}\n"
		}},
		// The copy comes when nothing is in flight (a reply to no request)
		// or when the next request is (an unknown id): either is counted.
		{"duplicate", bench.ErrUnexpectedReply + "|" + bench.ErrUnknownID, func(l string, _ int) string {
			r := `{"jsonrpc":"2.0","result":3,"id":` + idOf(l) + "}\n"
			return r + r
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := wrongServer(t, c.answer)
			res := run(t, bench.Config{Target: target, Requests: 40, Conns: 2, Timeout: 50 * time.Millisecond})
			var n int64
			for _, kind := range strings.Split(c.kind, "|") {
				n += res.Errors[kind]
			}
			if n == 0 {
				t.Fatalf("%s not counted: %v", c.kind, res.Errors)
			}
		})
	}
	// --no-check accepts what the checks refuse.
	target := wrongServer(t, func(string, int) string { return `{"jsonrpc":"2.0","result":3,"id":1}` + "\n" })
	if res := run(t, bench.Config{Target: target, Requests: 200, NoCheck: true}); res.TotalErrors() != 0 || res.Requests != 200 {
		t.Fatalf("no-check: %+v", res)
	}
}

func TestResult_reports(t *testing.T) {
	tcp, _ := serve(t)
	res := run(t, bench.Config{Target: "http://" + tcp + "/", Batch: 3})
	var table strings.Builder
	res.WriteTable(&table)
	for _, want := range []string{"throughput", "calls/s", "p99.9", "every reply checked"} {
		if !strings.Contains(table.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, table.String())
		}
	}
	f := filepath.Join(t.TempDir(), "plot.svg")
	out, _ := os.Create(f)
	if err := res.WritePlotSVG(out); err != nil {
		t.Fatal(err)
	}
	out.Close()
	svg, _ := os.ReadFile(f)
	if !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "polyline") || !strings.Contains(string(svg), "99.9%") {
		t.Fatalf("svg: %.200s", svg)
	}
}

func TestRun_badConfig(t *testing.T) {
	for _, cfg := range []bench.Config{
		{Target: "ftp://x"}, {Target: "wss:///path"}, {Target: "tcp://127.0.0.1:1", Notify: 2},
		{Target: "tcp://127.0.0.1:1", Params: "3"}, {Target: "tcp://127.0.0.1:1", Bodies: [][]byte{[]byte("{")}},
	} {
		if _, err := bench.Run(context.Background(), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func ExampleRun() {
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet))
	if err := e.Start(); err != nil {
		panic(err)
	}
	defer e.Stop(context.Background())

	res, err := bench.Run(context.Background(), bench.Config{
		Target:   "http://" + e.Addrs()[0].String() + "/",
		Conns:    4,
		Requests: 1000,
		Warmup:   -1, // none
		Method:   "add",
		Params:   "[1,2]",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Requests, "requests,", res.TotalErrors(), "errors")
	// Output: 1000 requests, 0 errors
}
