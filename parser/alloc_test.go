//go:build !race

package parser_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/parser"
)

// TestParse_allocs guards the zero-allocation promise of the parser.
func TestParse_allocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	var p parser.Parser
	var m parser.Message
	elems := make([]parser.Request, 0, 16)
	escaped := []byte(`{"jsonrpc":"2\u002e0","\u006d\u0065thod":"su\u0062tract","params":{"a":[1,"\ud83d\ude00"]},"id":"\u00e9"}`)
	bad := []byte(`{"jsonrpc":"2.0","method":"m","params":"x","id":1,"id":2}`)
	for name, fn := range map[string]func(){
		"single": func() {
			if m := p.Parse(benchSingle); !m.Request.Err.OK() {
				t.Fatal(m.Request.Err.Error())
			}
		},
		"batch10": func() {
			m := p.Parse(benchBatch)
			for it := m.Iter(); it.Next(); {
				if r := it.Request(); !r.Err.OK() {
					t.Fatal(r.Err.Error())
				}
			}
		},
		"batch10-elems": func() {
			elems = p.ParseElems(&m, benchBatch, elems[:0], 100)
			if len(elems) != 10 || !elems[9].Err.OK() {
				t.Fatal(len(elems))
			}
		},
		"escaped": func() {
			m := p.Parse(escaped)
			var buf [32]byte
			if string(m.Request.AppendMethod(buf[:0])) != "subtract" {
				t.Fatal("method")
			}
		},
		"invalid": func() {
			if m := p.Parse(bad); m.Request.Err.OK() {
				t.Fatal("accepted")
			}
		},
		"parse-error": func() {
			if m := p.Parse(benchSingle[:20]); m.Err.Code != parser.CodeParseError {
				t.Fatal("accepted")
			}
		},
		"frame": func() {
			var f parser.Framer
			if _, _, st := f.Next(benchLarge[:1000]); st != parser.NeedMore {
				t.Fatal(st)
			}
			if _, _, st := f.Next(benchLarge); st != parser.Complete {
				t.Fatal(st)
			}
		},
		"values": func() {
			v := parser.NewValues(benchBatch)
			for _, ok := v.Next(); ok; _, ok = v.Next() {
			}
		},
	} {
		if got := testing.AllocsPerRun(100, fn); got != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, got)
		}
	}
}
