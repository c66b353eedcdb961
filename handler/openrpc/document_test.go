package openrpc_test

// Tests of the generated document (document.go, schema.go): the demo
// methods as a reader of handler/demo expects them, and the Go types the
// schemas must describe.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/openrpc"
	"github.com/jetrpc/jetrpc/parser"
)

// newDoc builds the document of tab and decodes it back, as a client
// would read it.
func newDoc(t *testing.T, tab *handler.Table, opts ...openrpc.Option) *openrpc.Doc {
	t.Helper()
	text, err := openrpc.Document(tab, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var doc openrpc.Doc
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatalf("document %s: %v", text, err)
	}
	return &doc
}

// method returns the method name of doc.
func method(t *testing.T, doc *openrpc.Doc, name string) *openrpc.Method {
	t.Helper()
	for _, m := range doc.Methods {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no method %q in the document", name)
	return nil
}

// kind says in a word what a schema admits: its type, "any" for true,
// "null|T" for a nullable T, "[]T" for an array, "ref:Name" for a
// component.
func kind(t *testing.T, schema json.RawMessage) string {
	t.Helper()
	var s any
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	var k func(any) string
	k = func(s any) string {
		m, ok := s.(map[string]any)
		switch {
		case s == true:
			return "any"
		case !ok:
			return fmt.Sprint(s)
		case m["$ref"] != nil:
			return "ref:" + strings.TrimPrefix(m["$ref"].(string), "#/components/schemas/")
		case m["anyOf"] != nil:
			alts := m["anyOf"].([]any)
			if len(alts) == 2 && k(alts[1]) == "null" {
				return "null|" + k(alts[0])
			}
		case m["type"] == "array":
			return "[]" + k(m["items"])
		case m["type"] == "object" && m["additionalProperties"] != nil:
			return "map:" + k(m["additionalProperties"])
		case m["type"] != nil:
			return m["type"].(string)
		}
		return string(schema)
	}
	return k(s)
}

// signature writes a method as
//
//	name(param type!, param type) structure → result
//
// with ! for a required param.
func signature(t *testing.T, m *openrpc.Method) string {
	t.Helper()
	var params []string
	for _, p := range m.Params {
		req := ""
		if p.Required {
			req = "!"
		}
		params = append(params, p.Name+" "+kind(t, p.Schema)+req)
	}
	s := m.Name + "(" + strings.Join(params, ", ") + ")"
	if m.ParamStructure != "" {
		s += " " + m.ParamStructure
	}
	if m.Result != nil {
		s += " → " + kind(t, m.Result.Schema)
	}
	return s
}

// TestDocument_demoMethods: every method of handler/demo, its params in
// position order and their JSON types, as its Go types say (written by
// hand from handler/demo/demo.go, not generated).
func TestDocument_demoMethods(t *testing.T) {
	tab := handler.NewTable()
	demo.Register(tab)
	doc := newDoc(t, tab)
	want := []string{
		"add(a integer!, b integer!) by-position → integer",              // [2]int64, ParamNames("a", "b") → int64
		"clock_subscribe(interval_ms integer!) either → string",          // ClockParams → subscription id
		"clock_unsubscribe(id string!) by-position → boolean",            // [1]string → bool
		"countdown(from integer!, interval_ms integer!) either → string", // CountdownParams → string
		"echo() either → any",                                         // Raw → Raw
		"fail() either → object",                                      // Raw → struct{}
		"get_data() → any",                                            // RegisterNoParams → Raw
		"notify_hello() either → null",                                // RegisterNoResult(Raw)
		"notify_sum() either → null",                                  // RegisterNoResult(Raw)
		"range(n integer!) either → []integer",                        // RangeParams → RegisterStream of int64: an array
		"sleep(ms integer!) either → integer",                         // SleepParams → int64
		"subtract(minuend any!, subtrahend any!) either → ref:Number", // subtractParams{Raw, Raw} → Number (AppendJSON, JSONSchemaText)
		"sum(numbers... any) either → ref:Number",                     // Raw, ParamNames("numbers...") → Number
		"update() either → null",                                      // RegisterNoResult(Raw)
	}
	var got []string
	for _, m := range doc.Methods {
		got = append(got, signature(t, m))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("methods:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if doc.OpenRPC != openrpc.Version || doc.Info.Title != openrpc.DefaultTitle || doc.Info.Version != openrpc.DefaultVersion {
		t.Errorf("openrpc %q, info %+v", doc.OpenRPC, doc.Info)
	}
	if m := method(t, doc, "subtract"); m.Description != "minuend - subtrahend" {
		t.Errorf("subtract: description %q", m.Description)
	}
	sub := method(t, doc, "clock_subscribe")
	if sub.Notification == nil || sub.Unsubscribe != "clock_unsubscribe" {
		t.Fatalf("clock_subscribe: x-notification %+v, x-unsubscribe %q", sub.Notification, sub.Unsubscribe)
	}
	if got, want := signature(t, sub.Notification), "clock_subscription(subscription string!, result any!) by-name"; got != want {
		t.Errorf("x-notification: %s, want %s", got, want)
	}
	if sub.Result.Name != "subscription" {
		t.Errorf("clock_subscribe result named %q", sub.Result.Name)
	}
	// The demo's params structs are flattened into params, nothing refers
	// to them; Number declares its schema.
	if doc.Components == nil || len(doc.Components.Schemas) != 1 {
		t.Fatalf("components %v, want Number's alone", doc.Components)
	}
	sameJSON(t, "Number", doc.Components.Schemas["Number"], `{"type":"number"}`)
}

// Types of TestDocument_types.
type (
	// tree is recursive, through a slice of pointers and a pointer.
	tree struct {
		Value    int     `json:"value"`
		Children []*tree `json:"children,omitempty"`
		Parent   *tree   `json:"parent"`
	}
	// base is embedded in record.
	base struct {
		ID      string    `json:"id"`
		Created time.Time `json:"created"`
	}
	// level writes itself as text.
	level int
	// record has a field of every shape.
	record struct {
		base
		Name   string           `json:"name"`
		Blob   handler.Raw      `json:"blob"`
		Point  [2]float64       `json:"point"`
		Tree   tree             `json:"tree"`
		Level  level            `json:"level"`
		Extra  json.RawMessage  `json:"extra,omitempty"`
		Nick   *string          `json:"nick"`
		Tags   []string         `json:"tags"`
		Attrs  map[string]int   `json:"attrs"`
		Count  uint32           `json:"count,omitzero"`
		Any    any              `json:"any"`
		Data   []byte           `json:"data"`
		Trees  map[string]*tree `json:"trees"`
		When   *time.Time       `json:"when"`
		Skip   int              `json:"-"`
		hidden int
	}
	// selfWriting writes its own JSON: the generator cannot know its shape.
	selfWriting struct{ X int }
)

func (level) MarshalText() ([]byte, error)                { return []byte("info"), nil }
func (*level) UnmarshalText([]byte) error                 { return nil }
func (selfWriting) AppendJSON(dst []byte) ([]byte, error) { return append(dst, '1'), nil }

// sameJSON fails unless got and want are the same JSON value.
func sameJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %s: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want %s: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// TestDocument_types: the schemas of recursive types, embedded structs,
// pointers, slices, arrays, maps, time.Time, handler.Raw and
// json.RawMessage, json tags, and the table's rule for required fields.
func TestDocument_types(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "put", func(context.Context, record) (bool, error) { return true, nil })
	handler.Register(tab, "get", func(context.Context, struct {
		ID string `json:"id"`
	}) (*record, error) {
		return nil, nil
	})
	handler.Register(tab, "forest", func(context.Context, [1]string) (map[string][]*tree, error) { return nil, nil })
	doc := newDoc(t, tab)

	put := method(t, doc, "put")
	want := "put(id string!, created string!, name string!, blob any!, point []number!, tree ref:tree!, level string!, " +
		"extra any, nick null|string, tags []string, attrs map:integer, count integer, any any, data string, " +
		"trees map:null|ref:tree, when null|string) either → boolean"
	if got := signature(t, put); got != want {
		t.Errorf("put:\n got %s\nwant %s", got, want)
	}
	schemas := map[string]string{}
	for _, p := range put.Params {
		schemas[p.Name] = string(p.Schema)
	}
	for name, want := range map[string]string{
		"created": `{"type":"string","format":"date-time"}`,
		"point":   `{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2}`,
		"count":   `{"type":"integer","minimum":0}`,
		"data":    `{"type":"string","contentEncoding":"base64"}`,
		"when":    `{"anyOf":[{"type":"string","format":"date-time"},{"type":"null"}]}`,
		"blob":    `true`,
	} {
		sameJSON(t, "put "+name, json.RawMessage(schemas[name]), want)
	}

	sameJSON(t, "get result", method(t, doc, "get").Result.Schema, `{"anyOf":[{"$ref":"#/components/schemas/record"},{"type":"null"}]}`)
	if got := signature(t, method(t, doc, "forest")); got != "forest(param1 string!) by-position → map:[]null|ref:tree" {
		t.Errorf("forest: %s", got)
	}

	if doc.Components == nil {
		t.Fatal("no components")
	}
	if names := slices.Sorted(maps.Keys(doc.Components.Schemas)); !slices.Equal(names, []string{"record", "tree"}) {
		t.Errorf("components %v, want record and tree (base is flattened)", names)
	}
	sameJSON(t, "tree", doc.Components.Schemas["tree"], `{
		"type": "object",
		"properties": {
			"value": {"type": "integer"},
			"children": {"type": "array", "items": {"anyOf": [{"$ref": "#/components/schemas/tree"}, {"type": "null"}]}},
			"parent": {"anyOf": [{"$ref": "#/components/schemas/tree"}, {"type": "null"}]}
		},
		"required": ["value"]
	}`)
	var rec struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["record"], &rec); err != nil {
		t.Fatal(err)
	}
	// The table's rule, without the reordering of params.
	if want := []string{"id", "created", "name", "blob", "point", "tree", "level"}; !slices.Equal(rec.Required, want) {
		t.Errorf("record required %v, want %v", rec.Required, want)
	}
	if len(rec.Properties) != 16 || rec.Properties["Skip"] != nil || rec.Properties["hidden"] != nil || rec.Properties["base"] != nil {
		t.Errorf("record properties: %v", slices.Sorted(maps.Keys(rec.Properties)))
	}
	if rec.Additional != nil {
		t.Errorf("record additionalProperties %v: the table ignores unknown members", *rec.Additional)
	}
}

// TestDocument_paramStructure: by-position for arrays and slices, by-name
// for maps, either for structs and opaque params, none without params.
func TestDocument_paramStructure(t *testing.T) {
	tab := handler.NewTable()
	nothing := func(context.Context) (int, error) { return 0, nil }
	handler.Register(tab, "struct", func(context.Context, struct{ A, B int }) (int, error) { return 0, nil })
	handler.Register(tab, "array", func(context.Context, [2]string) (int, error) { return 0, nil }, handler.ParamNames("x", "y"))
	handler.Register(tab, "slice", func(context.Context, []bool) (int, error) { return 0, nil }, handler.ParamNames("flags"))
	handler.Register(tab, "map", func(context.Context, map[string]float64) (int, error) { return 0, nil }, handler.ParamNames("w", "h"))
	handler.Register(tab, "raw", func(context.Context, handler.Raw) (int, error) { return 0, nil })
	handler.Register(tab, "iface", func(context.Context, any) (int, error) { return 0, nil }, handler.ParamNames("v"))
	handler.Register(tab, "empty", func(context.Context, struct{}) (int, error) { return 0, nil })
	handler.RegisterNoParams(tab, "none", nothing)
	doc := newDoc(t, tab)
	for name, want := range map[string]string{
		"struct": "struct(A integer!, B integer!) either → integer",
		"array":  "array(x string!, y string!) by-position → integer",
		"slice":  "slice(flags boolean) by-position → integer",
		"map":    "map(w number, h number) by-name → integer",
		"raw":    "raw() either → integer",
		"iface":  "iface(v any) either → integer",
		"empty":  "empty() → integer",
		"none":   "none() → integer",
	} {
		if got := signature(t, method(t, doc, name)); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestDocument_optionalBeforeRequired: OpenRPC wants optional params
// last; a field that is optional for the table but followed by a
// required one is reported required.
func TestDocument_optionalBeforeRequired(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(context.Context, struct {
		A *int `json:"a"`
		B int  `json:"b"`
		C *int `json:"c"`
	}) (int, error) {
		return 0, nil
	})
	if got, want := signature(t, method(t, newDoc(t, tab), "m")), "m(a null|integer!, b integer!, c null|integer) either → integer"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

// TestDocument_errorsAndSummary: declared errors in order, with their
// data; the summary.
func TestDocument_errorsAndSummary(t *testing.T) {
	tab := handler.NewTable()
	errLocked := handler.NewError(1001, "account locked")
	errNoFunds := &handler.Error{Code: 1002, Message: "insufficient funds", Data: map[string]int{"missing": 0}}
	handler.Register(tab, "pay", func(context.Context, [1]int) (bool, error) { return true, nil },
		handler.Summary("pays"), handler.Description("pays the amount, if the account allows"),
		handler.Errors(errLocked, errNoFunds), handler.Errors(&handler.Error{Code: parser.CodeInvalidParams}))
	m := method(t, newDoc(t, tab), "pay")
	if m.Summary != "pays" || m.Description != "pays the amount, if the account allows" {
		t.Errorf("summary %q, description %q", m.Summary, m.Description)
	}
	got, _ := json.Marshal(m.Errors)
	sameJSON(t, "errors", got, `[{"code":1001,"message":"account locked"},{"code":1002,"message":"insufficient funds","data":{"missing":0}},`+
		`{"code":-32602,"message":"Invalid params"}]`)
}

// TestDocument_subscriptionNamesAndKinds: x-notification and
// x-unsubscribe name the methods SubscriptionMethods chose, and a
// subscribe method of kinds takes its kind and the kind's params.
func TestDocument_subscriptionNamesAndKinds(t *testing.T) {
	tab := handler.NewTable()
	handler.RegisterSubscriptionKinds(tab, "eth", []handler.SubscriptionKind{
		handler.NewSubscriptionKind("newHeads", func(context.Context, struct{}, *handler.Subscription) error { return nil }),
	}, handler.SubscriptionMethods(handler.SubscriptionNames{Unsubscribe: "eth_stop", Notification: "eth_event"}))
	doc := newDoc(t, tab)
	sub := method(t, doc, "eth_subscribe")
	if got, want := signature(t, sub), "eth_subscribe(kind any, params any) by-position → string"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	if sub.Unsubscribe != "eth_stop" || sub.Notification == nil || sub.Notification.Name != "eth_event" || sub.Description != "subscribe to eth notifications of a kind: newHeads" {
		t.Fatalf("eth_subscribe: %+v", sub)
	}
	method(t, doc, "eth_stop")
}

// TestDocument_subscription: a subscription namespace with a declared
// notification type.
func TestDocument_subscription(t *testing.T) {
	type tick struct {
		N  int       `json:"n"`
		At time.Time `json:"at"`
	}
	tab := handler.NewTable()
	handler.RegisterSubscription(tab, "ticks", func(context.Context, struct {
		Every int `json:"every"`
	}, *handler.Subscription) error {
		return nil
	}, handler.Notifies[*tick](), handler.Summary("ticks"))
	doc := newDoc(t, tab)
	sub := method(t, doc, "ticks_subscribe")
	if got, want := signature(t, sub), "ticks_subscribe(every integer!) either → string"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	if sub.Summary != "ticks" || sub.Unsubscribe != "ticks_unsubscribe" || sub.Notification == nil {
		t.Fatalf("ticks_subscribe: %+v", sub)
	}
	if got, want := signature(t, sub.Notification), "ticks_subscription(subscription string!, result null|ref:tick!) by-name"; got != want {
		t.Errorf("x-notification: %s, want %s", got, want)
	}
	if got, want := signature(t, method(t, doc, "ticks_unsubscribe")), "ticks_unsubscribe(id string!) by-position → boolean"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	sameJSON(t, "tick", doc.Components.Schemas["tick"], `{"type":"object","properties":{"n":{"type":"integer"},`+
		`"at":{"type":"string","format":"date-time"}},"required":["n","at"]}`)
}

// TestDocument_componentNames: types of one name get one component each:
// the bare name, then the name qualified by its package, then numbered.
func TestDocument_componentNames(t *testing.T) {
	type item struct {
		A int `json:"a"`
	}
	tab := handler.NewTable()
	handler.Register(tab, "a", func(context.Context, [1]int) (item, error) { return item{}, nil })
	{
		type item struct {
			B string `json:"b"`
		}
		handler.Register(tab, "b", func(context.Context, [1]int) (item, error) { return item{}, nil })
	}
	{
		type item struct {
			C bool `json:"c"`
		}
		handler.Register(tab, "c", func(context.Context, [1]int) (item, error) { return item{}, nil })
	}
	doc := newDoc(t, tab)
	var got []string
	for _, name := range []string{"a", "b", "c"} {
		got = append(got, kind(t, method(t, doc, name).Result.Schema))
	}
	if want := []string{"ref:item", "ref:openrpc_test.item", "ref:openrpc_test.item_2"}; !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	sameJSON(t, "item_2", doc.Components.Schemas["openrpc_test.item_2"], `{"type":"object","properties":{"c":{"type":"boolean"}},"required":["c"]}`)
}

// TestDocument_options: the info block, WithTypeSchema and EditMethod,
// and the options that make New fail.
func TestDocument_options(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "self", func(context.Context, [1]handler.Raw) (*selfWriting, error) { return nil, nil })
	info := openrpc.Info{Title: "T", Version: "1.2.3", Description: "d", License: &openrpc.License{Name: "MIT"},
		Contact: &openrpc.Contact{Name: "n", Email: "a@example.com"}}
	doc := newDoc(t, tab, openrpc.WithInfo(info),
		openrpc.WithTypeSchema(reflect.TypeFor[selfWriting](), `{"type":"integer"}`),
		openrpc.EditMethod("self", func(m *openrpc.Method) {
			m.Params[0].Name, m.Params[0].Schema = "n", json.RawMessage(`{"type":"number"}`)
		}))
	if !reflect.DeepEqual(doc.Info, info) {
		t.Errorf("info %+v, want %+v", doc.Info, info)
	}
	if got, want := signature(t, method(t, doc, "self")), "self(n number!) by-position → null|integer"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	for name, opt := range map[string]openrpc.Option{
		"not a schema":   openrpc.WithTypeSchema(reflect.TypeFor[int](), `"integer"`),
		"invalid JSON":   openrpc.WithTypeSchema(reflect.TypeFor[int](), `{`),
		"nil edit":       openrpc.EditMethod("self", nil),
		"unknown method": openrpc.EditMethod("nope", func(*openrpc.Method) {}),
	} {
		if _, err := openrpc.New(tab, opt); err == nil {
			t.Errorf("%s: New did not fail", name)
		}
	}
	if _, err := openrpc.Document(tab, openrpc.EditMethod("self", func(m *openrpc.Method) { m.Result.Schema = nil })); err == nil {
		t.Error("a result without schema was encoded")
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// hexNum gives its own schema, as the schema library lets a type do.
type hexNum struct{ v uint64 }

func (hexNum) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^0x[0-9a-f]+$"}
}

// TestDocument_schemaTags: a type's own JSONSchema method, and the schema
// library's struct tags, are honoured.
func TestDocument_schemaTags(t *testing.T) {
	tab := handler.NewTable()
	handler.Register(tab, "m", func(context.Context, struct {
		N   int    `json:"n" jsonschema:"minimum=1,maximum=9"`
		Hex hexNum `json:"hex" jsonschema_description:"a hex number"`
	}) (hexNum, error) {
		return hexNum{}, nil
	})
	doc := newDoc(t, tab)
	m := method(t, doc, "m")
	sameJSON(t, "n", m.Params[0].Schema, `{"type":"integer","minimum":1,"maximum":9}`)
	sameJSON(t, "hex", m.Params[1].Schema, `{"$ref":"#/components/schemas/hexNum","description":"a hex number"}`)
	sameJSON(t, "result", m.Result.Schema, `{"$ref":"#/components/schemas/hexNum"}`)
	sameJSON(t, "hexNum", doc.Components.Schemas["hexNum"], `{"type":"string","pattern":"^0x[0-9a-f]+$"}`)
}

// secretReport is a type only a method that needs a grant uses.
type secretReport struct {
	Keys []string `json:"keys"`
}

// grantsTable serves add (no requirement), audit (needs admin, the only
// user of secretReport), rotate (needs admin and ops) and read (needs
// read).
func grantsTable() *handler.Table {
	tab := handler.NewTable(handler.WithLogger(quiet()))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, handler.Inline())
	handler.RegisterNoParams(tab, "audit", func(context.Context) (secretReport, error) { return secretReport{}, nil },
		handler.Inline(), handler.Require("admin"))
	handler.RegisterNoParams(tab, "rotate", func(context.Context) (int, error) { return 0, nil },
		handler.Inline(), handler.Require("admin", "ops"))
	handler.RegisterNoParams(tab, "read", func(context.Context) (string, error) { return "", nil },
		handler.Inline(), handler.Require("read"))
	return tab
}

// names lists the names of doc's methods.
func names(doc *openrpc.Doc) string {
	var out []string
	for _, m := range doc.Methods {
		out = append(out, m.Name)
	}
	return strings.Join(out, " ")
}

// TestNew_forGrants: ForGrants lists the methods whose every required
// permission the grants hold (as a call is checked), and the components
// only they use; without ForGrants, every method is listed. An
// EditMethod of a method left out is skipped, one of no method still
// fails.
func TestNew_forGrants(t *testing.T) {
	tab := grantsTable()
	for _, tc := range []struct {
		grants handler.Grants
		want   string
	}{
		{nil, "add"},
		{handler.Grants{"user"}, "add"},
		{handler.Grants{"read"}, "add read"},
		{handler.Grants{"admin"}, "add audit"},
		{handler.Grants{"ops", "admin"}, "add audit rotate"},
		{handler.Grants{"*"}, "add audit read rotate"},
	} {
		doc := newDoc(t, tab, openrpc.ForGrants(tc.grants),
			openrpc.EditMethod("audit", func(m *openrpc.Method) { m.Summary = "edited" }))
		if got := names(doc); got != tc.want {
			t.Errorf("ForGrants(%q): methods %q, want %q", tc.grants, got, tc.want)
		}
		hasSecret := false
		if doc.Components != nil {
			_, hasSecret = doc.Components.Schemas["secretReport"]
		}
		if wantSecret := strings.Contains(tc.want, "audit"); hasSecret != wantSecret {
			t.Errorf("ForGrants(%q): component secretReport %v, want %v", tc.grants, hasSecret, wantSecret)
		}
		if strings.Contains(tc.want, "audit") && method(t, doc, "audit").Summary != "edited" {
			t.Errorf("ForGrants(%q): audit not edited", tc.grants)
		}
	}
	if got := names(newDoc(t, tab)); got != "add audit read rotate" {
		t.Errorf("without ForGrants: methods %q", got)
	}
	if _, err := openrpc.New(tab, openrpc.ForGrants(nil), openrpc.EditMethod("nope", func(*openrpc.Method) {})); err == nil {
		t.Error("ForGrants: an EditMethod of no method did not fail")
	}
}

// Types of TestNew_selfWritingResults.
type (
	// kelvin writes itself and declares its schema.
	kelvin float64
	// marshaling writes itself for handler and for encoding/json alike.
	marshaling struct{ X int }
	// badSchema declares text that is no schema.
	badSchema int
)

func (kelvin) AppendJSON(dst []byte) ([]byte, error)     { return append(dst, '0'), nil }
func (kelvin) JSONSchemaText() string                    { return `{"type":"number","minimum":0}` }
func (marshaling) AppendJSON(dst []byte) ([]byte, error) { return append(dst, '1'), nil }
func (marshaling) MarshalJSON() ([]byte, error)          { return []byte("1"), nil }
func (badSchema) JSONSchemaText() string                 { return `"number"` }

var _ openrpc.SchemaDeclarer = kelvin(0)

// TestNew_selfWritingResults: a result type that writes itself
// (handler.JSONAppender) was silently described as any JSON value; now
// it declares its schema (SchemaDeclarer, a component), or WithTypeSchema
// gives one (and wins), or New fails naming the types and methods. A
// JSONAppender inside a result is written by sonic, so it is reflected,
// unless it is a json.Marshaler too.
func TestNew_selfWritingResults(t *testing.T) {
	undeclared := handler.NewTable()
	handler.RegisterNoParams(undeclared, "a", func(context.Context) (selfWriting, error) { return selfWriting{}, nil })
	handler.RegisterNoParams(undeclared, "b", func(context.Context) (*selfWriting, error) { return nil, nil })
	handler.RegisterNoParams(undeclared, "c", func(context.Context) (selfWriting, error) { return selfWriting{}, nil })
	handler.RegisterSubscription(undeclared, "d", func(context.Context, [1]int, *handler.Subscription) error { return nil },
		handler.Notifies[celsius]())
	_, err := openrpc.New(undeclared)
	want := `openrpc: types that write their own JSON (handler.JSONAppender) declare no schema: ` +
		`openrpc_test.selfWriting (method "a" result, method "c" result); *openrpc_test.selfWriting (method "b" result); ` +
		`openrpc_test.celsius (method "d_subscribe" notification); ` +
		`declare each with a JSONSchemaText method (SchemaDeclarer) or WithTypeSchema, WithTypeSchema(t, "true") for any JSON value`
	if err == nil || err.Error() != want {
		t.Errorf("undeclared: error\n%v\nwant\n%s", err, want)
	}

	// WithTypeSchema(t, "true") is the explicit any value.
	doc := newDoc(t, undeclared, openrpc.WithTypeSchema(reflect.TypeFor[selfWriting](), "true"),
		openrpc.WithTypeSchema(reflect.TypeFor[celsius](), `{"type":"number"}`))
	sameJSON(t, "a", method(t, doc, "a").Result.Schema, `true`)
	sameJSON(t, "b", method(t, doc, "b").Result.Schema, `true`)
	sameJSON(t, "d notification", method(t, doc, "d_subscribe").Notification.Params[1].Schema, `{"type":"number"}`)

	declared := handler.NewTable()
	handler.RegisterNoParams(declared, "temp", func(context.Context) (kelvin, error) { return 0, nil })
	handler.RegisterNoParams(declared, "maybe", func(context.Context) (*kelvin, error) { return nil, nil })
	handler.RegisterNoParams(declared, "reading", func(context.Context) (struct {
		K    kelvin      `json:"k"`
		Self selfWriting `json:"self"`
	}, error) {
		return struct {
			K    kelvin      `json:"k"`
			Self selfWriting `json:"self"`
		}{}, nil
	})
	doc = newDoc(t, declared)
	sameJSON(t, "temp", method(t, doc, "temp").Result.Schema, `{"$ref":"#/components/schemas/kelvin"}`)
	sameJSON(t, "maybe", method(t, doc, "maybe").Result.Schema, `{"anyOf":[{"$ref":"#/components/schemas/kelvin"},{"type":"null"}]}`)
	sameJSON(t, "reading", method(t, doc, "reading").Result.Schema, `{"type":"object","properties":{
		"k":{"$ref":"#/components/schemas/kelvin"},
		"self":{"$ref":"#/components/schemas/selfWriting"}
	},"required":["k","self"]}`)
	sameJSON(t, "kelvin", doc.Components.Schemas["kelvin"], `{"type":"number","minimum":0}`)
	sameJSON(t, "selfWriting", doc.Components.Schemas["selfWriting"], `{"type":"object","properties":{"X":{"type":"integer"}},"required":["X"]}`)

	// WithTypeSchema wins over the declared schema, and is written in full.
	doc = newDoc(t, declared, openrpc.WithTypeSchema(reflect.TypeFor[kelvin](), `{"type":"integer"}`))
	sameJSON(t, "temp overridden", method(t, doc, "temp").Result.Schema, `{"type":"integer"}`)

	nested := handler.NewTable()
	handler.Register(nested, "n", func(context.Context, [1]int) ([]marshaling, error) { return nil, nil })
	handler.Register(nested, "bad", func(context.Context, [1]badSchema) (bool, error) { return true, nil })
	_, err = openrpc.New(nested)
	if err == nil || !strings.Contains(err.Error(), `badSchema.JSONSchemaText: not a JSON Schema: "\"number\""`) {
		t.Errorf("bad declared schema: %v", err)
	}
	_, err = openrpc.New(nested, openrpc.WithTypeSchema(reflect.TypeFor[badSchema](), `{"type":"integer"}`))
	if err == nil || !strings.Contains(err.Error(), `declare no schema: openrpc_test.marshaling (method "n" result)`) {
		t.Errorf("nested JSONAppender and json.Marshaler: %v", err)
	}
}
