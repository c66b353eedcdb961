package http1_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// mediaRanges lists what Next returns for v, as "type/sub;q", and
// whether the list was malformed.
func mediaRanges(v string) ([]string, bool) {
	var got []string
	m := http1.NewMediaRanges([]byte(v))
	for typ, sub, q, ok := m.Next(); ok; typ, sub, q, ok = m.Next() {
		got = append(got, fmt.Sprintf("%s/%s;%d", typ, sub, q))
	}
	return got, m.Malformed()
}

func TestMediaRanges_lists(t *testing.T) {
	for _, c := range []struct {
		v    string
		want string // the ranges joined by spaces
	}{
		{"", ""},
		{" , ,", ""},
		{"*/*", "*/*;1000"},
		{"application/json, text/event-stream", "application/json;1000 text/event-stream;1000"},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html;1000 application/xhtml+xml;1000 application/xml;900 */*;800"},
		{"application/json, text/plain, */*", "application/json;1000 text/plain;1000 */*;1000"},
		{"text/event-stream;q=0", "text/event-stream;0"},
		{"text/*;Q=0.5", "text/*;500"},
		{"a/b ; charset=utf-8 ; q=1.000", "a/b;1000"},
		{`a/b;foo="x, y;q=0";q=0.25,c/d`, "a/b;250 c/d;1000"},
		{`a/b;foo="quoted \" pair"`, "a/b;1000"},
		{"a/b;;q=0.5;", "a/b;500"},
		{"a/b,,c/d", "a/b;1000 c/d;1000"},
		{"\ta/b\t,\tc/d\t", "a/b;1000 c/d;1000"},
	} {
		got, bad := mediaRanges(c.v)
		if bad || strings.Join(got, " ") != c.want {
			t.Errorf("%q: %q malformed %v, want %q", c.v, got, bad, c.want)
		}
	}
}

func TestMediaRanges_malformed(t *testing.T) {
	for _, v := range []string{
		"json", "application", "application/", "/json", "*/json", "text/*x", "te xt/html",
		"a/b;q=2", "a/b;q=1.5", "a/b;q=abc", "a/b;q=", "a/b;q=0.1234", "a/b;q", "a/b;=1",
		`a/b;x="open`, "a/b;x=\"bad\x01\"", "a/b c/d", "a/b;x=y z", "a/b\x00", "a/b;x=\"\\\x7f\"",
		"application/json, text/event-stream;q=x",
	} {
		if _, bad := mediaRanges(v); !bad {
			t.Errorf("%q: not malformed", v)
		}
	}
	// The ranges before the malformed element are returned.
	if got, bad := mediaRanges("a/b, c"); !bad || len(got) != 1 {
		t.Errorf("%q %v", got, bad)
	}
}

func TestParseQ(t *testing.T) {
	for v, want := range map[string]int{"0": 0, "1": 1000, "0.5": 500, "0.125": 125, "1.0": 1000, "1.000": 1000, "0.": 0} {
		if q, ok := http1.ParseQ([]byte(v)); !ok || q != want {
			t.Errorf("%q: %d %v, want %d", v, q, ok, want)
		}
	}
	for _, v := range []string{"", "2", "1.001", "0.1234", ".5", "0,5", "-0", "1.5", "01"} {
		if _, ok := http1.ParseQ([]byte(v)); ok {
			t.Errorf("%q: accepted", v)
		}
	}
}

func TestMediaRanges_zeroAllocs(t *testing.T) {
	v := []byte(`text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8;x="y"`)
	n := testing.AllocsPerRun(100, func() {
		m := http1.NewMediaRanges(v)
		for _, _, _, ok := m.Next(); ok; _, _, _, ok = m.Next() {
		}
	})
	if n != 0 {
		t.Fatalf("%v allocs", n)
	}
}

// FuzzMediaRanges: any value ends the iteration, strict and lenient,
// without panicking; every range returned is token/token (or */*,
// type/*) with a weight from 0 to 1000; a list that is not malformed
// gives the same ranges both ways, and parses again the same once
// written back from what was returned.
func FuzzMediaRanges(f *testing.F) {
	for _, s := range []string{"*/*", "application/json, text/event-stream", `a/b;x="y,z";q=0.5`, "a/b;q=2", "text/*;q=0", ",,", `a/b;x="\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m := http1.NewMediaRanges([]byte(v))
		var back []string
		for typ, sub, q, ok := m.Next(); ok; typ, sub, q, ok = m.Next() {
			if !http1.IsToken(typ) || !http1.IsToken(sub) || q < 0 || q > 1000 {
				t.Fatalf("%q: range %q/%q q %d", v, typ, sub, q)
			}
			if len(back) > len(v) {
				t.Fatalf("%q: more ranges than bytes", v)
			}
			back = append(back, fmt.Sprintf("%s/%s;q=%d.%03d", typ, sub, q/1000, q%1000))
		}
		lenient := http1.NewLenientMediaRanges([]byte(v))
		n := 0
		for typ, sub, q, ok := lenient.Next(); ok; typ, sub, q, ok = lenient.Next() {
			if n++; !http1.IsToken(typ) || !http1.IsToken(sub) || q < 0 || q > 1000 || n > len(v) {
				t.Fatalf("%q lenient: range %q/%q q %d (%d ranges)", v, typ, sub, q, n)
			}
		}
		if m.Malformed() {
			return
		}
		if n != len(back) || lenient.Malformed() {
			t.Fatalf("%q: a valid list read leniently gives %d ranges, strictly %d", v, n, len(back))
		}
		want, _ := mediaRanges(v)
		again, bad := mediaRanges(strings.Join(back, ","))
		if bad || strings.Join(again, " ") != strings.Join(want, " ") {
			t.Fatalf("%q: written back as %q, parsed %q (malformed %v), want %q", v, back, again, bad, want)
		}
	})
}
