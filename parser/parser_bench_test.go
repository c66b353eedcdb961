package parser_test

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
	"github.com/jetrpc/jetrpc/parser"
)

var (
	benchSingle = []byte(`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`)
	benchBatch  = []byte("[" + strings.TrimSuffix(strings.Repeat(string(benchSingle)+",", 10), ",") + "]")
	benchLarge  = []byte(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat(`lorem ipsum \"dolor\" sit amet é `, 1000) + `"],"id":1}`)
)

// envelope is what a careful user decodes with encoding/json or sonic.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
}

type benchCase struct {
	name string
	run  func(b *testing.B)
}

// parseBenchmarks is shared by BenchmarkParse and TestBenchmarkParse, so
// that every benchmark also runs as a test.
func parseBenchmarks() []benchCase {
	var p parser.Parser
	ours := func(msg []byte) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				m := p.Parse(msg)
				if m.Kind == parser.KindBatch {
					for it := m.Iter(); it.Next(); {
						if r := it.Request(); !r.Err.OK() {
							b.Fatal(r.Err.Error())
						}
					}
				} else if m.Kind != parser.KindSingle || !m.Request.Err.OK() {
					b.Fatal(m.Err.Error())
				}
			}
		}
	}
	stdlib := func(msg []byte) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if msg[0] == '[' {
					var env []envelope
					if err := json.Unmarshal(msg, &env); err != nil {
						b.Fatal(err)
					}
					continue
				}
				var env envelope
				if err := json.Unmarshal(msg, &env); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	sonicRun := func(msg []byte) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if msg[0] == '[' {
					var env []envelope
					if err := sonic.ConfigStd.Unmarshal(msg, &env); err != nil {
						b.Fatal(err)
					}
					continue
				}
				var env envelope
				if err := sonic.ConfigStd.Unmarshal(msg, &env); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return []benchCase{
		{"single", ours(benchSingle)},
		{"batch10", ours(benchBatch)},
		{"large", ours(benchLarge)},
		{"stdlib-single", stdlib(benchSingle)},
		{"stdlib-batch10", stdlib(benchBatch)},
		{"stdlib-large", stdlib(benchLarge)},
		{"sonic-single", sonicRun(benchSingle)},
		{"sonic-batch10", sonicRun(benchBatch)},
		{"sonic-large", sonicRun(benchLarge)},
		{"frame-large", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(benchLarge)))
			var f parser.Framer
			for b.Loop() {
				if _, _, st := f.Next(benchLarge); st != parser.Complete {
					b.Fatal(st)
				}
			}
		}},
	}
}

func BenchmarkParse(b *testing.B) {
	for _, c := range parseBenchmarks() {
		b.Run(c.name, c.run)
	}
}

func TestBenchmarkParse(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	for _, c := range parseBenchmarks() {
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
