package parser_test

import (
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser"
)

// BenchmarkAppendEscaped: escaping strings as replies carry them — a
// short name, a line of ASCII, a megabyte of lines (MCP's resource),
// and text mostly outside ASCII.
func BenchmarkAppendEscaped(b *testing.B) {
	var lines strings.Builder
	for lines.Len() < 1<<20 {
		lines.WriteString("line 01234 " + strings.Repeat(".", 52) + "\n")
	}
	for _, c := range []struct{ name, s string }{
		{"short", "eth_getBalance"},
		{"line", "the quick brown fox jumps over the lazy dog, 0123456789 times over"},
		{"megabyte", lines.String()},
		{"utf8", strings.Repeat("Grüße, 世界 — ", 100)},
	} {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(c.s)+16)
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			for b.Loop() {
				dst = parser.AppendEscaped(dst[:0], c.s)
			}
		})
	}
}
