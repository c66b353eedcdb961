package parser_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/parser"
)

// trickyStrings are strings to quote: control characters, quotes,
// backslashes, U+2028/U+2029, HTML, invalid UTF-8, non-ASCII.
var trickyStrings = []string{
	"",
	"plain",
	`quote " backslash \ slash /`,
	"\x00\x01\x02\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x1b\x1f\x20\x7f",
	"\b\f\n\r\t",
	"<script>&amp;</script>",
	"\u2028\u2029 x\u2028y",
	"\u2027\u202a\u00a0\u0085",
	"é ü 日本語 😀 \U0010FFFF \uFFFD \uFEFF",
	"\xff",
	"a\xc3",
	"\xc3\x28",
	"\xe2\x80",
	"\xe2\x80\xa8\xe2\x80",
	"\xed\xa0\x80\xed\xb0\x80", // surrogates encoded in UTF-8
	"\xf4\x90\x80\x80",         // beyond U+10FFFF
	"\xc0\xaf",                 // overlong
	"\x80\x80\x80",
	"ok\xffok\"\\\n",
	strings.Repeat("long string with \"escapes\"\t and é ", 200),
}

// quoteStdlib is encoding/json's encoding of s with HTML escaping off.
func quoteStdlib(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatalf("encoding/json cannot encode %+q: %v", s, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// checkAppendQuote checks AppendQuote and AppendEscaped against
// encoding/json for s, and that AppendUnquote decodes the escaped text
// as encoding/json does.
func checkAppendQuote(t testing.TB, s string) {
	t.Helper()
	want := quoteStdlib(t, s)
	if !utf8.Valid(want) || !json.Valid(want) {
		t.Fatalf("encoding/json wrote invalid JSON for %+q: %s", s, want)
	}
	if got := parser.AppendQuote(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("AppendQuote(%+q)\ngot  %s\nwant %s", s, got, want)
	}
	prefix := []byte("pre")
	if got := parser.AppendQuote(prefix, s); string(got) != "pre"+string(want) {
		t.Fatalf("AppendQuote(%q, %+q) = %s", "pre", s, got)
	}
	esc := parser.AppendEscaped(nil, s)
	if !bytes.Equal(esc, want[1:len(want)-1]) {
		t.Fatalf("AppendEscaped(%+q) = %s, want %s", s, esc, want[1:len(want)-1])
	}
	var back string
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if got := string(parser.AppendUnquote(nil, esc)); got != back {
		t.Fatalf("AppendUnquote(AppendEscaped(%+q)) = %+q, want %+q", s, got, back)
	}
}

func TestAppendQuote_likeEncodingJSON(t *testing.T) {
	for _, s := range trickyStrings {
		checkAppendQuote(t, s)
	}
	for b := range 256 {
		checkAppendQuote(t, string([]byte{byte(b)}))
		checkAppendQuote(t, "a"+string([]byte{byte(b)})+"z")
	}
	for _, r := range []rune{0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0x2027, 0x2028, 0x2029, 0x202a, 0xfffd, 0xffff, 0x10000, 0x10ffff} {
		checkAppendQuote(t, string(r))
		checkAppendQuote(t, "<"+string(r)+string(r)+">")
	}
}
