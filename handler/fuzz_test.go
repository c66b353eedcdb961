package handler_test

// Native fuzz targets: Dispatch of any message.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/parser"
)

// FuzzDispatch sends arbitrary messages to the demo methods: Dispatch must
// never panic or hang, and must answer with nothing or with valid JSON of
// the right shape: an object for a single request or a fault, an array for
// a batch, the request's id echoed byte for byte.
func FuzzDispatch(f *testing.F) {
	for _, v := range vectors(f) {
		f.Add(v.Request)
	}
	tab := demoTable(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond) // cuts sleep short
		defer cancel()
		out := tab.Dispatch(ctx, nil, msg)
		var p parser.Parser
		m := p.Parse(msg)
		if len(out) == 0 {
			if m.Kind == parser.KindInvalid {
				t.Fatalf("%q: no reply to a faulty message", msg)
			}
			if m.Kind == parser.KindSingle && !m.Request.Notification {
				t.Fatalf("%q: no reply to a request", msg)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q: reply is not JSON: %q", msg, out)
		}
		switch m.Kind {
		case parser.KindSingle:
			if m.Request.Notification {
				t.Fatalf("%q: a notification was answered: %s", msg, out)
			}
			var r struct{ ID json.RawMessage }
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%q: %s: %v", msg, out, err)
			}
			want := string(m.Request.ID)
			if want == "" {
				want = "null"
			}
			if string(r.ID) != want {
				t.Fatalf("%q: id %s, want %s", msg, r.ID, want)
			}
		case parser.KindBatch:
			if out[0] != '[' && m.Len <= tab.Options().MaxBatch {
				t.Fatalf("%q: batch answered with %s", msg, out)
			}
		default:
			if out[0] != '{' {
				t.Fatalf("%q: fault answered with %s", msg, out)
			}
		}
	})
}
