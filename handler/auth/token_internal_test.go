package auth

import (
	"math/rand/v2"
	"testing"
)

// TestHasSpace: the word-at-a-time scan agrees with a byte loop for
// every byte value at every position of strings up to 24 bytes.
func TestHasSpace(t *testing.T) {
	naive := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' || s[i] == 0x7f {
				return true
			}
		}
		return false
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 24; n++ {
		for i := 0; i < n; i++ {
			for c := 0; c < 256; c++ {
				b := make([]byte, n)
				for j := range b {
					b[j] = byte('!' + r.IntN(0x7f-'!')) // printable, no space
					if r.IntN(8) == 0 {
						b[j] = byte(0x80 + r.IntN(0x80)) // and some bytes over 0x7f
					}
				}
				b[i] = byte(c)
				if got, want := hasSpace(string(b)), naive(string(b)); got != want {
					t.Fatalf("hasSpace(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
