package handler_test

import (
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
	"github.com/jetrpc/jetrpc/handler"
)

var (
	msgAdd          = []byte(`{"jsonrpc":"2.0","method":"add","params":[40,2],"id":1}`)
	msgSubtractName = []byte(`{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}`)
	msgNotification = []byte(`{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}`)
	msgBatch10Add   = []byte("[" + strings.TrimSuffix(strings.Repeat(string(msgAdd)+",", 10), ",") + "]")
	msgEcho         = []byte(`{"jsonrpc":"2.0","method":"echo","params":{"a":[1,2,{"b":"c"}]},"id":"e"}`)
)

// stdlibAdd is what a careful user writes with encoding/json: the
// envelope into a struct with RawMessage fields, params into [2]int, the
// reply marshalled.
func stdlibAdd(msg []byte) []byte {
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(msg, &req); err != nil || req.Method != "add" {
		panic("bad request")
	}
	var p [2]int
	if err := json.Unmarshal(req.Params, &p); err != nil {
		panic(err)
	}
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Result  int             `json:"result"`
		ID      json.RawMessage `json:"id"`
	}{"2.0", p[0] + p[1], req.ID})
	if err != nil {
		panic(err)
	}
	return out
}

// sonicAdd is the same with sonic's full decode and encode.
func sonicAdd(msg []byte) []byte {
	var req struct {
		JSONRPC string                 `json:"jsonrpc"`
		Method  string                 `json:"method"`
		Params  sonic.NoCopyRawMessage `json:"params"`
		ID      sonic.NoCopyRawMessage `json:"id"`
	}
	if err := sonic.Unmarshal(msg, &req); err != nil || req.Method != "add" {
		panic("bad request")
	}
	var p [2]int
	if err := sonic.Unmarshal(req.Params, &p); err != nil {
		panic(err)
	}
	out, err := sonic.Marshal(struct {
		JSONRPC string                 `json:"jsonrpc"`
		Result  int                    `json:"result"`
		ID      sonic.NoCopyRawMessage `json:"id"`
	}{"2.0", p[0] + p[1], req.ID})
	if err != nil {
		panic(err)
	}
	return out
}

type benchCase struct {
	name string
	run  func(b *testing.B)
}

// dispatchBenchmarks is shared by BenchmarkDispatch and
// TestBenchmarkDispatch.
func dispatchBenchmarks(tb testing.TB) []benchCase {
	inline := demoTable(tb)
	pooled := handler.NewTable()
	handler.Register(pooled, "add", func(_ context.Context, p [2]int64) (int64, error) { return p[0] + p[1], nil })
	type user struct {
		Name  string   `json:"name"`
		Email string   `json:"email"`
		Tags  []string `json:"tags"`
		Age   int      `json:"age"`
	}
	u := user{Name: "Ada", Email: "ada@example.com", Tags: []string{"admin", "ops"}, Age: 36}
	handler.Register(inline, "user", func(context.Context, struct{}) (user, error) { return u, nil }, handler.Inline())
	handler.Register(inline, "tags", func(_ context.Context, p struct {
		Tags []string `json:"tags"`
	}) (int, error) {
		return len(p.Tags), nil
	}, handler.Inline())
	ours := func(t *handler.Table, msg []byte, want string) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			buf := make([]byte, 0, 4096)
			ctx := context.Background()
			if got := string(t.Dispatch(ctx, buf, msg)); got != want {
				b.Fatalf("reply %s, want %s", got, want)
			}
			for b.Loop() {
				buf = t.Dispatch(ctx, buf[:0], msg)
			}
		}
	}
	// add-pooled: a blocking method, as the engine runs it: handed to a
	// worker, the caller waiting for the reply.
	pooledRun := func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msgAdd)))
		ctx := context.Background()
		batch := []byte("[" + string(msgAdd) + "]")
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			buf = pooled.Dispatch(ctx, buf[:0], batch)
		}
	}
	base := func(f func([]byte) []byte, msg []byte) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				f(msg)
			}
		}
	}
	addReply := `{"jsonrpc":"2.0","result":42,"id":1}`
	return []benchCase{
		{"add", ours(inline, msgAdd, addReply)},
		{"subtract-named", ours(inline, msgSubtractName, `{"jsonrpc":"2.0","result":19,"id":3}`)},
		{"notification", ours(inline, msgNotification, ``)},
		{"batch10-add", ours(inline, msgBatch10Add, "["+strings.TrimSuffix(strings.Repeat(addReply+",", 10), ",")+"]")},
		{"echo", ours(inline, msgEcho, `{"jsonrpc":"2.0","result":{"a":[1,2,{"b":"c"}]},"id":"e"}`)},
		{"add-pooled", pooledRun},
		{"struct-result-sonic", ours(inline, []byte(`{"jsonrpc":"2.0","method":"user","id":1}`),
			`{"jsonrpc":"2.0","result":{"name":"Ada","email":"ada@example.com","tags":["admin","ops"],"age":36},"id":1}`)},
		{"slice-params-sonic", ours(inline, []byte(`{"jsonrpc":"2.0","method":"tags","params":{"tags":["a","b","c"]},"id":1}`),
			`{"jsonrpc":"2.0","result":3,"id":1}`)},
		{"stdlib-add", base(stdlibAdd, msgAdd)},
		{"sonic-add", base(sonicAdd, msgAdd)},
	}
}

func BenchmarkDispatch(b *testing.B) {
	for _, c := range dispatchBenchmarks(b) {
		b.Run(c.name, c.run)
	}
}

func TestBenchmarkDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	for _, c := range dispatchBenchmarks(t) {
		t.Run(c.name, func(t *testing.T) { runAsTest(t, c.run) })
	}
}

// runAsTest runs a benchmark function for a few iterations, as a test.
func runAsTest(t *testing.T, run func(*testing.B)) {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "20x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	if r := testing.Benchmark(run); r.N == 0 {
		t.Fatal("benchmark failed")
	}
}
