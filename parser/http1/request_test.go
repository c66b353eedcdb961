package http1_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// here returns the file:line of its caller, so that a table case records
// where it is.
func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// httpSeeds are requests (head and body) that the table tests and
// FuzzHTTPRequest share.
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

// chunkedSeeds are chunked requests with extensions and trailers, for
// FuzzHTTPRequest: the shapes the non-data bound is about.
var chunkedSeeds = []string{
	chunkedHead + "2;a=b;c=\"d e\"\r\n{}\r\n0;last\r\n\r\n",
	chunkedHead + "2 ;a\r\n{}\r\n0\r\nX-Sum: 1\r\nX-Other: two\r\n\r\n",
	chunkedHead + "2;" + strings.Repeat("e", 3000) + "\r\n{}\r\n0\r\n\r\n",
	chunkedHead + "1\r\n{\r\n1\r\n}\r\n0\r\n" + strings.Repeat("T: v\r\n", 200) + "\r\n",
	chunkedHead + "2;a\x01b\r\n{}\r\n0\r\n\r\n",
	chunkedHead + "2\r\n{}\r\n0\r\nX: a\r\n b\r\n\r\n",
	chunkedHead + " 2\r\n{}\r\n0\r\n\r\n",
}

const chunkedHead = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"

// show formats every field of r, spans as quoted strings (nil apart).
func show(r http1.Request) string {
	q := func(b []byte) string {
		if b == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("{Method:%s Target:%s ContentType:%s Upgrade:%s WSKey:%s WSVersion:%s Origin:%s Host:%s Auth:%s Traceparent:%s AcceptEncoding:%s ContentEncoding:%s Accept:%s HeadLen:%d BodyLen:%d Minor:%d Chunked:%v KeepAlive:%v Expect100:%v ConnUpgrade:%v}",
		q(r.Method), q(r.Target), q(r.ContentType), q(r.Upgrade), q(r.WSKey), q(r.WSVersion), q(r.Origin), q(r.Host), q(r.Auth), q(r.Traceparent), q(r.AcceptEncoding), q(r.ContentEncoding), q(r.Accept),
		r.HeadLen, r.BodyLen, r.Minor, r.Chunked, r.KeepAlive, r.Expect100, r.ConnUpgrade)
}

type headCase struct {
	where     string
	in        string
	status    int
	method    string
	bodyLen   int64
	chunked   bool
	keepAlive bool
}

// headCases are ParseHead's table: every refusal and the fields it reads.
var headCases = []headCase{
	{here(), httpSeeds[0], http1.StatusOK, "POST", 5, false, true},
	{here(), httpSeeds[1], http1.StatusOK, "POST", 2, false, true},
	{here(), httpSeeds[2], http1.StatusOK, "POST", -1, true, true},
	{here(), httpSeeds[3], http1.StatusOK, "GET", -1, false, true},
	{here(), httpSeeds[4], http1.StatusOK, "POST", 3, false, false},
	{here(), httpSeeds[5], http1.StatusOK, "POST", 0, false, true},
	{here(), "POST / HTTP/1.0\r\n\r\n", http1.StatusOK, "POST", -1, false, false},
	{here(), httpSeeds[6], http1.StatusBadRequest, "", 0, false, false},
	{here(), httpSeeds[7], http1.StatusBadRequest, "", 0, false, false},
	{here(), httpSeeds[8], http1.StatusBadRequest, "", 0, false, false},
	{here(), httpSeeds[9], http1.StatusBadRequest, "", 0, false, false},
	{here(), httpSeeds[10], http1.StatusVersionNotSupported, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http1.StatusNotImplemented, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost : x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST  / HTTP/1.1\r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 9000) + "\r\n\r\n", http1.StatusHeaderTooLarge, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\n", 0, "", 0, false, false},
	// Beyond the cases moved from package engine: each refusal once more,
	// and the fields around them.
	{here(), httpSeeds[12], http1.StatusOK, "GET", -1, false, true},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1234567890123456789\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 123456789012345678\r\n\r\n", http1.StatusOK, "POST", 123456789012345678, false, true},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\n\rX: a\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: a\x7fb\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: \x80\xff\r\n\r\n", http1.StatusOK, "POST", -1, false, true},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\n: a\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST /a\x01 HTTP/1.1\r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "PO(ST / HTTP/1.1\r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST /\r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1 \r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.2\r\nHost: x\r\n\r\n", http1.StatusVersionNotSupported, "", 0, false, false},
	{here(), "POST / http/1.1\r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHOST: x\r\nCONNECTION: Close\r\n\r\n", http1.StatusOK, "POST", -1, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n", http1.StatusOK, "POST", -1, false, false},
	{here(), "POST / HTTP/1.0\r\nConnection: foo,  Keep-Alive\r\n\r\n", http1.StatusOK, "POST", -1, false, true},
	{here(), "\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", http1.StatusOK, "GET", -1, false, true},
	{here(), "\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", http1.StatusBadRequest, "", 0, false, false},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 8192-33) + "\r\n\r\n", http1.StatusOK, "POST", -1, false, true},
	{here(), "POST / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 8192-32) + "\r\n\r\n", http1.StatusHeaderTooLarge, "", 0, false, false},
}

func TestParseHead(t *testing.T) {
	for _, c := range headCases {
		var r http1.Request
		var s http1.HeadScan
		st := http1.ParseHead([]byte(c.in), &s, 8192, &r)
		if st != c.status {
			t.Errorf("%s: %.50q: status %d, want %d", c.where, c.in, st, c.status)
			continue
		}
		if st != http1.StatusOK {
			continue
		}
		if string(r.Method) != c.method || r.BodyLen != c.bodyLen || r.Chunked != c.chunked || r.KeepAlive != c.keepAlive {
			t.Errorf("%s: %.50q: %+v", c.where, c.in, r)
		}
		// The same head delivered a byte at a time gives the same result.
		var r2 http1.Request
		var s2 http1.HeadScan
		st2 := 0
		for n := 1; n <= len(c.in) && st2 == 0; n++ {
			st2 = http1.ParseHead([]byte(c.in[:n]), &s2, 8192, &r2)
		}
		if st2 != st || r2.HeadLen != r.HeadLen {
			t.Errorf("%s: %.50q byte by byte: status %d headLen %d, want %d %d", c.where, c.in, st2, r2.HeadLen, st, r.HeadLen)
		}
	}
}

// TestParseHead_faultyReader re-runs every table case fed in pieces of 1,
// 2, 3 and 7 bytes, as a connection may deliver it: the status and every
// field of the Request are the same as in one piece.
func TestParseHead_faultyReader(t *testing.T) {
	for _, c := range headCases {
		var want http1.Request
		var s http1.HeadScan
		wantSt := http1.ParseHead([]byte(c.in), &s, 8192, &want)
		for _, step := range []int{1, 2, 3, 7} {
			var r http1.Request
			var s http1.HeadScan
			buf := make([]byte, 0, len(c.in))
			st := 0
			for off := 0; off < len(c.in) && st == 0; off += step {
				buf = append(buf, c.in[off:min(off+step, len(c.in))]...)
				st = http1.ParseHead(buf, &s, 8192, &r)
			}
			if st != wantSt {
				t.Errorf("%s: %.50q in pieces of %d: status %d, want %d", c.where, c.in, step, st, wantSt)
				continue
			}
			if st == http1.StatusOK && show(r) != show(want) {
				t.Errorf("%s: %.50q in pieces of %d:\n%s\nwant\n%s", c.where, c.in, step, show(r), show(want))
			}
			if st != 0 && s != (http1.HeadScan{}) {
				t.Errorf("%s: %.50q in pieces of %d: the HeadScan is not reset: %+v", c.where, c.in, step, s)
			}
		}
	}
}

// TestParseHead_fields: the spans of the fields a server reads, the
// Expect rule (ignored for HTTP/1.0) and the connection options.
func TestParseHead_fields(t *testing.T) {
	parse := func(in string) http1.Request {
		t.Helper()
		var r http1.Request
		var s http1.HeadScan
		if st := http1.ParseHead([]byte(in), &s, 8192, &r); st != http1.StatusOK {
			t.Fatalf("%q: status %d", in, st)
		}
		return r
	}
	r := parse(httpSeeds[12] + "trailing body bytes")
	if string(r.Upgrade) != "websocket" || string(r.WSKey) != "dGhlIHNhbXBsZSBub25jZQ==" || string(r.WSVersion) != "13" ||
		!r.ConnUpgrade || r.Origin != nil || r.ContentType != nil || r.HeadLen != len(httpSeeds[12]) || r.Minor != 1 || r.HasBody() {
		t.Errorf("websocket handshake: %s", show(r))
	}
	r = parse("POST /rpc?x=1&y HTTP/1.1\r\nHost: x\r\nContent-Type:  application/json; charset=utf-8 \t\r\nOrigin: https://a.example\r\nContent-Length: 0\r\n\r\n")
	if string(r.ContentType) != "application/json; charset=utf-8" || string(r.Origin) != "https://a.example" ||
		string(r.Target) != "/rpc?x=1&y" || string(r.Path()) != "/rpc" || r.HasBody() || r.BodyLen != 0 {
		t.Errorf("spans: %s, path %q", show(r), r.Path())
	}
	if r := parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n"); !r.Expect100 || !r.HasBody() {
		t.Errorf("HTTP/1.1 Expect: %+v", r)
	}
	if r := parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n"); r.Expect100 || r.Minor != 0 {
		t.Errorf("HTTP/1.0 Expect: %+v", r)
	}
	if r := parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n"); r.Expect100 {
		t.Errorf("Expect: something-else: %+v", r)
	}
	if r := parse(chunkedHead); !r.Chunked || !r.HasBody() || r.BodyLen != -1 {
		t.Errorf("chunked: %+v", r)
	}
	if r := parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n"); string(r.Path()) != "/" {
		t.Errorf("path %q", r.Path())
	}
}

// TestParseHead_maxHead: a head of exactly maxHead bytes is accepted, one
// more is refused, in one piece or byte by byte; maxHead ≤ 0 refuses all.
func TestParseHead_maxHead(t *testing.T) {
	head := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, c := range []struct {
		max  int
		want int
	}{{len(head), http1.StatusOK}, {len(head) - 1, http1.StatusHeaderTooLarge}, {0, http1.StatusHeaderTooLarge}, {-1, http1.StatusHeaderTooLarge}} {
		var r http1.Request
		var s http1.HeadScan
		if st := http1.ParseHead([]byte(head), &s, c.max, &r); st != c.want {
			t.Errorf("max %d: status %d, want %d", c.max, st, c.want)
		}
		st := 0
		for n := 1; n <= len(head) && st == 0; n++ {
			st = http1.ParseHead([]byte(head[:n]), &s, c.max, &r)
		}
		if st != c.want {
			t.Errorf("max %d byte by byte: status %d, want %d", c.max, st, c.want)
		}
	}
}

// knownFieldNames are the field names ParseHead recognises without a
// byte-by-byte scan, in lower case.
var knownFieldNames = []string{"host", "content-type", "content-length", "connection", "transfer-encoding", "expect",
	"upgrade", "sec-websocket-key", "sec-websocket-version", "origin", "authorization", "traceparent", "user-agent", "accept",
	"accept-encoding", "content-encoding"}

// sameAsReference fails t unless ParseHead gives in, in one piece, what
// RefParseHead (the parser it replaced) gives.
func sameAsReference(t *testing.T, in string) {
	t.Helper()
	var r, want http1.Request
	var s, wantS http1.HeadScan
	st := http1.ParseHead([]byte(in), &s, 8192, &r)
	if wantSt := http1.RefParseHead([]byte(in), &wantS, 8192, &want); st != wantSt {
		t.Fatalf("%q: status %d, the reference %d", in, st, wantSt)
	}
	if st == http1.StatusOK && show(r) != show(want) {
		t.Fatalf("%q:\n%s\nthe reference:\n%s", in, show(r), show(want))
	}
}

// TestParseHead_knownNames: every recognised field name is read in any
// case, whether its line is long enough to be compared a word at a time
// (a body follows) or not (the head ends the buffer), and a name that
// differs from one in any byte (same length, same first letter) is
// another field.
// A name differing from content-length in its second word ("C*B01&t-LABC0h")
// was once taken for it: the words' differences were ORed unparenthesised
// with ^, which binds like |.
func TestParseHead_knownNames(t *testing.T) {
	values := map[string]string{"content-length": "5", "transfer-encoding": "chunked", "connection": "close", "expect": "100-continue"}
	for _, name := range knownFieldNames {
		v := values[name]
		if v == "" {
			v = "v"
		}
		for _, spelling := range []string{name, strings.ToUpper(name), oddCase(name), strings.ToUpper(name[:1]) + name[1:]} {
			for _, body := range []string{"", "0123456789abcdefghijklmnopqrstuvwxyz"} {
				in := "POST / HTTP/1.1\r\nHost: h\r\n" + spelling + ": " + v + "\r\n\r\n" + body
				if name == "host" {
					in = "POST / HTTP/1.1\r\n" + spelling + ": " + v + "\r\n\r\n" + body
				}
				sameAsReference(t, in)
			}
		}
		// Every byte of the name, and its colon, replaced by every other.
		for p := range len(name) + 1 {
			for c := range 256 {
				b := []byte(name + ":")
				if b[p] == byte(c) {
					continue
				}
				b[p] = byte(c)
				for _, body := range []string{"", "0123456789abcdefghijklmnopqrstuvwxyz"} {
					sameAsReference(t, "POST / HTTP/1.0\r\n"+string(b)+" "+v+"\r\n\r\n"+body)
				}
			}
		}
	}
	if r := parseOK(t, "POST / HTTP/1.1\r\nHost: x\r\nC*B01&t-LABC0h: 9\r\n\r\n0123456789abcdefghijklmnopqrstuvwxyz"); r.BodyLen != -1 {
		t.Errorf("C*B01&t-LABC0h read as Content-Length: %d", r.BodyLen)
	}
	if r := parseOK(t, "POST / HTTP/1.1\r\nhOsT: x\r\ncOnTeNt-LeNgTh: 9\r\nCONTENT-TYPE: a/b\r\n\r\n0123456789abcdefghijklmnopqrstuvwxyz"); r.BodyLen != 9 || string(r.ContentType) != "a/b" || string(r.Host) != "x" {
		t.Errorf("odd cases: %s", show(r))
	}
}

// oddCase returns s with every other letter in upper case ("cOnTeNt-LeNgTh").
func oddCase(s string) string {
	b := []byte(s)
	for i := 1; i < len(b); i += 2 {
		if b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// parseOK parses in, which must be accepted.
func parseOK(t *testing.T, in string) http1.Request {
	t.Helper()
	var r http1.Request
	var s http1.HeadScan
	if st := http1.ParseHead([]byte(in), &s, 8192, &r); st != http1.StatusOK {
		t.Fatalf("%q: status %d", in, st)
	}
	return r
}

// TestParseHead_valueBytes: a field value and a request target are
// checked a word at a time; every byte, at every offset of the words of
// values of every length up to three words, is accepted or refused as
// the reference does (controls but HTAB, and DEL, refused; obs-text
// accepted), whether a body follows or not.
func TestParseHead_valueBytes(t *testing.T) {
	bytesToTry := []byte{0x00, 0x01, '\t', '\n', 0x0b, '\r', 0x1f, ' ', '!', ':', 0x7e, 0x7f, 0x80, 0xa0, 0xfe, 0xff}
	for n := 1; n <= 24; n++ {
		for p := range n {
			for _, c := range bytesToTry {
				v := []byte(strings.Repeat("a", n))
				v[p] = c
				for _, body := range []string{"", "0123456789abcdefghijklmnopqrstuvwxyz"} {
					sameAsReference(t, "POST / HTTP/1.1\r\nHost: x\r\nX-Value: "+string(v)+"\r\n\r\n"+body)
					sameAsReference(t, "POST / HTTP/1.1\r\nContent-Type: "+string(v)+"\r\nHost: x\r\n\r\n"+body)
					sameAsReference(t, "POST /"+string(v)+" HTTP/1.1\r\nHost: x\r\n\r\n"+body)
				}
			}
		}
	}
}

// TestParseHead_splitEverywhere: every table case and benchmark head,
// fed in two pieces split at every byte (the first piece parsed in one
// pass and found short, then resumed), gives what it gives in one piece.
func TestParseHead_splitEverywhere(t *testing.T) {
	ins := []string{}
	for _, c := range headCases {
		ins = append(ins, c.in)
	}
	for _, c := range parseHeadBenchmarks {
		ins = append(ins, c.in)
	}
	for _, in := range ins {
		var want http1.Request
		var s http1.HeadScan
		wantSt := http1.ParseHead([]byte(in), &s, 8192, &want)
		for k := range len(in) {
			var r http1.Request
			var s http1.HeadScan
			st := http1.ParseHead([]byte(in[:k]), &s, 8192, &r)
			if st == 0 {
				st = http1.ParseHead([]byte(in), &s, 8192, &r)
			}
			if st != wantSt && (st == http1.StatusOK || wantSt == http1.StatusOK) {
				t.Fatalf("%.60q split at %d: status %d, in one piece %d", in, k, st, wantSt)
			}
			if st == http1.StatusOK && show(r) != show(want) {
				t.Fatalf("%.60q split at %d:\n%s\nin one piece:\n%s", in, k, show(r), show(want))
			}
		}
	}
}
