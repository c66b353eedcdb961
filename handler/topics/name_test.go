package topics

// Tests of topic names (name.go), each case with its file:line.

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	long := strings.Repeat("a", MaxLen)
	for _, c := range []struct {
		name string
		ok   bool
		at   string
	}{
		{"", false, rlHere()},
		{"a", true, rlHere()},
		{"Z9", true, rlHere()},
		{long, true, rlHere()},
		{long + "a", false, rlHere()},
		{long[:MaxLen-2] + ".b", true, rlHere()},
		{long[:MaxLen-1] + ".", false, rlHere()},
		{long + ".b", false, rlHere()},
		{"news.eu.sport", true, rlHere()},
		{".", false, rlHere()},
		{".a", false, rlHere()},
		{"a.", false, rlHere()},
		{"a..b", false, rlHere()},
		{"..", false, rlHere()},
		{"a b", false, rlHere()},
		{" a", false, rlHere()},
		{"a ", false, rlHere()},
		{"a\tb", false, rlHere()},
		{"a\nb", false, rlHere()},
		{"a\x00", false, rlHere()},
		{"*", false, rlHere()},
		{"a.*", false, rlHere()},
		{"a*b", false, rlHere()},
		{">", false, rlHere()},
		{"a.>", false, rlHere()},
		{"é", false, rlHere()},
		{"caf\u00e9", false, rlHere()},
		{"a\xffb", false, rlHere()},
		{"日本", false, rlHere()},
		{"_", true, rlHere()},
		{"-", true, rlHere()},
		{":", true, rlHere()},
		{"/", true, rlHere()},
		{"=", true, rlHere()},
		{"+", true, rlHere()},
		{"@", true, rlHere()},
		{"a_b-c:d/e=f+g@h.I_J", true, rlHere()},
		{"user:42.orders/new", true, rlHere()},
		{"$SYS", false, rlHere()},
		{"a#", false, rlHere()},
		{"a%", false, rlHere()},
		{"a&", false, rlHere()},
		{"a,b", false, rlHere()},
		{"a;b", false, rlHere()},
		{"a!", false, rlHere()},
		{"a?", false, rlHere()},
		{`a"`, false, rlHere()},
		{"a'", false, rlHere()},
		{`a\b`, false, rlHere()},
		{"a[0]", false, rlHere()},
		{"{a}", false, rlHere()},
		{"a~", false, rlHere()},
		{"a|b", false, rlHere()},
		{"a^b", false, rlHere()},
		{"a`", false, rlHere()},
		{"a(b)", false, rlHere()},
		{"a<b", false, rlHere()},
	} {
		if got := Valid(c.name); got != c.ok {
			t.Errorf("%s: Valid(%q) = %v, want %v", c.at, c.name, got, c.ok)
		}
	}
}
