package http1_test

import (
	"fmt"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// A server reads a request head as its bytes arrive, then the body.
func ExampleParseHead() {
	var s http1.HeadScan // one per connection
	var r http1.Request
	in := []byte("POST /rpc?v=2 HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\n")
	fmt.Println(http1.ParseHead(in, &s, 8192, &r)) // no blank line yet: more bytes needed
	in = append(in, "Content-Length: 2\r\nX-Request-ID: 7\r\n\r\n{}"...)
	if st := http1.ParseHead(in, &s, 8192, &r); st != http1.StatusOK {
		fmt.Printf("%s", http1.AppendStatusLine(nil, st))
		return
	}
	fmt.Printf("%s %s (path %s), body %d bytes: %s\n", r.Method, r.Target, r.Path(), r.BodyLen, in[r.HeadLen:r.HeadLen+int(r.BodyLen)])
	fmt.Printf("keep-alive %v, request ID %s\n", r.KeepAlive, http1.Header(in[:r.HeadLen], "x-request-id"))
	// Output:
	// 0
	// POST /rpc?v=2 (path /rpc), body 2 bytes: {}
	// keep-alive true, request ID 7
}

// A chunked body is decoded across reads; what a read leaves unconsumed
// stays at the start of the next.
func ExampleChunkedDecoder() {
	var d http1.ChunkedDecoder // one per connection
	var body, buf []byte
	for _, read := range []string{"7;ext\r\n{\"a\"", ":1}\r\n0\r\nX-Sum: 9\r", "\n\r\nPOST"} {
		buf = append(buf, read...)
		var n, st int
		var done bool
		body, n, done, st = d.Decode(body, buf, 1<<20, 8192)
		buf = buf[n:]
		fmt.Printf("done %v status %d body %s left %q\n", done, st, body, buf)
	}
	// Output:
	// done false status 0 body {"a" left ""
	// done false status 0 body {"a":1} left "X-Sum: 9\r"
	// done true status 0 body {"a":1} left "POST"
}

// A client frames the replies that come back on one connection.
func ExampleResponseReader() {
	var rr http1.ResponseReader // one per connection
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"result\":1}" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nC\r\n{\"result\":2}\r\n0\r\n\r\n")
	for len(in) > 0 {
		r, done, err := rr.Next(in)
		if err != nil || !done {
			fmt.Println(done, err) // read more, or close on an error
			return
		}
		fmt.Printf("%d %s close=%v\n", r.Status, r.Body, r.Close)
		in = in[r.Size:]
	}
	// Output:
	// 200 {"result":1} close=false
	// 200 {"result":2} close=true
}

func ExampleHeader() {
	head := []byte("GET / HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer abc\r\n\r\n")
	fmt.Printf("%q %q\n", http1.Header(head, "authorization"), http1.Header(head, "cookie"))
	f := http1.NewFields(head)
	for name, value, ok := f.Next(); ok; name, value, ok = f.Next() {
		fmt.Printf("%s=%s\n", name, value)
	}
	// Output:
	// "Bearer abc" ""
	// Host=example.com
	// Authorization=Bearer abc
}

func ExampleAppendStatusLine() {
	fmt.Printf("%q %s\n", http1.AppendStatusLine(nil, http1.StatusMethodNotAllowed), http1.StatusText(http1.StatusHeaderTooLarge))
	fmt.Println(http1.HasToken([]byte("keep-alive, Upgrade"), "upgrade"), http1.EqualFold([]byte("Chunked"), "chunked"))
	// Output:
	// "HTTP/1.1 405 Method Not Allowed\r\n" Request Header Fields Too Large
	// true true
}
