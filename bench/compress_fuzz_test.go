package bench

import (
	"bytes"
	"testing"
)

// FuzzDecoder: whatever a server sends as a compressed body, the decoder
// neither panics nor returns more than its limit, and a decoder that
// failed decodes the next body right.
func FuzzDecoder(f *testing.F) {
	body := []byte(`{"jsonrpc":"2.0","result":"` + bigEcho(2000) + `","id":1}`)
	f.Add(uint8(codingGzip), gzipped(f, body))
	f.Add(uint8(codingZstd), zstded(f, body))
	f.Add(uint8(0), deflated(f, body))
	f.Add(uint8(codingGzip), []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add(uint8(0), []byte{0xff, 0xff, 0xff})
	good := deflated(f, body)
	f.Fuzz(func(t *testing.T, k uint8, in []byte) {
		d := decoder{max: 4096}
		var out []byte
		var err error
		switch coding(k % 3) {
		case codingGzip:
			out, err = d.decode(codingGzip, in)
		case codingZstd:
			out, err = d.decode(codingZstd, in)
		default:
			out, err = d.inflate(in)
		}
		if err == nil && len(out) > d.max {
			t.Fatalf("%d bytes out, limit %d", len(out), d.max)
		}
		d.max = 0
		if got, err := d.inflate(good); err != nil || string(got) != string(body) {
			t.Fatalf("after that, a good message: %d bytes, err %v", len(got), err)
		}
	})
}

// FuzzContentCoding: any response head is read without a panic, and a
// head without a Content-Encoding field has no coding.
func FuzzContentCoding(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\ncontent-encoding:zstd \r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\n",
		"\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		k := contentCoding(head)
		if k != codingNone && !bytes.Contains(bytes.ToLower(head), []byte("content-encoding")) {
			t.Fatalf("%q: coding %d without the field", head, k)
		}
	})
}
