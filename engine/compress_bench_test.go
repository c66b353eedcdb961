package engine

// NOTE: the measurements behind HTTP compression's defaults: a 100 KB
// JSON reply served raw, gzipped and zstd-compressed (server CPU and the
// bytes on the wire per request, side by side in one run), the levels of
// each coding on it, and what small replies gain (the minimum size).

import (
	"bytes"
	"context"
	"flag"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

// benchJSON is a JSON array of about n bytes, the kind of list a method
// returns (indices, hashes, statuses, values).
func benchJSON(n int) []byte {
	b := []byte{'['}
	for i := 0; len(b) < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"hash":"0x`...)
		b = strconv.AppendUint(b, uint64(i)*0x9e3779b97f4a7c15, 16)
		b = append(b, `","status":"confirmed","value":`...)
		b = strconv.AppendInt(b, int64(i*i%100003), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// benchHTTPCompression serves a request for a 100 KB reply over a fake
// connection with Accept-Encoding ae (none when empty) to an engine that
// compresses with gzip and zstd, and reports the bytes written per
// request (wire-B/op).
func benchHTTPCompression(ae string) func(*testing.B) {
	return func(b *testing.B) {
		tab := handler.NewTable(handler.WithMaxResponseSize(32<<20, 0))
		demo.Register(tab)
		big := handler.Raw(benchJSON(100_000))
		handler.RegisterNoParams(tab, "big", func(context.Context) (handler.Raw, error) { return big, nil }, handler.Inline())
		cs, fc := newFakeConnOf(b, tab, WithCompression("gzip", "zstd"))
		body := `{"jsonrpc":"2.0","method":"big","id":1}`
		field := "" // the Accept-Encoding line; b's function runs once per -count: ae itself stays as given
		if ae != "" {
			field = "Accept-Encoding: " + ae + "\r\n"
		}
		in := []byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + field + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
		step := func() {
			fc.in, fc.out = in, fc.out[:0]
			cs.traffic()
		}
		benchWire(b, step, fc, len(big), func() bool { return bytes.Contains(fc.out, []byte("200 OK")) })
	}
}

// benchWire runs step, a request and its reply over fc, once to check
// it (ok), then as the benchmark: the server's CPU (ns/op), the reply's
// size as throughput (size bytes a request), and the bytes written per
// request (wire-B/op).
func benchWire(b *testing.B, step func(), fc *fakeConn, size int, ok func() bool) {
	b.Helper()
	step()
	if len(fc.in) != 0 || !ok() {
		b.Fatalf("out %.200q, left %d", fc.out, len(fc.in))
	}
	wire := len(fc.out)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(wire), "wire-B/op")
}

// BenchmarkHTTPCompression: a 100 KB JSON reply raw, gzip and zstd at the
// engine's levels, in one run: the server's CPU (ns/op) and the bytes on
// the wire (wire-B/op) per request.
func BenchmarkHTTPCompression(b *testing.B) {
	b.Run("raw", benchHTTPCompression(""))
	b.Run("gzip", benchHTTPCompression("gzip"))
	b.Run("zstd", benchHTTPCompression("zstd"))
}

// compressLevels are the candidate levels of each coding.
var compressLevels = []struct {
	name string
	new  func() func([]byte) []byte // returns a compressor that reuses its state
}{
	{"gzip-1", gzipAt(gzip.BestSpeed)},
	{"gzip-2", gzipAt(2)},
	{"gzip-6", gzipAt(gzip.DefaultCompression)},
	{"gzip-9", gzipAt(gzip.BestCompression)},
	{"zstd-fastest", zstdAt(zstd.SpeedFastest)},
	{"zstd-default", zstdAt(zstd.SpeedDefault)},
	{"zstd-better", zstdAt(zstd.SpeedBetterCompression)},
}

func gzipAt(level int) func() func([]byte) []byte {
	return func() func([]byte) []byte {
		var w appendWriter
		gz, _ := gzip.NewWriterLevel(&w, level)
		return func(src []byte) []byte {
			w.b = w.b[:0]
			gz.Reset(&w)
			_, _ = gz.Write(src)
			_ = gz.Close()
			return w.b
		}
	}
}

func zstdAt(level zstd.EncoderLevel) func() func([]byte) []byte {
	return func() func([]byte) []byte {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		var dst []byte
		return func(src []byte) []byte {
			dst = enc.EncodeAll(src, dst[:0])
			return dst
		}
	}
}

// benchCompressBody compresses a JSON body of size bytes with compress,
// and reports the compressed size (out-B/op) and the bytes saved.
func benchCompressBody(size int, compress func() func([]byte) []byte) func(*testing.B) {
	return benchCompress(benchJSON(size), compress)
}

// benchNumbers returns a JSON array of consecutive integers of about
// size bytes, as range answers: no repeated strings for LZ matching to
// find, only digits for entropy coding.
func benchNumbers(size int) []byte {
	b := []byte{'['}
	for i := 10_000; len(b) < size; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ',')
	}
	b[len(b)-1] = ']'
	return b
}

func benchCompress(src []byte, compress func() func([]byte) []byte) func(*testing.B) {
	return func(b *testing.B) {
		f := compress()
		n := len(f(src))
		b.ReportAllocs()
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			f(src)
		}
		b.ReportMetric(float64(n), "out-B/op")
		b.ReportMetric(float64(len(src)-n), "saved-B/op")
	}
}

// BenchmarkCompressionLevels: the levels of gzip and zstd on a 100 KB
// JSON reply of records, and on 32 KiB of consecutive numbers (a part of
// range's streamed result).
func BenchmarkCompressionLevels(b *testing.B) {
	for _, l := range compressLevels {
		b.Run("records/"+l.name, benchCompressBody(100_000, l.new))
	}
	for _, l := range compressLevels {
		b.Run("numbers/"+l.name, benchCompress(benchNumbers(32<<10), l.new))
	}
}

// BenchmarkCompressionSizes: what gzip-1 and zstd save on small
// replies, and what it costs (DefaultCompressionMinSize).
func BenchmarkCompressionSizes(b *testing.B) {
	for _, size := range []int{128, 256, 512, 1024, 2048, 4096} {
		b.Run("gzip-1/"+strconv.Itoa(size), benchCompressBody(size, gzipAt(gzip.BestSpeed)))
		b.Run("zstd-default/"+strconv.Itoa(size), benchCompressBody(size, zstdAt(zstdLevel)))
	}
}

// TestBenchmarkHTTPCompression runs the benchmarks of compression briefly,
// as a test.
func TestBenchmarkHTTPCompression(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks as tests are skipped in -short mode")
	}
	benchBriefly(t, benchHTTPCompression(""), benchHTTPCompression("gzip"), benchHTTPCompression("zstd"),
		benchCompressBody(100_000, compressLevels[0].new), benchCompressBody(1024, zstdAt(zstd.SpeedFastest)))
}

// benchBriefly runs each benchmark 5 times, as a test of a
// TestBenchmarkX: a benchmark that fails fails it.
func benchBriefly(t *testing.T, fs ...func(*testing.B)) {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "5x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	for i, f := range fs {
		if r := testing.Benchmark(f); r.N == 0 {
			t.Errorf("benchmark %d failed", i)
		}
	}
}
