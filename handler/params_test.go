package handler_test

// Tests of params decoding (params.go) through Dispatch, with
// encoding/json as the reference: structs by position and by name (tags,
// embedding, exact-case names, required fields), fields sonic decodes, and
// params types other than structs.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
)

// upperString decodes a JSON string upper-cased: a type with UnmarshalJSON.
type upperString string

func (u *upperString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = upperString(strings.ToUpper(s))
	return nil
}

type nestedParams struct {
	A int      `json:"a"`
	B []string `json:"b"`
	C *float64 `json:"c"`
}

type slowParams struct {
	N  nestedParams   `json:"n"`
	L  []string       `json:"l"`
	M  map[string]int `json:"m"`
	P  *int           `json:"p"`
	T  time.Time      `json:"t"`
	U  upperString    `json:"u"`
	A  [2]int         `json:"a"`
	IP netip.Addr     `json:"ip"` // encoding.TextUnmarshaler
	X  int            `json:"x"`
}

var slowParamsNames = []string{"n", "l", "m", "p", "t", "u", "a", "ip", "x"}

func TestParams_slowFields(t *testing.T) {
	tab, last := echoTable[slowParams](t, nil)
	cases := []struct {
		at     string
		values []string // in field order
	}{
		{here(), []string{`{"a":1,"b":["x","y"],"c":2.5}`, `["p","q"]`, `{"k":1,"l":-2}`, `7`,
			`"2024-02-29T12:34:56.789Z"`, `"shout"`, `[3,4]`, `"192.0.2.1"`, `9`}},
		{here(), []string{`{}`, `[]`, `{}`, `0`, `"0001-01-01T00:00:00Z"`, `""`, `[0,0]`, `"::1"`, `0`}},
		{here(), []string{`{"a":1,"zz":{"deep":[1]}}`, `["\u00e9\ud83d\ude00"]`, `{"\u006b":3}`, `-1`,
			`"2000-01-01T00:00:00Z"`, `"\u0061b"`, `[-1,1]`, `"2001:db8::1"`, `1`}},
		// null: the zero value (time.Time and upperString are given "null" and keep it)
		{here(), []string{`null`, `null`, `null`, `null`, `null`, `null`, `null`, `null`, `1`}},
	}
	for _, c := range cases {
		var want slowParams
		object := jsonObject(slowParamsNames, c.values, false)
		if err := json.Unmarshal([]byte(object), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		for _, params := range []string{object, jsonArray(c.values, false), jsonObject(slowParamsNames, c.values, true)} {
			*last = slowParams{}
			res, e := roundTrip(t, c.at, tab, "echo", params)
			if e != nil {
				t.Errorf("%s: %s: error %d %q", c.at, params, e.Code, e.Message)
				continue
			}
			if !reflect.DeepEqual(*last, want) {
				t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, params, *last, want)
			}
			if w := stdlibEncode(t, want); !sameJSON(res, w) {
				t.Errorf("%s: result %s\nwant   %s", c.at, res, w)
			}
		}
	}

	// Optional fields (pointer, slice, map) may be missing; required ones
	// (struct, array, Unmarshaler, TextUnmarshaler, int) may not.
	opt := []struct {
		at      string
		params  string
		missing string // "" when the params fit
	}{
		{here(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"ip":"::1","x":1}`, ""},
		{here(), `{"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"ip":"::1","x":1}`, "n"},
		{here(), `{"n":{},"u":"","a":[1,2],"ip":"::1","x":1}`, "t"},
		{here(), `{"n":{},"t":"2000-01-01T00:00:00Z","a":[1,2],"ip":"::1","x":1}`, "u"},
		{here(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","ip":"::1","x":1}`, "a"},
		{here(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"x":1}`, "ip"},
		{here(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"ip":"::1"}`, "x"},
		{here(), `[{},[],{},null,"2000-01-01T00:00:00Z","",[1,2],"::1"]`, "x"},
		{here(), `[]`, "n"},
	}
	for _, c := range opt {
		res, e := roundTrip(t, c.at, tab, "echo", c.params)
		if c.missing == "" {
			if e != nil {
				t.Errorf("%s: error %d %q", c.at, e.Code, e.Message)
			}
			continue
		}
		wantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
	}

	// A value of the wrong type for a slow field is -32602 naming it, as
	// encoding/json refuses it.
	bad := []struct {
		at    string
		field string
		value string
	}{
		{here(), "n", `[1]`},
		{here(), "n", `{"a":"x"}`},
		{here(), "l", `"x"`},
		{here(), "l", `[1]`},
		{here(), "m", `{"k":"v"}`},
		{here(), "m", `[1]`},
		{here(), "p", `"1"`},
		{here(), "p", `1.5`},
		{here(), "t", `"yesterday"`},
		{here(), "t", `12`},
		{here(), "u", `12`},
		{here(), "a", `{"0":1}`},
		{here(), "ip", `"not an address"`},
	}
	base := []string{`{}`, `[]`, `{}`, `1`, `"2000-01-01T00:00:00Z"`, `""`, `[1,2]`, `"::1"`, `1`}
	for _, c := range bad {
		values := append([]string(nil), base...)
		values[indexOf(slowParamsNames, c.field)] = c.value
		object := jsonObject(slowParamsNames, values, false)
		var std slowParams
		if err := json.Unmarshal([]byte(object), &std); err == nil {
			t.Errorf("%s: encoding/json accepts %s: %s", c.at, c.field, c.value)
		}
		for _, params := range []string{object, jsonArray(values, false)} {
			res, e := roundTrip(t, c.at, tab, "echo", params)
			wantInvalidParams(t, c.at, e, res, c.field+": ")
		}
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	panic("no " + name)
}

type TaggedBase struct {
	ID   int    `json:"id"`
	Note string `json:"note,omitempty"`
}

type taggedInner struct {
	Deep bool `json:"deep"`
}

type taggedParams struct {
	TaggedBase
	taggedInner
	Name    string `json:"name"`
	Skip    int    `json:"-"`
	Dash    int    `json:"-,"`
	Renamed string `json:"full_name"`
	Opt     int    `json:"opt,omitempty"`
	Zero    int    `json:"zero,omitzero"`
	Plain   string
	Ptr     *string `json:"ptr"`
	hidden  int
}

func TestParams_tagsAndEmbedding(t *testing.T) {
	tab, last := echoTable[taggedParams](t, nil)
	full := `{"id":1,"note":"n","deep":true,"name":"nm","-":2,"full_name":"f","opt":3,"zero":4,"Plain":"p","ptr":"q"}`
	cases := []struct {
		at      string
		params  string
		object  string // what encoding/json is given: params when ""
		missing string // a field that must be reported missing
		tooMany bool
	}{
		{at: here(), params: full},
		// by position, in field order, embedded fields first
		{at: here(), params: `[1,"n",true,"nm",2,"f",3,4,"p","q"]`, object: full},
		// fewer positional params: only optional fields left out
		{at: here(), params: `[1,"n",true,"nm",2,"f",3,4,"p"]`,
			object: `{"id":1,"note":"n","deep":true,"name":"nm","-":2,"full_name":"f","opt":3,"zero":4,"Plain":"p"}`},
		{at: here(), params: `[1,"n",true,"nm",2,"f",3,4,"p","q",5]`, tooMany: true},
		{at: here(), params: `[1,"n",true,"nm",2,"f",3,4,"p","q",null]`, tooMany: true},
		// optional fields (omitempty, omitzero, pointer) missing
		{at: here(), params: `{"id":1,"deep":false,"name":"nm","-":2,"full_name":"f","Plain":"p"}`},
		// unknown members, the "-" field's Go name and unexported fields are ignored
		{at: here(), params: `{"Skip":9,"hidden":9,"Hidden":9,"x":{"id":7},"id":1,"deep":false,"name":"nm","-":2,"full_name":"f","Plain":"p","Renamed":"no","extra":[1,2,3]}`},
		// escaped keys match the field
		{at: here(), params: `{"\u0069d":1,"d\u0065ep":true,"n\u0061me":"nm","\u002d":2,"full\u005fname":"f","\u0050lain":"p","\u006e\u006f\u0074\u0065":"\u006e"}`},
		// a key given twice: the last wins
		{at: here(), params: `{"id":1,"deep":true,"name":"a","-":2,"full_name":"f","Plain":"p","name":"b","id":5}`},
		// null values leave zero values, and count as given
		{at: here(), params: `{"id":null,"note":null,"deep":null,"name":null,"-":null,"full_name":null,"opt":null,"zero":null,"Plain":null,"ptr":null}`},
		{at: here(), params: `[null,null,null,null,null,null,null,null,null]`,
			object: `{"id":null,"note":null,"deep":null,"name":null,"-":null,"full_name":null,"opt":null,"zero":null,"Plain":null}`},
		// missing required fields: -32602 naming the field
		{at: here(), params: `{"deep":true,"name":"nm","-":2,"full_name":"f","Plain":"p"}`, missing: "id"},
		{at: here(), params: `{"id":1,"name":"nm","-":2,"full_name":"f","Plain":"p"}`, missing: "deep"},
		{at: here(), params: `{"id":1,"deep":true,"-":2,"full_name":"f","Plain":"p"}`, missing: "name"},
		{at: here(), params: `{"id":1,"deep":true,"name":"nm","full_name":"f","Plain":"p"}`, missing: "-"},
		{at: here(), params: `{"id":1,"deep":true,"name":"nm","-":2,"Renamed":"f","Plain":"p"}`, missing: "full_name"},
		{at: here(), params: `{"id":1,"deep":true,"name":"nm","-":2,"full_name":"f"}`, missing: "Plain"},
		{at: here(), params: `[1,"n",true,"nm",2]`, missing: "full_name"},
		{at: here(), params: `[]`, missing: "id"},
		{at: here(), params: `{}`, missing: "id"},
		{at: here(), params: ``, missing: "id"},
	}
	for _, c := range cases {
		*last = taggedParams{}
		res, e := roundTrip(t, c.at, tab, "echo", c.params)
		switch {
		case c.tooMany:
			wantInvalidParams(t, c.at, e, res, "too many params: the method takes 10")
			continue
		case c.missing != "":
			wantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
			continue
		case e != nil:
			t.Errorf("%s: %s: error %d %q", c.at, c.params, e.Code, e.Message)
			continue
		}
		object := c.object
		if object == "" {
			object = c.params
		}
		var want taggedParams
		if err := json.Unmarshal([]byte(object), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		if !reflect.DeepEqual(*last, want) {
			t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, c.params, *last, want)
		}
		if w := stdlibEncode(t, want); !sameJSON(res, w) {
			t.Errorf("%s: result %s\nwant   %s", c.at, res, w)
		}
	}
}

type shadowedBase struct {
	ID   int
	Name string
}

type shadowingOuter struct {
	shadowedBase
	Name string
}

type nameA struct{ Name string }

type nameB struct{ Name string }

type ambiguousNames struct {
	nameA
	nameB
	X int
}

type taggedOverEmbedded struct {
	nameA
	N string `json:"Name"`
}

type nameTagged struct {
	Name string `json:"Name"`
}

// taggedAfterAmbiguity has two untagged Names at one depth, then a tagged
// one at that depth, which encoding/json takes.
type taggedAfterAmbiguity struct {
	nameA
	nameB
	nameTagged
}

// echoParams registers "m" returning its decoded params through sonic, and
// returns the reply to params.
func echoParams[P any](t *testing.T, params string) string {
	t.Helper()
	tab := handler.NewTable()
	handler.Register(tab, "m", func(_ context.Context, p P) (P, error) { return p, nil }, handler.Inline())
	return call(t, tab, `{"jsonrpc":"2.0","method":"m","params":`+params+`,"id":1}`)
}

// sameAsStdlib decodes params with encoding/json into a P and compares the
// result member of reply with its encoding.
func sameAsStdlib[P any](t *testing.T, params string) {
	t.Helper()
	var want P
	if err := json.Unmarshal([]byte(params), &want); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	r := decodeReply(t, echoParams[P](t, params))
	if r.Error != nil {
		t.Fatalf("params %s: error %+v", params, r.Error)
	}
	var got, exp any
	_ = json.Unmarshal(r.Result, &got)
	_ = json.Unmarshal(wantJSON, &exp)
	if gj, _ := json.Marshal(got); string(gj) != func() string { b, _ := json.Marshal(exp); return string(b) }() {
		t.Fatalf("params %s: decoded %s, encoding/json decodes %s", params, r.Result, wantJSON)
	}
}

// Regression (codec suite vs encoding/json): embedded fields follow encoding/json's dominance rules.
func TestParams_embeddedFieldPrecedence(t *testing.T) {
	sameAsStdlib[shadowingOuter](t, `{"ID":1,"Name":"x"}`)
	sameAsStdlib[ambiguousNames](t, `{"Name":"x","X":2}`)
	sameAsStdlib[taggedOverEmbedded](t, `{"Name":"x"}`)
	// Regression (issue 23, one rule for the table and OpenRPC): a tagged field after an ambiguity at its depth wins, as in encoding/json; the table dropped it.
	sameAsStdlib[taggedAfterAmbiguity](t, `{"Name":"x"}`)
	// By position the fields come in encoding/json's order: ID, then the
	// outer Name (the embedded one is shadowed).
	r := decodeReply(t, echoParams[shadowingOuter](t, `[7,"y"]`))
	if string(r.Result) != `{"ID":7,"Name":"","Name":"y"}` && string(r.Result) != `{"ID":7,"Name":"y"}` {
		t.Fatalf("positional: %s", r.Result)
	}
	var got shadowingOuter
	if err := json.Unmarshal(r.Result, &got); err != nil || got.Name != "y" || got.ID != 7 {
		t.Fatalf("positional: %s → %+v", r.Result, got)
	}
}

// withEmbeddedPointer embeds a pointer to a struct one level down, in a
// struct embedded by value.
type withEmbeddedPointer struct {
	*nameA
	X int
}

// An embedded pointer to a struct is refused at registration, its error
// naming the struct that embeds it and the pointer, however deep, and
// whether or not its fields are used: they have no offset in P.
func TestParams_embeddedPointerMessage(t *testing.T) {
	type outer struct {
		withEmbeddedPointer
		Y int
	}
	type shadowed struct {
		*nameA
		Name string
	}
	type noFields struct{}
	type empty struct {
		*noFields
	}
	for _, c := range []struct {
		at       string
		register func(*handler.Table)
		want     string
	}{
		{at: here(), register: func(tab *handler.Table) {
			handler.Register(tab, "m", func(context.Context, outer) (int, error) { return 0, nil })
		}, want: "jetrpc: unsupported type handler_test.withEmbeddedPointer: embedded pointer *handler_test.nameA in params: embed the struct by value"},
		{at: here(), register: func(tab *handler.Table) {
			handler.Register(tab, "m", func(context.Context, shadowed) (int, error) { return 0, nil })
		}, want: "jetrpc: unsupported type handler_test.shadowed: embedded pointer *handler_test.nameA in params: embed the struct by value"},
		{at: here(), register: func(tab *handler.Table) {
			handler.Register(tab, "m", func(context.Context, empty) (int, error) { return 0, nil })
		}, want: "jetrpc: unsupported type handler_test.empty: embedded pointer *handler_test.noFields in params: embed the struct by value"},
	} {
		err := registerErr(func() { c.register(handler.NewTable()) })
		if !errors.Is(err, handler.ErrBadType) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrBadType %q", c.at, err, c.want)
		}
	}
}

type exactCaseParams struct {
	A int          `json:"a"`
	B string       `json:"b"`
	N nestedParams `json:"n"`
}

// TestParams_exactCase records where jetrpc differs from
// encoding/json on purpose: member names match field names in exact
// case only, at the top level and in nested structs.
func TestParams_exactCase(t *testing.T) {
	tab, last := echoTable[exactCaseParams](t, nil)
	cases := []struct {
		at      string
		params  string
		want    exactCaseParams // what jetrpc decodes; missing when ""
		missing string
	}{
		{at: here(), params: `{"A":1,"b":"x","n":{}}`, missing: "a"},
		{at: here(), params: `{"a":1,"B":"x","n":{}}`, missing: "b"},
		{at: here(), params: `{"a":1,"b":"x","N":{}}`, missing: "n"},
		{at: here(), params: `{"a":1,"b":"x","n":{},"A":2,"B":"y"}`, want: exactCaseParams{A: 1, B: "x"}},
		{at: here(), params: `{"A":2,"a":1,"b":"x","n":{"A":5,"a":6,"B":["q"]}}`, want: exactCaseParams{A: 1, B: "x", N: nestedParams{A: 6}}},
		{at: here(), params: `{"a":1,"b":"x","n":{},"\u0041":2}`, want: exactCaseParams{A: 1, B: "x"}},
	}
	for _, c := range cases {
		// encoding/json matches case-insensitively: it takes these
		var std exactCaseParams
		if err := json.Unmarshal([]byte(c.params), &std); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		*last = exactCaseParams{}
		res, e := roundTrip(t, c.at, tab, "echo", c.params)
		if c.missing != "" {
			wantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
			continue
		}
		if e != nil {
			t.Errorf("%s: error %d %q", c.at, e.Code, e.Message)
			continue
		}
		if !reflect.DeepEqual(*last, c.want) {
			t.Errorf("%s: decoded %#v\nwant    %#v", c.at, *last, c.want)
		}
		if reflect.DeepEqual(std, c.want) {
			t.Errorf("%s: encoding/json decodes the same %#v: not a case of the difference", c.at, std)
		}
	}
}

type selfDecoding struct{ A int }

func (p *selfDecoding) UnmarshalJSON([]byte) error { p.A = 42; return nil }

// Regression (codec suite vs encoding/json): a params type with UnmarshalJSON decodes itself.
func TestParams_typeWithUnmarshalJSON(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(_ context.Context, p selfDecoding) (int, error) { return p.A, nil })
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"m","params":{"A":1},"id":1}`)); string(r.Result) != "42" {
		t.Fatalf("UnmarshalJSON not used: %s %+v", r.Result, r.Error)
	}
}

// Regression (codec suite vs encoding/json): the ",string" tag option is honoured.
func TestParams_stringTagOption(t *testing.T) {
	type P struct {
		A int     `json:"a,string"`
		B bool    `json:"b,string"`
		S string  `json:"s,string"`
		F float64 `json:"f,string"`
		N int     `json:"n,string,omitempty"`
	}
	sameAsStdlib[P](t, `{"a":"12","b":"true","s":"\"x\\u00e9\"","f":"1.5","n":null}`)
	for _, bad := range []string{`{"a":12}`, `{"a":"x"}`, `{"s":"x"}`, `{"a":""}`} {
		var std P
		if json.Unmarshal([]byte(bad), &std) == nil {
			t.Fatalf("encoding/json accepts %s", bad)
		}
		if r := decodeReply(t, echoParams[P](t, bad)); r.Error == nil || r.Error.Code != -32602 {
			t.Fatalf("%s accepted: %s", bad, r.Result)
		}
	}
}

// rawFields has Raw and json.RawMessage params fields, required and
// optional.
type rawFields struct {
	Req  handler.Raw     `json:"req"`
	Std  json.RawMessage `json:"std"`
	Ptr  *handler.Raw    `json:"ptr"`
	Omit handler.Raw     `json:"omit,omitempty"`
	Zero handler.Raw     `json:"zero,omitzero"`
}

func keepRawFields(p rawFields) rawFields {
	p.Req = bytes.Clone(p.Req) // valid only until the method returns
	p.Omit = bytes.Clone(p.Omit)
	p.Zero = bytes.Clone(p.Zero)
	return p
}

// A missing required Raw field was taken as an optional slice: a Raw (or
// json.RawMessage) field holds one JSON value and is required like any
// other, unless it is a pointer or tagged omitempty or omitzero.
func TestParams_rawFieldRequired(t *testing.T) {
	tab, last := echoTable(t, keepRawFields)
	ptr := handler.Raw(`{"p":1}`)
	cases := []struct {
		at      string
		params  string
		want    rawFields
		missing string // the field reported missing, or ""
	}{
		{at: here(), params: `{"req":1,"std":[2]}`, want: rawFields{Req: handler.Raw(`1`), Std: json.RawMessage(`[2]`)}},
		{at: here(), params: `[1,[2]]`, want: rawFields{Req: handler.Raw(`1`), Std: json.RawMessage(`[2]`)}},
		{at: here(), params: `{"std":[2],"req":{"a" : 1}}`, want: rawFields{Req: handler.Raw(`{"a" : 1}`), Std: json.RawMessage(`[2]`)}},
		// null is given: the text null
		{at: here(), params: `{"req":null,"std":null}`, want: rawFields{Req: handler.Raw(`null`), Std: json.RawMessage(`null`)}},
		// the optional fields given
		{at: here(), params: `{"req":1,"std":2,"ptr":{"p":1},"omit":"o","zero":[]}`,
			want: rawFields{Req: handler.Raw(`1`), Std: json.RawMessage(`2`), Ptr: &ptr, Omit: handler.Raw(`"o"`), Zero: handler.Raw(`[]`)}},
		{at: here(), params: `[1,2,{"p":1},"o",[]]`,
			want: rawFields{Req: handler.Raw(`1`), Std: json.RawMessage(`2`), Ptr: &ptr, Omit: handler.Raw(`"o"`), Zero: handler.Raw(`[]`)}},
		// missing required fields: -32602 naming the field
		{at: here(), params: `{"std":2}`, missing: "req"},
		{at: here(), params: `{"req":1}`, missing: "std"},
		{at: here(), params: `{"ptr":1,"omit":2,"zero":3}`, missing: "req"},
		{at: here(), params: `[1]`, missing: "std"},
		{at: here(), params: `[]`, missing: "req"},
		{at: here(), params: `{}`, missing: "req"},
		{at: here(), params: ``, missing: "req"},
	}
	for _, c := range cases {
		*last = rawFields{}
		res, e := roundTrip(t, c.at, tab, "echo", c.params)
		if c.missing != "" {
			wantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
			continue
		}
		if e != nil {
			t.Errorf("%s: %s: error %d %q", c.at, c.params, e.Code, e.Message)
			continue
		}
		if !reflect.DeepEqual(*last, c.want) {
			t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, c.params, *last, c.want)
		}
	}
}

// rawInside has Raw where sonic decodes it: in a nested struct and in a
// slice.
type rawInside struct {
	N struct {
		R handler.Raw `json:"r"`
	} `json:"n"`
	L []handler.Raw `json:"l"`
}

// A Raw inside params that sonic decodes (a slice element, a nested
// struct's field, a map value) receives the JSON value verbatim, as a
// copy, not base64.
func TestParams_rawInSonicDecodedParams(t *testing.T) {
	tab, last := echoTable[rawInside](t, nil)
	res, e := roundTrip(t, here(), tab, "echo", `{"n":{"r":{"a" : [1]}},"l":[1,"s",null,{"b":2}]}`)
	if e != nil {
		t.Fatalf("error %d %q", e.Code, e.Message)
	}
	want := rawInside{L: []handler.Raw{handler.Raw(`1`), handler.Raw(`"s"`), handler.Raw(`null`), handler.Raw(`{"b":2}`)}}
	want.N.R = handler.Raw(`{"a" : [1]}`)
	if !reflect.DeepEqual(*last, want) {
		t.Errorf("decoded %#v\nwant    %#v", *last, want)
	}
	if string(res) != `{"n":{"r":{"a":[1]}},"l":[1,"s",null,{"b":2}]}` {
		t.Errorf("result %s", res)
	}

	tabSlice, lastSlice := echoTable[[]handler.Raw](t, nil)
	res, e = roundTrip(t, here(), tabSlice, "echo", `[ 1 , {"a":"b"} , [] ]`)
	if e != nil || string(res) != `[1,{"a":"b"},[]]` {
		t.Fatalf("[]Raw params: result %s, error %+v", res, e)
	}
	if len(*lastSlice) != 3 || string((*lastSlice)[1]) != `{"a":"b"}` {
		t.Errorf("[]Raw params decoded %q", *lastSlice)
	}

	tabMap, lastMap := echoTable[map[string]handler.Raw](t, nil)
	res, e = roundTrip(t, here(), tabMap, "echo", `{"k":[true, false]}`)
	if e != nil || string(res) != `{"k":[true,false]}` || string((*lastMap)["k"]) != `[true, false]` {
		t.Fatalf("map[string]Raw params: result %s, decoded %q, error %+v", res, *lastMap, e)
	}
}

// paramsCase is one params case for a params type chosen by the
// case; run dispatches it.
type paramsCase struct {
	at   string
	name string
	run  func(t *testing.T, at string)
}

// paramsFit is a params case that fits P: P is decoded as encoding/json
// decodes the same JSON (std, when not "", is what encoding/json is
// given instead: the object form of positional params).
func paramsFit[P any](params, std string) paramsCase {
	return paramsCase{at: callerLine(2), name: fmt.Sprintf("%T %s", *new(P), params), run: func(t *testing.T, at string) {
		tab, last := echoTable[P](t, nil)
		if std == "" {
			std = params
		}
		var want P
		if err := json.Unmarshal([]byte(std), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", at, err)
		}
		res, e := roundTrip(t, at, tab, "echo", params)
		if e != nil {
			t.Fatalf("%s: %s: error %d %q", at, params, e.Code, e.Message)
		}
		if !reflect.DeepEqual(*last, want) {
			t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", at, params, *last, want)
		}
		if w := stdlibEncode(t, want); !sameJSON(res, w) {
			t.Errorf("%s: result %s\nwant   %s", at, res, w)
		}
	}}
}

// paramsRefused is a params case that P refuses with -32602 and a message
// holding want.
func paramsRefused[P any](params, want string) paramsCase {
	return paramsCase{at: callerLine(2), name: fmt.Sprintf("%T %s", *new(P), params), run: func(t *testing.T, at string) {
		tab, _ := echoTable[P](t, nil)
		res, e := roundTrip(t, at, tab, "echo", params)
		wantInvalidParams(t, at, e, res, want)
	}}
}

// rawParamsFit is a params case for Raw or json.RawMessage: it receives
// the params text verbatim.
func rawParamsFit[P ~[]byte](params string) paramsCase {
	return paramsCase{at: callerLine(2), name: fmt.Sprintf("%T %s", *new(P), params), run: func(t *testing.T, at string) {
		tab, last := echoTable(t, func(p P) P { return P(bytes.Clone(p)) })
		res, e := roundTrip(t, at, tab, "echo", params)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		var want P
		if params != "" {
			want = P(params)
		}
		if !bytes.Equal(*last, want) || (*last == nil) != (want == nil) {
			t.Errorf("%s: decoded %q, want %q", at, *last, want)
		}
		// echoed as a result: compacted; null when there were none
		wantRes := []byte("null")
		if params != "" {
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(params)); err != nil {
				t.Fatal(err)
			}
			wantRes = buf.Bytes()
		}
		if !bytes.Equal(res, wantRes) {
			t.Errorf("%s: result %s, want %s", at, res, wantRes)
		}
	}}
}

type pointXY struct {
	X int `json:"x"`
	Y int `json:"y"`
}

func TestParams_otherShapes(t *testing.T) {
	cases := []paramsCase{
		// Go arrays of hand-coded kinds: exactly N by position
		paramsFit[[3]int]("[1,-2,3]", ""),
		paramsFit[[3]int](" [ 1 , -2 , 3 ] ", "[1,-2,3]"),
		paramsFit[[2]uint8]("[0,255]", ""),
		paramsFit[[2]int64]("[-9223372036854775808,9223372036854775807]", ""),
		paramsFit[[2]uint64]("[0,18446744073709551615]", ""),
		paramsFit[[2]string](`["a\u00e9","\ud83d\ude00"]`, ""),
		paramsFit[[2]bool]("[true,false]", ""),
		paramsFit[[2]float64]("[1.5,-1e300]", ""),
		paramsFit[[2]float32]("[1.5,-1e30]", ""),
		paramsFit[[3]int]("[1,null,3]", ""),
		paramsFit[[1]string]("[null]", ""),
		paramsRefused[[3]int]("[1,2]", "param 3: missing required param"),
		paramsRefused[[3]int]("[]", "param 1: missing required param"),
		paramsRefused[[3]int]("", "param 1: missing required param"),
		paramsRefused[[3]int]("[1,2,3,4]", "too many params: the method takes 3"),
		paramsRefused[[3]int](`{"0":1,"1":2,"2":3}`, "params must be an array"),
		paramsRefused[[2]int8]("[1,128]", "param 2: integer out of range"),
		paramsRefused[[2]uint]("[1,-1]", "param 2: expected a non-negative integer"),
		paramsRefused[[2]int]("[1,2.5]", "param 2: expected an integer"),
		paramsRefused[[2]string](`["a",1]`, "param 2: expected a string"),
		paramsRefused[[2]bool](`[true,"false"]`, "param 2: expected a boolean"),
		paramsRefused[[2]float64](`[1,"2"]`, "param 2: expected a number"),
		// arrays of other types go through sonic
		paramsFit[[2]pointXY](`[{"x":1,"y":2},{"x":3}]`, ""),
		paramsFit[[2][]int](`[[1],[2,3]]`, ""),
		paramsRefused[[2]pointXY](`{"x":1}`, "params must be an array"),
		// slices
		paramsFit[[]int]("[1,2,3]", ""),
		paramsFit[[]int]("[]", ""),
		paramsFit[[]string](`["a","\n\u2028","😀"]`, ""),
		paramsFit[[]float64]("[1e-7,1e21,0.1]", ""),
		paramsFit[[]pointXY](`[{"x":1,"y":2},{"y":-1}]`, ""),
		paramsFit[[]any](`[1,"a",null,true,{"b":[1.5]}]`, ""),
		paramsRefused[[]int](`{"a":1}`, "params must be an array"),
		paramsRefused[[]int](`[1,"2"]`, "Invalid params: "),
		paramsRefused[[]uint8](`[256]`, "Invalid params: "),
		// maps
		paramsFit[map[string]int](`{"a":1,"b":-2}`, ""),
		paramsFit[map[string]int](`{}`, ""),
		paramsFit[map[string]any](`{"a":[1,{"b":null}],"c":"d","e":1.5}`, ""),
		paramsFit[map[string]pointXY](`{"p":{"x":1,"y":2}}`, ""),
		paramsFit[map[string]string](`{"\u0061":"\u00e9","k\"ey":"v"}`, ""),
		paramsRefused[map[string]int](`[1,2]`, "params must be an object"),
		paramsRefused[map[string]int](`{"a":"1"}`, "Invalid params: "),
		// an interface takes either
		paramsFit[any](`[1,"a"]`, ""),
		paramsFit[any](`{"a":{"b":[true]}}`, ""),
		// Raw and json.RawMessage: the params text verbatim
		rawParamsFit[handler.Raw](`[1, "a" ,{"b" : null}]`),
		rawParamsFit[handler.Raw](`{"a":[1,2,{"b":"c\"d"}],  "e" : "\u0041"}`),
		rawParamsFit[handler.Raw](`[]`),
		rawParamsFit[handler.Raw](``),
		rawParamsFit[json.RawMessage](`{ "a" : [ 1 ] }`),
		rawParamsFit[json.RawMessage](`[ ]`),
		rawParamsFit[json.RawMessage](``),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.at) })
	}
}

// Regression (codec suite vs encoding/json): [0]T params panicked; they take no params.
func TestParams_zeroLengthArray(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(context.Context, [0]int) (int, error) { return 1, nil })
	for _, params := range []string{``, `,"params":[]`} {
		if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"m","id":1`+params+`}`)); string(r.Result) != "1" {
			t.Fatalf("params %q: %+v", params, r.Error)
		}
	}
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"m","params":[1],"id":1}`)); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("[1]: %+v", r)
	}
}
