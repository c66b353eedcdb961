package engine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

var httpSeeds = []string{
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
	"POST /rpc HTTP/1.0\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}",
	"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n",
	"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
	"\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n",
	"POST / HTTP/1.1\nHost: x\n\n",
	"POST / HTTP/2.0\r\n\r\n",
	"POST /%zz HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
}

func TestParseHead(t *testing.T) {
	cases := []struct {
		in        string
		status    int
		method    string
		bodyLen   int64
		chunked   bool
		keepAlive bool
	}{
		{httpSeeds[0], statusOK, "POST", 5, false, true},
		{httpSeeds[1], statusOK, "POST", 2, false, true},
		{httpSeeds[2], statusOK, "POST", -1, true, true},
		{httpSeeds[3], statusOK, "GET", -1, false, true},
		{httpSeeds[4], statusOK, "POST", 3, false, false},
		{httpSeeds[5], statusOK, "POST", 0, false, true},
		{"POST / HTTP/1.0\r\n\r\n", statusOK, "POST", -1, false, false},
		{httpSeeds[6], statusBadRequest, "", 0, false, false},
		{httpSeeds[7], statusBadRequest, "", 0, false, false},
		{httpSeeds[8], statusBadRequest, "", 0, false, false},
		{httpSeeds[9], statusBadRequest, "", 0, false, false},
		{httpSeeds[10], statusVersionNotSupported, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", statusNotImplemented, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", statusBadRequest, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\n", statusBadRequest, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost : x\r\n\r\n", statusBadRequest, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", statusBadRequest, "", 0, false, false},
		{"POST  / HTTP/1.1\r\nHost: x\r\n\r\n", statusBadRequest, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 9000) + "\r\n\r\n", statusHeaderTooLarge, "", 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\n", 0, "", 0, false, false},
	}
	for _, c := range cases {
		var r httpReq
		var s headScan
		st := parseHead([]byte(c.in), &s, 8192, &r)
		if st != c.status {
			t.Errorf("%.50q: status %d, want %d", c.in, st, c.status)
			continue
		}
		if st != statusOK {
			continue
		}
		if string(r.method) != c.method || r.bodyLen != c.bodyLen || r.chunked != c.chunked || r.keepAlive != c.keepAlive {
			t.Errorf("%.50q: %+v", c.in, r)
		}
		// The same head delivered a byte at a time gives the same result.
		var r2 httpReq
		var s2 headScan
		st2 := 0
		for n := 1; n <= len(c.in) && st2 == 0; n++ {
			st2 = parseHead([]byte(c.in[:n]), &s2, 8192, &r2)
		}
		if st2 != st || r2.headLen != r.headLen {
			t.Errorf("%.50q byte by byte: status %d headLen %d, want %d %d", c.in, st2, r2.headLen, st, r.headLen)
		}
	}
}

func TestDecodeChunked(t *testing.T) {
	body := "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT"
	for _, step := range []int{1, 2, 3, 7, len(body)} {
		var cs chunkState
		var out []byte
		var buf []byte
		done, consumed := false, 0
		for off := 0; off < len(body) && !done; off += step {
			buf = append(buf, body[off:min(off+step, len(body))]...)
			var n, st int
			out, n, done, st = cs.decode(out, buf, 100)
			if st != 0 {
				t.Fatalf("step %d: status %d", step, st)
			}
			buf = buf[n:]
			consumed += n
		}
		if !done || string(out) != "hello world" || consumed != strings.Index(body, "NEXT") {
			t.Fatalf("step %d: done=%v out=%q consumed=%d", step, done, out, consumed)
		}
	}
	for _, bad := range []string{"x\r\n", "5\nhello\r\n", "5\r\nhelloXX", "5\r\nhello\r\n0\r\nbad\n"} {
		var cs chunkState
		if _, _, _, st := cs.decode(nil, []byte(bad), 100); st != statusBadRequest {
			t.Errorf("%q: status %d", bad, st)
		}
	}
	var cs chunkState
	if _, _, _, st := cs.decode(nil, []byte("ff\r\n"), 100); st != statusPayloadTooLarge {
		t.Errorf("over the limit: %d", st)
	}
}

// FuzzHTTPRequest compares the framer with net/http's http.ReadRequest:
// the same verdict, method, body and framing, except where jetrpc is
// stricter on purpose (documented in stricter below).
func FuzzHTTPRequest(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r httpReq
		var s headScan
		st := parseHead(data, &s, 1<<16, &r)
		std, stdErr := http.ReadRequest(bufio.NewReaderSize(bytes.NewReader(data), len(data)+16))
		switch st {
		case 0:
			if stdErr == nil && !stricter(data) {
				t.Fatalf("%q: jetrpc needs more bytes, net/http read a request", data)
			}
			return
		case statusOK:
		default:
			if stdErr == nil && !stricter(data) {
				t.Fatalf("%q: jetrpc answers %d, net/http accepts it", data, st)
			}
			return
		}
		if stdErr != nil {
			if _, err := url.ParseRequestURI(string(r.target)); err != nil {
				return // jetrpc does not validate the target: JSON-RPC ignores it
			}
			if bytes.HasPrefix(data, []byte("\r\n")) {
				return // jetrpc skips empty lines before the request line (RFC 9112 2.2)
			}
			t.Fatalf("%q: jetrpc accepts, net/http: %v", data, stdErr)
		}
		if std.Method != string(r.method) {
			t.Fatalf("%q: method %q, net/http %q", data, r.method, std.Method)
		}
		if std.Close == r.keepAlive {
			t.Fatalf("%q: keepAlive %v, net/http Close %v", data, r.keepAlive, std.Close)
		}
		stdBody, stdBodyErr := io.ReadAll(std.Body)
		rest := data[r.headLen:]
		switch {
		case r.chunked:
			if len(std.TransferEncoding) != 1 || std.TransferEncoding[0] != "chunked" {
				t.Fatalf("%q: chunked, net/http TE %q", data, std.TransferEncoding)
			}
			var cs chunkState
			body, _, done, cst := cs.decode(nil, rest, 1<<20)
			if cst != 0 || !done {
				if stdBodyErr == nil {
					t.Fatalf("%q: chunked body status %d done %v, net/http read %q", data, cst, done, stdBody)
				}
				return
			}
			if stdBodyErr != nil || !bytes.Equal(body, stdBody) {
				t.Fatalf("%q: chunked body %q, net/http %q (%v)", data, body, stdBody, stdBodyErr)
			}
		default:
			n := max(r.bodyLen, 0)
			if std.ContentLength != n {
				t.Fatalf("%q: length %d, net/http %d", data, n, std.ContentLength)
			}
			if int64(len(rest)) < n {
				if stdBodyErr == nil || !errors.Is(stdBodyErr, io.ErrUnexpectedEOF) {
					t.Fatalf("%q: body incomplete, net/http read %q (%v)", data, stdBody, stdBodyErr)
				}
				return
			}
			if !bytes.Equal(rest[:n], stdBody) {
				t.Fatalf("%q: body %q, net/http %q", data, rest[:n], stdBody)
			}
		}
	})
}

// stricter reports the requests jetrpc refuses on purpose where net/http
// is lenient: duplicate Content-Length (even equal), Transfer-Encoding
// together with Content-Length or in HTTP/1.0, obs-fold continuation
// lines, bare LF line endings, whitespace in header names, versions other
// than 1.0 and 1.1, lengths of 19 digits.
func stricter(data []byte) bool {
	head := data
	if k := bytes.Index(data, []byte("\r\n\r\n")); k >= 0 {
		head = data[:k]
	}
	lower := bytes.ToLower(head)
	switch {
	case bytes.Count(lower, []byte("content-length:")) > 1:
		return true
	case bytes.Count(lower, []byte("\nhost:")) > 1 ||
		bytes.Count(lower, []byte("\nhost:")) == 0 && bytes.Contains(lower, []byte("http/1.1")):
		return true // net/http's server checks Host, ReadRequest does not
	case bytes.Contains(lower, []byte("transfer-encoding:")) &&
		(bytes.Contains(lower, []byte("content-length:")) || bytes.Contains(lower, []byte("http/1.0"))):
		return true
	case bytes.Contains(head, []byte("\n ")) || bytes.Contains(head, []byte("\n\t")):
		return true
	}
	for i, c := range data {
		if c == '\n' && (i == 0 || data[i-1] != '\r') {
			return true // bare LF
		}
	}
	lines := bytes.Split(head, []byte("\r\n"))
	for _, l := range lines[1:] {
		if name, _, ok := bytes.Cut(l, []byte(":")); ok && bytes.ContainsAny(name, " \t") {
			return true // a header name is a token: no whitespace (RFC 9110 5.1)
		}
	}
	line, _, _ := bytes.Cut(data, []byte("\r\n"))
	if k := bytes.LastIndexByte(line, ' '); k >= 0 {
		v := line[k+1:]
		if bytes.HasPrefix(v, []byte("HTTP/")) && string(v) != "HTTP/1.0" && string(v) != "HTTP/1.1" {
			return true
		}
	}
	return bytes.Contains(lower, []byte("content-length:")) && longLength(lower)
}

func longLength(lower []byte) bool {
	_, v, _ := bytes.Cut(lower, []byte("content-length:"))
	v, _, _ = bytes.Cut(v, []byte("\r\n"))
	return len(bytes.TrimSpace(v)) > 18
}

func TestAcceptableType_matchesHandler(t *testing.T) {
	for _, v := range []string{"", "application/json", "Application/JSON; charset=UTF-8", "application/json-rpc",
		"application/jsonrequest", "text/json", "application/xml", "application/json+x", "application/json ;q=1", " application/json"} {
		if got, want := acceptableType([]byte(v)), handler.AcceptableContentType(v); got != want {
			t.Errorf("%q: %v, handler says %v", v, got, want)
		}
	}
}
