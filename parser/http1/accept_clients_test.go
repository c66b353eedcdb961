package http1_test

// Tests of MediaRanges and ParseQ (accept.go) on the values real
// clients send, on what RFC 9110 calls malformed, and of the lenient
// iteration that passes over it.

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

// TestMediaRanges_realClientValues: the Accept values real clients send
// parse as the ranges they list.
func TestMediaRanges_realClientValues(t *testing.T) {
	for v, want := range map[string]string{
		"application/json;charset=utf-8":                     "application/json;1000",
		"application/json; charset=\"utf-8\"":                "application/json;1000",
		"application/json, text/plain, */*":                  "application/json;1000 text/plain;1000 */*;1000",
		"application/json, text/javascript, */*; q=0.01":     "application/json;1000 text/javascript;1000 */*;10",
		"application/json, */*;q=0.5":                        "application/json;1000 */*;500",
		"application/json, text/event-stream":                "application/json;1000 text/event-stream;1000",
		"text/event-stream, application/json;q=0.9":          "text/event-stream;1000 application/json;900",
		"application/vnd.api+json; ext=\"a;b,c\"; q=1.":      "application/vnd.api+json;1000",
		"text/html; level=1; q=0.7, text/*;q=0.3":            "text/html;700 text/*;300",
		"a/b;x=\"\xc3\xa9\"":                                 "a/b;1000", // obs-text in a quoted string
		"a/b;x=\"\\\"\\\\\"":                                 "a/b;1000", // quoted pairs
		"application/json;q=0.000":                           "application/json;0",
		"APPLICATION/JSON;Q=0.5":                             "APPLICATION/JSON;500",
		"application/json\t;\tq=0.5\t,\ttext/event-stream\t": "application/json;500 text/event-stream;1000",
	} {
		got, bad := mediaRanges(v)
		if bad || strings.Join(got, " ") != want {
			t.Errorf("%q: %q malformed %v, want %q", v, got, bad, want)
		}
	}
}

// TestMediaRanges_malformedPerRFC9110: values RFC 9110 does not allow
// (Java's default "*; q=.2", whitespace around "=", a quoted q, a
// parameter with no name or value) are malformed, and every prefix of
// any value ends the iteration without a panic.
func TestMediaRanges_malformedPerRFC9110(t *testing.T) {
	for _, v := range []string{
		"text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2",
		"*", "a/b; q = 0.5", `a/b;q="0.5"`, "a/b;q=0.5x", "a/b;=", "a/b;x=",
		"a/b;q=1.0001", "a/b/c", "a/*b", "*/b", "\"a\"/b",
	} {
		if _, bad := mediaRanges(v); !bad {
			t.Errorf("%q: not malformed", v)
		}
	}
	for _, v := range []string{
		`text/html;level="x\"y";q=0.5, application/json;charset=utf-8, */*;q=0.1`,
		"text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2",
		`a/b;x="\`,
	} {
		for i := range len(v) + 1 {
			mediaRanges(v[:i])
		}
	}
}

// TestParseQ_boundaries: "0." and "1." are qvalues (RFC 9110 12.4.2),
// "1.000" is the largest; nothing past 1 or with four decimals is.
func TestParseQ_boundaries(t *testing.T) {
	for v, want := range map[string]int{"0.": 0, "1.": 1000, "0.001": 1, "0.999": 999, "1.000": 1000, "0.1": 100, "0.01": 10} {
		if q, ok := http1.ParseQ([]byte(v)); !ok || q != want {
			t.Errorf("%q: %d %v, want %d", v, q, ok, want)
		}
	}
	for _, v := range []string{"1.001", "1.1", "0.0001", "1.0000", " 1", "1 ", "+1", "0x1", "1e0"} {
		if _, ok := http1.ParseQ([]byte(v)); ok {
			t.Errorf("%q: accepted", v)
		}
	}
}

// TestLenientMediaRanges_passOverWhatIsNotARange: the lenient iterator
// returns the ranges around elements that are not ranges (a quoted comma
// inside one kept with it), reads loose weights as meant, and reports
// Malformed; one whose elements are all malformed returns none.
func TestLenientMediaRanges_passOverWhatIsNotARange(t *testing.T) {
	for _, c := range []struct{ v, want string }{
		{"text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2", "text/html;1000 image/gif;1000 image/jpeg;1000 */*;200"},
		{`json, a/b;x="1,2", c/d;q=0.2500`, "a/b;1000 c/d;250"},
		{"a/b;q=2, c/d;q=abc, e/f;q=.5", "e/f;500"},
		{`a/b;x="open, c/d`, ""},
		{"json", ""},
	} {
		m := http1.NewLenientMediaRanges([]byte(c.v))
		var got []string
		for typ, sub, q, ok := m.Next(); ok; typ, sub, q, ok = m.Next() {
			got = append(got, string(typ)+"/"+string(sub)+";"+strconv.Itoa(q))
		}
		if strings.Join(got, " ") != c.want || !m.Malformed() {
			t.Errorf("%q: %q malformed %v, want %q", c.v, got, m.Malformed(), c.want)
		}
	}
}
