package engine

import (
	"bytes"
	"testing"
)

// TestSameBytes: sameBytes is bytes.Equal for slices of one length,
// whatever byte differs, at every offset of every length to 40.
func TestSameBytes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		a := bytes.Repeat([]byte{0xA5}, n)
		if !sameBytes(a, bytes.Clone(a)) {
			t.Fatalf("len %d: equal slices differ", n)
		}
		for i := range n {
			for _, bit := range []byte{1, 0x80} {
				b := bytes.Clone(a)
				b[i] ^= bit
				if sameBytes(a, b) {
					t.Fatalf("len %d: a difference at %d (bit %#x) not seen", n, i, bit)
				}
			}
		}
	}
}
