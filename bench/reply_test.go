package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// TestParseHTTPResponse_malformedSizes: a chunk size that overflows int
// used to panic the tool (slice bounds) on an event loop; oversized
// sizes, chunk data not followed by CRLF and oversized or overlong
// Content-Lengths are framing errors. The framer is now the worker's
// http1.ResponseReader, which keeps its place across reads: every case
// also runs fed a byte at a time.
func TestParseHTTPResponse_malformedSizes(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	w := newWorker(&runner{cfg: Config{Pipeline: 1}}, 0)
	for _, c := range []struct {
		name, resp string
		bad        bool
	}{
		{"size overflows int", head + "ffffffffffffffff\r\n{}\r\n0\r\n\r\n", true},
		{"size of 9 digits", head + "000000002\r\n{}\r\n0\r\n\r\n", true},
		{"size over 64 MiB", head + "4000001\r\n{}\r\n0\r\n\r\n", true},
		{"empty size", head + "\r\n{}\r\n0\r\n\r\n", true},
		{"no CRLF after the data", head + "2\r\n{}xx0\r\n\r\n", true},
		{"content-length of 11 digits", "HTTP/1.1 200 OK\r\nContent-Length: 00000000002\r\n\r\n{}", true},
		{"content-length over 64 MiB", "HTTP/1.1 200 OK\r\nContent-Length: 67108865\r\n\r\n{}", true},
		{"empty content-length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n{}", true},
		{"size of 8 digits with an extension (right)", head + "00000002;x=y\r\n{}\r\n0\r\n\r\n", false},
		{"content-length of 10 digits (right)", "HTTP/1.1 200 OK\r\nContent-Length: 0000000002\r\n\r\n{}", false},
	} {
		for _, step := range []int{len(c.resp), 1} {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s (pieces of %d): the response reader panicked: %v", c.name, step, p)
					}
				}()
				w.resp.Reset()
				var r http1.Response
				var ok bool
				var err error
				for n := min(step, len(c.resp)); ; n = min(n+step, len(c.resp)) {
					r, ok, err = w.resp.Next([]byte(c.resp[:n]))
					if ok || err != nil || n == len(c.resp) {
						break
					}
				}
				bad := err != nil
				if bad != c.bad || ok == c.bad {
					t.Errorf("%s (pieces of %d): ok=%v bad=%v (%v), want bad=%v", c.name, step, ok, bad, err, c.bad)
				}
				if !c.bad && string(r.Body) != "{}" {
					t.Errorf("%s (pieces of %d): body %q", c.name, step, r.Body)
				}
			}()
		}
	}
}

// TestInspect_replyObjects: a valid reply has jsonrpc "2.0", an id, one
// of result and error (null counts as present), and an error that is an
// object with an integer code and a string message.
func TestInspect_replyObjects(t *testing.T) {
	for _, c := range []struct {
		obj          string
		valid, isErr bool
	}{
		{`{"jsonrpc":"2.0","result":3,"id":1}`, true, false},
		{`{"jsonrpc":"2.0","result":null,"id":1}`, true, false},
		{`{"jsonrpc":"2.0","error":{"code":-32601,"message":"no","data":[1]},"id":null}`, true, true},
		{`{"jsonrpc":"2.0","result":3,"error":null,"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":null,"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":1.5,"message":"x"},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":"1","message":"x"},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":1,"message":2},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","error":{"code":1},"id":1}`, false, true},
		{`{"jsonrpc":"2.0","result":3}`, false, false},
		{`{"jsonrpc":"1.0","result":3,"id":1}`, false, false},
		{`3`, false, false},
	} {
		it := inspect([]byte(c.obj))
		if it.valid != c.valid || it.isError != c.isErr {
			t.Errorf("%s: valid %v isError %v, want %v %v", c.obj, it.valid, it.isError, c.valid, c.isErr)
		}
	}
	obj := []byte(`{"jsonrpc":"2.0","error":{"code":-32601,"message":"no"},"id":12}`)
	if n := testing.AllocsPerRun(100, func() { inspect(obj) }); n != 0 {
		t.Errorf("inspect: %v allocs", n)
	}
}

// TestRun_malformedReplyObjects: result with "error":null, and an error
// that is an empty object, passed as JSON-RPC 2.0 replies.
func TestRun_malformedReplyObjects(t *testing.T) {
	for _, reply := range []string{
		`{"jsonrpc":"2.0","result":3,"error":null,"id":%s}`,
		`{"jsonrpc":"2.0","error":{},"id":%s}`,
	} {
		addr := NewLineServer(t, func(line string, _ int) string { return fmt.Sprintf(reply, requestIDs(line)[0]) + "\n" })
		res := mustRun(t, Config{Target: "tcp://" + addr, Requests: 20, ExpectError: strings.Contains(reply, "{}")})
		if res.Errors[ErrNotJSONRPC] != 20 {
			t.Errorf("%s: errors %v, want 20 not json-rpc", reply, res.Errors)
		}
	}
}
