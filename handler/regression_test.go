package handler_test

// Regressions found by the independent codec test suite (codec_test.go):
// each test names the behaviour it pins down against encoding/json.

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

type regBase struct {
	ID   int
	Name string
}

type regOuter struct {
	regBase
	Name string
}

type regA struct{ Name string }
type regB struct{ Name string }
type regAmbiguous struct {
	regA
	regB
	X int
}

type regTagged struct {
	regA
	N string `json:"Name"`
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

func TestRegression_embeddedFieldPrecedence(t *testing.T) {
	sameAsStdlib[regOuter](t, `{"ID":1,"Name":"x"}`)
	sameAsStdlib[regAmbiguous](t, `{"Name":"x","X":2}`)
	sameAsStdlib[regTagged](t, `{"Name":"x"}`)
	// By position the fields come in encoding/json's order: ID, then the
	// outer Name (the embedded one is shadowed).
	r := decodeReply(t, echoParams[regOuter](t, `[7,"y"]`))
	if string(r.Result) != `{"ID":7,"Name":"","Name":"y"}` && string(r.Result) != `{"ID":7,"Name":"y"}` {
		t.Fatalf("positional: %s", r.Result)
	}
	var got regOuter
	if err := json.Unmarshal(r.Result, &got); err != nil || got.Name != "y" || got.ID != 7 {
		t.Fatalf("positional: %s → %+v", r.Result, got)
	}
}

func TestRegression_embeddedPointerRefused(t *testing.T) {
	type P struct {
		*regBase
		Y int
	}
	err := handler.TryRegister(handler.NewTable(), "m", func(context.Context, P) (int, error) { return 0, nil })
	if !errors.Is(err, handler.ErrBadType) {
		t.Fatalf("got %v, want ErrBadType", err)
	}
}

func TestRegression_zeroLengthArrayParams(t *testing.T) {
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

type regAppender struct{ v int }

func (a regAppender) AppendJSON(dst []byte) ([]byte, error) {
	if a.v < 0 {
		panic("negative")
	}
	return append(dst, '1'), nil
}

func TestRegression_appenderNilAndPanic(t *testing.T) {
	tab := handler.NewTable(handler.WithLogger(quietLogger()))
	handler.RegisterNoParams(tab, "nil", func(context.Context) (*regAppender, error) { return nil, nil })
	handler.RegisterNoParams(tab, "panics", func(context.Context) (regAppender, error) { return regAppender{-1}, nil })
	if got := call(t, tab, `{"jsonrpc":"2.0","method":"nil","id":1}`); got != `{"jsonrpc":"2.0","result":null,"id":1}` {
		t.Fatalf("nil pointer result: %s", got)
	}
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"panics","id":1}`)); r.Error == nil || r.Error.Code != -32603 {
		t.Fatalf("panicking AppendJSON: %+v", r)
	}
}

type regByte uint8

func TestRegression_namedByteSliceIsBase64(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterNoParams(tab, "m", func(context.Context) ([]regByte, error) { return []regByte{1, 2}, nil })
	want, _ := json.Marshal([]regByte{1, 2})
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"m","id":1}`)); string(r.Result) != string(want) {
		t.Fatalf("got %s, encoding/json gives %s", r.Result, want)
	}
}

type regSelfDecoding struct{ A int }

func (p *regSelfDecoding) UnmarshalJSON([]byte) error { p.A = 42; return nil }

func TestRegression_paramsTypeWithUnmarshalJSON(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(_ context.Context, p regSelfDecoding) (int, error) { return p.A, nil })
	if r := decodeReply(t, call(t, tab, `{"jsonrpc":"2.0","method":"m","params":{"A":1},"id":1}`)); string(r.Result) != "42" {
		t.Fatalf("UnmarshalJSON not used: %s %+v", r.Result, r.Error)
	}
}

func TestRegression_stringTagOption(t *testing.T) {
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
