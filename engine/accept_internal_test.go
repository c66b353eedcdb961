package engine

import "testing"

// BenchmarkAcceptOf: what reading a request's Accept costs, for the
// values clients send.
func BenchmarkAcceptOf(b *testing.B) {
	for _, v := range []string{"*/*", "application/json, text/event-stream", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"} {
		b.Run(v, func(b *testing.B) {
			a := []byte(v)
			b.ReportAllocs()
			for b.Loop() {
				if acceptOf(a, true) >= acceptNothing {
					b.Fatal("refused")
				}
			}
		})
	}
}
