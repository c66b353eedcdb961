package jsonfields_test

// Tests that pin the rule of package jsonfields: which fields of a struct
// a call fills, under which JSON names, and which are required. Where
// encoding/json has a say (names, order, dominance) the lists are also
// checked against what it encodes.

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler/internal/jsonfields"
	"github.com/jetrpc/jetrpc/handler/internal/testkit"
)

// raw stands for handler.Raw, which this package cannot import: a slice
// that holds one JSON value.
type raw []byte

type (
	inner    struct{ In, Shared int }
	innerTag struct {
		Shared int `json:"Shared"`
	}
	deeper   struct{ inner }
	Exported struct{ E int }
	myInt    int
	myUint   uint

	nameA struct{ Name string }
	nameB struct{ Name string }
	nameC struct {
		Name string `json:"Name"`
	}
	NameA struct{ Name string }
	NameB struct{ Name string }
	NameC struct {
		Name string `json:"Name"`
	}
	NameD struct {
		Name string `json:"Name"`
	}

	cycA struct {
		*cycB
		A int
	}
	cycB struct {
		*cycA
		B int
	}
)

// here returns the file:line of its caller.
func here() string { return testkit.CallerLine(2) }

// embedding returns a value of a struct that embeds the types of vs, in
// order, all but a last unnamed struct, whose fields it takes as they
// are. (Built by reflect: go vet refuses two fields tagged with one name
// written out.)
func embedding(vs ...any) any {
	var fields []reflect.StructField
	for _, v := range vs {
		t := reflect.TypeOf(v)
		if t.Name() == "" {
			for i := range t.NumField() {
				fields = append(fields, t.Field(i))
			}
			continue
		}
		fields = append(fields, reflect.StructField{Name: t.Name(), Type: t, Anonymous: true})
	}
	return reflect.New(reflect.StructOf(fields)).Elem().Interface()
}

// describe writes f in a word: its JSON name, then "?" when optional,
// "#" when tagged, "^N" at embedding depth N > 0, "s" with ",string", and
// "*" when reached through an embedded pointer.
func describe(f jsonfields.Field) string {
	s := f.Name
	if !f.Required {
		s += "?"
	}
	if f.Tagged {
		s += "#"
	}
	if f.Depth > 0 {
		s += "^" + strconv.Itoa(f.Depth)
	}
	if f.String {
		s += "s"
	}
	if f.ViaPointer {
		s += "*"
	}
	return s
}

func TestOf_rule(t *testing.T) {
	cases := []struct {
		at     string
		v      any      // a value of the struct type
		want   []string // the fields, described
		ptrs   []string // the embedded pointers met, by type
		stdlib bool     // the names and order must be encoding/json's (zero value encoded)
	}{
		// names: the tag's, else the Go name; "-" leaves a field out, but
		// "-," names it "-"; unexported fields are left out
		{at: here(), v: struct {
			A     int `json:"a"`
			B     int
			C     int `json:"-"`
			D     int `json:"-,"`
			E     int `json:",string"`
			e     int
			F     int `json:"f,string"`
			G     int `json:"g,omitempty,string"`
			H     int `json:",omitzero"`
			I     int `json:"i,stringy"`
			Empty int `json:""`
		}{}, want: []string{"a#", "B", "-#", "Es", "f#s", "g?#s", "H?", "i#", "Empty"}},
		// required: values (structs, arrays, scalars, value slices) are;
		// pointers, maps, interfaces, other slices, omitempty and omitzero
		// are not
		{at: here(), v: struct {
			Int   int
			Str   string
			Arr   [2]int
			Time  time.Time
			Inner inner
			Raw   raw
			Msg   json.RawMessage
			Ptr   *int
			PRaw  *raw
			Map   map[string]int
			Any   any
			Err   error
			Sl    []int
			Bytes []byte
			ORaw  raw             `json:",omitempty"`
			ZMsg  json.RawMessage `json:",omitzero"`
			OInt  int             `json:",omitempty"`
			ZStr  string          `json:",omitzero"`
		}{}, want: []string{"Int", "Str", "Arr", "Time", "Inner", "Raw", "Msg",
			"Ptr?", "PRaw?", "Map?", "Any?", "Err?", "Sl?", "Bytes?", "ORaw?", "ZMsg?", "OInt?", "ZStr?"}},
		// embedded structs are flattened, depth first, in order; a tagged
		// one is a field; an embedded non-struct is a field by its type's
		// name when exported, left out when not
		{at: here(), v: struct {
			X int
			inner
			deeper `json:"-"`
			Tagged inner `json:"tagged"`
			MyInt  myInt
			myUint
		}{}, want: []string{"X", "In^1", "Shared^1", "tagged#", "MyInt"}, stdlib: true},
		{at: here(), v: struct {
			deeper
			Y int
		}{}, want: []string{"In^2", "Shared^2", "Y"}, stdlib: true},
		// dominance: the shallowest wins, whatever the order
		{at: here(), v: struct {
			inner
			In int `json:"In"`
		}{}, want: []string{"Shared^1", "In#"}, stdlib: true},
		{at: here(), v: struct {
			In int
			deeper
		}{}, want: []string{"In", "Shared^2"}, stdlib: true},
		// at one depth the tagged one wins
		{at: here(), v: struct {
			inner
			innerTag
		}{}, want: []string{"In^1", "Shared#^1"}, stdlib: true},
		// at one depth, two untagged (or two tagged) are ambiguous: none
		{at: here(), v: struct {
			nameA
			nameB
			X int
		}{}, want: []string{"X"}, stdlib: true},
		{at: here(), v: embedding(NameC{}, NameD{}, struct{ X int }{}), want: []string{"X"}, stdlib: true},
		// a later shallower field ends the ambiguity
		{at: here(), v: struct {
			nameA
			nameB
			Name string
		}{}, want: []string{"Name"}, stdlib: true},
		// a later tagged field at the same depth ends an untagged ambiguity
		{at: here(), v: struct {
			nameA
			nameB
			nameC
		}{}, want: []string{"Name#^1"}, stdlib: true},
		{at: here(), v: embedding(NameA{}, NameC{}, NameB{}), want: []string{"Name#^1"}, stdlib: true},
		// but not a tagged ambiguity
		{at: here(), v: embedding(NameA{}, NameC{}, NameB{}, NameD{}), want: nil, stdlib: true},
		// embedded pointers are followed, their fields reached through them
		{at: here(), v: struct {
			*inner
			X int
		}{}, want: []string{"In^1*", "Shared^1*", "X"}, ptrs: []string{"*jsonfields_test.inner"}},
		{at: here(), v: struct {
			deeper
			*nameA
		}{}, want: []string{"In^2", "Shared^2", "Name^1*"}, ptrs: []string{"*jsonfields_test.nameA"}},
		// embedding cycles through pointers are cut
		{at: here(), v: cycA{}, want: []string{"B^1*", "A"}, ptrs: []string{"*jsonfields_test.cycB", "*jsonfields_test.cycA"}},
		// a tagged embedded struct or pointer is a field, not followed
		{at: here(), v: struct {
			*Exported `json:"p"`
		}{}, want: []string{"p?#"}, stdlib: true},
		{at: here(), v: struct {
			Exported `json:"v"`
		}{}, want: []string{"v#"}, stdlib: true},
		// not encoding/json's: a tagged embedded struct of an unexported
		// type is left out (encoding/json takes it as a field; handler
		// could not set an embedded pointer to it)
		{at: here(), v: struct {
			*inner `json:"p"`
			nameA  `json:"v"`
		}{}, want: nil},
		// no fields
		{at: here(), v: struct{}{}, want: nil, stdlib: true},
		{at: here(), v: struct{ a, b int }{}, want: nil, stdlib: true},
	}
	for _, c := range cases {
		typ := reflect.TypeOf(c.v)
		st := jsonfields.Of(typ, reflect.TypeFor[raw](), reflect.TypeFor[json.RawMessage]())
		var got []string
		for _, f := range st.Fields {
			got = append(got, describe(f))
			checkLocation(t, c.at, typ, f)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v:\nfields %q\nwant   %q", c.at, typ, got, c.want)
		}
		var ptrs []string
		for _, p := range st.Pointers {
			ptrs = append(ptrs, p.Type.String())
			if f, ok := fieldOfType(p.In, p.Type); !ok || !f.Anonymous {
				t.Errorf("%s: pointer %v is not embedded in %v", c.at, p.Type, p.In)
			}
		}
		if !reflect.DeepEqual(ptrs, c.ptrs) {
			t.Errorf("%s: %v:\npointers %q\nwant     %q", c.at, typ, ptrs, c.ptrs)
		}
		if c.stdlib {
			if std := stdlibNames(t, c.v); !reflect.DeepEqual(names(st.Fields), std) {
				t.Errorf("%s: %v: names %q, encoding/json encodes %q", c.at, typ, names(st.Fields), std)
			}
		}
	}
}

// TestOf_values: a slice is required only when it is one of the value
// types given.
func TestOf_values(t *testing.T) {
	type s struct {
		R raw
		M json.RawMessage
	}
	for _, c := range []struct {
		at     string
		values []reflect.Type
		want   []string
	}{
		{at: here(), values: nil, want: []string{"R?", "M?"}},
		{at: here(), values: []reflect.Type{reflect.TypeFor[raw]()}, want: []string{"R", "M?"}},
		{at: here(), values: []reflect.Type{reflect.TypeFor[json.RawMessage](), reflect.TypeFor[raw]()}, want: []string{"R", "M"}},
	} {
		var got []string
		for _, f := range jsonfields.Of(reflect.TypeFor[s](), c.values...).Fields {
			got = append(got, describe(f))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: fields %q, want %q", c.at, got, c.want)
		}
	}
}

// checkLocation checks that f's Index and Offset find the field in t.
func checkLocation(t *testing.T, at string, typ reflect.Type, f jsonfields.Field) {
	t.Helper()
	sf := typ.FieldByIndex(f.Index)
	if sf.Type != f.Type {
		t.Errorf("%s: %s: index %v is a %v, field says %v", at, f.Name, f.Index, sf.Type, f.Type)
	}
	if len(f.Index) != f.Depth+1 {
		t.Errorf("%s: %s: index %v at depth %d", at, f.Name, f.Index, f.Depth)
	}
	if f.ViaPointer {
		if f.Offset != 0 {
			t.Errorf("%s: %s: offset %d through a pointer", at, f.Name, f.Offset)
		}
		return
	}
	var off uintptr
	for i := range f.Index {
		off += typ.FieldByIndex(f.Index[:i+1]).Offset
	}
	if off != f.Offset {
		t.Errorf("%s: %s: offset %d, want %d", at, f.Name, f.Offset, off)
	}
}

// fieldOfType returns the field of struct in whose type is ft.
func fieldOfType(in, ft reflect.Type) (reflect.StructField, bool) {
	for i := range in.NumField() {
		if in.Field(i).Type == ft {
			return in.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func names(fs []jsonfields.Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// stdlibNames returns the member names encoding/json encodes v with, in
// order.
func stdlibNames(t *testing.T, v any) []string {
	t.Helper()
	text, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(text)))
	var out []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
