package http1_test

import (
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

func BenchmarkChunkedDecoder_decode(b *testing.B) {
	chunk := strings.Repeat("x", 1000)
	body := []byte(strings.Repeat("3e8\r\n"+chunk+"\r\n", 16) + "0\r\n\r\n")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.RunParallel(func(pb *testing.PB) {
		var d http1.ChunkedDecoder
		dst := make([]byte, 0, 16000)
		for pb.Next() {
			if _, _, done, _ := d.Decode(dst[:0], body, 1<<20, 8192); !done {
				b.Fatal("Decode")
			}
		}
	})
}
