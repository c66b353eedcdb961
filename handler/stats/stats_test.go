package stats

import (
	"slices"
	"testing"
)

// The bounds increase, and each call returns the caller's own copy: a
// reader that changes it changes nothing for the next.
func TestBuckets_increasingAndCopied(t *testing.T) {
	d := DurationBuckets()
	if len(d) == 0 || d[0] <= 0 || !slices.IsSorted(d) || len(slices.Compact(slices.Clone(d))) != len(d) {
		t.Fatalf("DurationBuckets %v: want strictly increasing", d)
	}
	d[0] = -1
	if DurationBuckets()[0] <= 0 {
		t.Fatal("DurationBuckets shares its array with its callers")
	}
	b := BatchSizeBuckets()
	if len(b) == 0 || b[0] != 1 || len(slices.Compact(slices.Clone(b))) != len(b) || !slices.IsSorted(b) {
		t.Fatalf("BatchSizeBuckets %v: want strictly increasing from 1", b)
	}
	b[0] = -1
	if BatchSizeBuckets()[0] != 1 {
		t.Fatal("BatchSizeBuckets shares its array with its callers")
	}
}
