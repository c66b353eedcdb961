package http1_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/engine/http1"
)

func BenchmarkParseHead(b *testing.B) {
	head := []byte("POST /rpc HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: bench/1.0\r\nAccept: */*\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n")
	b.ReportAllocs()
	b.SetBytes(int64(len(head)))
	b.RunParallel(func(pb *testing.PB) {
		var r http1.Request
		var s http1.HeadScan
		for pb.Next() {
			if http1.ParseHead(head, &s, 8192, &r) != http1.StatusOK {
				b.Fatal("ParseHead")
			}
		}
	})
}
