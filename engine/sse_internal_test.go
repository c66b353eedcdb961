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

// TestAppendEvent_linesAndLength: a message becomes one data line per
// line, whatever ends its lines (\n, \r, \r\n), and eventLen is the
// length appendEvent makes.
func TestAppendEvent_linesAndLength(t *testing.T) {
	for msg, want := range map[string]string{
		`{"a":1}`:     "data: {\"a\":1}\n\n",
		"a\nb":        "data: a\ndata: b\n\n",
		"a\rb":        "data: a\ndata: b\n\n",
		"a\r\nb":      "data: a\ndata: b\n\n",
		"a\n\rb\r":    "data: a\ndata: \ndata: b\ndata: \n\n",
		"\r\n\n":      "data: \ndata: \ndata: \n\n",
		"x\r\r\ny\nz": "data: x\ndata: \ndata: y\ndata: z\n\n",
	} {
		got := string(appendEvent(nil, []byte(msg)))
		if got != want || eventLen([]byte(msg)) != len(want) {
			t.Errorf("%q: %q (eventLen %d), want %q (%d)", msg, got, eventLen([]byte(msg)), want, len(want))
		}
	}
}
