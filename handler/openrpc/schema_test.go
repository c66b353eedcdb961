package openrpc_test

// Tests of the field rule as the document states it (schema.go): the
// params a document calls required are those the table requires, both
// read from handler/internal/jsonfields.

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
)

type (
	agreeBase struct {
		ID   int    `json:"id"`
		Name string // shadowed by agreeEmbedded.Name
	}
	agreeName   struct{ Dup, Amb string }
	agreeName2  struct{ Dup, Amb string }
	agreeDupTag struct {
		Dup string `json:"Dup"`
	}
	agreeTag struct {
		Won string `json:"Won"`
	}
	agreeUntagged struct{ Won string }
	agreeDeep     struct{ agreeBase }
)

type agreeScalars struct {
	I    int       `json:"i"`
	S    string    `json:"s"`
	Q    int64     `json:"q,string"`
	B    bool      `json:",string"`
	T    time.Time `json:"t"`
	Arr  [2]int    `json:"arr"`
	O    int       `json:"o,omitempty"`
	Z    string    `json:"z,omitzero"`
	P    *int      `json:"p"`
	Skip int       `json:"-"`
}

type agreeValues struct {
	R   handler.Raw     `json:"r"`
	M   json.RawMessage `json:"m"`
	N   struct{ A int } `json:"n"`
	PR  *handler.Raw    `json:"pr"`
	OR  handler.Raw     `json:"or,omitempty"`
	Sl  []int           `json:"sl"`
	Mp  map[string]int  `json:"mp"`
	Any any             `json:"any"`
	Err error           `json:"err"`
}

type agreeEmbedded struct {
	agreeBase
	Name string `json:"Name"`
	X    int
}

type agreeDominance struct {
	agreeName
	agreeName2  // Dup and Amb: ambiguous so far
	agreeDupTag // Dup: the tagged one at that depth wins; Amb stays ambiguous, in neither
	agreeDeep   // id and Name, at depth 2
	agreeUntagged
	agreeTag        // Won: the tagged one wins
	Last     string `json:"last"`
}

// The params a document marks required are those the table reports
// missing, for struct params of every kind the rule tells apart. The
// types put their required fields first, so that the document's
// optional-before-required correction does not apply.
func TestDocument_requiredAgreesWithTable(t *testing.T) {
	tab := handler.NewTable()
	reg := func(name string, register func(*handler.Table, string)) { register(tab, name) }
	reg("scalars", func(tab *handler.Table, n string) {
		handler.Register(tab, n, func(context.Context, agreeScalars) (int, error) { return 0, nil })
	})
	reg("values", func(tab *handler.Table, n string) {
		handler.Register(tab, n, func(context.Context, agreeValues) (int, error) { return 0, nil })
	})
	reg("embedded", func(tab *handler.Table, n string) {
		handler.Register(tab, n, func(context.Context, agreeEmbedded) (int, error) { return 0, nil })
	})
	reg("dominance", func(tab *handler.Table, n string) {
		handler.Register(tab, n, func(context.Context, agreeDominance) (int, error) { return 0, nil })
	})
	zeros := map[string]any{
		"scalars": agreeScalars{}, "values": agreeValues{}, "embedded": agreeEmbedded{}, "dominance": agreeDominance{},
	}
	want := map[string][]string{ // the rule, written out: required first
		"scalars":   {"i", "s", "q", "B", "t", "arr"},
		"values":    {"r", "m", "n"},
		"embedded":  {"id", "Name", "X"},
		"dominance": {"Dup", "id", "Name", "Won", "last"},
	}
	doc := newDoc(t, tab)
	for _, mi := range tab.Methods() {
		if strings.HasPrefix(mi.Name, "rpc.") {
			continue
		}
		m := method(t, doc, mi.Name)
		var names, required []string
		for _, p := range m.Params {
			names = append(names, p.Name)
			if p.Required {
				required = append(required, p.Name)
			}
		}
		if !slices.Equal(names, mi.Params) {
			t.Errorf("%s: document's params %q, table's %q", mi.Name, names, mi.Params)
		}
		table := tableRequired(t, tab, mi.Name, zeros[mi.Name])
		if !slices.Equal(required, table) {
			t.Errorf("%s: document requires %q, table %q", mi.Name, required, table)
		}
		if !slices.Equal(table, want[mi.Name]) {
			t.Errorf("%s: table requires %q, want %q", mi.Name, table, want[mi.Name])
		}
	}
}

// tableRequired asks the table which params of method it requires: it
// calls with an object, adds each member reported missing (its value that
// of zero, as encoding/json encodes it), until none is.
func tableRequired(t *testing.T, tab *handler.Table, method string, zero any) []string {
	t.Helper()
	text, err := json.Marshal(zero)
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(text, &values); err != nil {
		t.Fatal(err)
	}
	params := map[string]json.RawMessage{}
	var required []string
	for range 100 {
		p, _ := json.Marshal(params)
		msg := `{"jsonrpc":"2.0","method":"` + method + `","params":` + string(p) + `,"id":1}`
		var reply struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		out := tab.Dispatch(context.Background(), nil, []byte(msg))
		if err := json.Unmarshal(out, &reply); err != nil {
			t.Fatalf("%s: reply %s: %v", method, out, err)
		}
		if reply.Error == nil {
			return required
		}
		name, ok := strings.CutSuffix(strings.TrimPrefix(reply.Error.Message, "Invalid params: "), ": missing required param")
		v, known := values[name]
		if !ok || !known {
			t.Fatalf("%s: params %s: error %d %q", method, p, reply.Error.Code, reply.Error.Message)
		}
		required = append(required, name)
		params[name] = v
	}
	t.Fatalf("%s: no end to missing params", method)
	return nil
}

// Fields reached through embedded pointers (refused in params, followed
// in results) are listed in a result's schema by the same rule.
func TestDocument_resultThroughEmbeddedPointers(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(context.Context, struct{}) (viaPtrA, error) { return viaPtrA{}, nil })
	doc := newDoc(t, tab)
	if doc.Components == nil {
		t.Fatal("no components")
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	text, ok := doc.Components.Schemas["viaPtrA"]
	if !ok {
		t.Fatalf("no viaPtrA component in %v", reflect.ValueOf(doc.Components.Schemas).MapKeys())
	}
	if err := json.Unmarshal(text, &s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Required, []string{"b", "a"}) {
		t.Errorf("required %q, want [b a]", s.Required)
	}
}

type (
	viaPtrA struct {
		*viaPtrB
		A  int  `json:"a"`
		PA *int `json:"pa"`
	}
	viaPtrB struct {
		B  int            `json:"b"`
		PB map[string]int `json:"pb"`
	}
)

// An embedding cycle through pointers, which encoding/json and jsonfields
// cut (encoding/json writes {"b":"","a":0,"next":null}), crashed New with a fatal stack overflow inside invopop/jsonschema,
// which flattens embedded structs without end; its type is a component
// now, with the fields encoding/json writes.
func TestDocument_embeddingCycle(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(context.Context, struct{}) (cycleA, error) { return cycleA{}, nil })
	handler.Register(tab, "outer", func(context.Context, struct{}) (cycleOuter, error) { return cycleOuter{}, nil })
	doc := newDoc(t, tab)
	sameJSON(t, "m result", method(t, doc, "m").Result.Schema, `{"$ref":"#/components/schemas/cycleA"}`)
	sameJSON(t, "cycleA", doc.Components.Schemas["cycleA"], `{
		"type": "object",
		"properties": {
			"a": {"type": "integer"},
			"b": {"type": "string"},
			"next": {"anyOf": [{"$ref": "#/components/schemas/cycleA"}, {"type": "null"}]}
		},
		"required": ["b", "a"]
	}`)
	sameJSON(t, "outer result", method(t, doc, "outer").Result.Schema, `{"$ref":"#/components/schemas/cycleOuter"}`)
	sameJSON(t, "cycleOuter", doc.Components.Schemas["cycleOuter"], `{
		"type": "object",
		"properties": {
			"o": {"type": "boolean"},
			"a": {"type": "integer"},
			"b": {"type": "string"},
			"next": {"anyOf": [{"$ref": "#/components/schemas/cycleA"}, {"type": "null"}]}
		},
		"required": ["o", "b", "a"]
	}`)
}

type (
	cycleA struct {
		*cycleB
		A    int     `json:"a"`
		Next *cycleA `json:"next"`
	}
	cycleB struct {
		*cycleA
		B string `json:"b"`
	}
	// cycleOuter is no cycle itself, but flattens one.
	cycleOuter struct {
		O bool `json:"o"`
		cycleA
	}
)
