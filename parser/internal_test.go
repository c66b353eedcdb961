package parser

import (
	"strings"
	"testing"
)

// TestFramer_resumes shows that a value delivered in many pieces is
// scanned once, in O(n): after each NeedMore the framer has scanned up to
// the end of what it was given and resumes there, never from the start.
func TestFramer_resumes(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat(`x\"`, 1<<18) + `",[{}]],"id":1}`)
	var f Framer
	prev := 0
	for n := 1; n < len(msg); n += 997 {
		if _, _, st := f.Next(msg[:n]); st != NeedMore {
			t.Fatalf("early %v at %d", st, n)
		}
		// Inside a string after a backslash the framer may stop one short.
		if f.pos < n-1 || f.pos < prev {
			t.Fatalf("after %d bytes the scan stopped at %d (previous %d)", n, f.pos, prev)
		}
		prev = f.pos
	}
	if _, end, st := f.Next(msg); st != Complete || end != len(msg) {
		t.Fatalf("final %v %d", st, end)
	}
	if f.pos != 0 || f.inValue {
		t.Fatalf("state not reset: %+v", f)
	}
}
