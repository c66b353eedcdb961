package mcp_test

import (
	"context"
	"flag"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo/mcp"
)

// The messages measured: what an MCP client sends most.
var benchMessages = []struct{ name, msg, prefix string }{
	{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
		`{"jsonrpc":"2.0","result":{"protocolVersion":"2025-06-18"`},
	{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","result":{"tools":[`},
	{"tools/call add", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"3"}]},"id":3}`},
	{"resources/read", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"` + mcp.LargeResourceURI + `"}}`,
		`{"jsonrpc":"2.0","result":{"contents":[{"uri":`},
}

// runDispatch dispatches each message b.N times on one table, checking
// the first reply.
func runDispatch(b *testing.B) {
	tab := handler.NewTable()
	mcp.Register(tab)
	ctx := context.Background()
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			msg := []byte(m.msg)
			var buf []byte
			buf = tab.Dispatch(ctx, buf[:0], msg)
			if len(buf) < len(m.prefix) || string(buf[:len(m.prefix)]) != m.prefix {
				b.Fatalf("%.100s", buf)
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				buf = tab.Dispatch(ctx, buf[:0], msg)
			}
		})
	}
}

func BenchmarkDispatch(b *testing.B) { runDispatch(b) }

// Every benchmark is a test: 20 rounds each.
func TestBenchmarkDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "20x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	if r := testing.Benchmark(runDispatch); r.N == 0 {
		t.Fatal("benchmark failed")
	}
}
