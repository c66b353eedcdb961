//go:build !race

package natsbroker_test

import (
	"strings"
	"testing"
)

// TestPublish_noAllocation: a publication, subject included, does not
// allocate (the subject is built on the stack; the NATS client copies it
// into its buffer).
func TestPublish_noAllocation(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	srv := startNATS(t, -1)
	b := connect(t, srv, "node-a", newLogs().logger())
	payload := []byte(`{"headline":"hello","n":1}`)
	long := strings.Repeat("t", 200) // past the 32 bytes the compiler's own concatenation keeps on the stack
	for _, topic := range []string{"news", long} {
		if n := testing.AllocsPerRun(1000, func() {
			if err := b.Publish(topic, payload); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("Publish(%.10s…) allocates %v times", topic, n)
		}
	}
}
