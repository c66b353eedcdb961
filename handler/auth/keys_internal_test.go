package auth

import (
	"strings"
	"testing"
)

// TestConstantTimeEqual: equal strings of every length up to 40, and a
// difference at every position, in the word loop and in the tail.
func TestConstantTimeEqual(t *testing.T) {
	for n := 0; n <= 40; n++ {
		a := strings.Repeat("k", n)
		if !constantTimeEqual(a, strings.Clone(a)) {
			t.Fatalf("len %d: equal strings differ", n)
		}
		if constantTimeEqual(a, a+"x") || constantTimeEqual(a+"x", a) {
			t.Fatalf("len %d: strings of other lengths equal", n)
		}
		for i := 0; i < n; i++ {
			for _, c := range []byte{'j', 'K', 0, 0xff} {
				b := []byte(a)
				b[i] = c
				if constantTimeEqual(a, string(b)) {
					t.Fatalf("len %d: a difference at %d (%#x) unseen", n, i, c)
				}
			}
		}
	}
}
