package http1_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

const chunkedResp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

type respCase struct {
	where  string
	in     string
	status int
	body   string
	size   int // 0 means len(in)
	close  bool
	err    error
}

var respCases = []respCase{
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", status: 200, body: "{}"},
	{where: here(), in: "HTTP/1.0 200 OK\r\ncontent-length: 2\r\nConnection: Close\r\n\r\n{}", status: 200, body: "{}", close: true},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, close\r\n\r\n{}", status: 200, body: "{}", close: true},
	{where: here(), in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
	{where: here(), in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", status: 304},
	{where: here(), in: "HTTP/1.1 100 Continue\r\n\r\n", status: 100},
	{where: here(), in: "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", status: 500},
	{where: here(), in: chunkedResp + "2\r\n{}\r\n0\r\n\r\n", status: 200, body: "{}"},
	{where: here(), in: chunkedResp + "1;x=y\r\n[\r\n1\r\n]\r\n0\r\nX-T: v\r\n\r\n", status: 200, body: "[]"},
	{where: here(), in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n2\r\n{}\r\n0\r\n\r\n", status: 200, body: "{}"},
	// The limits bench always had: no int overflow, bounded sizes and
	// lengths, 64 MiB bodies.
	{where: here(), in: chunkedResp + "ffffffffffffffff\r\n{}\r\n0\r\n\r\n", err: http1.ErrChunked},
	{where: here(), in: chunkedResp + "000000002\r\n{}\r\n0\r\n\r\n", err: http1.ErrChunked},
	{where: here(), in: chunkedResp + "4000001\r\n{}\r\n0\r\n\r\n", err: http1.ErrChunked},
	{where: here(), in: chunkedResp + "\r\n{}\r\n0\r\n\r\n", err: http1.ErrChunked},
	{where: here(), in: chunkedResp + "2\r\n{}xx0\r\n\r\n", err: http1.ErrChunked},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: 00000000002\r\n\r\n{}", err: http1.ErrHeaderField},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: 67108865\r\n\r\n{}", err: http1.ErrBodyTooLarge},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n{}", err: http1.ErrHeaderField},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n{}", err: http1.ErrHeaderField},
	{where: here(), in: chunkedResp + "00000002;x=y\r\n{}\r\n0\r\n\r\n", status: 200, body: "{}"},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: 0000000002\r\n\r\n{}", status: 200, body: "{}"},
	{where: here(), in: "HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n", err: nil, status: -1},
	// Malformed heads.
	{where: here(), in: "HTTP/2.0 200 OK\r\n\r\n", err: http1.ErrStatusLine},
	{where: here(), in: "HTTP/1.1 2x0 OK\r\n\r\n", err: http1.ErrStatusLine},
	{where: here(), in: "HTTP/1.1 20\r\n\r\n", err: http1.ErrStatusLine},
	{where: here(), in: "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", err: http1.ErrHeaderField},
	{where: here(), in: "HTTP/1.1 200 OK\r\n\r\n{}", err: http1.ErrUnframed},
	{where: here(), in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n{}", err: http1.ErrUnframed},
	{where: here(), in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", err: http1.ErrHeadTooLarge},
	{where: here(), in: chunkedResp + "2;" + strings.Repeat("e", 64<<10) + "\r\n{}\r\n0\r\n\r\n", err: http1.ErrChunked},
	{where: here(), in: chunkedResp + "2\r\n{}\r\n0\r\nX: " + strings.Repeat("v", 64<<10) + "\r\n\r\n", err: http1.ErrChunked},
}

// readResponse frames in on a connection that delivers it in pieces of
// step bytes; it returns the response, or the error, and the bytes read.
func readResponse(rr *http1.ResponseReader, in string, step int) (r http1.Response, done bool, err error) {
	var buf []byte
	for off := 0; off < len(in); {
		buf = append(buf, in[off:min(off+step, len(in))]...)
		off = min(off+step, len(in))
		if r, done, err = rr.Next(buf); done || err != nil {
			return r, done, err
		}
	}
	return r, done, err
}

func TestResponseReader_next(t *testing.T) {
	for _, c := range respCases {
		for _, step := range []int{len(c.in), 1, 2, 3, 7} {
			var rr http1.ResponseReader
			r, done, err := readResponse(&rr, c.in, step)
			if c.status == -1 { // incomplete
				if done || err != nil {
					t.Errorf("%s: pieces of %d: done %v err %v, want more bytes needed", c.where, step, done, err)
				}
				continue
			}
			if !errors.Is(err, c.err) || done != (c.err == nil) {
				t.Errorf("%s: %.50q pieces of %d: done %v err %v, want err %v", c.where, c.in, step, done, err, c.err)
				continue
			}
			if err != nil {
				continue
			}
			size := c.size
			if size == 0 {
				size = len(c.in)
			}
			if r.Status != c.status || string(r.Body) != c.body || r.Size != size || r.Close != c.close {
				t.Errorf("%s: %.50q pieces of %d: %+v", c.where, c.in, step, r)
			}
		}
	}
}

// TestResponseReader_pipelined: responses one after another in one
// buffer, framed in turn; the reader reuses its chunked buffer.
func TestResponseReader_pipelined(t *testing.T) {
	var all string
	var want []respCase
	for _, c := range respCases {
		if c.err == nil && c.status > 0 {
			all += c.in
			want = append(want, c)
		}
	}
	for _, step := range []int{len(all), 1, 5} {
		var rr http1.ResponseReader
		var buf []byte
		k := 0
		for off := 0; off < len(all); {
			buf = append(buf, all[off:min(off+step, len(all))]...)
			off = min(off+step, len(all))
			for len(buf) > 0 {
				r, done, err := rr.Next(buf)
				if err != nil {
					t.Fatalf("step %d response %d: %v", step, k, err)
				}
				if !done {
					break
				}
				if r.Status != want[k].status || string(r.Body) != want[k].body {
					t.Fatalf("step %d response %d (%s): %+v", step, k, want[k].where, r)
				}
				buf = buf[r.Size:]
				k++
			}
		}
		if k != len(want) {
			t.Fatalf("step %d: %d responses, want %d", step, k, len(want))
		}
	}
}

// TestResponseReader_limits: MaxHead and MaxBody bound the head, the body
// and a chunked body's extensions and trailers, exactly; Reset makes the
// reader usable after an error.
func TestResponseReader_limits(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"
	rr := http1.ResponseReader{MaxHead: len(head), MaxBody: 4}
	if r, done, err := rr.Next([]byte(head + "abcd")); !done || err != nil || string(r.Body) != "abcd" {
		t.Fatalf("at the limits: %+v %v %v", r, done, err)
	}
	rr.MaxHead--
	if _, _, err := rr.Next([]byte(head + "abcd")); err != http1.ErrHeadTooLarge {
		t.Fatalf("head over MaxHead: %v", err)
	}
	rr.Reset()
	rr.MaxHead++
	if _, _, err := rr.Next([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde")); err != http1.ErrBodyTooLarge {
		t.Fatalf("body over MaxBody: %v", err)
	}
	rr = http1.ResponseReader{MaxHead: 50, MaxBody: 4}
	for in, wantErr := range map[string]error{
		chunkedResp + "4\r\nabcd\r\n0\r\n\r\n":                                       nil,
		chunkedResp + "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n":                             http1.ErrChunked,
		chunkedResp + "4;" + strings.Repeat("e", 49) + "\r\nabcd\r\n0\r\n\r\n":       nil,
		chunkedResp + "4;" + strings.Repeat("e", 50) + "\r\nabcd\r\n0\r\n\r\n":       http1.ErrChunked,
		chunkedResp + "4\r\nabcd\r\n0\r\nX: " + strings.Repeat("v", 45) + "\r\n\r\n": nil,
		chunkedResp + "4\r\nabcd\r\n0\r\nX: " + strings.Repeat("v", 46) + "\r\n\r\n": http1.ErrChunked,
	} {
		rr.Reset()
		if _, done, err := rr.Next([]byte(in)); err != wantErr || done != (wantErr == nil) {
			t.Errorf("%.70q: done %v err %v, want %v", in, done, err, wantErr)
		}
	}
}
