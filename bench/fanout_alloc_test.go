//go:build !race

package bench

import (
	"strconv"
	"testing"

	"github.com/gobwas/ws"
)

// TestSubscriber_zeroAllocs: reading a notification in the form a jetrpc
// server sends, checking it and recording it allocates nothing.
func TestSubscriber_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	const planned = 1000
	s := testSubscriber(planned)
	var frames [][]byte
	for seq := range planned {
		frames = append(frames, serverFrame(true, ws.OpText, []byte(testPrefix+`{"seq":`+strconv.Itoa(seq)+`,"t":1700000000000000000,"pad":"xxxxxxxx"}}}`)))
	}
	i := 0
	allocs := testing.AllocsPerRun(planned-1, func() {
		if used, _ := s.consume(nil, frames[i], 1700000000001000000); used != len(frames[i]) {
			t.Fatalf("frame %d: used %d of %d", i, used, len(frames[i]))
		}
		i++
	})
	if allocs != 0 || s.invalid != 0 || s.stats.delivered.Load() != planned {
		t.Fatalf("%v allocations per notification; %d invalid, %d delivered", allocs, s.invalid, s.stats.delivered.Load())
	}
}
