package handler_test

// Tests of the hand-coded kinds (kinds.go) through Dispatch, with
// encoding/json as the reference: every kind decoded from params by
// position and by name, refused when it does not fit, strings unescaped;
// and Raw's own JSON methods (quoting is parser.AppendQuote's, tested
// there).

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// everyKind has a field of every hand-coded kind (16 fields: the plan
// indexes them in a map).
type everyKind struct {
	B   bool            `json:"b"`
	I   int             `json:"i"`
	I8  int8            `json:"i8"`
	I16 int16           `json:"i16"`
	I32 int32           `json:"i32"`
	I64 int64           `json:"i64"`
	U   uint            `json:"u"`
	U8  uint8           `json:"u8"`
	U16 uint16          `json:"u16"`
	U32 uint32          `json:"u32"`
	U64 uint64          `json:"u64"`
	F32 float32         `json:"f32"`
	F64 float64         `json:"f64"`
	S   string          `json:"s"`
	R   handler.Raw     `json:"r"`
	RM  json.RawMessage `json:"rm"`
}

// everyKindStdlib is everyKind as encoding/json decodes it, the reference
// independent of Raw's own JSON methods: Raw stands as a json.RawMessage.
type everyKindStdlib struct {
	B   bool            `json:"b"`
	I   int             `json:"i"`
	I8  int8            `json:"i8"`
	I16 int16           `json:"i16"`
	I32 int32           `json:"i32"`
	I64 int64           `json:"i64"`
	U   uint            `json:"u"`
	U8  uint8           `json:"u8"`
	U16 uint16          `json:"u16"`
	U32 uint32          `json:"u32"`
	U64 uint64          `json:"u64"`
	F32 float32         `json:"f32"`
	F64 float64         `json:"f64"`
	S   string          `json:"s"`
	R   json.RawMessage `json:"r"`
	RM  json.RawMessage `json:"rm"`
}

func (s everyKindStdlib) kinds() everyKind {
	return everyKind{
		B: s.B, I: s.I, I8: s.I8, I16: s.I16, I32: s.I32, I64: s.I64,
		U: s.U, U8: s.U8, U16: s.U16, U32: s.U32, U64: s.U64,
		F32: s.F32, F64: s.F64, S: s.S, R: handler.Raw(s.R), RM: s.RM,
	}
}

var everyKindNames = []string{"b", "i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64", "f32", "f64", "s", "r", "rm"}

// everyKindBase is a valid value for every field, in field order.
var everyKindBase = []string{"true", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "1.5", "2.5", `"s"`, `{"r":1}`, `[2]`}

// everyKindWith returns everyKindBase with field name set to value.
func everyKindWith(name, value string) []string {
	vals := append([]string(nil), everyKindBase...)
	for i, n := range everyKindNames {
		if n == name {
			vals[i] = value
			return vals
		}
	}
	panic("no field " + name)
}

func keepEveryKind(p everyKind) everyKind {
	if p.R != nil {
		p.R = bytes.Clone(p.R) // valid only until the method returns
	}
	return p
}

func TestKinds_decodeEveryKind(t *testing.T) {
	tab, last := echoTable(t, keepEveryKind)
	cases := []struct {
		at     string
		values []string // in field order
	}{
		{here(), everyKindBase},
		{here(), []string{"false", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", `""`, `0`, `0`}},
		// the minimum of every type
		{here(), []string{"false", "-9223372036854775808", "-128", "-32768", "-2147483648", "-9223372036854775808",
			"0", "0", "0", "0", "0", "-3.4028234663852886e38", "-1.7976931348623157e308", `"\u0000"`, `"x"`, `false`}},
		// the maximum of every type
		{here(), []string{"true", "9223372036854775807", "127", "32767", "2147483647", "9223372036854775807",
			"18446744073709551615", "255", "65535", "4294967295", "18446744073709551615",
			"3.4028234663852886e38", "1.7976931348623157e308", `"\uffff"`, `[1,[2,{"a":[]}]]`, `{"a":{"b":null}}`}},
		// -0, exponents and fractions where they are allowed, denormals
		{here(), []string{"true", "-0", "-0", "-0", "-0", "-0", "0", "0", "0", "0", "0",
			"1e-45", "5e-324", `"é😀"`, `-1.5E+3`, `"\ud83d\ude00"`}},
		{here(), []string{"true", "-1", "-1", "-1", "-1", "-1", "1", "1", "1", "1", "1",
			"1E2", "-0", `"a\"b"`, `true`, `null`}},
		{here(), []string{"true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
			"0.1", "0.1", `"0.1"`, `"\u2028"`, `1e999`}},
		{here(), []string{"true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
			"16777217", "9007199254740993", `"x"`, `1.000000000000000000001`, `{}`}},
		{here(), []string{"true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
			"1e-50", "1e-400", `"x"`, `[ 1 , 2 ]`, `{ "a" : 1 }`}},
		// null leaves every value zero (Raw receives the null itself)
		{here(), []string{"null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null",
			"null", "null", "null", "null", "null"}},
	}
	for _, c := range cases {
		var std everyKindStdlib
		object := jsonObject(everyKindNames, c.values, false)
		if err := json.Unmarshal([]byte(object), &std); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		want := std.kinds()
		forms := []string{
			object,
			jsonObject(everyKindNames, c.values, true),
			jsonArray(c.values, false),
			jsonArray(c.values, true),
		}
		// Members in reverse order, and an unknown one.
		rev := make([]string, 0, len(c.values)+1)
		for i := len(c.values) - 1; i >= 0; i-- {
			rev = append(rev, strconv.Quote(everyKindNames[i])+":"+c.values[i])
		}
		rev = append(rev, `"unknown":[{"b":"x"}]`)
		forms = append(forms, "{"+strings.Join(rev, ",")+"}")
		for _, params := range forms {
			*last = everyKind{}
			res, e := roundTrip(t, c.at, tab, "echo", params)
			if e != nil {
				t.Errorf("%s: params %s: error %d %q", c.at, params, e.Code, e.Message)
				continue
			}
			if !reflect.DeepEqual(*last, want) {
				t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, params, *last, want)
			}
			// the echoed struct is encoded by sonic: the same JSON value
			// as encoding/json's (Raw verbatim in both)
			if w := stdlibEncode(t, want); !sameJSON(res, w) {
				t.Errorf("%s: params %s\nresult %s\nwant   %s", c.at, params, res, w)
			}
		}
	}
}

func TestKinds_decodeErrors(t *testing.T) {
	tab, _ := echoTable(t, keepEveryKind)
	cases := []struct {
		at     string
		field  string
		value  string
		reason string // part of the message, after the field name
	}{
		// integer overflow, per type
		{here(), "i8", "128", "integer out of range"},
		{here(), "i8", "-129", "integer out of range"},
		{here(), "i16", "32768", "integer out of range"},
		{here(), "i16", "-32769", "integer out of range"},
		{here(), "i32", "2147483648", "integer out of range"},
		{here(), "i32", "-2147483649", "integer out of range"},
		{here(), "i64", "9223372036854775808", "integer out of range"},
		{here(), "i64", "-9223372036854775809", "integer out of range"},
		{here(), "i", "9223372036854775808", "integer out of range"},
		{here(), "i", "-99999999999999999999999", "integer out of range"},
		{here(), "u8", "256", "integer out of range"},
		{here(), "u16", "65536", "integer out of range"},
		{here(), "u32", "4294967296", "integer out of range"},
		{here(), "u64", "18446744073709551616", "integer out of range"},
		{here(), "u64", "99999999999999999999", "integer out of range"},
		{here(), "u", "18446744073709551616", "integer out of range"},
		// negative into unsigned
		{here(), "u", "-1", "expected a non-negative integer"},
		{here(), "u8", "-1", "expected a non-negative integer"},
		{here(), "u16", "-255", "expected a non-negative integer"},
		{here(), "u32", "-1", "expected a non-negative integer"},
		{here(), "u64", "-18446744073709551615", "expected a non-negative integer"},
		// fractions and exponents into integers
		{here(), "i", "1.5", "expected an integer"},
		{here(), "i", "1.0", "expected an integer"},
		{here(), "i8", "1e1", "expected an integer"},
		{here(), "i16", "1E+0", "expected an integer"},
		{here(), "i32", "-0.0", "expected an integer"},
		{here(), "i64", "1e-0", "expected an integer"},
		{here(), "u", "1.5", "expected a non-negative integer"},
		{here(), "u8", "2e0", "expected a non-negative integer"},
		{here(), "u64", "0.0", "expected a non-negative integer"},
		// floats out of range
		{here(), "f32", "3.5e38", "number out of range"},
		{here(), "f32", "-1e39", "number out of range"},
		{here(), "f64", "1e309", "number out of range"},
		{here(), "f64", "-2e308", "number out of range"},
		// the wrong JSON type for each kind
		{here(), "b", "1", "expected a boolean"},
		{here(), "b", `"true"`, "expected a boolean"},
		{here(), "b", `[true]`, "expected a boolean"},
		{here(), "b", `{}`, "expected a boolean"},
		{here(), "i", `"1"`, "expected an integer"},
		{here(), "i", `true`, "expected an integer"},
		{here(), "i", `[1]`, "expected an integer"},
		{here(), "i", `{"a":1}`, "expected an integer"},
		{here(), "i8", `false`, "expected an integer"},
		{here(), "i16", `""`, "expected an integer"},
		{here(), "i32", `[]`, "expected an integer"},
		{here(), "i64", `"9"`, "expected an integer"},
		{here(), "u", `"1"`, "expected a non-negative integer"},
		{here(), "u8", `true`, "expected a non-negative integer"},
		{here(), "u16", `[1]`, "expected a non-negative integer"},
		{here(), "u32", `{}`, "expected a non-negative integer"},
		{here(), "u64", `"18446744073709551615"`, "expected a non-negative integer"},
		{here(), "f32", `"1.5"`, "expected a number"},
		{here(), "f32", `true`, "expected a number"},
		{here(), "f64", `[1.5]`, "expected a number"},
		{here(), "f64", `{"f":1}`, "expected a number"},
		{here(), "f64", `false`, "expected a number"},
		{here(), "s", `1`, "expected a string"},
		{here(), "s", `true`, "expected a string"},
		{here(), "s", `["s"]`, "expected a string"},
		{here(), "s", `{"s":"s"}`, "expected a string"},
		{here(), "s", `false`, "expected a string"},
	}
	for _, c := range cases {
		values := everyKindWith(c.field, c.value)
		object := jsonObject(everyKindNames, values, false)
		// encoding/json refuses these too
		var std everyKindStdlib
		if err := json.Unmarshal([]byte(object), &std); err == nil {
			t.Errorf("%s: encoding/json accepts %s: %s", c.at, c.field, c.value)
		}
		for _, params := range []string{object, jsonArray(values, false), jsonObject(everyKindNames, values, true)} {
			res, e := roundTrip(t, c.at, tab, "echo", params)
			wantInvalidParams(t, c.at, e, res, c.field+": "+c.reason)
		}
	}
}

// TestKinds_uintMinusZero: -0 is refused for unsigned integers, as
// encoding/json refuses it.
func TestKinds_uintMinusZero(t *testing.T) {
	tab, _ := echoTable(t, keepEveryKind)
	at := here()
	values := everyKindWith("u64", "-0")
	object := jsonObject(everyKindNames, values, false)
	var std everyKindStdlib
	if err := json.Unmarshal([]byte(object), &std); err == nil {
		t.Fatalf("%s: encoding/json accepts -0 for uint64", at)
	}
	res, e := roundTrip(t, at, tab, "echo", object)
	wantInvalidParams(t, at, e, res, "u64: expected a non-negative integer")
}

type stringParams struct {
	S string `json:"s"`
}

func TestKinds_decodeStrings(t *testing.T) {
	tab, last := echoTable[stringParams](t, nil)
	cases := []struct {
		at   string
		json string // the JSON string literal
	}{
		{here(), `""`},
		{here(), `"plain ascii"`},
		{here(), `"\"\\\/\b\f\n\r\t"`},
		{here(), `"\u0000\u0001\u001f\u007f"`},
		{here(), `"\u0041\u00e9\u00E9\u4e2d\uFFFF"`},
		{here(), `"\ud83d\ude00 \uD83D\uDE00"`},            // surrogate pairs
		{here(), `"\ud800"`},                               // lone high surrogate
		{here(), `"\udc00"`},                               // lone low surrogate
		{here(), `"\ud800x"`},                              // high surrogate then a letter
		{here(), `"\ud800\u0041"`},                         // high surrogate then an escape
		{here(), `"\ud800\ud800\udc00"`},                   // lone then a pair
		{here(), `"\udc00\ud800"`},                         // reversed pair
		{here(), `"\ud83d\ude00\ud83d"`},                   // pair then lone
		{here(), `"\ud83d\\ude00"`},                        // high surrogate then an escaped backslash
		{here(), `"é ü 日本 😀  <>&"`},                        // raw non-ASCII, U+2028/9, HTML
		{here(), `"tab\there, \"quoted\" and \\\\ end\\"`}, // escapes mixed with text
		{here(), `"` + strings.Repeat(`ab\n`, 3000) + `"`},
	}
	for _, c := range cases {
		var want stringParams
		if err := json.Unmarshal([]byte(`{"s":`+c.json+`}`), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		for _, params := range []string{`{"s":` + c.json + `}`, `[` + c.json + `]`} {
			*last = stringParams{S: "stale"}
			res, e := roundTrip(t, c.at, tab, "echo", params)
			if e != nil {
				t.Errorf("%s: %s: error %d %q", c.at, params, e.Code, e.Message)
				continue
			}
			if last.S != want.S {
				t.Errorf("%s: %s\ndecoded %+q\nwant    %+q", c.at, params, last.S, want.S)
			}
			if w := stdlibEncode(t, want); !sameJSON(res, w) {
				t.Errorf("%s: result %s, want %s", c.at, res, w)
			}
		}
	}
}

// trickyStrings are strings to encode: control characters, quotes,
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

// TestRaw_marshalJSON: encoding/json and sonic write a Raw verbatim,
// compacted; an empty Raw is null; one that is not valid JSON is an error.
func TestRaw_marshalJSON(t *testing.T) {
	type holder struct {
		R handler.Raw  `json:"r"`
		P *handler.Raw `json:"p,omitempty"`
	}
	raw := handler.Raw(` [ 1 , "a b" ] `)
	for _, c := range []struct {
		v    any
		want string
	}{
		{holder{R: raw}, `{"r":[1,"a b"]}`},
		{holder{R: handler.Raw{}, P: &raw}, `{"r":null,"p":[1,"a b"]}`},
		{holder{}, `{"r":null}`},
		{[]handler.Raw{raw, nil}, `[[1,"a b"],null]`},
		{map[string]handler.Raw{"k": handler.Raw(`{"x" : 1}`)}, `{"k":{"x":1}}`},
	} {
		if got, err := json.Marshal(c.v); err != nil || string(got) != c.want {
			t.Errorf("json.Marshal(%#v) = %s, %v; want %s", c.v, got, err, c.want)
		}
		if got, err := handler.AppendJSON(nil, c.v); err != nil || string(got) != c.want {
			t.Errorf("AppendJSON(%#v) = %s, %v; want %s", c.v, got, err, c.want)
		}
	}
	for _, bad := range []handler.Raw{handler.Raw(`{`), handler.Raw(`1 2`), handler.Raw("\"\xff\""), handler.Raw(` `)} {
		if got, err := json.Marshal(holder{R: bad}); err == nil {
			t.Errorf("json.Marshal of Raw %q: %s, want an error", bad, got)
		}
		if got, err := handler.AppendJSON(nil, holder{R: bad}); err == nil {
			t.Errorf("AppendJSON of Raw %q inside a struct: %s, want an error", bad, got)
		}
	}
}

// TestRaw_unmarshalJSON: encoding/json gives a Raw the JSON value
// verbatim (a copy), not base64.
func TestRaw_unmarshalJSON(t *testing.T) {
	src := []byte(`{"r":{"a" : [1, 2]},"l":[null,"s"]}`)
	var v struct {
		R handler.Raw   `json:"r"`
		L []handler.Raw `json:"l"`
	}
	if err := json.Unmarshal(src, &v); err != nil {
		t.Fatal(err)
	}
	if string(v.R) != `{"a" : [1, 2]}` || len(v.L) != 2 || string(v.L[0]) != `null` || string(v.L[1]) != `"s"` {
		t.Fatalf("decoded %q %q", v.R, v.L)
	}
	clear(src)
	if string(v.R) != `{"a" : [1, 2]}` {
		t.Fatalf("the Raw aliases the input: %q", v.R)
	}
}
