package parser_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/jetrpc/jetrpc/parser"
)

// seeds returns the request texts of the testdata vectors.
func seeds(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	files, _ := filepath.Glob("../testdata/*.json")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		var doc struct {
			Examples []struct{ Request string } `json:"examples"`
			Cases    []struct {
				Request string
				Bytes   string
			} `json:"cases"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
		for _, e := range doc.Examples {
			out = append(out, []byte(e.Request))
		}
		for _, c := range doc.Cases {
			if c.Bytes == "latin1" {
				out = append(out, latin1(c.Request))
			} else {
				out = append(out, []byte(c.Request))
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("no testdata vectors found")
	}
	for _, s := range validityCases {
		out = append(out, []byte(s))
	}
	return out
}

// latin1 maps each character (all below U+0100) to one byte.
func latin1(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return b
}

// FuzzParse is differential: Parse must judge a text valid JSON exactly
// when encoding/json.Valid does (apart from the documented differences: a
// leading BOM is ignored, invalid UTF-8 is rejected, nesting beyond 10000
// levels), and read the same envelope as encoding/json does.
func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var p parser.Parser
		// ParseElems must agree with Parse, and its elements with Iter's.
		var pe parser.Parser
		var me parser.Message
		elems := pe.ParseElems(&me, in, []parser.Request{{}}, 1<<30)
		m := p.Parse(in)
		if me.Kind != m.Kind || me.Len != m.Len || me.Err != m.Err || !sameRequest(me.Request, m.Request) {
			t.Fatalf("ParseElems %+v, Parse %+v", me, m)
		}
		if m.Kind != parser.KindBatch && len(elems) != 1 {
			t.Fatalf("%d elements for a %v", len(elems), m.Kind)
		}
		if m.Kind == parser.KindBatch {
			if len(elems) != m.Len+1 {
				t.Fatalf("%d elements for a batch of %d", len(elems)-1, m.Len)
			}
			k := 1
			for it := m.Iter(); it.Next(); k++ {
				if !sameRequest(it.Request(), elems[k]) {
					t.Fatalf("element %d: Iter %+v, ParseElems %+v", k-1, it.Request(), elems[k])
				}
			}
		}
		body := bytes.TrimPrefix(in, []byte("\xEF\xBB\xBF"))
		depth := nesting(body)
		stdValid := json.Valid(body) && utf8.Valid(body)
		ourValid := !(m.Kind == parser.KindInvalid && m.Err.Code == parser.CodeParseError)
		if depth > 10000 {
			return // encoding/json refuses what it cannot nest
		}
		if stdValid != ourValid {
			t.Fatalf("Parse(%q): valid=%v, encoding/json says %v (%v)", in, ourValid, stdValid, m.Err.Error())
		}
		if !stdValid {
			if m.Err.Offset < 0 || m.Err.Offset > len(in) {
				t.Fatalf("offset %d out of range", m.Err.Offset)
			}
			return
		}
		switch first(body) {
		case '{':
			if m.Kind != parser.KindSingle {
				t.Fatalf("object classified %v", m.Kind)
			}
			checkEnvelope(t, body, m.Request, 1)
		case '[':
			var elems []json.RawMessage
			if err := json.Unmarshal(body, &elems); err != nil {
				t.Fatal(err)
			}
			if len(elems) == 0 {
				if m.Kind != parser.KindInvalid || m.Err.Code != parser.CodeInvalidRequest {
					t.Fatalf("empty batch: %v %+v", m.Kind, m.Err)
				}
				return
			}
			if m.Kind != parser.KindBatch || m.Len != len(elems) {
				t.Fatalf("batch: %v len %d, want %d", m.Kind, m.Len, len(elems))
			}
			k := 0
			for it := m.Iter(); it.Next(); k++ {
				r := it.Request()
				if first(elems[k]) != '{' {
					if r.Err.Code != parser.CodeInvalidRequest {
						t.Fatalf("element %d %s: %+v", k, elems[k], r.Err)
					}
					continue
				}
				checkEnvelope(t, elems[k], r, 2)
			}
			if k != len(elems) {
				t.Fatalf("iterated %d of %d", k, len(elems))
			}
		default:
			if m.Kind != parser.KindInvalid || m.Err.Code != parser.CodeInvalidRequest {
				t.Fatalf("scalar: %v %+v", m.Kind, m.Err)
			}
		}
	})
}

func sameRequest(a, b parser.Request) bool {
	return bytes.Equal(a.Method, b.Method) && bytes.Equal(a.ID, b.ID) && bytes.Equal(a.Params, b.Params) &&
		(a.Method == nil) == (b.Method == nil) && (a.ID == nil) == (b.ID == nil) && (a.Params == nil) == (b.Params == nil) &&
		a.Offset == b.Offset && a.Version == b.Version && a.Notification == b.Notification &&
		a.MethodEscaped == b.MethodEscaped && a.Err == b.Err
}

func first(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// nesting returns the deepest nesting of arrays and objects in b.
func nesting(b []byte) int {
	depth, deepest, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr:
			esc = c == '\\'
			inStr = c != '"'
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// checkEnvelope compares the parser's view of the request object obj with
// what encoding/json reads, and the classification with the spec rules.
// level is the depth of obj itself.
func checkEnvelope(t *testing.T, obj []byte, r parser.Request, level int) {
	t.Helper()
	keys := topKeys(t, obj)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(obj, &env); err != nil {
		t.Fatal(err)
	}
	dup := false
	for _, k := range []string{"jsonrpc", "method", "params", "id"} {
		if keys[k] > 1 {
			dup = true
		}
	}
	typ := func(k string) byte {
		v, ok := env[k]
		if !ok {
			return 0
		}
		return first(v)
	}
	var method string
	methodOK := typ("method") == '"' && json.Unmarshal(env["method"], &method) == nil
	var version string
	versionOK := typ("jsonrpc") == '"' && json.Unmarshal(env["jsonrpc"], &version) == nil && version == "2.0"
	pt, it := typ("params"), typ("id")
	paramsOK := pt == 0 || pt == '[' || pt == '{'
	idOK := it == 0 || it == '"' || it == 'n' || it == '-' || (it >= '0' && it <= '9')
	deepOK := nesting(obj)+level-1 <= parser.DefaultMaxDepth
	v1 := typ("jsonrpc") == 0 && pt == '[' && it != 0 && idOK
	valid := !dup && methodOK && (versionOK || v1) && paramsOK && idOK && deepOK && (typ("jsonrpc") == 0 || versionOK)

	if r.Err.OK() != valid {
		t.Fatalf("%s: request valid=%v, want %v (%+v)", obj, r.Err.OK(), valid, r.Err)
	}
	if !dup && methodOK && string(r.AppendMethod(nil)) != method {
		t.Fatalf("%s: method %q, want %q", obj, r.AppendMethod(nil), method)
	}
	if keys["id"] == 1 && idOK && it != 0 && !bytes.Equal(r.ID, env["id"]) {
		t.Fatalf("%s: id %q, want %q", obj, r.ID, env["id"])
	}
	if (keys["id"] > 1 || !idOK) && r.ID != nil {
		t.Fatalf("%s: bad id echoed as %q", obj, r.ID)
	}
	if !dup && (pt == '[' || pt == '{') && !bytes.Equal(r.Params, env["params"]) {
		t.Fatalf("%s: params %q, want %q", obj, r.Params, env["params"])
	}
	if valid {
		wantNotif := it == 0 || (v1 && it == 'n')
		if r.Notification != wantNotif {
			t.Fatalf("%s: notification=%v, want %v", obj, r.Notification, wantNotif)
		}
		if (r.Version == parser.Version1) != (v1 && !versionOK) {
			t.Fatalf("%s: version %v", obj, r.Version)
		}
	}
}

// topKeys counts the decoded member names of the object obj.
func topKeys(t *testing.T, obj []byte) map[string]int {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	keys := map[string]int{}
	depth := 0
	expectKey := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
			expectKey = depth == 1 && v == '{'
			if depth == 1 && (v == '}' || v == ']') {
				expectKey = true
			}
			continue
		case string:
			if depth == 1 && expectKey {
				keys[v]++
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
}

// FuzzFrame checks that valid JSON values, concatenated with optional
// whitespace and delivered cut at arbitrary points, frame back into the
// same values.
func FuzzFrame(f *testing.F) {
	for i, s := range seeds(f) {
		f.Add(s, uint64(i)*0x9E3779B97F4A7C15)
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		// The values: what encoding/json's stream decoder reads from in.
		dec := json.NewDecoder(bytes.NewReader(in))
		var vals [][]byte
		for {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				break
			}
			vals = append(vals, raw)
		}
		if len(vals) == 0 {
			return
		}
		rnd := seed | 1
		next := func() uint64 { rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17; return rnd }
		seps := []string{"", " ", "\n", "\r\n", "\t \n"}
		var stream []byte
		for i, v := range vals {
			sep := seps[next()%uint64(len(seps))]
			if i > 0 && sep == "" && isScalarEnd(vals[i-1]) && isScalarStart(v) {
				sep = " " // two scalars need a separator to be told apart
			}
			stream = append(stream, sep...)
			stream = append(stream, v...)
		}
		stream = append(stream, '\n') // a trailing number needs its end
		var fr parser.Framer
		var got [][]byte
		var buf []byte
		for off := 0; off < len(stream); {
			n := 1 + int(next()%uint64(len(stream)/3+1))
			buf = append(buf, stream[off:min(off+n, len(stream))]...)
			off += n
			for {
				start, end, st := fr.Next(buf)
				if st == parser.NeedMore {
					buf = buf[end:] // leading whitespace
					break
				}
				if st != parser.Complete {
					t.Fatalf("stream %q: %v at %d", stream, st, end)
				}
				got = append(got, bytes.Clone(buf[start:end]))
				buf = buf[end:]
			}
		}
		if len(got) != len(vals) {
			t.Fatalf("stream %q: framed %d values %q, want %d %q", stream, len(got), got, len(vals), vals)
		}
		for i := range vals {
			if !bytes.Equal(got[i], vals[i]) {
				t.Fatalf("value %d: %q, want %q", i, got[i], vals[i])
			}
		}
	})
}

func isScalarStart(v []byte) bool { c := first(v); return c != '{' && c != '[' && c != '"' }

func isScalarEnd(v []byte) bool {
	c := v[len(v)-1]
	return c != '}' && c != ']' && c != '"'
}

// FuzzAppendQuote checks AppendQuote and AppendEscaped against
// encoding/json on any string, and AppendUnquote's decoding of what
// AppendEscaped wrote, seeded with the tricky strings of the quote tests.
func FuzzAppendQuote(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Add("\u2028")
	f.Add("\u2029")
	f.Add("\x1f\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendQuote(t, s)
	})
}
