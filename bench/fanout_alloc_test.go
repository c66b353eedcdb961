//go:build !race

package bench

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gobwas/ws"
)

// TestSubscriber_zeroAllocs: reading a notification in the form a jetrpc
// server sends, checking it and recording it allocates nothing; nor does
// inflating it first when it comes compressed (permessage-deflate).
func TestSubscriber_zeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, deflate := range []bool{false, true} {
		testSubscriberAllocs(t, deflate)
	}
}

func testSubscriberAllocs(t *testing.T, deflate bool) {
	const planned = 1000
	s := testSubscriber(planned)
	s.deflate = deflate
	var frames [][]byte
	for seq := range planned {
		msg := []byte(testPrefix + `{"seq":` + strconv.Itoa(seq) + `,"t":1700000000000000000,"pad":"` + strings.Repeat("x", 500) + `"}}}`)
		if !deflate {
			frames = append(frames, serverFrame(true, ws.OpText, msg))
			continue
		}
		f := serverFrame(true, ws.OpText, deflated(t, msg))
		f[0] |= 0x40 // RSV1: compressed
		frames = append(frames, f)
	}
	i := 0
	allocs := testing.AllocsPerRun(planned-1, func() {
		if used, _ := s.consume(nil, frames[i], 1700000000001000000); used != len(frames[i]) {
			t.Fatalf("frame %d: used %d of %d", i, used, len(frames[i]))
		}
		i++
	})
	if allocs != 0 || s.invalid != 0 || s.stats.delivered.Load() != planned {
		t.Fatalf("deflate %v: %v allocations per notification; %d invalid, %d delivered", deflate, allocs, s.invalid, s.stats.delivered.Load())
	}
	if deflate && s.stats.deflated != planned {
		t.Fatalf("%d messages inflated, want %d", s.stats.deflated, planned)
	}
}
