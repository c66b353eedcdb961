package engine

import (
	"net/url"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/parser"
)

// getQueryCases are targets of calls by GET and the request each is
// built into, or the refusal's text.
var getQueryCases = []struct {
	target, msg, refusal string
}{
	{"/?method=m&id=1&params=[1,2]", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}`, ""},
	{"/?method=m", `{"jsonrpc":"2.0","id":null,"method":"m"}`, ""},
	{"/?id=x&method=a%2Fb", `{"jsonrpc":"2.0","id":"x","method":"a/b"}`, ""},
	{"/?method=m&id=-0.5E-3", `{"jsonrpc":"2.0","id":-0.5E-3,"method":"m"}`, ""},
	{"/?method=m&id=01", `{"jsonrpc":"2.0","id":"01","method":"m"}`, ""},
	{"/?method=m&id=", `{"jsonrpc":"2.0","id":"","method":"m"}`, ""},
	{"/?method=m&id=%22%5C", `{"jsonrpc":"2.0","id":"\"\\","method":"m"}`, ""},
	{"/?method=m%0A&params=%7B%7D", `{"jsonrpc":"2.0","id":null,"method":"m\n","params":{}}`, ""},
	{"/?method=m&params=+[+]+&x&y=%zz", `{"jsonrpc":"2.0","id":null,"method":"m","params": [ ] }`, ""},
	{"/", "", textBadGetTarget},
	{"/?id=1", "", textBadGetTarget},
	{"/?method", "", textEmptyMethod},
	{"/?method=m&method=m", "", textDupParam},
	{"/?method=m&id=1&id=2", "", textDupParam},
	{"/?method=m&params=1&params=2", "", textDupParam},
	{"/?method=m%2", "", textBadEscape},
	{"/?method=m%FF", "", textBadMethod},
	{"/?method=m%g0", "", textBadEscape},
	{"/?method=m&params=", "", textBadParams},
	{"/?method=m&params=%22s%22", "", textBadParams},
	{"/?method=m&params=[1]]", "", textBadParams},
	{"/?method=m&params=[1],\"method\":\"x\"", "", textBadParams},
}

func buildGetCall(target []byte) ([]byte, string) {
	b, q, reason := parseGetQuery(nil, target)
	if reason != "" {
		return nil, reason
	}
	b, reason = appendGetRequest(b, &q)
	if reason != "" {
		return nil, reason
	}
	return b[q.msg:], ""
}

func TestParseGetQuery_cases(t *testing.T) {
	for _, tc := range getQueryCases {
		msg, reason := buildGetCall([]byte(tc.target))
		if string(msg) != tc.msg || reason != tc.refusal {
			t.Errorf("%s: %s %q, want %s %q", tc.target, msg, reason, tc.msg, tc.refusal)
		}
		if tc.refusal == "" && !hasMethodParam([]byte(tc.target)) {
			t.Errorf("%s: hasMethodParam false", tc.target)
		}
	}
}

// FuzzParseGetQuery: whatever the target, the request built from it is
// one valid JSON object whose method is the method parameter decoded, and
// whose members are jsonrpc, id, method and params alone — a query
// cannot smuggle another member in.
func FuzzParseGetQuery(f *testing.F) {
	for _, tc := range getQueryCases {
		f.Add(tc.target)
	}
	f.Fuzz(func(t *testing.T, target string) {
		msg, reason := buildGetCall([]byte(target))
		if reason != "" {
			return
		}
		if !parser.Valid(msg) {
			t.Fatalf("%q: built %q, not JSON", target, msg)
		}
		var p parser.Parser
		m := p.Parse(msg)
		if m.Kind != parser.KindSingle {
			t.Fatalf("%q: built %q, kind %v", target, msg, m.Kind)
		}
		var want string
		for p := range strings.SplitSeq(target[strings.IndexByte(target, '?')+1:], "&") {
			if v, ok := strings.CutPrefix(p, "method="); ok {
				want, _ = url.QueryUnescape(v)
			}
		}
		if name := m.Request.AppendMethod(nil); string(name) != want {
			t.Fatalf("%q: method %q, want %q", target, name, want)
		}
		members := parser.NewMembers(msg)
		for k, _, _, ok := members.Next(); ok; k, _, _, ok = members.Next() {
			switch string(k) {
			case "jsonrpc", "id", "method", "params":
			default:
				t.Fatalf("%q: built %q with member %q", target, msg, k)
			}
		}
	})
}
