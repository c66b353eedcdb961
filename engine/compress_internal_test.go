package engine

// NOTE: white-box tests of compress.go: the negotiation of a reply's
// coding and the bound on an inflated body.

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// TestCompression_negotiate: the configured coding with the highest q
// wins, named or by "*", the engine's order breaking ties; q=0 refuses,
// and a malformed q counts as 0.
func TestCompression_negotiate(t *testing.T) {
	z := newCompression([]string{"zstd", "gzip"}, 1)
	for _, c := range []struct {
		ae   string
		want coding
	}{
		{"", codingIdentity},
		{"gzip", codingGzip},
		{"gzip, zstd", codingZstd},
		{"gzip;q=1, zstd;q=0.999", codingGzip},
		{"gzip;Q=0.2,zstd;q=0.1", codingGzip},
		{"zstd;q=0, gzip;q=0", codingIdentity},
		{"zstd;q=0, *;q=0.1", codingGzip},
		{"*", codingZstd},
		{"identity;q=1, *;q=0", codingIdentity},
		{"gzip;q=1.5", codingIdentity},
		{"gzip;q=0.1234", codingIdentity},
		{"gzip;level=1;q=0.5", codingGzip},
		{" , ,gzip ,", codingGzip},
		{"br;q=1, deflate", codingIdentity},
	} {
		if got := z.negotiate([]byte(c.ae)); got != c.want {
			t.Errorf("%q: %s, want %s", c.ae, got.name(), c.want.name())
		}
	}
	var off compression
	if got := off.negotiate([]byte("gzip")); got != codingIdentity {
		t.Errorf("off: %s", got.name())
	}
}

// TestCompressor_inflateStopsAtLimit: a body that inflates past the limit
// is refused having inflated at most one byte past it, whatever it would
// inflate to; one that inflates to exactly the limit is taken.
func TestCompressor_inflateStopsAtLimit(t *testing.T) {
	const limit = 1 << 20
	exact := bytes.Repeat([]byte("x"), limit)
	bomb := []byte(strings.Repeat("0", 256<<20))
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = w.Write(bomb)
	_ = w.Close()
	zw, _ := zstd.NewWriter(nil)
	zbomb := zw.EncodeAll(bomb, nil)
	zexact := zw.EncodeAll(exact, nil)
	var z compressor
	for _, c := range []struct {
		name string
		k    coding
		body []byte
	}{{"gzip", codingGzip, gz.Bytes()}, {"zstd", codingZstd, zbomb}} {
		dst, err := z.inflate(nil, c.k, c.body, limit)
		if err != errInflatedTooLarge || len(dst) > limit+1 || cap(dst) > 2*limit {
			t.Errorf("%s bomb (%d bytes): err %v, holding %d bytes (cap %d)", c.name, len(c.body), err, len(dst), cap(dst))
		}
	}
	if dst, err := z.inflate(nil, codingZstd, zexact, limit); err != nil || !bytes.Equal(dst, exact) {
		t.Errorf("exactly the limit: err %v, %d bytes", err, len(dst))
	}
}

// BenchJSON is benchJSON (compress_bench_test.go), for the tests of
// package engine_test.
var BenchJSON = benchJSON

// BenchBriefly is benchBriefly (compress_bench_test.go), for the
// external benchmarks run as tests.
var BenchBriefly = benchBriefly

// RaceEnabled is raceEnabled, for the external tests that the race
// detector makes too slow.
const RaceEnabled = raceEnabled

// FanPayload is fanPayload (prepared_internal_test.go), for the
// external fan-out benchmarks.
var FanPayload = fanPayload
