package pmdeflate_test

import (
	"bytes"
	"compress/flate"
	"io"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/pmdeflate"
)

// TestTailReader_inflatesAMessage: a message compressed and flushed, its
// tail removed, inflates whole through a TailReader, by Read or by
// ReadByte, and the reader is reusable.
func TestTailReader_inflatesAMessage(t *testing.T) {
	var r pmdeflate.TailReader
	for _, msg := range []string{"", "x", strings.Repeat(`{"jsonrpc":"2.0","result":[1,2,3],"id":7}`, 500)} {
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.BestSpeed)
		_, _ = w.Write([]byte(msg))
		_ = w.Flush()
		c, ok := bytes.CutSuffix(z.Bytes(), []byte(pmdeflate.Tail))
		if !ok {
			t.Fatalf("%d bytes: no tail after a flush", len(msg))
		}
		r.Reset(c)
		got, err := io.ReadAll(flate.NewReader(&r))
		if err != nil || string(got) != msg {
			t.Fatalf("%d bytes: %v, got %d bytes", len(msg), err, len(got))
		}
		r.Reset(c)
		var all []byte
		for {
			b, err := r.ReadByte()
			if err == io.EOF {
				break
			}
			all = append(all, b)
		}
		if want := string(c) + pmdeflate.Tail + "\x01\x00\x00\xff\xff"; string(all) != want {
			t.Fatalf("ReadByte: %q, want %q", all, want)
		}
	}
}
