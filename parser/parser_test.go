package parser_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/parser"
)

// here returns "file:line" of its caller.
func here() string { return caller(1) }

func caller(skip int) string {
	_, file, line, _ := runtime.Caller(skip + 1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
}

type parseCase struct {
	at       string
	in       string
	kind     parser.Kind
	code     parser.Code // fault code of the message (invalid) or of the request (single)
	offset   int         // expected fault offset; -1: not checked
	method   string
	id       string
	params   string
	version  parser.Version
	notif    bool
	batchLen int
}

func pc(in string, kind parser.Kind, code parser.Code, offset int) parseCase {
	return parseCase{at: here(), in: in, kind: kind, code: code, offset: offset}
}

func single(in, method, id, params string) parseCase {
	return parseCase{at: here(), in: in, kind: parser.KindSingle, method: method, id: id, params: params, notif: id == ""}
}

func TestParse_classification(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	v1 := single(`{"method":"m","params":[1],"id":3}`, "m", "3", "[1]")
	v1.version = parser.Version1
	v1n := single(`{"method":"m","params":[],"id":null}`, "m", "null", "[]")
	v1n.version, v1n.notif = parser.Version1, true
	cases := []parseCase{
		single(`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`, "subtract", "1", "[42,23]"),
		single(` {"id" : "a\"b" , "params" : { "x" : [ ] } , "method" : "m" , "jsonrpc" : "2.0" } `, "m", `"a\"b"`, `{ "x" : [ ] }`),
		single(`{"jsonrpc":"2.0","method":"n"}`, "n", "", ""),
		single(`{"jsonrpc":"2.0","method":"n","id":null}`, "n", "null", ""),
		single(`{"jsonrpc":"2.0","method":"n","id":-1.5e+3}`, "n", "-1.5e+3", ""),
		single("\xEF\xBB\xBF"+`{"jsonrpc":"2.0","method":"n","id":1}`, "n", "1", ""),
		single(`{"jsonrpc":"2.0","method":"n","id":1,"x":{"jsonrpc":1,"id":{}}}`, "n", "1", ""),
		single(`{"jsonrpc":"2.0","method":"n","params":`+deep(255)+`,"id":1}`, "n", "1", deep(255)),
		v1, v1n,

		// -32700: not JSON.
		pc(``, parser.KindInvalid, parser.CodeParseError, 0),
		pc(`   `, parser.KindInvalid, parser.CodeParseError, 3),
		pc(`{`, parser.KindInvalid, parser.CodeParseError, 1),
		pc(`{"jsonrpc":"2.0",}`, parser.KindInvalid, parser.CodeParseError, 17),
		pc(`{"jsonrpc":"2.0"} x`, parser.KindInvalid, parser.CodeParseError, 18),
		pc(`{"a":"`+"\x01"+`"}`, parser.KindInvalid, parser.CodeParseError, 6),
		pc(`{"a":"`+"\xff"+`"}`, parser.KindInvalid, parser.CodeParseError, 6),
		pc(`{"a":"\q"}`, parser.KindInvalid, parser.CodeParseError, 7),
		pc(`{"a":"\u12x4"}`, parser.KindInvalid, parser.CodeParseError, 10),
		pc(`{"a":01}`, parser.KindInvalid, parser.CodeParseError, 6),
		pc(`{"a":1.}`, parser.KindInvalid, parser.CodeParseError, 7),
		pc(`{"a":-}`, parser.KindInvalid, parser.CodeParseError, 6),
		pc(`{"a":1e}`, parser.KindInvalid, parser.CodeParseError, 7),
		pc(`{"a":tru}`, parser.KindInvalid, parser.CodeParseError, 8),
		pc(`{"a" 1}`, parser.KindInvalid, parser.CodeParseError, 5),
		pc(`{1:1}`, parser.KindInvalid, parser.CodeParseError, 1),
		pc(`[1,2`, parser.KindInvalid, parser.CodeParseError, 4),
		pc(`[1 2]`, parser.KindInvalid, parser.CodeParseError, 3),
		pc(`[{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method"]`, parser.KindInvalid, parser.CodeParseError, 64),
		pc(`{"a":`+strings.Repeat("[", 300)+strings.Repeat("]", 299)+`}`, parser.KindInvalid, parser.CodeParseError, -1),
		pc(`{"a":[}`, parser.KindInvalid, parser.CodeParseError, 6),

		// -32600 for the whole message.
		pc(`[]`, parser.KindInvalid, parser.CodeInvalidRequest, 0),
		pc(` [ ] `, parser.KindInvalid, parser.CodeInvalidRequest, 1),
		pc(`1`, parser.KindInvalid, parser.CodeInvalidRequest, 0),
		pc(`"x"`, parser.KindInvalid, parser.CodeInvalidRequest, 0),
		pc(`null`, parser.KindInvalid, parser.CodeInvalidRequest, 0),

		// -32600 for the request.
		{at: here(), in: `{"jsonrpc":"2.0","method":1,"params":"bar"}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 26},
		{at: here(), in: `{"jsonrpc":"2.0","method":"m","params":"bar","id":7}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 39, method: "m", id: "7"},
		{at: here(), in: `{"jsonrpc":"2.0","method":"m","id":{}}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 35, method: "m"},
		{at: here(), in: `{"jsonrpc":"2.0","method":"m","id":1,"id":2}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 37, method: "m"},
		{at: here(), in: `{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m","id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 17, method: "m", id: "1"},
		{at: here(), in: `{"jsonrpc":"1.0","method":"m","id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 11, method: "m", id: "1"},
		{at: here(), in: `{"method":"m","id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 0, method: "m", id: "1"},
		{at: here(), in: `{"jsonrpc":"2.0","id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 0, id: "1"},
		{at: here(), in: `{"Jsonrpc":"2.0","method":"m","id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 0, method: "m", id: "1"},
		{at: here(), in: `{"jsonrpc":"2.0","method":"m","params":` + deep(256) + `,"id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 294, method: "m", id: "1", params: deep(256)},
		{at: here(), in: `{"jsonrpc":"2.0","\u006dethod":"m","method":"n","id":1}`, kind: parser.KindSingle, code: parser.CodeInvalidRequest, offset: 35, method: "n", id: "1"},

		// batches
		{at: here(), in: `[1]`, kind: parser.KindBatch, batchLen: 1},
		{at: here(), in: ` [ {} , 2 , [ ] ] `, kind: parser.KindBatch, batchLen: 3},
	}
	var p parser.Parser
	for _, c := range cases {
		m := p.Parse([]byte(c.in))
		if m.Kind != c.kind {
			t.Errorf("%s: Parse(%.60q).Kind = %v, want %v (err %v)", c.at, c.in, m.Kind, c.kind, m.Err.Error())
			continue
		}
		switch m.Kind {
		case parser.KindInvalid:
			checkFault(t, c, &m.Err)
		case parser.KindBatch:
			if m.Len != c.batchLen {
				t.Errorf("%s: Len = %d, want %d", c.at, m.Len, c.batchLen)
			}
		case parser.KindSingle:
			r := m.Request
			if c.code != 0 {
				checkFault(t, c, &r.Err)
			} else if !r.Err.OK() {
				t.Errorf("%s: unexpected request fault %v", c.at, r.Err.Error())
			}
			if got := string(r.AppendMethod(nil)); got != c.method {
				t.Errorf("%s: method = %q, want %q", c.at, got, c.method)
			}
			if string(r.ID) != c.id || (r.ID == nil) != (c.id == "") {
				t.Errorf("%s: id = %q, want %q", c.at, r.ID, c.id)
			}
			if string(r.Params) != c.params {
				t.Errorf("%s: params = %q, want %q", c.at, r.Params, c.params)
			}
			if c.code == 0 && (r.Version != c.version || r.Notification != c.notif) {
				t.Errorf("%s: version %v notification %v, want %v %v", c.at, r.Version, r.Notification, c.version, c.notif)
			}
		}
	}
}

func checkFault(t *testing.T, c parseCase, e *parser.Error) {
	t.Helper()
	if e.Code != c.code {
		t.Errorf("%s: Parse(%.60q) code = %d, want %d (%v)", c.at, c.in, e.Code, c.code, e.Error())
	}
	if c.offset >= 0 && e.Offset != c.offset {
		t.Errorf("%s: Parse(%.60q) offset = %d, want %d (%v)", c.at, c.in, e.Offset, c.offset, e.Error())
	}
	if e.Reason == "" {
		t.Errorf("%s: empty reason", c.at)
	}
}

func TestParser_rejectV1(t *testing.T) {
	p := parser.Parser{RejectV1: true}
	m := p.Parse([]byte(`{"method":"m","params":[1],"id":3}`))
	if m.Kind != parser.KindSingle || m.Request.Err.Code != parser.CodeInvalidRequest || string(m.Request.ID) != "3" {
		t.Fatalf("got kind %v err %+v id %q", m.Kind, m.Request.Err, m.Request.ID)
	}
}

func TestParser_maxDepth(t *testing.T) {
	p := parser.Parser{MaxDepth: 3}
	ok := p.Parse([]byte(`{"jsonrpc":"2.0","method":"m","params":[[1]],"id":1}`))
	if !ok.Request.Err.OK() {
		t.Fatalf("3 levels refused: %v", ok.Request.Err.Error())
	}
	bad := p.Parse([]byte(`{"jsonrpc":"2.0","method":"m","params":[[[1]]],"id":1}`))
	if bad.Request.Err.Code != parser.CodeInvalidRequest || bad.Request.Err.Offset != 41 {
		t.Fatalf("4 levels: %+v", bad.Request.Err)
	}
	// Far deeper than the 256 levels kept on the stack: still bounded, no
	// recursion, and the rest of the text is still validated.
	huge := `{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"id":1}`
	m := p.Parse([]byte(huge))
	if m.Request.Err.Code != parser.CodeInvalidRequest || string(m.Request.ID) != "1" {
		t.Fatalf("huge: %+v", m.Request.Err)
	}
	m = p.Parse([]byte(huge[:len(huge)-10]))
	if m.Kind != parser.KindInvalid || m.Err.Code != parser.CodeParseError {
		t.Fatalf("huge truncated: %v %+v", m.Kind, m.Err)
	}
}

// codeErr is a Coder other than parser.Error, as handler.Error is.
type codeErr parser.Code

func (c codeErr) Error() string          { return "code" }
func (c codeErr) ErrorCode() parser.Code { return parser.Code(c) }

func TestError_isMatchesCode(t *testing.T) {
	var p parser.Parser
	m := p.Parse([]byte(`{`))
	if !errors.Is(&m.Err, codeErr(parser.CodeParseError)) || errors.Is(&m.Err, codeErr(parser.CodeInvalidRequest)) {
		t.Fatalf("errors.Is: %v", m.Err.Error())
	}
	if got := m.Err.Error(); got != "jetrpc: parse error at offset 1: unexpected end of JSON input" {
		t.Fatalf("Error() = %q", got)
	}
	m = p.Parse([]byte(`[]`))
	if !errors.Is(&m.Err, codeErr(parser.CodeInvalidRequest)) {
		t.Fatalf("errors.Is invalid: %v", m.Err.Error())
	}
	var none parser.Error
	if errors.Is(&none, codeErr(0)) {
		t.Fatal("the zero Error matched code 0")
	}
}

func TestFrameFault(t *testing.T) {
	if f := parser.FrameFault(parser.Malformed, 3); f.Code != parser.CodeParseError || f.Offset != 3 || f.Reason == "" {
		t.Fatalf("Malformed: %+v", f)
	}
	if f := parser.FrameFault(parser.TooLarge, 9); f.Code != parser.CodeInvalidRequest || f.Offset != 9 || f.Reason == "" {
		t.Fatalf("TooLarge: %+v", f)
	}
	if f := parser.FrameFault(parser.Complete, 1); !f.OK() {
		t.Fatalf("Complete: %+v", f)
	}
}

func TestCode_String(t *testing.T) {
	for c, want := range map[parser.Code]string{
		parser.CodeParseError: "Parse error", parser.CodeInvalidRequest: "Invalid Request",
		parser.CodeMethodNotFound: "Method not found", parser.CodeInvalidParams: "Invalid params",
		parser.CodeInternalError: "Internal error", parser.CodeServerBusy: "Server busy",
		parser.CodeCancelled: "Request cancelled", parser.CodeDeadline: "Deadline exceeded", 7: "error 7",
	} {
		if got := c.String(); got != want {
			t.Errorf("%d: %q, want %q", c, got, want)
		}
	}
}

func TestIter_batch(t *testing.T) {
	var p parser.Parser
	in := `[ {"jsonrpc":"2.0","method":"a","id":1}, 7 ,{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c","params":"x","id":"q"},
	 {"jsonrpc":"2.0","method":"d","params":` + strings.Repeat("[", 256) + strings.Repeat("]", 256) + `,"id":5}, [] ]`
	m := p.Parse([]byte(in))
	if m.Kind != parser.KindBatch || m.Len != 6 {
		t.Fatalf("kind %v len %d err %v", m.Kind, m.Len, m.Err.Error())
	}
	type el struct {
		method, id string
		code       parser.Code
		notif      bool
	}
	want := []el{{"a", "1", 0, false}, {"", "", parser.CodeInvalidRequest, false}, {"b", "", 0, true}, {"c", `"q"`, parser.CodeInvalidRequest, false}, {"d", "5", parser.CodeInvalidRequest, false}, {"", "", parser.CodeInvalidRequest, false}}
	var got []el
	for it := m.Iter(); it.Next(); {
		r := it.Request()
		got = append(got, el{string(r.Method), string(r.ID), r.Err.Code, r.Notification})
		if r.Offset <= 0 || r.Offset >= len(in) {
			t.Errorf("offset %d", r.Offset)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("elements\n got %v\nwant %v", got, want)
	}
}

// validityCases are texts whose JSON validity Parse must judge exactly as
// encoding/json.Valid does (for the whole message, not the request).
var validityCases = []string{
	`{}`, `[]`, `[1]`, `{"a":1}`, `{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}`,
	`0`, `-0`, `-0.0e-0`, `1E+2`, `123456789012345678901234567890`, `1.5`, `"\"\\\/\b\f\n\r\t"`,
	`true`, `false`, `null`, ` [ 1 , 2 ] `, "\t\n\r {}", `"\ud800"`, `"\udc00\ud800"`,
	// invalid
	``, ` `, `{`, `}`, `[`, `]`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `{'a':1}`, `[01]`, `[-]`, `[1.]`,
	`[.1]`, `[1e]`, `[1e+]`, `[+1]`, `[0x10]`, `[Infinity]`, `[NaN]`, `[tru]`, `[nul]`, `[True]`,
	`["a` + "\x00" + `"]`, `["\a"]`, `["\u123"]`, `["\U0041"]`, `"abc`, `[1] [2]`, `[1]x`, `{"a":1}}`,
	`[1}`, `{"a":1]`, `[,1]`, `[1,,2]`, `{,}`, `{"a"::1}`, "[\"\t\"]", `["` + "\x7f" + `"]`,
	`[1 2]`, `{"a":1 "b":2}`, `[-01]`, `[1.0e01]`, `[- 1]`,
}

func TestParse_validityMatchesStdlib(t *testing.T) {
	var p parser.Parser
	for _, in := range validityCases {
		want := json.Valid([]byte(in)) && utf8.ValidString(in)
		m := p.Parse([]byte(in))
		got := !(m.Kind == parser.KindInvalid && m.Err.Code == parser.CodeParseError)
		if got != want {
			t.Errorf("Parse(%q) valid = %v, encoding/json says %v (%v)", in, got, want, m.Err.Error())
		}
		if parser.Valid([]byte(in)) != want {
			t.Errorf("Valid(%q) = %v, want %v", in, !want, want)
		}
	}
}

func TestAppendUnquote_matchesStdlib(t *testing.T) {
	for _, s := range []string{`abc`, `a\"b`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\ud800x`, `\udc00\ud800`, `\ud800\u0041`,
		`\ud83d\ud83d\ude00`, `\/\\\b\f\n\r\t`, `é€`, `\u0000`} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := string(parser.AppendUnquote(nil, []byte(s))); got != want {
			t.Errorf("AppendUnquote(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestValues_andMembers(t *testing.T) {
	v := parser.NewValues([]byte(` [ 1 , "a,]" , {"x":[1,2]} , [ ] , null ] `))
	var got []string
	for e, ok := v.Next(); ok; e, ok = v.Next() {
		got = append(got, string(e))
	}
	if want := `[1 "a,]" {"x":[1,2]} [ ] null]`; fmt.Sprint(got) != want {
		t.Fatalf("Values: %v, want %v", got, want)
	}
	m := parser.NewMembers([]byte(`{ "a" : 1 , "b\"" : {"}":"{"} , "\u0063":[]}`))
	got = got[:0]
	for k, esc, val, ok := m.Next(); ok; k, esc, val, ok = m.Next() {
		got = append(got, fmt.Sprintf("%s/%v/%s", k, esc, val))
	}
	if want := `[a/false/1 b\"/true/{"}":"{"} \u0063/true/[]]`; fmt.Sprint(got) != want {
		t.Fatalf("Members: %v, want %v", got, want)
	}
	// Garbage must not panic or loop.
	for _, s := range []string{``, `[`, `[,`, `[1`, `{`, `{"a`, `{"a":`, `{"a"1}`, `[}`, `x`} {
		v := parser.NewValues([]byte(s))
		for n := 0; n < 10; n++ {
			if _, ok := v.Next(); !ok {
				break
			}
		}
		m := parser.NewMembers([]byte(s))
		for n := 0; n < 10; n++ {
			if _, _, _, ok := m.Next(); !ok {
				break
			}
		}
	}
}

// TestParseElems: the elements of a batch come from the validating pass,
// up to the limit; m.Len counts them all; nothing is appended for a
// message that is not a valid batch.
func TestParseElems(t *testing.T) {
	var p parser.Parser
	var m parser.Message
	msg := []byte(` [ {"jsonrpc":"2.0","method":"a","id":1} , 7 ,{"jsonrpc":"2.0","method":"b"}, {"method":"c"} ] `)
	keep := []parser.Request{{Offset: -5}}
	elems := p.ParseElems(&m, msg, keep, 3)
	if m.Kind != parser.KindBatch || m.Len != 4 || len(elems) != 4 || elems[0].Offset != -5 {
		t.Fatalf("kind %v len %d, %d elements", m.Kind, m.Len, len(elems))
	}
	if string(elems[1].Method) != "a" || string(elems[1].ID) != "1" || elems[2].Err.Code != parser.CodeInvalidRequest ||
		string(elems[3].Method) != "b" || !elems[3].Notification {
		t.Fatalf("%+v", elems)
	}
	for _, bad := range []string{`[1,`, `{"jsonrpc":"2.0","method":"a","id":1}`, `[]`, `[{"a":1},]`} {
		if got := p.ParseElems(&m, []byte(bad), elems[:1], 10); len(got) != 1 {
			t.Errorf("%s: %d elements appended", bad, len(got)-1)
		}
	}
}

func TestRequest_rebase(t *testing.T) {
	var p parser.Parser
	buf := []byte(`xx[{"jsonrpc":"2.0","method":"a\u0062","params":[1,{"k":2}],"id":"q"},{"jsonrpc":"2.0","method":"n"}]yy`)
	msg := buf[2 : len(buf)-2]
	var m parser.Message
	elems := p.ParseElems(&m, msg, nil, 10)
	if m.Kind != parser.KindBatch || len(elems) != 2 {
		t.Fatalf("parse: %v %d", m.Kind, len(elems))
	}
	cp := append([]byte(nil), msg...)
	for i := range elems {
		elems[i].Rebase(msg, cp)
	}
	clear(buf) // the original is gone: the rebased spans must not see it
	r := elems[0]
	if string(r.Method) != `a\u0062` || string(r.AppendMethod(nil)) != "ab" || string(r.Params) != `[1,{"k":2}]` || string(r.ID) != `"q"` {
		t.Fatalf("rebased: %q %q %q", r.Method, r.Params, r.ID)
	}
	if r := elems[1]; string(r.Method) != "n" || r.ID != nil || r.Params != nil {
		t.Fatalf("rebased notification: %q %q %q", r.Method, r.ID, r.Params)
	}
	if got := testing.AllocsPerRun(100, func() { r := elems[0]; r.Rebase(cp, cp) }); got != 0 {
		t.Fatalf("Rebase: %v allocs", got)
	}
}
