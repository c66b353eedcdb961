package handler_test

// Tests of result encoding (result.go) through Dispatch, with
// encoding/json as the reference: the hand-coded kinds and slices of them
// byte for byte, sonic's output as the same JSON value, JSONAppender, Raw
// wherever it appears, and the results that cannot be encoded (-32603).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// resultCase is one result case; run registers a method returning
// the value and checks the reply.
type resultCase struct {
	at   string
	name string
	run  func(t *testing.T, at string)
}

// resultOf dispatches a call to a method that returns v.
func resultOf[R any](t *testing.T, at string, v R) ([]byte, *wireError) {
	t.Helper()
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "r", func(context.Context) (R, error) { return v, nil })
	return roundTrip(t, at, tab, "r", "")
}

func resultCaseName(v any) string {
	s := fmt.Sprintf("%T %v", v, v)
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// resultExact: the result is byte for byte encoding/json's encoding of v.
func resultExact[R any](v R) resultCase {
	return resultCase{at: callerLine(2), name: resultCaseName(v), run: func(t *testing.T, at string) {
		got, e := resultOf(t, at, v)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		if want := stdlibEncode(t, v); !bytes.Equal(got, want) {
			t.Errorf("%s: %T %#v\nresult %s\nwant   %s", at, v, v, got, want)
		}
	}}
}

// resultSame: the result is the same JSON value as encoding/json's
// encoding of v (sonic's member order and escapes may differ).
func resultSame[R any](v R) resultCase {
	return resultCase{at: callerLine(2), name: resultCaseName(v), run: func(t *testing.T, at string) {
		got, e := resultOf(t, at, v)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		if want := stdlibEncode(t, v); !sameJSON(got, want) {
			t.Errorf("%s: %T\nresult %s\nwant   %s", at, v, got, want)
		}
	}}
}

// resultLiteral: the result is exactly want.
func resultLiteral[R any](v R, want string) resultCase {
	return resultCase{at: callerLine(2), name: resultCaseName(v), run: func(t *testing.T, at string) {
		got, e := resultOf(t, at, v)
		if e != nil {
			t.Fatalf("%s: error %d %q", at, e.Code, e.Message)
		}
		if string(got) != want {
			t.Errorf("%s: %T\nresult %s\nwant   %s", at, v, got, want)
		}
	}}
}

// resultInternalError: the reply is a -32603 error whose message holds reason.
func resultInternalError[R any](v R, reason string) resultCase {
	return resultCase{at: callerLine(2), name: resultCaseName(v), run: func(t *testing.T, at string) {
		got, e := resultOf(t, at, v)
		if e == nil {
			t.Fatalf("%s: want -32603, got result %s", at, got)
		}
		if e.Code != int(parser.CodeInternalError) || !strings.HasPrefix(e.Message, "Internal error") ||
			!strings.Contains(e.Message, reason) {
			t.Errorf("%s: want -32603 %q, got %d %q", at, reason, e.Code, e.Message)
		}
	}}
}

type (
	namedInt    int16
	namedUint   uint32
	namedFloat  float64
	namedString string
	namedBool   bool
)

// selfMarshaler encodes itself with MarshalJSON (value receiver).
type selfMarshaler struct{ N int }

func (m selfMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{"marshalled": ` + strconv.Itoa(m.N) + ` }`), nil
}

// textMarshaler encodes itself with MarshalText.
type textMarshaler int

func (m textMarshaler) MarshalText() ([]byte, error) {
	return []byte("text-" + strconv.Itoa(int(m))), nil
}

// valueAppender implements JSONAppender with a value receiver, and
// MarshalJSON too: AppendJSON must win.
type valueAppender struct{ N int }

func (a valueAppender) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"n":`...)
	dst = strconv.AppendInt(dst, int64(a.N), 10)
	return append(dst, `,"by":"value"}`...), nil
}

func (a valueAppender) MarshalJSON() ([]byte, error) { return []byte(`"MarshalJSON"`), nil }

// pointerAppender implements JSONAppender with a pointer receiver.
type pointerAppender struct{ N int }

func (a *pointerAppender) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"n":`...)
	dst = strconv.AppendInt(dst, int64(a.N), 10)
	return append(dst, `,"by":"pointer"}`...), nil
}

// scalarAppender is a non-struct JSONAppender.
type scalarAppender float64

func (a scalarAppender) AppendJSON(dst []byte) ([]byte, error) {
	return parser.AppendQuote(dst, "scalar"), nil
}

// failingAppender fails to encode itself.
type failingAppender struct{}

func (failingAppender) AppendJSON(dst []byte) ([]byte, error) {
	return append(dst, "garbage"...), errors.New("cannot")
}

type mixedResult struct {
	Name   string                `json:"name"`
	Tags   []string              `json:"tags"`
	Attrs  map[string]int        `json:"attrs,omitempty"`
	Ptr    *int                  `json:"ptr"`
	Bytes  []byte                `json:"bytes"`
	When   time.Time             `json:"when"`
	Inner  pointXY               `json:"inner"`
	Any    any                   `json:"any"`
	Floats []float64             `json:"floats"`
	Raw    json.RawMessage       `json:"raw"`
	M      selfMarshaler         `json:"m"`
	Text   textMarshaler         `json:"text"`
	Keyed  map[textMarshaler]int `json:"keyed"`
	hidden int
	Skip   int `json:"-"`
}

func TestResult_likeEncodingJSON(t *testing.T) {
	seven := 7
	negZero := math.Copysign(0, -1)
	cases := []resultCase{
		// booleans and integers, exact
		resultExact(true),
		resultExact(false),
		resultExact(0),
		resultExact(-1),
		resultExact(math.MaxInt),
		resultExact(math.MinInt),
		resultExact(int8(math.MinInt8)),
		resultExact(int8(math.MaxInt8)),
		resultExact(int16(math.MinInt16)),
		resultExact(int32(math.MinInt32)),
		resultExact(int64(math.MinInt64)),
		resultExact(int64(math.MaxInt64)),
		resultExact(uint(math.MaxUint)),
		resultExact(uint8(255)),
		resultExact(uint16(65535)),
		resultExact(uint32(math.MaxUint32)),
		resultExact(uint64(math.MaxUint64)),
		resultExact(namedInt(-5)),
		resultExact(namedUint(5)),
		resultExact(namedBool(true)),
		// floats, exact, at encoding/json's format boundaries
		resultExact(0.0),
		resultExact(negZero),
		resultExact(1.0),
		resultExact(-1.5),
		resultExact(0.1),
		resultExact(1e-6),
		resultExact(1e-7),
		resultExact(9.999999999999999e-7),
		resultExact(-1e-7),
		resultExact(1.5e-10),
		resultExact(1e20),
		resultExact(1e21),
		resultExact(-1e21),
		resultExact(999999999999999900000.0),
		resultExact(123456789.123),
		resultExact(1e100),
		resultExact(1.2345678901234567e-300),
		resultExact(math.MaxFloat64),
		resultExact(-math.MaxFloat64),
		resultExact(math.SmallestNonzeroFloat64),
		resultExact(2.2250738585072014e-308), // smallest normal
		resultExact(float64(1 << 53)),
		resultExact(namedFloat(2.5)),
		resultExact(float32(0)),
		resultExact(float32(negZero)),
		resultExact(float32(0.1)),
		resultExact(float32(1.1)),
		resultExact(float32(16777216)),
		resultExact(float32(1e-6)),
		resultExact(float32(1e-7)),
		resultExact(float32(1e20)),
		resultExact(float32(1e21)),
		resultExact(float32(123456789.123)),
		resultExact(float32(math.MaxFloat32)),
		resultExact(float32(-math.MaxFloat32)),
		resultExact(float32(math.SmallestNonzeroFloat32)),
		resultExact(float32(3.1415927)),
		// strings, exact
		resultExact(namedString("named \"string\"\n")),
		// slices and arrays of hand-coded kinds, exact
		resultExact([]int{1, -2, 3}),
		resultExact([]int{}),
		resultExact([]int(nil)),
		resultExact([]string(nil)),
		resultExact([]bool{true, false}),
		resultExact([]int8{-128, 127}),
		resultExact([]int64{math.MinInt64, math.MaxInt64}),
		resultExact([]uint16{0, 65535}),
		resultExact([]uint64{0, math.MaxUint64}),
		resultExact([]float64{0, negZero, 1e-7, 1e21, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64}),
		resultExact([]float32{0, 0.1, 1e-7, 1e21, math.MaxFloat32, math.SmallestNonzeroFloat32}),
		resultExact(trickyStrings),
		resultExact([]namedString{"a", "b\u2028"}),
		resultExact([3]int{1, 2, 3}),
		resultExact([0]int{}),
		resultExact([2]string{"a\x00", "\xff"}),
		resultExact([4]byte{1, 2, 3, 255}), // arrays of bytes are arrays
		resultExact([2]float32{1.5, -0.25}),
		resultExact([2]bool{}),
		resultExact([]json.RawMessage{json.RawMessage(`{"a" : 1}`), nil, json.RawMessage(` [ 1 , "x y" ] `)}),
		// Raw: verbatim, compacted; empty is null
		resultExact(json.RawMessage(`{"a":[1,2,{"b":"c"}]}`)),
		resultExact(json.RawMessage(" {\n\t\"a b\" : [ 1 , \"x \\\" y\" ] ,\r\n \"c\":null } ")),
		resultExact(json.RawMessage(nil)),
		resultExact(json.RawMessage(`"\u2028 <&>"`)),
		resultLiteral(handler.Raw(`{"a":[1,2,{"b":"c"}]}`), `{"a":[1,2,{"b":"c"}]}`),
		resultLiteral(handler.Raw(" {\n\t\"a b\" : [ 1 , \"x \\\" y\\\\\" ] ,\r\n \"c\":null } "), `{"a b":[1,"x \" y\\"],"c":null}`),
		resultLiteral(handler.Raw("  42  "), `42`),
		resultLiteral(handler.Raw(`"  s  "`), `"  s  "`),
		resultLiteral(handler.Raw(nil), `null`),
		resultLiteral(handler.Raw{}, `null`),
		resultLiteral([]handler.Raw{handler.Raw(`1`), nil, handler.Raw(` { "a" : 2 } `)}, `[1,null,{"a":2}]`),
		resultLiteral([2]handler.Raw{handler.Raw(`true`), handler.Raw(`"x"`)}, `[true,"x"]`),
		// sonic: the same JSON value as encoding/json
		resultSame(pointXY{X: 1, Y: -2}),
		resultSame(&pointXY{X: 3}),
		resultSame((*pointXY)(nil)),
		resultSame(&seven),
		resultSame((*int)(nil)),
		resultSame(map[string]int{"b": 2, "a": 1, "é": 3}),
		resultSame(map[string]int(nil)),
		resultSame(map[string]any{"a": []any{1.5, "x", nil, true}, "b": map[string]any{}}),
		resultSame([]byte("bytes \x00\xff")),
		resultSame([]byte{}),
		resultSame([]byte(nil)),
		resultSame(time.Date(2024, 2, 29, 12, 34, 56, 789, time.UTC)),
		resultSame(time.Date(2024, 2, 29, 12, 34, 56, 0, time.FixedZone("x", 3600))),
		resultSame(selfMarshaler{N: 5}),
		resultSame(textMarshaler(3)),
		resultSame([]pointXY{{1, 2}, {3, 4}}),
		resultSame([]*pointXY{{1, 2}, nil}),
		resultSame([][]int{{1}, nil, {}}),
		resultSame(any(map[string]int{"x": 1})),
		resultSame(any(nil)),
		resultSame(mixedResult{
			Name: "r \"1\" <&> \u2028", Tags: []string{"a", "\xff"}, Attrs: map[string]int{"k": 1}, Ptr: &seven,
			Bytes: []byte{0, 1, 2}, When: time.Date(2000, 1, 2, 3, 4, 5, 6, time.UTC), Inner: pointXY{1, 2},
			Any: []any{"x", 1.5}, Floats: []float64{1e-7, 1e21, negZero}, Raw: json.RawMessage(`{"z" : [1]}`),
			M: selfMarshaler{N: 2}, Text: 4, Keyed: map[textMarshaler]int{1: 1, 2: 2}, hidden: 1, Skip: 2,
		}),
		resultSame(mixedResult{}),
		// JSONAppender, value and pointer receivers: what AppendJSON writes
		resultLiteral(valueAppender{N: 1}, `{"n":1,"by":"value"}`),
		resultLiteral(&valueAppender{N: 2}, `{"n":2,"by":"value"}`),
		resultLiteral(pointerAppender{N: 3}, `{"n":3,"by":"pointer"}`),
		resultLiteral(&pointerAppender{N: 4}, `{"n":4,"by":"pointer"}`),
		resultLiteral(scalarAppender(1), `"scalar"`),
		resultInternalError(failingAppender{}, "invalid value"),
		// not finite: -32603
		resultInternalError(math.NaN(), "result is not a finite number"),
		resultInternalError(math.Inf(1), "result is not a finite number"),
		resultInternalError(math.Inf(-1), "result is not a finite number"),
		resultInternalError(float32(math.NaN()), "result is not a finite number"),
		resultInternalError(float32(math.Inf(1)), "result is not a finite number"),
		resultInternalError(float32(math.Inf(-1)), "result is not a finite number"),
		resultInternalError(namedFloat(math.Inf(1)), "result is not a finite number"),
		resultInternalError([]float64{1, math.NaN()}, "result is not a finite number"),
		resultInternalError([2]float32{float32(math.Inf(-1)), 0}, "result is not a finite number"),
		resultInternalError(mixedResult{Floats: []float64{math.NaN()}}, "Internal error"),
		resultInternalError(map[string]float64{"a": math.Inf(1)}, "Internal error"),
		resultInternalError(&struct{ F float32 }{F: float32(math.NaN())}, "Internal error"),
		// Raw that is not one valid JSON value: -32603
		resultInternalError(handler.Raw(`{`), "raw result is not valid JSON"),
		resultInternalError(handler.Raw(`[1,]`), "raw result is not valid JSON"),
		resultInternalError(handler.Raw(`1 2`), "raw result is not valid JSON"),
		resultInternalError(handler.Raw(`   `), "raw result is not valid JSON"),
		resultInternalError(handler.Raw(`{"a":1}x`), "raw result is not valid JSON"),
		resultInternalError(handler.Raw(`'single'`), "raw result is not valid JSON"),
		resultInternalError(handler.Raw("\"\xff\""), "raw result is not valid JSON"),
		resultInternalError(handler.Raw(`NaN`), "raw result is not valid JSON"),
		resultInternalError(json.RawMessage(`nope`), "raw result is not valid JSON"),
		resultInternalError([]handler.Raw{handler.Raw(`1`), handler.Raw(`{"a"}`)}, "raw result is not valid JSON"),
	}
	for _, s := range trickyStrings {
		cases = append(cases, resultExact(s))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.at) })
	}
}

// rawHolder holds a Raw in every place of a result that sonic encodes.
type rawHolder struct {
	Value  handler.Raw `json:"value"`
	Nested struct {
		Inner handler.Raw `json:"inner"`
	} `json:"nested"`
	List  []handler.Raw          `json:"list"`
	Array [2]handler.Raw         `json:"array"`
	Map   map[string]handler.Raw `json:"map"`
	Ptr   *handler.Raw           `json:"ptr"`
	Any   any                    `json:"any"`
	Std   json.RawMessage        `json:"std"`
}

// A Raw inside a result was written as base64 (sonic saw a []byte): it is
// JSON, written verbatim (compacted) wherever it appears, or refused.
func TestResult_rawVerbatimAnywhere(t *testing.T) {
	raw := handler.Raw(" { \"x\" : [1, \"a b\"] } ")
	const compact = `{"x":[1,"a b"]}`
	bad := handler.Raw(`{"x":`)
	var nested rawHolder
	nested.Nested.Inner = raw
	cases := []resultCase{
		// in a struct, a nested struct, a slice, an array, a map, behind a
		// pointer, in an interface
		resultLiteral(struct {
			Value handler.Raw `json:"value"`
		}{raw}, `{"value":`+compact+`}`),
		resultLiteral(rawHolder{
			Value: raw, List: []handler.Raw{raw, handler.Raw(`2`)}, Array: [2]handler.Raw{handler.Raw(`true`), raw},
			Map: map[string]handler.Raw{"k": raw}, Ptr: &raw, Any: raw, Std: json.RawMessage(raw),
		}, `{"value":`+compact+`,"nested":{"inner":null},"list":[`+compact+`,2],"array":[true,`+compact+`],"map":{"k":`+compact+`},"ptr":`+compact+`,"any":`+compact+`,"std":`+compact+`}`),
		resultLiteral(nested, `{"value":null,"nested":{"inner":`+compact+`},"list":null,"array":[null,null],"map":null,"ptr":null,"any":null,"std":null}`),
		resultLiteral([]rawHolder{{Value: handler.Raw(`1`)}, {Ptr: &raw}}, `[{"value":1,"nested":{"inner":null},"list":null,"array":[null,null],"map":null,"ptr":null,"any":null,"std":null},{"value":null,"nested":{"inner":null},"list":null,"array":[null,null],"map":null,"ptr":`+compact+`,"any":null,"std":null}]`),
		resultLiteral(map[string]handler.Raw{"a": raw}, `{"a":`+compact+`}`),
		resultLiteral(map[string][]handler.Raw{"a": {raw, nil}}, `{"a":[`+compact+`,null]}`),
		resultLiteral(&raw, compact),
		resultLiteral(&struct{ P *handler.Raw }{&raw}, `{"P":`+compact+`}`),
		resultLiteral([]any{raw, handler.Raw(nil), 1}, `[`+compact+`,null,1]`),
		resultLiteral(map[string]any{"a": raw}, `{"a":`+compact+`}`),
		// nil and empty Raw: null
		resultLiteral(rawHolder{Value: handler.Raw{}, List: []handler.Raw{nil, {}}, Map: map[string]handler.Raw{"k": nil}},
			`{"value":null,"nested":{"inner":null},"list":[null,null],"array":[null,null],"map":{"k":null},"ptr":null,"any":null,"std":null}`),
		resultLiteral((*handler.Raw)(nil), `null`),
		resultLiteral(map[string]handler.Raw{"a": nil}, `{"a":null}`),
		// byte for byte what encoding/json writes (HTML escaping off)
		resultExact(rawHolder{Value: raw, List: []handler.Raw{raw}, Map: map[string]handler.Raw{"k": raw}, Ptr: &raw, Std: json.RawMessage(raw)}),
		resultExact(map[string]handler.Raw{"b": handler.Raw(`[ 1 , 2 ]`)}),
		resultSame(map[string]handler.Raw{"b": handler.Raw(`[ 1 , 2 ]`), "a": handler.Raw(`"s"`)}),
		// not valid JSON: -32603 with the reason of a top-level Raw, never
		// a broken reply
		resultInternalError(rawHolder{Value: bad}, "raw result is not valid JSON"),
		resultInternalError(nestedRaw(bad), "raw result is not valid JSON"),
		resultInternalError(rawHolder{List: []handler.Raw{raw, bad}}, "raw result is not valid JSON"),
		resultInternalError(rawHolder{Array: [2]handler.Raw{bad}}, "raw result is not valid JSON"),
		resultInternalError(rawHolder{Map: map[string]handler.Raw{"k": bad}}, "raw result is not valid JSON"),
		resultInternalError(rawHolder{Ptr: &bad}, "raw result is not valid JSON"),
		resultInternalError(rawHolder{Any: bad}, "raw result is not valid JSON"),
		resultInternalError(&bad, "raw result is not valid JSON"),
		resultInternalError(map[string]handler.Raw{"a": handler.Raw(`1 2`)}, "raw result is not valid JSON"),
		resultInternalError([]any{handler.Raw("\"\xff\"")}, "raw result is not valid JSON"),
		resultInternalError(rawHolder{Value: handler.Raw(`   `)}, "raw result is not valid JSON"),
		// json.RawMessage in a struct stays verbatim; invalid, it is refused
		resultLiteral(struct{ M json.RawMessage }{json.RawMessage(" [ 1 ,\n2 ] ")}, `{"M":[1,2]}`),
		resultLiteral(struct{ M json.RawMessage }{}, `{"M":null}`),
		resultInternalError(struct{ M json.RawMessage }{json.RawMessage(`[1,`)}, "Internal error"),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.at) })
	}
}

// nestedRaw is a rawHolder whose nested struct holds r.
func nestedRaw(r handler.Raw) rawHolder {
	var h rawHolder
	h.Nested.Inner = r
	return h
}

type panickingAppender struct{ v int }

func (a panickingAppender) AppendJSON(dst []byte) ([]byte, error) {
	if a.v < 0 {
		panic("negative")
	}
	return append(dst, '1'), nil
}

// Regression (codec suite vs encoding/json): a nil pointer AppendJSON result is null, a panicking AppendJSON -32603.
func TestResult_appenderNilAndPanic(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	handler.RegisterNoParams(tab, "nil", func(context.Context) (*panickingAppender, error) { return nil, nil })
	handler.RegisterNoParams(tab, "panics", func(context.Context) (panickingAppender, error) { return panickingAppender{-1}, nil })
	if got := call(t, tab, `{"jsonrpc":"2.0","method":"nil","id":1}`); got != `{"jsonrpc":"2.0","result":null,"id":1}` {
		t.Fatalf("nil pointer result: %s", got)
	}
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"panics","id":1}`)); r.Error == nil || r.Error.Code != -32603 {
		t.Fatalf("panicking AppendJSON: %+v", r)
	}
}

type namedByte uint8

// Regression (codec suite vs encoding/json): a slice of a named byte type is base64, as encoding/json writes it.
func TestResult_namedByteSliceIsBase64(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "m", func(context.Context) ([]namedByte, error) { return []namedByte{1, 2}, nil })
	want, _ := json.Marshal([]namedByte{1, 2})
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"m","id":1}`)); string(r.Result) != string(want) {
		t.Fatalf("got %s, encoding/json gives %s", r.Result, want)
	}
}
