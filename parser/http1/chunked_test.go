package http1_test

import (
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// decoded is what decoding a whole chunked body gave.
type decoded struct {
	out      string
	consumed int // bytes consumed in all, when done
	done     bool
	status   int
}

// decodePieces feeds body to a ChunkedDecoder in pieces cut at the given
// offsets (increasing), as a connection would: the bytes left unconsumed
// stay at the start of the buffer, the next piece is appended.
func decodePieces(body string, cuts []int, maxBody int64, maxOverhead int) decoded {
	res, _ := feed(body, cuts, maxBody, maxOverhead)
	return res
}

// feed is decodePieces that also returns how many bytes of body were
// read when the decode ended.
func feed(body string, cuts []int, maxBody int64, maxOverhead int) (decoded, int) {
	var d http1.ChunkedDecoder
	var out, buf []byte
	var res decoded
	from := 0
	for k := 0; k <= len(cuts); k++ {
		to := len(body)
		if k < len(cuts) {
			to = cuts[k]
		}
		buf = append(buf, body[from:to]...)
		from = to
		var n int
		out, n, res.done, res.status = d.Decode(out, buf, maxBody, maxOverhead)
		buf = buf[n:]
		res.consumed += n
		if res.done || res.status != 0 {
			break
		}
	}
	res.out = string(out)
	return res, from
}

// stepCuts cuts body every step bytes.
func stepCuts(body string, step int) []int {
	var cuts []int
	for off := step; off < len(body); off += step {
		cuts = append(cuts, off)
	}
	return cuts
}

// decodeSteps feeds body in pieces of step bytes.
func decodeSteps(body string, step int, maxBody int64, maxOverhead int) decoded {
	return decodePieces(body, stepCuts(body, step), maxBody, maxOverhead)
}

type chunkCase struct {
	where  string
	body   string
	want   decoded
	max    int64 // maxBody; 0 means 100
	maxOvh int   // maxOverhead; 0 means 64
}

// chunkCases are ChunkedDecoder's table. Each body is followed by bytes of
// the next request ("NEXT") where it ends.
var chunkCases = []chunkCase{
	{where: here(), body: "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT", want: decoded{"hello world", 44, true, 0}},
	{where: here(), body: "0\r\n\r\nNEXT", want: decoded{"", 5, true, 0}},
	{where: here(), body: "A\r\n0123456789\r\n0\r\n\r\n", want: decoded{"0123456789", 20, true, 0}},
	{where: here(), body: "a\r\n0123456789\r\n000\r\n\r\n", want: decoded{"0123456789", 22, true, 0}},
	{where: here(), body: "2 \t;a=b ; c=\"d;e\"\t\r\n{}\r\n0 \r\n\r\n", want: decoded{"{}", 30, true, 0}},
	{where: here(), body: "2;\x80\xff\r\n{}\r\n0\r\nX-A: \x80 b\t\r\nX-B:\r\n\r\n", want: decoded{"{}", 32, true, 0}},
	{where: here(), body: "5\r\nhello\r\n0\r\n", want: decoded{"hello", 13, false, 0}},
	// Malformed.
	{where: here(), body: "x\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: " 5\r\nhello\r\n0\r\n\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5x\r\nhello\r\n0\r\n\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5 x\r\nhello\r\n0\r\n\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5\nhello\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5\r\r\nhello\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5;a\rb\r\nhello\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5;a\x00b\r\nhello\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5;a\x7f\r\nhello\r\n", want: decoded{status: http1.StatusBadRequest}},
	{where: here(), body: "5\r\nhelloXX", want: decoded{"hello", 3 + 5, false, http1.StatusBadRequest}},
	{where: here(), body: "5\r\nhello\rX", want: decoded{"hello", 3 + 5, false, http1.StatusBadRequest}},
	{where: here(), body: "5\r\nhello\r\n0\r\nbad\n", want: decoded{"hello", 13, false, http1.StatusBadRequest}},
	{where: here(), body: "0\r\nX: a\r\n b\r\n\r\n", want: decoded{"", 9, false, http1.StatusBadRequest}},
	{where: here(), body: "0\r\nX : a\r\n\r\n", want: decoded{"", 3, false, http1.StatusBadRequest}},
	{where: here(), body: "0\r\n: a\r\n\r\n", want: decoded{"", 3, false, http1.StatusBadRequest}},
	{where: here(), body: "0\r\nX: a\x01\r\n\r\n", want: decoded{"", 3, false, http1.StatusBadRequest}},
	{where: here(), body: "0\r\nX: a\r\n\rX", want: decoded{"", 9, false, http1.StatusBadRequest}},
	{where: here(), body: "0\r\n\n", want: decoded{"", 3, false, http1.StatusBadRequest}},
	{where: here(), body: "1000000000000000\r\n", want: decoded{status: http1.StatusBadRequest}}, // 16 digits
	{where: here(), body: "000000000000001\r\nx\r\n0\r\n\r\n", want: decoded{"x", 25, true, 0}, max: 1},
	// Over the limits.
	{where: here(), body: "ff\r\n", want: decoded{consumed: 4, status: http1.StatusPayloadTooLarge}},
	{where: here(), body: "32\r\n" + strings.Repeat("a", 50) + "\r\n33\r\n", want: decoded{strings.Repeat("a", 50), 60, false, http1.StatusPayloadTooLarge}},
	{where: here(), body: "64\r\n" + strings.Repeat("a", 100) + "\r\n0\r\n\r\n", want: decoded{strings.Repeat("a", 100), 111, true, 0}},
	{where: here(), body: "1\r\na\r\n0\r\n\r\n", want: decoded{consumed: 3, status: http1.StatusPayloadTooLarge}, max: -1},
	{where: here(), body: "0\r\n\r\n", want: decoded{"", 5, true, 0}, max: -1},
	{where: here(), body: "1;" + strings.Repeat("e", 63) + "\r\na\r\n0\r\n\r\n", want: decoded{"a", 75, true, 0}},
	{where: here(), body: "1;" + strings.Repeat("e", 64) + "\r\na\r\n0\r\n\r\n", want: decoded{status: http1.StatusPayloadTooLarge}},
	{where: here(), body: "1" + strings.Repeat(" ", 65) + "\r\na\r\n0\r\n\r\n", want: decoded{status: http1.StatusPayloadTooLarge}},
	{where: here(), body: "1;a\r\na\r\n0;" + strings.Repeat("e", 61) + "\r\n\r\n", want: decoded{"a", 75, true, 0}},
	{where: here(), body: "1;a\r\na\r\n0;" + strings.Repeat("e", 62) + "\r\n\r\n", want: decoded{"a", 8, false, http1.StatusPayloadTooLarge}},
	{where: here(), body: "0\r\nX: " + strings.Repeat("v", 59) + "\r\n\r\n", want: decoded{"", 69, true, 0}},
	{where: here(), body: "0\r\nX: " + strings.Repeat("v", 60) + "\r\n\r\n", want: decoded{"", 3, false, http1.StatusHeaderTooLarge}},
	{where: here(), body: "0;" + strings.Repeat("e", 57) + "\r\nX: v\r\n\r\n", want: decoded{"", 69, true, 0}},
	{where: here(), body: "0;" + strings.Repeat("e", 58) + "\r\nX: v\r\n\r\n", want: decoded{"", 62, false, http1.StatusHeaderTooLarge}},
	{where: here(), body: "0\r\n" + strings.Repeat("X", 65) + "\r\n\r\n", want: decoded{"", 3, false, http1.StatusHeaderTooLarge}},
	{where: here(), body: "1;a\r\na\r\n0\r\nX: v\r\n\r\n", want: decoded{status: http1.StatusPayloadTooLarge}, maxOvh: -1},
	{where: here(), body: "1\r\na\r\n0\r\nX: v\r\n\r\n", want: decoded{"a", 9, false, http1.StatusHeaderTooLarge}, maxOvh: -1},
	{where: here(), body: "1\r\na\r\n0\r\n\r\n", want: decoded{"a", 11, true, 0}, maxOvh: -1},
}

func (c chunkCase) limits() (int64, int) {
	maxBody, maxOvh := c.max, c.maxOvh
	if maxBody == 0 {
		maxBody = 100
	}
	switch maxOvh {
	case 0:
		maxOvh = 64
	case -1:
		maxOvh = 0
	}
	return maxBody, maxOvh
}

func TestChunkedDecoder_decode(t *testing.T) {
	for _, c := range chunkCases {
		maxBody, maxOvh := c.limits()
		got := decodeSteps(c.body, len(c.body), maxBody, maxOvh)
		if got.status != 0 {
			// Where a refused body stopped is not part of the contract
			// (the connection closes); what was decoded is.
			got.consumed, c.want.consumed = 0, 0
		}
		if got != c.want {
			t.Errorf("%s: %.60q: %+v, want %+v", c.where, c.body, got, c.want)
		}
	}
}

// TestChunkedDecoder_faultyReader re-runs every table case fed in pieces
// of 1, 2, 3 and 7 bytes, and cut in two at every offset: the result,
// status included, is the same as in one piece.
func TestChunkedDecoder_faultyReader(t *testing.T) {
	for _, c := range chunkCases {
		maxBody, maxOvh := c.limits()
		want := decodeSteps(c.body, len(c.body), maxBody, maxOvh)
		for _, step := range []int{1, 2, 3, 7} {
			if got := decodeSteps(c.body, step, maxBody, maxOvh); !sameDecode(got, want) {
				t.Errorf("%s: %.60q in pieces of %d: %+v, want %+v", c.where, c.body, step, got, want)
			}
		}
		for cut := 1; cut < len(c.body); cut++ {
			if got := decodePieces(c.body, []int{cut}, maxBody, maxOvh); !sameDecode(got, want) {
				t.Errorf("%s: %.60q cut at %d: %+v, want %+v", c.where, c.body, cut, got, want)
			}
		}
	}
}

// sameDecode compares two decodes; where a refused body stopped may
// differ (the data decoded before the refusal too: a refusal found in an
// earlier piece stops before data that a later piece would have added).
func sameDecode(a, b decoded) bool {
	if a.status != 0 || b.status != 0 {
		return a.status == b.status && a.done == b.done
	}
	return a == b
}

// TestChunkedDecoder_extensionsBounded: CVE-2023-39326's class. 16 MiB
// of chunk extensions for a 16-byte body were read and the body
// accepted (only an incomplete size line had a limit); now extensions
// count against maxOverhead in total, and the decoder stops within it.
func TestChunkedDecoder_extensionsBounded(t *testing.T) {
	const maxOverhead = 8 << 10
	ext := ";" + strings.Repeat("e", 1000)
	var many strings.Builder // 16 chunks of 1 byte, each with ~1 MiB of extensions in 1000-byte pieces
	for range 16 {
		many.WriteString("1")
		for range 1 << 10 {
			many.WriteString(ext)
		}
		many.WriteString("\r\nx\r\n")
	}
	many.WriteString("0\r\n\r\n")
	var small strings.Builder // the same in 16 Ki chunks with 1000-byte extensions
	for range 16 << 10 {
		small.WriteString("1" + ext + "\r\nx\r\n")
	}
	small.WriteString("0\r\n\r\n")
	for name, body := range map[string]string{
		"1 MiB per chunk":   many.String(),
		"1000 B per chunk":  small.String(),
		"16 MiB on the end": "10\r\n0123456789abcdef\r\n0;" + strings.Repeat("e", 16<<20) + "\r\n\r\n",
	} {
		for _, step := range []int{64 << 10, len(body)} {
			got, read := feed(body, stepCuts(body, step), 1<<20, maxOverhead)
			if got.status != http1.StatusPayloadTooLarge {
				t.Errorf("%s in pieces of %d: %+v, want 413", name, step, got)
			}
			if read > maxOverhead+step+64<<10 {
				t.Errorf("%s in pieces of %d: read %d bytes before refusing", name, step, read)
			}
		}
	}
}

// TestChunkedDecoder_trailersBounded: CVE-2024-22019's class. 16 MiB of
// trailer fields were read (only an incomplete field line had a limit);
// now they count against maxOverhead in total.
func TestChunkedDecoder_trailersBounded(t *testing.T) {
	const maxOverhead = 8 << 10
	for name, body := range map[string]string{
		"many fields": "10\r\n0123456789abcdef\r\n0\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("v", 100)+"\r\n", 16<<20/109) + "\r\n",
		"one field":   "10\r\n0123456789abcdef\r\n0\r\nX-Pad: " + strings.Repeat("v", 16<<20) + "\r\n\r\n",
	} {
		for _, step := range []int{64 << 10, len(body)} {
			got, read := feed(body, stepCuts(body, step), 1<<20, maxOverhead)
			if got.status != http1.StatusHeaderTooLarge {
				t.Errorf("%s in pieces of %d: %+v, want 431", name, step, got)
			}
			if read > maxOverhead+step+64<<10 {
				t.Errorf("%s in pieces of %d: read %d bytes before refusing", name, step, read)
			}
		}
	}
}

// TestChunkedDecoder_splitInvariant: a 60 KiB extension was accepted when
// it arrived in one read (a complete line had no limit) and refused when
// split across two (an incomplete one had). Now both are refused, at
// every split: pieces of 1, 2, 3, 7 bytes and around the limit, and two
// pieces cut at offsets of every class (inside the size, the extension,
// around the limit, the CRLF, the data).
func TestChunkedDecoder_splitInvariant(t *testing.T) {
	const maxOverhead = 8 << 10
	body := "2;" + strings.Repeat("e", 60<<10) + "\r\n{}\r\n0\r\n\r\n"
	want := decoded{status: http1.StatusPayloadTooLarge}
	for _, step := range []int{1, 2, 3, 7, 512, 1024, maxOverhead - 1, maxOverhead, maxOverhead + 1, maxOverhead + 2, 60 << 10, len(body) - 1, len(body)} {
		if got := decodeSteps(body, step, 1<<20, maxOverhead); got != want {
			t.Errorf("in pieces of %d: %+v, want %+v", step, got, want)
		}
	}
	var cuts []int
	for k := 1; k < 40; k++ {
		cuts = append(cuts, k, maxOverhead-20+k, len(body)-k)
	}
	for k := 997; k < len(body); k += 997 {
		cuts = append(cuts, k)
	}
	for _, cut := range cuts {
		if got := decodePieces(body, []int{cut}, 1<<20, maxOverhead); got != want {
			t.Errorf("cut at %d: %+v, want %+v", cut, got, want)
		}
	}
	// The same body with a limit above its extension: accepted, at every
	// split.
	ok := decoded{"{}", len(body), true, 0}
	for _, step := range []int{1, 7, maxOverhead + 1, len(body)} {
		if got := decodeSteps(body, step, 1<<20, 61<<10); got != ok {
			t.Errorf("limit 61 KiB, pieces of %d: %+v, want %+v", step, got, ok)
		}
	}
}

// TestChunkedDecoder_normalNonData: the extensions and trailers real
// clients send are accepted under a server's 8 KiB limit.
func TestChunkedDecoder_normalNonData(t *testing.T) {
	body := "7;name=value;q=\"quoted; string\"\r\n{\"a\":1}\r\n3;last\r\n[1]\r\n0\r\nExpires: Wed, 21 Oct 2015 07:28:00 GMT\r\nX-Checksum: sha256=abc\r\n\r\n"
	want := decoded{"{\"a\":1}[1]", len(body), true, 0}
	for _, step := range []int{1, 3, len(body)} {
		if got := decodeSteps(body, step, 1<<20, 8<<10); got != want {
			t.Errorf("pieces of %d: %+v, want %+v", step, got, want)
		}
	}
}

// TestChunkedDecoder_reuse: after a body ends the decoder is ready for
// the next one, its count of data and non-data started afresh; after a
// refusal, Reset makes it ready.
func TestChunkedDecoder_reuse(t *testing.T) {
	var d http1.ChunkedDecoder
	body := []byte("5;" + strings.Repeat("e", 60) + "\r\nhello\r\n0\r\n\r\n")
	for i := range 3 {
		out, n, done, st := d.Decode(nil, body, 5, 64)
		if string(out) != "hello" || n != len(body) || !done || st != 0 {
			t.Fatalf("body %d: %q %d %v %d", i, out, n, done, st)
		}
	}
	if _, _, _, st := d.Decode(nil, []byte("5\r\nhel"), 4, 64); st != http1.StatusPayloadTooLarge {
		t.Fatalf("over maxBody: %d", st)
	}
	d.Reset()
	if out, _, done, st := d.Decode(nil, body, 5, 64); string(out) != "hello" || !done || st != 0 {
		t.Fatalf("after Reset: %q %v %d", out, done, st)
	}
}
