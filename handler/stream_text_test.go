package handler_test

// Tests of streamed texts (RegisterTextStream) and of StreamEnvelope.

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// pieces yields s cut at the given lengths, then the rest, then err
// unless nil.
func pieces(s string, cuts []int, err error) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, n := range cuts {
			n = min(n, len(s))
			if !yield(s[:n], nil) {
				return
			}
			s = s[n:]
		}
		if s != "" && !yield(s, nil) {
			return
		}
		if err != nil {
			yield("", err)
		}
	}
}

// textResult decodes the result of a reply, a JSON string.
func textResult(t *testing.T, reply string) string {
	t.Helper()
	var r struct{ Result *string }
	if err := json.Unmarshal([]byte(reply), &r); err != nil || r.Result == nil {
		t.Fatalf("not a reply with a string result (%v): %.200s", err, reply)
	}
	return *r.Result
}

// TestRegisterTextStream_joinsPiecesIntoOneString: the pieces make one
// JSON string, escaped; a UTF-8 sequence cut between pieces (at every
// place, for 2-, 3- and 4-byte sequences) is joined whole; invalid UTF-8
// and a sequence cut short at the end become U+FFFD.
func TestRegisterTextStream_joinsPiecesIntoOneString(t *testing.T) {
	tab := handler.NewTable()
	type args struct {
		Text string `json:"text"`
		Cuts []int  `json:"cuts"`
	}
	handler.RegisterTextStream(tab, "text", func(_ context.Context, p args) iter.Seq2[string, error] { return pieces(p.Text, p.Cuts, nil) })
	handler.RegisterTextStream(tab, "raw", func(_ context.Context, p [1]int) iter.Seq2[string, error] {
		return pieces([]string{"a\xffb", "ok\xe2\x82", "\xe2"}[p[0]], nil, nil)
	})
	call := func(text string, cuts []int) string {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "text", "params": args{text, cuts}, "id": 1})
		return string(tab.Dispatch(context.Background(), nil, msg))
	}
	for _, text := range []string{"", "plain", "quote \" backslash \\ newline \n tab \t nul \x00 end", "é", "€uro", "👍🏽 ok", "a\u2028b"} {
		for cut := 0; cut <= len(text); cut++ {
			for cut2 := cut; cut2 <= len(text); cut2++ {
				if got := textResult(t, call(text, []int{cut, cut2 - cut, 0})); got != text {
					t.Fatalf("%q cut at %d and %d: %q", text, cut, cut2, got)
				}
			}
		}
	}
	// Invalid UTF-8, written by hand (json.Marshal would correct it).
	for i, want := range []string{"a\uFFFDb", "ok\uFFFD\uFFFD", "\uFFFD"} { // a byte each, as in one piece
		reply := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"raw","params":[`+string(rune('0'+i))+`],"id":1}`)))
		if got := textResult(t, reply); got != want {
			t.Errorf("invalid UTF-8 %d: %q, want %q", i, got, want)
		}
	}
}

// TestRegisterTextStream_anyCutsEscapeAsOnePiece: random bytes, valid
// UTF-8 or not, cut anywhere, give the string that the whole would.
func TestRegisterTextStream_anyCutsEscapeAsOnePiece(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("a\"\\\n\xe2\x82\xac\xf0\x9f\x91\x8d\xc3\xa9\xff\x80")
	var text []byte
	var cuts []int
	tab := handler.NewTable()
	handler.RegisterTextStream(tab, "t", func(context.Context, struct{}) iter.Seq2[string, error] { return pieces(string(text), cuts, nil) })
	for range 3000 {
		text = text[:0]
		for range r.IntN(40) {
			text = append(text, alphabet[r.IntN(len(alphabet))])
		}
		cuts = cuts[:0]
		for range r.IntN(6) {
			cuts = append(cuts, r.IntN(8))
		}
		got := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"t","id":1}`)))
		want := `{"jsonrpc":"2.0","result":` + string(parser.AppendQuote(nil, string(text))) + `,"id":1}`
		if got != want {
			t.Fatalf("%q cut %v:\n%s\nwant\n%s", text, cuts, got, want)
		}
	}
}

// TestRegisterTextStream_partsThroughSink: a large text goes in parts
// that join to the reply built whole, cut at random places, and its
// failure after the first part closes the string and flags the reply.
func TestRegisterTextStream_partsThroughSink(t *testing.T) {
	var b strings.Builder
	for b.Len() < 300_000 {
		b.WriteString("line \"é€👍\" \\ \n")
	}
	text := b.String()
	r := rand.New(rand.NewPCG(1, 2))
	var cuts []int
	for n := 0; n < len(text); {
		c := 1 + r.IntN(5000)
		cuts, n = append(cuts, c), n+c
	}
	tab := handler.NewTable()
	lost := errors.New("disk gone")
	handler.RegisterTextStream(tab, "file", func(_ context.Context, p [1]bool) iter.Seq2[string, error] {
		if p[0] {
			return pieces(text, cuts, lost)
		}
		return pieces(text, cuts, nil)
	})
	sink := &partSink{}
	got, _ := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"file","params":[false],"id":2}`, sink)
	if len(sink.parts) < 5 || textResult(t, got) != text {
		t.Fatalf("%d parts; the text differs", len(sink.parts))
	}
	got, _ = runStreamed(t, tab, `{"jsonrpc":"2.0","method":"file","params":[true],"id":2}`, &partSink{})
	var failed struct {
		Result       string
		StreamStatus string          `json:"_streamStatus"`
		StreamError  json.RawMessage `json:"_streamError"`
		ID           int
	}
	if err := json.Unmarshal([]byte(got), &failed); err != nil || failed.Result != text || failed.StreamStatus != "failed" || failed.ID != 2 {
		t.Fatalf("failed after parts: %v %q %s", err, failed.StreamStatus, got[max(len(got)-200, 0):])
	}
}

// TestStreamEnvelope: a streamed array or text inside a JSON value, built
// whole and in parts, closed whole on failure; a prefix and suffix that
// do not make one value around it, and StreamEnvelope on a method that
// is not streamed, are refused at registration.
func TestStreamEnvelope(t *testing.T) {
	tab := handler.NewTable()
	var went int
	handler.RegisterStream(tab, "rows", func(_ context.Context, p [1]int) iter.Seq2[int, error] { return upTo(p[0], nil, &went) },
		handler.StreamEnvelope(`{"rows":`, `,"complete":true}`))
	handler.RegisterTextStream(tab, "doc", func(_ context.Context, p [1]int) iter.Seq2[string, error] {
		return pieces(strings.Repeat("x", p[0]), []int{7, 7000}, errors.New("cut"))
	}, handler.StreamEnvelope(`{"contents":[{"uri":"mem://doc","text":`, `}]}`))
	if got := string(tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rows","params":[3],"id":1}`))); got != `{"jsonrpc":"2.0","result":{"rows":[0,1,2],"complete":true},"id":1}` {
		t.Errorf("array in an envelope: %s", got)
	}
	got, _ := runStreamed(t, tab, `{"jsonrpc":"2.0","method":"rows","params":[50000],"id":1}`, &partSink{})
	if got != `{"jsonrpc":"2.0","result":{"rows":`+wantArray(50000)+`,"complete":true},"id":1}` {
		t.Errorf("array in an envelope, in parts: %s", got[max(len(got)-100, 0):])
	}
	got, _ = runStreamed(t, tab, `{"jsonrpc":"2.0","method":"doc","params":[100000],"id":1}`, &partSink{})
	var r struct {
		Result struct {
			Contents []struct{ URI, Text string }
		}
		StreamStatus string `json:"_streamStatus"`
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Result.Contents) != 1 || len(r.Result.Contents[0].Text) != 100000 || r.StreamStatus != "failed" {
		t.Errorf("a text in an envelope, failed after parts: %v %.200s", err, got)
	}
	for _, env := range [][2]string{{`"`, `"`}, {`{`, `}`}, {`[`, ``}, {`{"a":`, `}x`}, {`{"a":1,`, `}`}} {
		err := func() (err error) {
			defer func() { err, _ = recover().(error) }()
			handler.RegisterTextStream(handler.NewTable(), "bad", func(context.Context, struct{}) iter.Seq2[string, error] { return nil }, handler.StreamEnvelope(env[0], env[1]))
			return nil
		}()
		if !errors.Is(err, handler.ErrBadType) {
			t.Errorf("envelope %q: %v", env, err)
		}
	}
	err := func() (err error) {
		defer func() { err, _ = recover().(error) }()
		handler.Register(handler.NewTable(), "plain", func(context.Context, struct{}) (int, error) { return 1, nil }, handler.StreamEnvelope(`[`, `]`))
		return nil
	}()
	if !errors.Is(err, handler.ErrBadType) {
		t.Errorf("StreamEnvelope on Register: %v", err)
	}
}
