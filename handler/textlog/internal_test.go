package textlog

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// slogNeedsQuoting is log/slog's needsQuoting (text_handler.go) as it
// is, safeSet being encoding/json's: the reference for needsQuoting.
func slogNeedsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			safe := b >= 0x20 && b != '"' && b != '\\'
			if b != '\\' && (b == ' ' || b == '=' || !safe) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// slogAppendString is slog's handleState.appendString (text).
func slogAppendString(dst []byte, s string) []byte {
	if slogNeedsQuoting(s) {
		return strconv.AppendQuote(dst, s)
	}
	return append(dst, s...)
}

// stringCases returns every byte value, and some runes, at every position
// of plain strings up to 19 bytes long (each side of the 8-byte words of
// plainPrefix), and two of them together.
func stringCases() []string {
	var cs []string
	inserts := []string{"é", "\u00a0", "\u2003", "\u200b", "日", "😀", "\ufffd", "\xc3", "\xe6\x97", "\U0010FFFF", "\\\"", "= "}
	for c := range 256 {
		inserts = append(inserts, string([]byte{byte(c)}))
	}
	for n := 0; n < 20; n++ {
		base := strings.Repeat("a", n)
		for i := 0; i <= n; i++ {
			for _, ins := range inserts {
				cs = append(cs, base[:i]+ins+base[i:])
			}
		}
		cs = append(cs, base)
	}
	return cs
}

func TestNeedsQuoting_matchesSlog(t *testing.T) {
	for _, s := range stringCases() {
		if got, want := needsQuoting(s), slogNeedsQuoting(s); got != want {
			t.Errorf("needsQuoting(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestAppendString_matchesSlog(t *testing.T) {
	for _, s := range stringCases() {
		got, want := appendString([]byte("x"), s), slogAppendString([]byte("x"), s)
		if string(got) != string(want) {
			t.Errorf("appendString(%q) = %q, want %q", s, got, want)
		}
		if got, want := appendQuoted(nil, s), strconv.Quote(s); string(got) != want {
			t.Errorf("appendQuoted(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzAppendString_matchesSlog: appendString (plainPrefix, the quoting)
// writes what slog's appendString writes for any string.
func FuzzAppendString_matchesSlog(f *testing.F) {
	for _, s := range []string{"", "plain", "jetrpc: call", `a="b\c"`, "héllo wörld", "\x00\x7f\xff", "0123456789abcdef="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := appendString(nil, s), slogAppendString(nil, s)
		if string(got) != string(want) {
			t.Fatalf("appendString(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestPutBuffer_dropsLarge: a buffer grown past maxPooled is not pooled.
func TestPutBuffer_dropsLarge(t *testing.T) {
	small := getBuffer()
	putBuffer(small)
	if getBuffer() != small {
		t.Skip("the pool did not return the buffer just put (race mode, a GC)")
	}
	large := &buffer{b: make([]byte, 0, maxPooled+1)}
	putBuffer(large)
	if getBuffer() == large {
		t.Error("a buffer over maxPooled was pooled")
	}
}
