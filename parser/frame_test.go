package parser_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser"
)

// frameAll feeds stream to a Framer in chunks of size chunk (0: all at
// once), the way an event loop does: bytes accumulate in a buffer, complete
// values are consumed from its front. It returns the values framed and the
// final status (NeedMore when the stream simply ended).
func frameAll(f *parser.Framer, stream []byte, chunk int) ([]string, parser.Status, int) {
	if chunk <= 0 {
		chunk = len(stream) + 1
	}
	var vals []string
	var buf []byte
	for off := 0; off < len(stream); off += chunk {
		buf = append(buf, stream[off:min(off+chunk, len(stream))]...)
		for {
			start, end, st := f.Next(buf)
			switch st {
			case parser.Complete:
				vals = append(vals, string(buf[start:end]))
				buf = buf[end:]
				continue
			case parser.NeedMore:
				buf = buf[end:] // leading whitespace
			default:
				return vals, st, end
			}
			break
		}
	}
	return vals, parser.NeedMore, 0
}

func TestFramer_values(t *testing.T) {
	cases := []struct {
		at     string
		stream string
		want   []string
		st     parser.Status
	}{
		{here(), "{\"a\":1}\n{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}, parser.NeedMore},
		{here(), `{}[]{"x":"}"}["]\"["]`, []string{`{}`, `[]`, `{"x":"}"}`, `["]\"["]`}, parser.NeedMore},
		{here(), "  \r\n\t[1,[2,{\"c\":[3]}]]  ", []string{`[1,[2,{"c":[3]}]]`}, parser.NeedMore},
		{here(), "1 2 true\n\"s\" null ", []string{"1", "2", "true", `"s"`, "null"}, parser.NeedMore},
		{here(), "123", nil, parser.NeedMore}, // a number at the end may go on
		{here(), "\xEF\xBB\xBF{}\n", []string{`{}`}, parser.NeedMore},
		{here(), `{"a":"\\"}` + "\n", []string{`{"a":"\\"}`}, parser.NeedMore},
		{here(), "{}\n}", []string{`{}`}, parser.Malformed},
		{here(), "{} , {}", []string{`{}`}, parser.Malformed},
		{here(), "\xEF\xBB{}", nil, parser.Malformed},
	}
	for _, c := range cases {
		for _, chunk := range []int{0, 1, 2, 3, 7} {
			var f parser.Framer
			got, st, _ := frameAll(&f, []byte(c.stream), chunk)
			if fmt.Sprint(got) != fmt.Sprint(c.want) || st != c.st {
				t.Errorf("%s chunk %d: %q → %q %v, want %q %v", c.at, chunk, c.stream, got, st, c.want, c.st)
			}
		}
	}
}

func TestFramer_malformedOffset(t *testing.T) {
	var f parser.Framer
	_, end, st := f.Next([]byte("  :"))
	if st != parser.Malformed || end != 2 {
		t.Fatalf("got %v at %d", st, end)
	}
}

func TestFramer_tooLarge(t *testing.T) {
	f := parser.Framer{MaxSize: 10}
	// Reported while the value is still arriving, before it is complete.
	_, _, st := f.Next([]byte(`{"a":"0123456789`))
	if st != parser.TooLarge {
		t.Fatalf("partial: %v", st)
	}
	f.Reset()
	if _, _, st = f.Next([]byte(`{"a":"01234"}`)); st != parser.TooLarge {
		t.Fatalf("complete: %v", st)
	}
	f.Reset()
	if s, e, st := f.Next([]byte(`{"a":"01"} `)); st != parser.Complete || s != 0 || e != 10 {
		t.Fatalf("at limit: %v %d %d", st, s, e)
	}
	f.Reset()
	// Whitespace is consumed as it comes: it never counts against the limit.
	if _, end, st := f.Next([]byte(strings.Repeat(" ", 11))); st != parser.NeedMore || end != 11 {
		t.Fatalf("whitespace: %v %d", st, end)
	}
}

func TestFramer_mismatchedBrackets(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	for _, c := range []struct {
		in   string
		want parser.Status
		at   int
	}{
		{`[1,}`, parser.Malformed, 3},
		{`{"a":[}`, parser.Malformed, 6},
		{"[\n{\"a\":1},\n{\"b\"\n]", parser.Malformed, 16},
		{deep, parser.Complete, len(deep)},
		{strings.Repeat("[", 100) + "}", parser.Malformed, 100},
		{`{"x":"}]"}`, parser.Complete, 10},
	} {
		var f parser.Framer
		_, end, st := f.Next([]byte(c.in))
		if st != c.want || end != c.at {
			t.Errorf("%.40q: %v at %d, want %v at %d", c.in, st, end, c.want, c.at)
		}
	}
}
