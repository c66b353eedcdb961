package http1_test

import (
	"testing"

	"github.com/jetrpc/jetrpc/parser/http1"
)

func TestEqualFold(t *testing.T) {
	for _, c := range []struct {
		b, lower string
		want     bool
	}{
		{"Content-Length", "content-length", true},
		{"CONTENT-LENGTH", "content-length", true},
		{"content-length", "content-length", true},
		{"content-lengt", "content-length", false},
		{"content-length ", "content-length", false},
		{"", "", true},
		{"a", "", false},
		{"@", "`", false}, // 'A'-1 and 'a'-1 are not letters
		{"[", "{", false}, // 'Z'+1 and 'z'+1 neither
		{"\xc1", "\xe1", false},
	} {
		if got := http1.EqualFold([]byte(c.b), c.lower); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v", c.b, c.lower, got)
		}
	}
	if !http1.EqualFold(nil, "") {
		t.Error("EqualFold(nil, \"\") = false")
	}
}

func TestTrimOWS(t *testing.T) {
	for in, want := range map[string]string{
		"":            "",
		" \t ":        "",
		" a b\t":      "a b",
		"a":           "a",
		"\r a \n":     "\r a \n", // CR and LF are not OWS
		"\t\tx y \t ": "x y",
	} {
		if got := string(http1.TrimOWS([]byte(in))); got != want {
			t.Errorf("TrimOWS(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsToken(t *testing.T) {
	for in, want := range map[string]bool{
		"POST": true, "x-My_Header.1": true, "!#$%&'*+-.^_`|~": true,
		"": false, "a b": false, "a:b": false, "a\"": false, "é": false, "a\x00": false, "(x)": false,
	} {
		if got := http1.IsToken([]byte(in)); got != want {
			t.Errorf("IsToken(%q) = %v", in, got)
		}
	}
}

func TestHasToken(t *testing.T) {
	for _, c := range []struct {
		list, tok string
		want      bool
	}{
		{"close", "close", true},
		{"Keep-Alive, Upgrade", "upgrade", true},
		{"keep-alive,upgrade", "upgrade", true},
		{" \tUPGRADE\t ", "upgrade", true},
		{",,close,,", "close", true},
		{"upgraded", "upgrade", false},
		{"x-upgrade", "upgrade", false},
		{"", "close", false},
		{" , ", "close", false},
		{"websocket/13, h2c", "websocket", false},
		{"h2c, WebSocket", "websocket", true},
	} {
		if got := http1.HasToken([]byte(c.list), c.tok); got != c.want {
			t.Errorf("HasToken(%q, %q) = %v", c.list, c.tok, got)
		}
	}
}
