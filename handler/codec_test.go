package handler_test

// Tests of the value codecs (kinds.go, params.go, result.go) through
// Dispatch of real JSON-RPC messages, with encoding/json as the reference:
// params are decoded by an echo method and compared with what
// json.Unmarshal makes of the same JSON, and results are compared with
// what a json.Encoder (HTML escaping off) writes for the same value.
// Every table case records its file:line, printed when it fails.
//
// Identifiers are prefixed with "codec" so as not to collide with other
// test files of the package.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/handler"
)

// ---------------------------------------------------------------------
// Helpers

// codecAt returns the file:line of its caller: table cases call it in
// their literal to record where they are.
func codecAt() string { return codecCaller(2) }

// codecCaller returns the file:line skip frames up (1 is the caller of
// codecCaller).
func codecCaller(skip int) string {
	_, file, line, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	return filepath.Base(file) + ":" + strconv.Itoa(line)
}

// codecRPCError is the error member of a reply.
type codecRPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// codecRequest builds a request with id 1; params "" means no params
// member.
func codecRequest(method, params string) []byte {
	if params == "" {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`)
}

// codecRoundTrip dispatches a request with id 1 to method and returns the
// exact bytes of the result member of a success reply, or the error of an
// error reply. Anything else fails the test.
func codecRoundTrip(t testing.TB, at string, tab *handler.Table, method, params string) ([]byte, *codecRPCError) {
	t.Helper()
	msg := codecRequest(method, params)
	out := tab.Dispatch(context.Background(), nil, msg)
	if !json.Valid(out) {
		t.Fatalf("%s: reply is not valid JSON\nrequest %s\nreply   %q", at, msg, out)
	}
	const head, tail = `{"jsonrpc":"2.0","result":`, `,"id":1}`
	if bytes.HasPrefix(out, []byte(head)) && bytes.HasSuffix(out, []byte(tail)) && len(out) > len(head)+len(tail) {
		return out[len(head) : len(out)-len(tail)], nil
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		Error   *codecRPCError  `json:"error"`
		ID      json.RawMessage `json:"id"`
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil || r.Error == nil || r.JSONRPC != "2.0" || string(r.ID) != "1" {
		t.Fatalf("%s: reply is neither a result nor an error reply (%v)\nrequest %s\nreply   %s", at, err, msg, out)
	}
	return nil, r.Error
}

// codecStdEncode is encoding/json's encoding of v with HTML escaping off.
func codecStdEncode(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json cannot encode %#v: %v", v, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// codecSameJSON reports whether a and b are the same JSON value: objects
// compared as sets of members, numbers by their exact value.
func codecSameJSON(a, b []byte) bool {
	va, ea := codecDecodeAny(a)
	vb, eb := codecDecodeAny(b)
	return ea == nil && eb == nil && codecSameValue(va, vb)
}

func codecDecodeAny(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func codecSameValue(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		fa, _, ea := big.ParseFloat(string(a), 10, 2000, big.ToNearestEven)
		fb, _, eb := big.ParseFloat(string(b), 10, 2000, big.ToNearestEven)
		return ea == nil && eb == nil && fa.Cmp(fb) == 0
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !codecSameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !codecSameValue(va, vb) {
				return false
			}
		}
		return true
	}
	return a == b
}

// codecEcho returns a table whose method "echo" takes a P, records it in
// *last and returns it as its result. keep, when not nil, copies what
// must not outlive the call (Raw).
func codecEcho[P any](t testing.TB, keep func(P) P) (tab *handler.Table, last *P) {
	t.Helper()
	tab = handler.NewTable()
	last = new(P)
	handler.Register(tab, "echo", func(_ context.Context, p P) (P, error) {
		if keep != nil {
			p = keep(p)
		}
		*last = p
		return p, nil
	})
	return tab, last
}

// codecWantInvalidParams checks that e is a -32602 error whose message
// holds want.
func codecWantInvalidParams(t testing.TB, at string, e *codecRPCError, result []byte, want string) {
	t.Helper()
	if e == nil {
		t.Errorf("%s: want -32602 (%q), got result %s", at, want, result)
		return
	}
	if e.Code != int(handler.CodeInvalidParams) || !strings.HasPrefix(e.Message, "Invalid params: ") {
		t.Errorf("%s: want -32602 Invalid params, got %d %q", at, e.Code, e.Message)
		return
	}
	if !strings.Contains(e.Message, want) {
		t.Errorf("%s: message %q does not hold %q", at, e.Message, want)
	}
}

// codecObject builds a JSON object from names and values in order;
// spaced puts whitespace everywhere it may go.
func codecObject(names, values []string, spaced bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		if spaced {
			b.WriteString("\n\t")
		}
		b.WriteString(strconv.Quote(n))
		if spaced {
			b.WriteString(" : ")
		} else {
			b.WriteString(":")
		}
		b.WriteString(values[i])
	}
	if spaced {
		b.WriteString(" \r\n")
	}
	b.WriteString("}")
	return b.String()
}

// codecArray builds a JSON array from values.
func codecArray(values []string, spaced bool) string {
	if spaced {
		return "[ " + strings.Join(values, " ,\n ") + " ]"
	}
	return "[" + strings.Join(values, ",") + "]"
}

// ---------------------------------------------------------------------
// Params: every hand-coded kind

// codecKinds has a field of every hand-coded kind (16 fields: the plan
// indexes them in a map).
type codecKinds struct {
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

// codecKindsStd is codecKinds as encoding/json decodes it: Raw is a
// []byte to encoding/json (base64), so it stands as a json.RawMessage.
type codecKindsStd struct {
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

func (s codecKindsStd) kinds() codecKinds {
	return codecKinds{
		B: s.B, I: s.I, I8: s.I8, I16: s.I16, I32: s.I32, I64: s.I64,
		U: s.U, U8: s.U8, U16: s.U16, U32: s.U32, U64: s.U64,
		F32: s.F32, F64: s.F64, S: s.S, R: handler.Raw(s.R), RM: s.RM,
	}
}

var codecKindNames = []string{"b", "i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64", "f32", "f64", "s", "r", "rm"}

// codecKindsBase is a valid value for every field, in field order.
var codecKindsBase = []string{"true", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "1.5", "2.5", `"s"`, `{"r":1}`, `[2]`}

// codecWith returns codecKindsBase with field name set to value.
func codecWith(name, value string) []string {
	vals := append([]string(nil), codecKindsBase...)
	for i, n := range codecKindNames {
		if n == name {
			vals[i] = value
			return vals
		}
	}
	panic("no field " + name)
}

func codecKeepKinds(p codecKinds) codecKinds {
	if p.R != nil {
		p.R = bytes.Clone(p.R) // valid only until the method returns
	}
	return p
}

func TestCodecParams_allKinds(t *testing.T) {
	tab, last := codecEcho(t, codecKeepKinds)
	cases := []struct {
		at     string
		values []string // in field order
	}{
		{codecAt(), codecKindsBase},
		{codecAt(), []string{"false", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", `""`, `0`, `0`}},
		// the minimum of every type
		{codecAt(), []string{"false", "-9223372036854775808", "-128", "-32768", "-2147483648", "-9223372036854775808",
			"0", "0", "0", "0", "0", "-3.4028234663852886e38", "-1.7976931348623157e308", `"\u0000"`, `"x"`, `false`}},
		// the maximum of every type
		{codecAt(), []string{"true", "9223372036854775807", "127", "32767", "2147483647", "9223372036854775807",
			"18446744073709551615", "255", "65535", "4294967295", "18446744073709551615",
			"3.4028234663852886e38", "1.7976931348623157e308", `"\uffff"`, `[1,[2,{"a":[]}]]`, `{"a":{"b":null}}`}},
		// -0, exponents and fractions where they are allowed, denormals
		{codecAt(), []string{"true", "-0", "-0", "-0", "-0", "-0", "0", "0", "0", "0", "0",
			"1e-45", "5e-324", `"é😀"`, `-1.5E+3`, `"\ud83d\ude00"`}},
		{codecAt(), []string{"true", "-1", "-1", "-1", "-1", "-1", "1", "1", "1", "1", "1",
			"1E2", "-0", `"a\"b"`, `true`, `null`}},
		{codecAt(), []string{"true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
			"0.1", "0.1", `"0.1"`, `"\u2028"`, `1e999`}},
		{codecAt(), []string{"true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
			"16777217", "9007199254740993", `"x"`, `1.000000000000000000001`, `{}`}},
		{codecAt(), []string{"true", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
			"1e-50", "1e-400", `"x"`, `[ 1 , 2 ]`, `{ "a" : 1 }`}},
		// null leaves every value zero (Raw receives the null itself)
		{codecAt(), []string{"null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null",
			"null", "null", "null", "null", "null"}},
	}
	for _, c := range cases {
		var std codecKindsStd
		object := codecObject(codecKindNames, c.values, false)
		if err := json.Unmarshal([]byte(object), &std); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		want := std.kinds()
		forms := []string{
			object,
			codecObject(codecKindNames, c.values, true),
			codecArray(c.values, false),
			codecArray(c.values, true),
		}
		// Members in reverse order, and an unknown one.
		rev := make([]string, 0, len(c.values)+1)
		for i := len(c.values) - 1; i >= 0; i-- {
			rev = append(rev, strconv.Quote(codecKindNames[i])+":"+c.values[i])
		}
		rev = append(rev, `"unknown":[{"b":"x"}]`)
		forms = append(forms, "{"+strings.Join(rev, ",")+"}")
		for _, params := range forms {
			*last = codecKinds{}
			res, e := codecRoundTrip(t, c.at, tab, "echo", params)
			if e != nil {
				t.Errorf("%s: params %s: error %d %q", c.at, params, e.Code, e.Message)
				continue
			}
			if !reflect.DeepEqual(*last, want) {
				t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, params, *last, want)
			}
			// the echoed struct is encoded by sonic: the same JSON value
			// as encoding/json's (Raw as base64 in both)
			if w := codecStdEncode(t, want); !codecSameJSON(res, w) {
				t.Errorf("%s: params %s\nresult %s\nwant   %s", c.at, params, res, w)
			}
		}
	}
}

func TestCodecParams_kindErrors(t *testing.T) {
	tab, _ := codecEcho(t, codecKeepKinds)
	cases := []struct {
		at     string
		field  string
		value  string
		reason string // part of the message, after the field name
	}{
		// integer overflow, per type
		{codecAt(), "i8", "128", "integer out of range"},
		{codecAt(), "i8", "-129", "integer out of range"},
		{codecAt(), "i16", "32768", "integer out of range"},
		{codecAt(), "i16", "-32769", "integer out of range"},
		{codecAt(), "i32", "2147483648", "integer out of range"},
		{codecAt(), "i32", "-2147483649", "integer out of range"},
		{codecAt(), "i64", "9223372036854775808", "integer out of range"},
		{codecAt(), "i64", "-9223372036854775809", "integer out of range"},
		{codecAt(), "i", "9223372036854775808", "integer out of range"},
		{codecAt(), "i", "-99999999999999999999999", "integer out of range"},
		{codecAt(), "u8", "256", "integer out of range"},
		{codecAt(), "u16", "65536", "integer out of range"},
		{codecAt(), "u32", "4294967296", "integer out of range"},
		{codecAt(), "u64", "18446744073709551616", "integer out of range"},
		{codecAt(), "u64", "99999999999999999999", "integer out of range"},
		{codecAt(), "u", "18446744073709551616", "integer out of range"},
		// negative into unsigned
		{codecAt(), "u", "-1", "expected a non-negative integer"},
		{codecAt(), "u8", "-1", "expected a non-negative integer"},
		{codecAt(), "u16", "-255", "expected a non-negative integer"},
		{codecAt(), "u32", "-1", "expected a non-negative integer"},
		{codecAt(), "u64", "-18446744073709551615", "expected a non-negative integer"},
		// fractions and exponents into integers
		{codecAt(), "i", "1.5", "expected an integer"},
		{codecAt(), "i", "1.0", "expected an integer"},
		{codecAt(), "i8", "1e1", "expected an integer"},
		{codecAt(), "i16", "1E+0", "expected an integer"},
		{codecAt(), "i32", "-0.0", "expected an integer"},
		{codecAt(), "i64", "1e-0", "expected an integer"},
		{codecAt(), "u", "1.5", "expected a non-negative integer"},
		{codecAt(), "u8", "2e0", "expected a non-negative integer"},
		{codecAt(), "u64", "0.0", "expected a non-negative integer"},
		// floats out of range
		{codecAt(), "f32", "3.5e38", "number out of range"},
		{codecAt(), "f32", "-1e39", "number out of range"},
		{codecAt(), "f64", "1e309", "number out of range"},
		{codecAt(), "f64", "-2e308", "number out of range"},
		// the wrong JSON type for each kind
		{codecAt(), "b", "1", "expected a boolean"},
		{codecAt(), "b", `"true"`, "expected a boolean"},
		{codecAt(), "b", `[true]`, "expected a boolean"},
		{codecAt(), "b", `{}`, "expected a boolean"},
		{codecAt(), "i", `"1"`, "expected an integer"},
		{codecAt(), "i", `true`, "expected an integer"},
		{codecAt(), "i", `[1]`, "expected an integer"},
		{codecAt(), "i", `{"a":1}`, "expected an integer"},
		{codecAt(), "i8", `false`, "expected an integer"},
		{codecAt(), "i16", `""`, "expected an integer"},
		{codecAt(), "i32", `[]`, "expected an integer"},
		{codecAt(), "i64", `"9"`, "expected an integer"},
		{codecAt(), "u", `"1"`, "expected a non-negative integer"},
		{codecAt(), "u8", `true`, "expected a non-negative integer"},
		{codecAt(), "u16", `[1]`, "expected a non-negative integer"},
		{codecAt(), "u32", `{}`, "expected a non-negative integer"},
		{codecAt(), "u64", `"18446744073709551615"`, "expected a non-negative integer"},
		{codecAt(), "f32", `"1.5"`, "expected a number"},
		{codecAt(), "f32", `true`, "expected a number"},
		{codecAt(), "f64", `[1.5]`, "expected a number"},
		{codecAt(), "f64", `{"f":1}`, "expected a number"},
		{codecAt(), "f64", `false`, "expected a number"},
		{codecAt(), "s", `1`, "expected a string"},
		{codecAt(), "s", `true`, "expected a string"},
		{codecAt(), "s", `["s"]`, "expected a string"},
		{codecAt(), "s", `{"s":"s"}`, "expected a string"},
		{codecAt(), "s", `false`, "expected a string"},
	}
	for _, c := range cases {
		values := codecWith(c.field, c.value)
		object := codecObject(codecKindNames, values, false)
		// encoding/json refuses these too
		var std codecKindsStd
		if err := json.Unmarshal([]byte(object), &std); err == nil {
			t.Errorf("%s: encoding/json accepts %s: %s", c.at, c.field, c.value)
		}
		for _, params := range []string{object, codecArray(values, false), codecObject(codecKindNames, values, true)} {
			res, e := codecRoundTrip(t, c.at, tab, "echo", params)
			codecWantInvalidParams(t, c.at, e, res, c.field+": "+c.reason)
		}
	}
}

// TestCodecParams_uintMinusZero: -0 is refused for unsigned integers, as
// encoding/json refuses it.
func TestCodecParams_uintMinusZero(t *testing.T) {
	tab, _ := codecEcho(t, codecKeepKinds)
	at := codecAt()
	values := codecWith("u64", "-0")
	object := codecObject(codecKindNames, values, false)
	var std codecKindsStd
	if err := json.Unmarshal([]byte(object), &std); err == nil {
		t.Fatalf("%s: encoding/json accepts -0 for uint64", at)
	}
	res, e := codecRoundTrip(t, at, tab, "echo", object)
	codecWantInvalidParams(t, at, e, res, "u64: expected a non-negative integer")
}

// ---------------------------------------------------------------------
// Params: strings

type codecStr struct {
	S string `json:"s"`
}

func TestCodecParams_strings(t *testing.T) {
	tab, last := codecEcho[codecStr](t, nil)
	cases := []struct {
		at   string
		json string // the JSON string literal
	}{
		{codecAt(), `""`},
		{codecAt(), `"plain ascii"`},
		{codecAt(), `"\"\\\/\b\f\n\r\t"`},
		{codecAt(), `"\u0000\u0001\u001f\u007f"`},
		{codecAt(), `"\u0041\u00e9\u00E9\u4e2d\uFFFF"`},
		{codecAt(), `"\ud83d\ude00 \uD83D\uDE00"`},            // surrogate pairs
		{codecAt(), `"\ud800"`},                               // lone high surrogate
		{codecAt(), `"\udc00"`},                               // lone low surrogate
		{codecAt(), `"\ud800x"`},                              // high surrogate then a letter
		{codecAt(), `"\ud800\u0041"`},                         // high surrogate then an escape
		{codecAt(), `"\ud800\ud800\udc00"`},                   // lone then a pair
		{codecAt(), `"\udc00\ud800"`},                         // reversed pair
		{codecAt(), `"\ud83d\ude00\ud83d"`},                   // pair then lone
		{codecAt(), `"\ud83d\\ude00"`},                        // high surrogate then an escaped backslash
		{codecAt(), `"é ü 日本 😀  <>&"`},                        // raw non-ASCII, U+2028/9, HTML
		{codecAt(), `"tab\there, \"quoted\" and \\\\ end\\"`}, // escapes mixed with text
		{codecAt(), `"` + strings.Repeat(`ab\n`, 3000) + `"`},
	}
	for _, c := range cases {
		var want codecStr
		if err := json.Unmarshal([]byte(`{"s":`+c.json+`}`), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		for _, params := range []string{`{"s":` + c.json + `}`, `[` + c.json + `]`} {
			*last = codecStr{S: "stale"}
			res, e := codecRoundTrip(t, c.at, tab, "echo", params)
			if e != nil {
				t.Errorf("%s: %s: error %d %q", c.at, params, e.Code, e.Message)
				continue
			}
			if last.S != want.S {
				t.Errorf("%s: %s\ndecoded %+q\nwant    %+q", c.at, params, last.S, want.S)
			}
			if w := codecStdEncode(t, want); !codecSameJSON(res, w) {
				t.Errorf("%s: result %s, want %s", c.at, res, w)
			}
		}
	}
}

// ---------------------------------------------------------------------
// Params: nested and slow field types (sonic)

// codecUpper decodes a JSON string upper-cased: a type with UnmarshalJSON.
type codecUpper string

func (u *codecUpper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = codecUpper(strings.ToUpper(s))
	return nil
}

type codecNested struct {
	A int      `json:"a"`
	B []string `json:"b"`
	C *float64 `json:"c"`
}

type codecSlow struct {
	N  codecNested    `json:"n"`
	L  []string       `json:"l"`
	M  map[string]int `json:"m"`
	P  *int           `json:"p"`
	T  time.Time      `json:"t"`
	U  codecUpper     `json:"u"`
	A  [2]int         `json:"a"`
	IP netip.Addr     `json:"ip"` // encoding.TextUnmarshaler
	X  int            `json:"x"`
}

var codecSlowNames = []string{"n", "l", "m", "p", "t", "u", "a", "ip", "x"}

func TestCodecParams_slowFields(t *testing.T) {
	tab, last := codecEcho[codecSlow](t, nil)
	cases := []struct {
		at     string
		values []string // in field order
	}{
		{codecAt(), []string{`{"a":1,"b":["x","y"],"c":2.5}`, `["p","q"]`, `{"k":1,"l":-2}`, `7`,
			`"2024-02-29T12:34:56.789Z"`, `"shout"`, `[3,4]`, `"192.0.2.1"`, `9`}},
		{codecAt(), []string{`{}`, `[]`, `{}`, `0`, `"0001-01-01T00:00:00Z"`, `""`, `[0,0]`, `"::1"`, `0`}},
		{codecAt(), []string{`{"a":1,"zz":{"deep":[1]}}`, `["\u00e9\ud83d\ude00"]`, `{"\u006b":3}`, `-1`,
			`"2000-01-01T00:00:00Z"`, `"\u0061b"`, `[-1,1]`, `"2001:db8::1"`, `1`}},
		// null: the zero value (time.Time and codecUpper are given "null" and keep it)
		{codecAt(), []string{`null`, `null`, `null`, `null`, `null`, `null`, `null`, `null`, `1`}},
	}
	for _, c := range cases {
		var want codecSlow
		object := codecObject(codecSlowNames, c.values, false)
		if err := json.Unmarshal([]byte(object), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		for _, params := range []string{object, codecArray(c.values, false), codecObject(codecSlowNames, c.values, true)} {
			*last = codecSlow{}
			res, e := codecRoundTrip(t, c.at, tab, "echo", params)
			if e != nil {
				t.Errorf("%s: %s: error %d %q", c.at, params, e.Code, e.Message)
				continue
			}
			if !reflect.DeepEqual(*last, want) {
				t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, params, *last, want)
			}
			if w := codecStdEncode(t, want); !codecSameJSON(res, w) {
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
		{codecAt(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"ip":"::1","x":1}`, ""},
		{codecAt(), `{"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"ip":"::1","x":1}`, "n"},
		{codecAt(), `{"n":{},"u":"","a":[1,2],"ip":"::1","x":1}`, "t"},
		{codecAt(), `{"n":{},"t":"2000-01-01T00:00:00Z","a":[1,2],"ip":"::1","x":1}`, "u"},
		{codecAt(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","ip":"::1","x":1}`, "a"},
		{codecAt(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"x":1}`, "ip"},
		{codecAt(), `{"n":{},"t":"2000-01-01T00:00:00Z","u":"","a":[1,2],"ip":"::1"}`, "x"},
		{codecAt(), `[{},[],{},null,"2000-01-01T00:00:00Z","",[1,2],"::1"]`, "x"},
		{codecAt(), `[]`, "n"},
	}
	for _, c := range opt {
		res, e := codecRoundTrip(t, c.at, tab, "echo", c.params)
		if c.missing == "" {
			if e != nil {
				t.Errorf("%s: error %d %q", c.at, e.Code, e.Message)
			}
			continue
		}
		codecWantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
	}

	// A value of the wrong type for a slow field is -32602 naming it, as
	// encoding/json refuses it.
	bad := []struct {
		at    string
		field string
		value string
	}{
		{codecAt(), "n", `[1]`},
		{codecAt(), "n", `{"a":"x"}`},
		{codecAt(), "l", `"x"`},
		{codecAt(), "l", `[1]`},
		{codecAt(), "m", `{"k":"v"}`},
		{codecAt(), "m", `[1]`},
		{codecAt(), "p", `"1"`},
		{codecAt(), "p", `1.5`},
		{codecAt(), "t", `"yesterday"`},
		{codecAt(), "t", `12`},
		{codecAt(), "u", `12`},
		{codecAt(), "a", `{"0":1}`},
		{codecAt(), "ip", `"not an address"`},
	}
	base := []string{`{}`, `[]`, `{}`, `1`, `"2000-01-01T00:00:00Z"`, `""`, `[1,2]`, `"::1"`, `1`}
	for _, c := range bad {
		values := append([]string(nil), base...)
		values[codecIndexOf(codecSlowNames, c.field)] = c.value
		object := codecObject(codecSlowNames, values, false)
		var std codecSlow
		if err := json.Unmarshal([]byte(object), &std); err == nil {
			t.Errorf("%s: encoding/json accepts %s: %s", c.at, c.field, c.value)
		}
		for _, params := range []string{object, codecArray(values, false)} {
			res, e := codecRoundTrip(t, c.at, tab, "echo", params)
			codecWantInvalidParams(t, c.at, e, res, c.field+": ")
		}
	}
}

func codecIndexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	panic("no " + name)
}

// ---------------------------------------------------------------------
// Params: embedded structs, tags, names

type CodecBase struct {
	ID   int    `json:"id"`
	Note string `json:"note,omitempty"`
}

type codecInner struct {
	Deep bool `json:"deep"`
}

type codecTagged struct {
	CodecBase
	codecInner
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

func TestCodecParams_tagsAndEmbedding(t *testing.T) {
	tab, last := codecEcho[codecTagged](t, nil)
	full := `{"id":1,"note":"n","deep":true,"name":"nm","-":2,"full_name":"f","opt":3,"zero":4,"Plain":"p","ptr":"q"}`
	cases := []struct {
		at      string
		params  string
		object  string // what encoding/json is given: params when ""
		missing string // a field that must be reported missing
		tooMany bool
	}{
		{at: codecAt(), params: full},
		// by position, in field order, embedded fields first
		{at: codecAt(), params: `[1,"n",true,"nm",2,"f",3,4,"p","q"]`, object: full},
		// fewer positional params: only optional fields left out
		{at: codecAt(), params: `[1,"n",true,"nm",2,"f",3,4,"p"]`,
			object: `{"id":1,"note":"n","deep":true,"name":"nm","-":2,"full_name":"f","opt":3,"zero":4,"Plain":"p"}`},
		{at: codecAt(), params: `[1,"n",true,"nm",2,"f",3,4,"p","q",5]`, tooMany: true},
		{at: codecAt(), params: `[1,"n",true,"nm",2,"f",3,4,"p","q",null]`, tooMany: true},
		// optional fields (omitempty, omitzero, pointer) missing
		{at: codecAt(), params: `{"id":1,"deep":false,"name":"nm","-":2,"full_name":"f","Plain":"p"}`},
		// unknown members, the "-" field's Go name and unexported fields are ignored
		{at: codecAt(), params: `{"Skip":9,"hidden":9,"Hidden":9,"x":{"id":7},"id":1,"deep":false,"name":"nm","-":2,"full_name":"f","Plain":"p","Renamed":"no","extra":[1,2,3]}`},
		// escaped keys match the field
		{at: codecAt(), params: `{"\u0069d":1,"d\u0065ep":true,"n\u0061me":"nm","\u002d":2,"full\u005fname":"f","\u0050lain":"p","\u006e\u006f\u0074\u0065":"\u006e"}`},
		// a key given twice: the last wins
		{at: codecAt(), params: `{"id":1,"deep":true,"name":"a","-":2,"full_name":"f","Plain":"p","name":"b","id":5}`},
		// null values leave zero values, and count as given
		{at: codecAt(), params: `{"id":null,"note":null,"deep":null,"name":null,"-":null,"full_name":null,"opt":null,"zero":null,"Plain":null,"ptr":null}`},
		{at: codecAt(), params: `[null,null,null,null,null,null,null,null,null]`,
			object: `{"id":null,"note":null,"deep":null,"name":null,"-":null,"full_name":null,"opt":null,"zero":null,"Plain":null}`},
		// missing required fields: -32602 naming the field
		{at: codecAt(), params: `{"deep":true,"name":"nm","-":2,"full_name":"f","Plain":"p"}`, missing: "id"},
		{at: codecAt(), params: `{"id":1,"name":"nm","-":2,"full_name":"f","Plain":"p"}`, missing: "deep"},
		{at: codecAt(), params: `{"id":1,"deep":true,"-":2,"full_name":"f","Plain":"p"}`, missing: "name"},
		{at: codecAt(), params: `{"id":1,"deep":true,"name":"nm","full_name":"f","Plain":"p"}`, missing: "-"},
		{at: codecAt(), params: `{"id":1,"deep":true,"name":"nm","-":2,"Renamed":"f","Plain":"p"}`, missing: "full_name"},
		{at: codecAt(), params: `{"id":1,"deep":true,"name":"nm","-":2,"full_name":"f"}`, missing: "Plain"},
		{at: codecAt(), params: `[1,"n",true,"nm",2]`, missing: "full_name"},
		{at: codecAt(), params: `[]`, missing: "id"},
		{at: codecAt(), params: `{}`, missing: "id"},
		{at: codecAt(), params: ``, missing: "id"},
	}
	for _, c := range cases {
		*last = codecTagged{}
		res, e := codecRoundTrip(t, c.at, tab, "echo", c.params)
		switch {
		case c.tooMany:
			codecWantInvalidParams(t, c.at, e, res, "too many params: the method takes 10")
			continue
		case c.missing != "":
			codecWantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
			continue
		case e != nil:
			t.Errorf("%s: %s: error %d %q", c.at, c.params, e.Code, e.Message)
			continue
		}
		object := c.object
		if object == "" {
			object = c.params
		}
		var want codecTagged
		if err := json.Unmarshal([]byte(object), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		if !reflect.DeepEqual(*last, want) {
			t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", c.at, c.params, *last, want)
		}
		if w := codecStdEncode(t, want); !codecSameJSON(res, w) {
			t.Errorf("%s: result %s\nwant   %s", c.at, res, w)
		}
	}
}

type codecSmall struct {
	A int         `json:"a"`
	B string      `json:"b"`
	N codecNested `json:"n"`
}

// TestCodecParams_exactCase records where jetrpc differs from
// encoding/json on purpose: member names match field names in exact
// case only, at the top level and in nested structs.
func TestCodecParams_exactCase(t *testing.T) {
	tab, last := codecEcho[codecSmall](t, nil)
	cases := []struct {
		at      string
		params  string
		want    codecSmall // what jetrpc decodes; missing when ""
		missing string
	}{
		{at: codecAt(), params: `{"A":1,"b":"x","n":{}}`, missing: "a"},
		{at: codecAt(), params: `{"a":1,"B":"x","n":{}}`, missing: "b"},
		{at: codecAt(), params: `{"a":1,"b":"x","N":{}}`, missing: "n"},
		{at: codecAt(), params: `{"a":1,"b":"x","n":{},"A":2,"B":"y"}`, want: codecSmall{A: 1, B: "x"}},
		{at: codecAt(), params: `{"A":2,"a":1,"b":"x","n":{"A":5,"a":6,"B":["q"]}}`, want: codecSmall{A: 1, B: "x", N: codecNested{A: 6}}},
		{at: codecAt(), params: `{"a":1,"b":"x","n":{},"\u0041":2}`, want: codecSmall{A: 1, B: "x"}},
	}
	for _, c := range cases {
		// encoding/json matches case-insensitively: it takes these
		var std codecSmall
		if err := json.Unmarshal([]byte(c.params), &std); err != nil {
			t.Fatalf("%s: encoding/json: %v", c.at, err)
		}
		*last = codecSmall{}
		res, e := codecRoundTrip(t, c.at, tab, "echo", c.params)
		if c.missing != "" {
			codecWantInvalidParams(t, c.at, e, res, c.missing+": missing required param")
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

// ---------------------------------------------------------------------
// Params: whole-params types other than structs

// codecParamsCase is one params case for a params type chosen by the
// case; run dispatches it.
type codecParamsCase struct {
	at   string
	name string
	run  func(t *testing.T, at string)
}

// codecFits is a params case that fits P: P is decoded as encoding/json
// decodes the same JSON (std, when not "", is what encoding/json is
// given instead: the object form of positional params).
func codecFits[P any](params, std string) codecParamsCase {
	return codecParamsCase{at: codecCaller(2), name: fmt.Sprintf("%T %s", *new(P), params), run: func(t *testing.T, at string) {
		tab, last := codecEcho[P](t, nil)
		if std == "" {
			std = params
		}
		var want P
		if err := json.Unmarshal([]byte(std), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", at, err)
		}
		res, e := codecRoundTrip(t, at, tab, "echo", params)
		if e != nil {
			t.Fatalf("%s: %s: error %d %q", at, params, e.Code, e.Message)
		}
		if !reflect.DeepEqual(*last, want) {
			t.Errorf("%s: params %s\ndecoded %#v\nwant    %#v", at, params, *last, want)
		}
		if w := codecStdEncode(t, want); !codecSameJSON(res, w) {
			t.Errorf("%s: result %s\nwant   %s", at, res, w)
		}
	}}
}

// codecRefused is a params case that P refuses with -32602 and a message
// holding want.
func codecRefused[P any](params, want string) codecParamsCase {
	return codecParamsCase{at: codecCaller(2), name: fmt.Sprintf("%T %s", *new(P), params), run: func(t *testing.T, at string) {
		tab, _ := codecEcho[P](t, nil)
		res, e := codecRoundTrip(t, at, tab, "echo", params)
		codecWantInvalidParams(t, at, e, res, want)
	}}
}

// codecRawFits is a params case for Raw or json.RawMessage: it receives
// the params text verbatim.
func codecRawFits[P ~[]byte](params string) codecParamsCase {
	return codecParamsCase{at: codecCaller(2), name: fmt.Sprintf("%T %s", *new(P), params), run: func(t *testing.T, at string) {
		tab, last := codecEcho(t, func(p P) P { return P(bytes.Clone(p)) })
		res, e := codecRoundTrip(t, at, tab, "echo", params)
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

type codecPoint struct {
	X int `json:"x"`
	Y int `json:"y"`
}

func TestCodecParams_otherShapes(t *testing.T) {
	cases := []codecParamsCase{
		// Go arrays of hand-coded kinds: exactly N by position
		codecFits[[3]int]("[1,-2,3]", ""),
		codecFits[[3]int](" [ 1 , -2 , 3 ] ", "[1,-2,3]"),
		codecFits[[2]uint8]("[0,255]", ""),
		codecFits[[2]int64]("[-9223372036854775808,9223372036854775807]", ""),
		codecFits[[2]uint64]("[0,18446744073709551615]", ""),
		codecFits[[2]string](`["a\u00e9","\ud83d\ude00"]`, ""),
		codecFits[[2]bool]("[true,false]", ""),
		codecFits[[2]float64]("[1.5,-1e300]", ""),
		codecFits[[2]float32]("[1.5,-1e30]", ""),
		codecFits[[3]int]("[1,null,3]", ""),
		codecFits[[1]string]("[null]", ""),
		codecRefused[[3]int]("[1,2]", "param 3: missing required param"),
		codecRefused[[3]int]("[]", "param 1: missing required param"),
		codecRefused[[3]int]("", "param 1: missing required param"),
		codecRefused[[3]int]("[1,2,3,4]", "too many params: the method takes 3"),
		codecRefused[[3]int](`{"0":1,"1":2,"2":3}`, "params must be an array"),
		codecRefused[[2]int8]("[1,128]", "param 2: integer out of range"),
		codecRefused[[2]uint]("[1,-1]", "param 2: expected a non-negative integer"),
		codecRefused[[2]int]("[1,2.5]", "param 2: expected an integer"),
		codecRefused[[2]string](`["a",1]`, "param 2: expected a string"),
		codecRefused[[2]bool](`[true,"false"]`, "param 2: expected a boolean"),
		codecRefused[[2]float64](`[1,"2"]`, "param 2: expected a number"),
		// arrays of other types go through sonic
		codecFits[[2]codecPoint](`[{"x":1,"y":2},{"x":3}]`, ""),
		codecFits[[2][]int](`[[1],[2,3]]`, ""),
		codecRefused[[2]codecPoint](`{"x":1}`, "params must be an array"),
		// slices
		codecFits[[]int]("[1,2,3]", ""),
		codecFits[[]int]("[]", ""),
		codecFits[[]string](`["a","\n\u2028","😀"]`, ""),
		codecFits[[]float64]("[1e-7,1e21,0.1]", ""),
		codecFits[[]codecPoint](`[{"x":1,"y":2},{"y":-1}]`, ""),
		codecFits[[]any](`[1,"a",null,true,{"b":[1.5]}]`, ""),
		codecRefused[[]int](`{"a":1}`, "params must be an array"),
		codecRefused[[]int](`[1,"2"]`, "Invalid params: "),
		codecRefused[[]uint8](`[256]`, "Invalid params: "),
		// maps
		codecFits[map[string]int](`{"a":1,"b":-2}`, ""),
		codecFits[map[string]int](`{}`, ""),
		codecFits[map[string]any](`{"a":[1,{"b":null}],"c":"d","e":1.5}`, ""),
		codecFits[map[string]codecPoint](`{"p":{"x":1,"y":2}}`, ""),
		codecFits[map[string]string](`{"\u0061":"\u00e9","k\"ey":"v"}`, ""),
		codecRefused[map[string]int](`[1,2]`, "params must be an object"),
		codecRefused[map[string]int](`{"a":"1"}`, "Invalid params: "),
		// an interface takes either
		codecFits[any](`[1,"a"]`, ""),
		codecFits[any](`{"a":{"b":[true]}}`, ""),
		// Raw and json.RawMessage: the params text verbatim
		codecRawFits[handler.Raw](`[1, "a" ,{"b" : null}]`),
		codecRawFits[handler.Raw](`{"a":[1,2,{"b":"c\"d"}],  "e" : "\u0041"}`),
		codecRawFits[handler.Raw](`[]`),
		codecRawFits[handler.Raw](``),
		codecRawFits[json.RawMessage](`{ "a" : [ 1 ] }`),
		codecRawFits[json.RawMessage](`[ ]`),
		codecRawFits[json.RawMessage](``),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.at) })
	}
}

// ---------------------------------------------------------------------
// Results

// codecResultCase is one result case; run registers a method returning
// the value and checks the reply.
type codecResultCase struct {
	at   string
	name string
	run  func(t *testing.T, at string)
}

// codecResultOf dispatches a call to a method that returns v.
func codecResultOf[R any](t *testing.T, at string, v R) ([]byte, *codecRPCError) {
	t.Helper()
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "r", func(context.Context) (R, error) { return v, nil })
	return codecRoundTrip(t, at, tab, "r", "")
}

func codecResultName(v any) string {
	s := fmt.Sprintf("%T %v", v, v)
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// codecExact: the result is byte for byte encoding/json's encoding of v.
func codecExact[R any](v R) codecResultCase {
	return codecResultCase{at: codecCaller(2), name: codecResultName(v), run: func(t *testing.T, at string) {
		got, e := codecResultOf(t, at, v)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		if want := codecStdEncode(t, v); !bytes.Equal(got, want) {
			t.Errorf("%s: %T %#v\nresult %s\nwant   %s", at, v, v, got, want)
		}
	}}
}

// codecSame: the result is the same JSON value as encoding/json's
// encoding of v (sonic's member order and escapes may differ).
func codecSame[R any](v R) codecResultCase {
	return codecResultCase{at: codecCaller(2), name: codecResultName(v), run: func(t *testing.T, at string) {
		got, e := codecResultOf(t, at, v)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		if want := codecStdEncode(t, v); !codecSameJSON(got, want) {
			t.Errorf("%s: %T\nresult %s\nwant   %s", at, v, got, want)
		}
	}}
}

// codecLiteral: the result is exactly want.
func codecLiteral[R any](v R, want string) codecResultCase {
	return codecResultCase{at: codecCaller(2), name: codecResultName(v), run: func(t *testing.T, at string) {
		got, e := codecResultOf(t, at, v)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		if string(got) != want {
			t.Errorf("%s: %T\nresult %s\nwant   %s", at, v, got, want)
		}
	}}
}

// codecInternal: the reply is a -32603 error whose message holds reason.
func codecInternal[R any](v R, reason string) codecResultCase {
	return codecResultCase{at: codecCaller(2), name: codecResultName(v), run: func(t *testing.T, at string) {
		got, e := codecResultOf(t, at, v)
		if e == nil {
			t.Fatalf("%s: want -32603, got result %s", at, got)
		}
		if e.Code != int(handler.CodeInternalError) || !strings.HasPrefix(e.Message, "Internal error") ||
			!strings.Contains(e.Message, reason) {
			t.Errorf("%s: want -32603 %q, got %d %q", at, reason, e.Code, e.Message)
		}
	}}
}

type (
	codecMyInt    int16
	codecMyUint   uint32
	codecMyFloat  float64
	codecMyString string
	codecMyBool   bool
)

// codecMarshaler encodes itself with MarshalJSON (value receiver).
type codecMarshaler struct{ N int }

func (m codecMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{"marshalled": ` + strconv.Itoa(m.N) + ` }`), nil
}

// codecTexter encodes itself with MarshalText.
type codecTexter int

func (m codecTexter) MarshalText() ([]byte, error) {
	return []byte("text-" + strconv.Itoa(int(m))), nil
}

// codecValApp implements JSONAppender with a value receiver, and
// MarshalJSON too: AppendJSON must win.
type codecValApp struct{ N int }

func (a codecValApp) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"n":`...)
	dst = strconv.AppendInt(dst, int64(a.N), 10)
	return append(dst, `,"by":"value"}`...), nil
}

func (a codecValApp) MarshalJSON() ([]byte, error) { return []byte(`"MarshalJSON"`), nil }

// codecPtrApp implements JSONAppender with a pointer receiver.
type codecPtrApp struct{ N int }

func (a *codecPtrApp) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"n":`...)
	dst = strconv.AppendInt(dst, int64(a.N), 10)
	return append(dst, `,"by":"pointer"}`...), nil
}

// codecScalarApp is a non-struct JSONAppender.
type codecScalarApp float64

func (a codecScalarApp) AppendJSON(dst []byte) ([]byte, error) {
	return handler.AppendString(dst, "scalar"), nil
}

// codecFailApp fails to encode itself.
type codecFailApp struct{}

func (codecFailApp) AppendJSON(dst []byte) ([]byte, error) {
	return append(dst, "garbage"...), errors.New("cannot")
}

type codecResult struct {
	Name   string              `json:"name"`
	Tags   []string            `json:"tags"`
	Attrs  map[string]int      `json:"attrs,omitempty"`
	Ptr    *int                `json:"ptr"`
	Bytes  []byte              `json:"bytes"`
	When   time.Time           `json:"when"`
	Inner  codecPoint          `json:"inner"`
	Any    any                 `json:"any"`
	Floats []float64           `json:"floats"`
	Raw    json.RawMessage     `json:"raw"`
	M      codecMarshaler      `json:"m"`
	Text   codecTexter         `json:"text"`
	Keyed  map[codecTexter]int `json:"keyed"`
	hidden int
	Skip   int `json:"-"`
}

// codecTricky are strings to encode: control characters, quotes,
// backslashes, U+2028/U+2029, HTML, invalid UTF-8, non-ASCII.
var codecTricky = []string{
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

func TestCodecResult(t *testing.T) {
	seven := 7
	negZero := math.Copysign(0, -1)
	cases := []codecResultCase{
		// booleans and integers, exact
		codecExact(true),
		codecExact(false),
		codecExact(0),
		codecExact(-1),
		codecExact(math.MaxInt),
		codecExact(math.MinInt),
		codecExact(int8(math.MinInt8)),
		codecExact(int8(math.MaxInt8)),
		codecExact(int16(math.MinInt16)),
		codecExact(int32(math.MinInt32)),
		codecExact(int64(math.MinInt64)),
		codecExact(int64(math.MaxInt64)),
		codecExact(uint(math.MaxUint)),
		codecExact(uint8(255)),
		codecExact(uint16(65535)),
		codecExact(uint32(math.MaxUint32)),
		codecExact(uint64(math.MaxUint64)),
		codecExact(codecMyInt(-5)),
		codecExact(codecMyUint(5)),
		codecExact(codecMyBool(true)),
		// floats, exact, at encoding/json's format boundaries
		codecExact(0.0),
		codecExact(negZero),
		codecExact(1.0),
		codecExact(-1.5),
		codecExact(0.1),
		codecExact(1e-6),
		codecExact(1e-7),
		codecExact(9.999999999999999e-7),
		codecExact(-1e-7),
		codecExact(1.5e-10),
		codecExact(1e20),
		codecExact(1e21),
		codecExact(-1e21),
		codecExact(999999999999999900000.0),
		codecExact(123456789.123),
		codecExact(1e100),
		codecExact(1.2345678901234567e-300),
		codecExact(math.MaxFloat64),
		codecExact(-math.MaxFloat64),
		codecExact(math.SmallestNonzeroFloat64),
		codecExact(2.2250738585072014e-308), // smallest normal
		codecExact(float64(1 << 53)),
		codecExact(codecMyFloat(2.5)),
		codecExact(float32(0)),
		codecExact(float32(negZero)),
		codecExact(float32(0.1)),
		codecExact(float32(1.1)),
		codecExact(float32(16777216)),
		codecExact(float32(1e-6)),
		codecExact(float32(1e-7)),
		codecExact(float32(1e20)),
		codecExact(float32(1e21)),
		codecExact(float32(123456789.123)),
		codecExact(float32(math.MaxFloat32)),
		codecExact(float32(-math.MaxFloat32)),
		codecExact(float32(math.SmallestNonzeroFloat32)),
		codecExact(float32(3.1415927)),
		// strings, exact
		codecExact(codecMyString("named \"string\"\n")),
		// slices and arrays of hand-coded kinds, exact
		codecExact([]int{1, -2, 3}),
		codecExact([]int{}),
		codecExact([]int(nil)),
		codecExact([]string(nil)),
		codecExact([]bool{true, false}),
		codecExact([]int8{-128, 127}),
		codecExact([]int64{math.MinInt64, math.MaxInt64}),
		codecExact([]uint16{0, 65535}),
		codecExact([]uint64{0, math.MaxUint64}),
		codecExact([]float64{0, negZero, 1e-7, 1e21, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64}),
		codecExact([]float32{0, 0.1, 1e-7, 1e21, math.MaxFloat32, math.SmallestNonzeroFloat32}),
		codecExact(codecTricky),
		codecExact([]codecMyString{"a", "b\u2028"}),
		codecExact([3]int{1, 2, 3}),
		codecExact([0]int{}),
		codecExact([2]string{"a\x00", "\xff"}),
		codecExact([4]byte{1, 2, 3, 255}), // arrays of bytes are arrays
		codecExact([2]float32{1.5, -0.25}),
		codecExact([2]bool{}),
		codecExact([]json.RawMessage{json.RawMessage(`{"a" : 1}`), nil, json.RawMessage(` [ 1 , "x y" ] `)}),
		// Raw: verbatim, compacted; empty is null
		codecExact(json.RawMessage(`{"a":[1,2,{"b":"c"}]}`)),
		codecExact(json.RawMessage(" {\n\t\"a b\" : [ 1 , \"x \\\" y\" ] ,\r\n \"c\":null } ")),
		codecExact(json.RawMessage(nil)),
		codecExact(json.RawMessage(`"\u2028 <&>"`)),
		codecLiteral(handler.Raw(`{"a":[1,2,{"b":"c"}]}`), `{"a":[1,2,{"b":"c"}]}`),
		codecLiteral(handler.Raw(" {\n\t\"a b\" : [ 1 , \"x \\\" y\\\\\" ] ,\r\n \"c\":null } "), `{"a b":[1,"x \" y\\"],"c":null}`),
		codecLiteral(handler.Raw("  42  "), `42`),
		codecLiteral(handler.Raw(`"  s  "`), `"  s  "`),
		codecLiteral(handler.Raw(nil), `null`),
		codecLiteral(handler.Raw{}, `null`),
		codecLiteral([]handler.Raw{handler.Raw(`1`), nil, handler.Raw(` { "a" : 2 } `)}, `[1,null,{"a":2}]`),
		codecLiteral([2]handler.Raw{handler.Raw(`true`), handler.Raw(`"x"`)}, `[true,"x"]`),
		// sonic: the same JSON value as encoding/json
		codecSame(codecPoint{X: 1, Y: -2}),
		codecSame(&codecPoint{X: 3}),
		codecSame((*codecPoint)(nil)),
		codecSame(&seven),
		codecSame((*int)(nil)),
		codecSame(map[string]int{"b": 2, "a": 1, "é": 3}),
		codecSame(map[string]int(nil)),
		codecSame(map[string]any{"a": []any{1.5, "x", nil, true}, "b": map[string]any{}}),
		codecSame([]byte("bytes \x00\xff")),
		codecSame([]byte{}),
		codecSame([]byte(nil)),
		codecSame(time.Date(2024, 2, 29, 12, 34, 56, 789, time.UTC)),
		codecSame(time.Date(2024, 2, 29, 12, 34, 56, 0, time.FixedZone("x", 3600))),
		codecSame(codecMarshaler{N: 5}),
		codecSame(codecTexter(3)),
		codecSame([]codecPoint{{1, 2}, {3, 4}}),
		codecSame([]*codecPoint{{1, 2}, nil}),
		codecSame([][]int{{1}, nil, {}}),
		codecSame(any(map[string]int{"x": 1})),
		codecSame(any(nil)),
		codecSame(codecResult{
			Name: "r \"1\" <&> \u2028", Tags: []string{"a", "\xff"}, Attrs: map[string]int{"k": 1}, Ptr: &seven,
			Bytes: []byte{0, 1, 2}, When: time.Date(2000, 1, 2, 3, 4, 5, 6, time.UTC), Inner: codecPoint{1, 2},
			Any: []any{"x", 1.5}, Floats: []float64{1e-7, 1e21, negZero}, Raw: json.RawMessage(`{"z" : [1]}`),
			M: codecMarshaler{N: 2}, Text: 4, Keyed: map[codecTexter]int{1: 1, 2: 2}, hidden: 1, Skip: 2,
		}),
		codecSame(codecResult{}),
		// JSONAppender, value and pointer receivers: what AppendJSON writes
		codecLiteral(codecValApp{N: 1}, `{"n":1,"by":"value"}`),
		codecLiteral(&codecValApp{N: 2}, `{"n":2,"by":"value"}`),
		codecLiteral(codecPtrApp{N: 3}, `{"n":3,"by":"pointer"}`),
		codecLiteral(&codecPtrApp{N: 4}, `{"n":4,"by":"pointer"}`),
		codecLiteral(codecScalarApp(1), `"scalar"`),
		codecInternal(codecFailApp{}, "invalid value"),
		// not finite: -32603
		codecInternal(math.NaN(), "result is not a finite number"),
		codecInternal(math.Inf(1), "result is not a finite number"),
		codecInternal(math.Inf(-1), "result is not a finite number"),
		codecInternal(float32(math.NaN()), "result is not a finite number"),
		codecInternal(float32(math.Inf(1)), "result is not a finite number"),
		codecInternal(float32(math.Inf(-1)), "result is not a finite number"),
		codecInternal(codecMyFloat(math.Inf(1)), "result is not a finite number"),
		codecInternal([]float64{1, math.NaN()}, "result is not a finite number"),
		codecInternal([2]float32{float32(math.Inf(-1)), 0}, "result is not a finite number"),
		codecInternal(codecResult{Floats: []float64{math.NaN()}}, "Internal error"),
		codecInternal(map[string]float64{"a": math.Inf(1)}, "Internal error"),
		codecInternal(&struct{ F float32 }{F: float32(math.NaN())}, "Internal error"),
		// Raw that is not one valid JSON value: -32603
		codecInternal(handler.Raw(`{`), "raw result is not valid JSON"),
		codecInternal(handler.Raw(`[1,]`), "raw result is not valid JSON"),
		codecInternal(handler.Raw(`1 2`), "raw result is not valid JSON"),
		codecInternal(handler.Raw(`   `), "raw result is not valid JSON"),
		codecInternal(handler.Raw(`{"a":1}x`), "raw result is not valid JSON"),
		codecInternal(handler.Raw(`'single'`), "raw result is not valid JSON"),
		codecInternal(handler.Raw("\"\xff\""), "raw result is not valid JSON"),
		codecInternal(handler.Raw(`NaN`), "raw result is not valid JSON"),
		codecInternal(json.RawMessage(`nope`), "raw result is not valid JSON"),
		codecInternal([]handler.Raw{handler.Raw(`1`), handler.Raw(`{"a"}`)}, "raw result is not valid JSON"),
	}
	for _, s := range codecTricky {
		cases = append(cases, codecExact(s))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.at) })
	}
}

// ---------------------------------------------------------------------
// AppendString

// codecCheckAppendString checks AppendString against encoding/json for s.
func codecCheckAppendString(t *testing.T, s string) {
	t.Helper()
	want := codecStdEncode(t, s)
	if got := handler.AppendString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("AppendString(%+q)\ngot  %s\nwant %s", s, got, want)
	}
	prefix := []byte("pre")
	if got := handler.AppendString(prefix, s); string(got) != "pre"+string(want) {
		t.Fatalf("AppendString(%q, %+q) = %s", "pre", s, got)
	}
	if !utf8.Valid(want) || !json.Valid(want) {
		t.Fatalf("encoding/json wrote invalid JSON for %+q: %s", s, want)
	}
}

func TestCodecAppendString(t *testing.T) {
	for _, s := range codecTricky {
		codecCheckAppendString(t, s)
	}
	for b := range 256 {
		codecCheckAppendString(t, string([]byte{byte(b)}))
		codecCheckAppendString(t, "a"+string([]byte{byte(b)})+"z")
	}
	for _, r := range []rune{0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0x2027, 0x2028, 0x2029, 0x202a, 0xfffd, 0xffff, 0x10000, 0x10ffff} {
		codecCheckAppendString(t, string(r))
		codecCheckAppendString(t, "<"+string(r)+string(r)+">")
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range codecTricky {
		f.Add(s)
	}
	f.Add("\u2028")
	f.Add("\u2029")
	f.Add("\x1f\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		codecCheckAppendString(t, s)
	})
}
