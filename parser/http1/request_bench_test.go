package http1_test

import (
	"flag"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// parseHeadBenchmarks are the heads BenchmarkParseHead parses: each a
// buffer as a server reads it (a head, and the body after it where there
// is one).
var parseHeadBenchmarks = []struct {
	name string
	in   string
}{
	// A client with a few fields besides the ones the parser reads.
	{"curl", "POST /rpc HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: bench/1.0\r\nAccept: */*\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n"},
	// What jetrpc bench sends, body included.
	{"jetrpc-bench", "POST / HTTP/1.1\r\nHost: 127.0.0.1:22001\r\nContent-Type: application/json\r\nContent-Length: 51\r\n\r\n" +
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`},
	// A browser's fetch from another origin: many fields, long values.
	{"browser", "POST /rpc HTTP/1.1\r\nHost: api.example.com\r\nConnection: keep-alive\r\nContent-Length: 51\r\n" +
		"sec-ch-ua: \"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\nsec-ch-ua-mobile: ?0\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n" +
		"Content-Type: application/json\r\nsec-ch-ua-platform: \"Linux\"\r\nAccept: */*\r\nOrigin: https://app.example.com\r\n" +
		"Sec-Fetch-Site: same-site\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Dest: empty\r\nReferer: https://app.example.com/\r\n" +
		"Accept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\n" +
		"Cookie: session=0123456789abcdef0123456789abcdef; theme=dark\r\n\r\n" +
		`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`},
	// A WebSocket handshake.
	{"websocket", "GET / HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://localhost:8080\r\n\r\n"},
}

// benchParseHead returns the benchmark of ParseHead on in, given whole,
// or when pieces > 1 in that many reads (the resumable path).
func benchParseHead(in string, pieces int) func(*testing.B) {
	return func(b *testing.B) {
		buf := []byte(in)
		b.ReportAllocs()
		b.SetBytes(int64(len(buf)))
		b.RunParallel(func(pb *testing.PB) {
			var r http1.Request
			var s http1.HeadScan
			for pb.Next() {
				st := 0
				for p := 1; p <= pieces && st == 0; p++ {
					st = http1.ParseHead(buf[:len(buf)*p/pieces], &s, 8192, &r)
				}
				if st != http1.StatusOK {
					b.Fatal("ParseHead", st)
				}
			}
		})
	}
}

func BenchmarkParseHead(b *testing.B) {
	for _, c := range parseHeadBenchmarks {
		b.Run(c.name, benchParseHead(c.in, 1))
	}
	b.Run("curl-in-2-pieces", benchParseHead(parseHeadBenchmarks[0].in, 2))
}

func TestBenchmarkParseHead(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "20x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	for _, c := range parseHeadBenchmarks {
		for _, pieces := range []int{1, 2} {
			if r := testing.Benchmark(benchParseHead(c.in, pieces)); r.N == 0 {
				t.Errorf("%s in %d pieces: the benchmark failed", c.name, pieces)
			}
		}
	}
}
