package http1_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// fuzzMaxOverhead is the non-data limit of FuzzHTTPRequest's chunked
// bodies: under net/http's own bounds (a chunk line under 4096 bytes,
// 16 KiB of "excess"), so that where net/http refuses for non-data,
// jetrpc does too.
const fuzzMaxOverhead = 4000

// FuzzHTTPRequest compares the framer with net/http's http.ReadRequest:
// the same verdict, method, body and framing, except where jetrpc is
// stricter on purpose (documented in stricter and stricterChunked
// below). It also checks that the verdict does not depend on how the
// bytes are split: the head and the chunked body fed a byte at a time
// give what they give in one piece.
func FuzzHTTPRequest(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add([]byte(s))
	}
	for _, c := range headCases {
		f.Add([]byte(c.in))
	}
	for _, s := range chunkedSeeds {
		f.Add([]byte(s))
	}
	for _, c := range chunkCases {
		f.Add([]byte(chunkedHead + c.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r http1.Request
		var s http1.HeadScan
		st := http1.ParseHead(data, &s, 1<<16, &r)
		checkHeadSplit(t, data, st, &r)
		std, stdErr := http.ReadRequest(bufio.NewReaderSize(bytes.NewReader(data), len(data)+16))
		switch st {
		case 0:
			if stdErr == nil && !stricter(data) {
				t.Fatalf("%q: jetrpc needs more bytes, net/http read a request", data)
			}
			return
		case http1.StatusOK:
		default:
			if stdErr == nil && !stricter(data) {
				t.Fatalf("%q: jetrpc answers %d, net/http accepts it", data, st)
			}
			return
		}
		if stdErr != nil {
			if _, err := url.ParseRequestURI(string(r.Target)); err != nil {
				return // jetrpc does not validate the target: JSON-RPC ignores it
			}
			if bytes.HasPrefix(data, []byte("\r\n")) {
				return // jetrpc skips empty lines before the request line (RFC 9112 2.2)
			}
			t.Fatalf("%q: jetrpc accepts, net/http: %v", data, stdErr)
		}
		if std.Method != string(r.Method) {
			t.Fatalf("%q: method %q, net/http %q", data, r.Method, std.Method)
		}
		if std.Close == r.KeepAlive {
			t.Fatalf("%q: keepAlive %v, net/http Close %v", data, r.KeepAlive, std.Close)
		}
		stdBody, stdBodyErr := io.ReadAll(std.Body)
		rest := data[r.HeadLen:]
		switch {
		case r.Chunked:
			if len(std.TransferEncoding) != 1 || std.TransferEncoding[0] != "chunked" {
				t.Fatalf("%q: chunked, net/http TE %q", data, std.TransferEncoding)
			}
			var d http1.ChunkedDecoder
			body, n, done, cst := d.Decode(nil, rest, 1<<20, fuzzMaxOverhead)
			checkChunkedSplit(t, rest, decoded{string(body), n, done, cst})
			if cst != 0 || !done {
				if stdBodyErr == nil && !stricterChunked(rest, cst) {
					t.Fatalf("%q: chunked body status %d done %v, net/http read %q", data, cst, done, stdBody)
				}
				return
			}
			if stdBodyErr != nil {
				if lenientChunked(rest[:n]) {
					return
				}
				t.Fatalf("%q: chunked body %q, net/http: %v", data, body, stdBodyErr)
			}
			if !bytes.Equal(body, stdBody) {
				t.Fatalf("%q: chunked body %q, net/http %q", data, body, stdBody)
			}
		default:
			n := max(r.BodyLen, 0)
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

// FuzzParseHead_reference compares ParseHead with the parser it
// replaced (RefParseHead, kept in internal_test.go): the same status,
// the same HeadScan and, when accepted, the same Request, given the
// input in one piece or in two split anywhere, under a large head limit
// and under one that may fall anywhere in the input.
func FuzzParseHead_reference(f *testing.F) {
	for i, s := range httpSeeds {
		f.Add([]byte(s), uint16(i*7), uint16(len(s)-i))
	}
	for i, c := range headCases {
		f.Add([]byte(c.in), uint16(i*5), uint16(len(c.in)/2))
	}
	for i, c := range parseHeadBenchmarks {
		f.Add([]byte(c.in), uint16(i*11), uint16(len(c.in)-10))
	}
	f.Fuzz(func(t *testing.T, data []byte, split, maxHead uint16) {
		k := int(split) % (len(data) + 1)
		for _, max := range []int{1 << 16, int(maxHead)} {
			var r, want http1.Request
			var s, wantS http1.HeadScan
			for _, piece := range [][]byte{data[:k], data} {
				st := http1.ParseHead(piece, &s, max, &r)
				wantSt := http1.RefParseHead(piece, &wantS, max, &want)
				if st != wantSt || s != wantS {
					t.Fatalf("%q (%d bytes of it, maxHead %d): status %d, scan %+v; the reference: %d, %+v", data, len(piece), max, st, s, wantSt, wantS)
				}
				if st == http1.StatusOK && show(r) != show(want) {
					t.Fatalf("%q (%d bytes of it, maxHead %d):\n%s\nthe reference:\n%s", data, len(piece), max, show(r), show(want))
				}
				if st != 0 {
					break
				}
			}
		}
	})
}

// checkHeadSplit checks that data fed to ParseHead a byte at a time gets
// the verdict it got in one piece (st, r), and the same Request when
// accepted. (Which refusal a request with two faults gets may depend on
// the split: the one-piece path checks the size first.)
func checkHeadSplit(t *testing.T, data []byte, st int, r *http1.Request) {
	var r2 http1.Request
	var s http1.HeadScan
	st2 := 0
	for n := 1; n <= len(data) && st2 == 0; n++ {
		st2 = http1.ParseHead(data[:n], &s, 1<<16, &r2)
	}
	if (st2 == http1.StatusOK) != (st == http1.StatusOK) || st2 == 0 && st != 0 {
		t.Fatalf("%q: status %d in one piece, %d byte by byte", data, st, st2)
	}
	if st == http1.StatusOK && show(r2) != show(*r) {
		t.Fatalf("%q: in one piece %s, byte by byte %s", data, show(*r), show(r2))
	}
}

// checkChunkedSplit checks that body fed to a ChunkedDecoder a byte at a
// time gets what it got in one piece.
func checkChunkedSplit(t *testing.T, body []byte, whole decoded) {
	if got := decodeSteps(string(body), 1, 1<<20, fuzzMaxOverhead); !sameDecode(got, whole) {
		t.Fatalf("%q: chunked body in one piece %+v, byte by byte %+v", body, whole, got)
	}
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

// stricterChunked reports the chunked bodies jetrpc refuses (with status
// st) on purpose where net/http accepts them: non-data over the limit
// (413 or 431: net/http bounds it only per chunk, against the data), a
// chunk size of 16 hex digits (15 fit an int64), control characters in
// extensions, bare LF, obs-folded trailer lines, whitespace in trailer
// field names.
func stricterChunked(body []byte, st int) bool {
	if st == http1.StatusPayloadTooLarge || st == http1.StatusHeaderTooLarge {
		return true
	}
	for i, c := range body {
		if c == '\n' && (i == 0 || body[i-1] != '\r') {
			return true // bare LF: net/http's trailer reader takes it for CRLF
		}
	}
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte("\r\n"))
		size, ext, hasExt := bytes.Cut(line, []byte(";"))
		if len(bytes.TrimRight(size, " \t")) >= 16 {
			return true
		}
		if hasExt && bytes.ContainsFunc(ext, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return true
		}
		if len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
			return true // a continuation line: obs-fold in the trailers
		}
		if name, _, ok := bytes.Cut(line, []byte(":")); ok && bytes.ContainsAny(name, " \t") {
			return true // whitespace in a trailer field name (RFC 9110 5.1)
		}
		body = rest
	}
	return false
}

// lenientChunked reports the chunked bodies jetrpc accepts on purpose
// where net/http refuses them: whitespace before ';' (BWS, RFC 9112
// 7.1.1), which net/http's size parser does not skip.
func lenientChunked(body []byte) bool {
	return bytes.Contains(body, []byte(" ;")) || bytes.Contains(body, []byte("\t;"))
}
