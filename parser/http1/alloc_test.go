//go:build !race

package http1_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// TestHotPaths_zeroAllocs: the hot paths allocate nothing: a head parsed in one piece
// and byte by byte, a chunked body decoded into a buffer that has grown,
// the field readers, the token helpers, a status line, and a response
// framed in steady state (Content-Length and chunked).
func TestHotPaths_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	head := []byte(httpSeeds[12])
	chunked := []byte(httpSeeds[2])
	body := []byte("5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: v\r\n\r\n")
	var r http1.Request
	var s http1.HeadScan
	var d http1.ChunkedDecoder
	dst := make([]byte, 0, 64)
	var rr http1.ResponseReader
	clResp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	chResp := []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x\r\n{}\r\n0\r\n\r\n")
	line := make([]byte, 0, 64)
	list, method, value := []byte("keep-alive, Upgrade"), []byte("POST"), []byte(" Post\t")
	for name, fn := range map[string]func(){
		"ParseHead": func() {
			if http1.ParseHead(head, &s, 8192, &r) != http1.StatusOK {
				t.Fatal("ParseHead")
			}
		},
		"ParseHead byte by byte": func() {
			st := 0
			for n := 1; n <= len(chunked) && st == 0; n++ {
				st = http1.ParseHead(chunked[:n], &s, 8192, &r)
			}
			if st != http1.StatusOK {
				t.Fatal("ParseHead byte by byte")
			}
		},
		"Decode": func() {
			out, _, done, st := d.Decode(dst[:0], body, 1<<20, 8192)
			if !done || st != 0 || string(out) != "hello world" {
				t.Fatal("Decode")
			}
		},
		"Decode byte by byte": func() {
			out := dst[:0]
			from := 0
			for to := 1; to <= len(body); to++ {
				var n int
				var done bool
				out, n, done, _ = d.Decode(out, body[from:to], 1<<20, 8192)
				from += n
				if done {
					break
				}
			}
		},
		"Header and Fields": func() {
			if len(http1.Header(head, "sec-websocket-version")) != 2 {
				t.Fatal("Header")
			}
			f := http1.NewFields(head)
			for _, _, ok := f.Next(); ok; _, _, ok = f.Next() {
			}
		},
		"tokens": func() {
			if !http1.HasToken(list, "upgrade") || !http1.IsToken(method) || !http1.EqualFold(http1.TrimOWS(value), "post") {
				t.Fatal("tokens")
			}
		},
		"AppendStatusLine": func() {
			line = http1.AppendStatusLine(line[:0], http1.StatusMethodNotAllowed)
			line = http1.AppendStatusLine(line[:0], 599)
		},
		"ResponseReader": func() {
			for _, b := range [][]byte{clResp, chResp} {
				if _, done, err := rr.Next(b); !done || err != nil {
					t.Fatal("Next", err)
				}
			}
			// And fed in two pieces.
			if _, done, err := rr.Next(chResp[:len(chResp)-7]); done || err != nil {
				t.Fatal("Next, first piece", err)
			}
			if _, done, err := rr.Next(chResp); !done || err != nil {
				t.Fatal("Next, second piece", err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			fn()
			if n := testing.AllocsPerRun(100, fn); n != 0 {
				t.Errorf("%v allocs, want 0", n)
			}
		})
	}
}
