package handler_test

// Helpers shared by the tests of the package: calling a table and reading
// its replies, and comparing the value codecs (kinds.go, params.go,
// result.go) with encoding/json through Dispatch of real messages. Table
// cases record their own file:line with here(), printed when they fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/internal/testkit"
	"github.com/jetrpc/jetrpc/parser"
)

// call dispatches one request to tab and returns the reply.
func call(t testing.TB, tab *handler.Table, msg string) string {
	t.Helper()
	return string(tab.Dispatch(context.Background(), nil, []byte(msg)))
}

// replyOf decodes a single reply.
type replyOf struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	ID json.RawMessage `json:"id"`
}

func decodeReply(t testing.TB, s string) replyOf {
	t.Helper()
	var r replyOf
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("reply %q: %v", s, err)
	}
	return r
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func demoTable(t testing.TB, opts ...handler.Option) *handler.Table {
	t.Helper()
	tab := handler.NewTable(opts...)
	demo.Register(tab)
	return tab
}

// here returns the file:line of its caller: table cases call it in
// their literal to record where they are.
func here() string { return callerLine(2) }

// callerLine returns the file:line skip frames up (1 is the caller of
// callerLine).
func callerLine(skip int) string { return testkit.CallerLine(skip + 1) }

// wireError is the error member of a reply.
type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// newRequest builds a request with id 1; params "" means no params
// member.
func newRequest(method, params string) []byte {
	if params == "" {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`)
}

// roundTrip dispatches a request with id 1 to method and returns the
// exact bytes of the result member of a success reply, or the error of an
// error reply. Anything else fails the test.
func roundTrip(t testing.TB, at string, tab *handler.Table, method, params string) ([]byte, *wireError) {
	t.Helper()
	msg := newRequest(method, params)
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
		Error   *wireError      `json:"error"`
		ID      json.RawMessage `json:"id"`
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil || r.Error == nil || r.JSONRPC != "2.0" || string(r.ID) != "1" {
		t.Fatalf("%s: reply is neither a result nor an error reply (%v)\nrequest %s\nreply   %s", at, err, msg, out)
	}
	return nil, r.Error
}

// stdlibEncode is encoding/json's encoding of v with HTML escaping off.
func stdlibEncode(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json cannot encode %#v: %v", v, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// sameJSON reports whether a and b are the same JSON value: objects
// compared as sets of members, numbers by their exact value.
func sameJSON(a, b []byte) bool {
	va, ea := decodeAnyNumber(a)
	vb, eb := decodeAnyNumber(b)
	return ea == nil && eb == nil && sameJSONValue(va, vb)
}

func decodeAnyNumber(b []byte) (any, error) {
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

func sameJSONValue(a, b any) bool {
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
			if !sameJSONValue(a[i], b[i]) {
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
			if !ok || !sameJSONValue(va, vb) {
				return false
			}
		}
		return true
	}
	return a == b
}

// echoTable returns a table whose method "echo" takes a P, records it in
// *last and returns it as its result. keep, when not nil, copies what
// must not outlive the call (Raw).
func echoTable[P any](t testing.TB, keep func(P) P) (tab *handler.Table, last *P) {
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

// wantInvalidParams checks that e is a -32602 error whose message
// holds want.
func wantInvalidParams(t testing.TB, at string, e *wireError, result []byte, want string) {
	t.Helper()
	if e == nil {
		t.Errorf("%s: want -32602 (%q), got result %s", at, want, result)
		return
	}
	if e.Code != int(parser.CodeInvalidParams) || !strings.HasPrefix(e.Message, "Invalid params: ") {
		t.Errorf("%s: want -32602 Invalid params, got %d %q", at, e.Code, e.Message)
		return
	}
	if !strings.Contains(e.Message, want) {
		t.Errorf("%s: message %q does not hold %q", at, e.Message, want)
	}
}

// jsonObject builds a JSON object from names and values in order;
// spaced puts whitespace everywhere it may go.
func jsonObject(names, values []string, spaced bool) string {
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

// jsonArray builds a JSON array from values.
func jsonArray(values []string, spaced bool) string {
	if spaced {
		return "[ " + strings.Join(values, " ,\n ") + " ]"
	}
	return "[" + strings.Join(values, ",") + "]"
}

// registerErr runs a registration and returns the error it panicked
// with, or nil; a panic that is not an error fails loudly.
func registerErr(register func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			e, ok := v.(error)
			if !ok {
				panic(v)
			}
			err = e
		}
	}()
	register()
	return nil
}
