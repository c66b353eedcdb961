package engine_test

// Benchmarks of the stream codec (stream.go), with HTTP alongside.

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
)

// BenchmarkLargeMessage: one 4 MiB message over a stream and over HTTP,
// to the reply; a stream message used to cost time quadratic in its size.
func BenchmarkLargeMessage(b *testing.B) {
	_, tcp, _ := startEngine(b, nil, engine.WithMaxMessageSize(64<<20))
	msg := `{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1,"pad":"` + strings.Repeat("x", 4<<20) + `"}`
	for _, mode := range []string{"stream", "http"} {
		req := msg + "\n"
		if mode == "http" {
			req = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg
		}
		b.Run(mode, func(b *testing.B) {
			c, err := net.Dial("tcp", tcp)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			r := bufio.NewReader(c)
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				go func() { _, _ = io.WriteString(c, req) }()
				if mode == "http" {
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				} else if _, err := r.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
