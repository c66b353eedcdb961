package http1_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

func BenchmarkResponseReader_next(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: jetrpc\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"result\":42,\"id\":1}")
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	var rr http1.ResponseReader
	for b.Loop() {
		if _, done, err := rr.Next(resp); !done || err != nil {
			b.Fatal("Next", err)
		}
	}
}
