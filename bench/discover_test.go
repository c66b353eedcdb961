package bench_test

// Tests of --from-discover (discover.go): a workload made of a real
// server's rpc.discover, and of a document with examples, params by
// name, references and enums.

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/openrpc"
)

func TestDiscover_workloadOfTheBundledMethods(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	if err := openrpc.Register(tab); err != nil {
		t.Fatal(err)
	}
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet))
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer e.Stop(context.Background())
	url := "http://" + e.Addrs()[0].String() + "/"
	doc, err := bench.Discover(t.Context(), url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := bench.WorkloadFromOpenRPC(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := wl.String()
	for _, want := range []string{`{"method":"add","params":[{"$int":[0,100]},{"$int":[0,100]}]}`, `"method":"subtract"`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in:\n%s", want, text)
		}
	}
	for _, left := range []string{"clock_subscribe", "clock_unsubscribe", "rpc.discover"} {
		if strings.Contains(text, `"`+left+`"`) {
			t.Errorf("%s in the workload:\n%s", left, text)
		}
	}
	res, err := bench.Run(t.Context(), bench.Config{Target: url, Workload: wl, Requests: 400, Conns: 2, Warmup: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Methods["add"]; m == nil || m.Replies == 0 || m.Errors != 0 {
		t.Fatalf("add: %+v (errors %v)", m, res.Errors)
	}
}

func TestWorkloadFromOpenRPC(t *testing.T) {
	doc := `{"methods": [
		{"name": "by_example", "params": [{"name": "a", "required": true, "schema": {"type": "integer"}}],
		 "examples": [{"params": [{"name": "a", "value": 7}]}]},
		{"name": "by_name", "paramStructure": "by-name", "params": [
			{"name": "color", "required": true, "schema": {"enum": ["red", "blue"]}},
			{"name": "point", "required": true, "schema": {"$ref": "#/components/schemas/Point"}},
			{"name": "note", "required": false, "schema": {"type": "string"}}]},
		{"name": "ranged", "params": [{"name": "n", "required": true, "schema": {"type": "integer", "minimum": 5, "maximum": 9}}]},
		{"name": "eth_subscribe", "params": []},
		{"name": "rpc.discover", "params": []}
	], "components": {"schemas": {"Point": {"type": "object", "required": ["x"], "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}}}}`
	wl, err := bench.WorkloadFromOpenRPC([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"calls": [
  {"method":"by_example","params":[7]},
  {"method":"by_name","params":{"color":"red","point":{"x":{"$float":[0,100]}}}},
  {"method":"ranged","params":[{"$int":[5,9]}]}
]}
`
	if got := wl.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := bench.WorkloadFromOpenRPC([]byte(`{"methods": [{"name": "rpc.x"}]}`)); err == nil {
		t.Fatal("no method to call: accepted")
	}
	if _, err := bench.Discover(t.Context(), "tcp://127.0.0.1:1", nil, nil); err == nil {
		t.Fatal("a tcp:// discovery URL: accepted")
	}
}
