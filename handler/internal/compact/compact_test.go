package compact

import "testing"

// TestAppend: the whitespace outside strings goes, that inside them
// (escaped quotes and backslashes included) stays.
func TestAppend(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, ``},
		{`1`, `1`},
		{" {\"a\" : [1, \"x y\"]}\n", `{"a":[1,"x y"]}`},
		{"{\n  \"a\": [1, \"x y\\n\"]\r\n}\n", `{"a":[1,"x y\n"]}`},
		{`[" \" ", "\\", " "]`, `[" \" ","\\"," "]`},
		{"\t\"a b\"\t", `"a b"`},
	} {
		if got := string(Append([]byte("x"), []byte(c.in))); got != "x"+c.want {
			t.Errorf("Append(%q) = %q, want %q", c.in, got, "x"+c.want)
		}
	}
}

// TestAppendValid: valid text compacted, empty text null, invalid text
// refused with dst unchanged.
func TestAppendValid(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{``, `null`, true},
		{` [1, 2] `, `[1,2]`, true},
		{`{"a":`, ``, false},
		{`1 2`, ``, false},
		{`nul`, ``, false},
		{"\"\xff\"", ``, false},
	} {
		got, ok := AppendValid([]byte("x"), []byte(c.in))
		if string(got) != "x"+c.want || ok != c.ok {
			t.Errorf("AppendValid(%q) = %q %v, want %q %v", c.in, got, ok, "x"+c.want, c.ok)
		}
	}
}
