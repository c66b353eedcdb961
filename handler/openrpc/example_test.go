package openrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/openrpc"
)

// Register serves the document as rpc.discover; it is built on the first
// call.
func ExampleRegister() {
	t := handler.NewTable()
	handler.Register(t, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil },
		handler.Inline(), handler.ParamNames("a", "b"), handler.Summary("a + b"))
	if err := openrpc.Register(t, openrpc.WithInfo(openrpc.Info{Title: "calculator", Version: "1.0.0"})); err != nil {
		panic(err)
	}
	reply := t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
	fmt.Println(string(reply))
	// Output:
	// {"jsonrpc":"2.0","result":{"openrpc":"1.3.2","info":{"title":"calculator","version":"1.0.0"},"methods":[{"name":"add","summary":"a + b","params":[{"name":"a","required":true,"schema":{"type":"integer"}},{"name":"b","required":true,"schema":{"type":"integer"}}],"result":{"name":"result","schema":{"type":"integer"}},"paramStructure":"by-position"}]},"id":1}
}

// Document encodes the document without serving it. A struct params type
// gives one param per field, which may be sent by position or by name; a
// named type is a component.
func ExampleDocument() {
	type Point struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	t := handler.NewTable()
	handler.Register(t, "move", func(_ context.Context, p struct {
		To    Point `json:"to"`
		Speed *int  `json:"speed"`
	}) (Point, error) {
		return p.To, nil
	}, handler.Errors(handler.NewError(1, "out of bounds")))
	doc, err := openrpc.Document(t)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(doc))
	// Output:
	// {"openrpc":"1.3.2","info":{"title":"JSON-RPC 2.0 API","version":"0.0.0"},"methods":[{"name":"move","params":[{"name":"to","required":true,"schema":{"$ref":"#/components/schemas/Point"}},{"name":"speed","schema":{"anyOf":[{"type":"integer"},{"type":"null"}]}}],"result":{"name":"result","schema":{"$ref":"#/components/schemas/Point"}},"errors":[{"code":1,"message":"out of bounds"}],"paramStructure":"either"}],"components":{"schemas":{"Point":{"properties":{"x":{"type":"number"},"y":{"type":"number"}},"type":"object","required":["x","y"]}}}}
}

// New returns the document to inspect; RegisterSubscription's subscribe
// method describes its notifications in x-notification.
func ExampleNew() {
	t := handler.NewTable()
	handler.RegisterSubscription(t, "clock", func(context.Context, [1]int, *handler.Subscription) error { return nil },
		handler.Notifies[int64]())
	doc, err := openrpc.New(t)
	if err != nil {
		panic(err)
	}
	for _, m := range doc.Methods {
		fmt.Println(m.Name, m.ParamStructure, len(m.Params), "params")
		if n := m.Notification; n != nil {
			fmt.Println("  notification", n.Name, n.Params[0].Name, n.Params[1].Name, string(n.Params[1].Schema))
		}
	}
	// Output:
	// clock_subscribe by-position 1 params
	//   notification clock_subscription subscription result {"type":"integer"}
	// clock_unsubscribe by-position 1 params
}

// celsius writes itself as a JSON number.
type celsius float64

func (c celsius) AppendJSON(dst []byte) ([]byte, error) {
	return fmt.Appendf(dst, "%.1f", float64(c)), nil
}

// fahrenheit writes itself as a JSON number, and declares so.
type fahrenheit float64

func (f fahrenheit) AppendJSON(dst []byte) ([]byte, error) {
	return fmt.Appendf(dst, "%.1f", float64(f)), nil
}

func (fahrenheit) JSONSchemaText() string { return `{"type":"number","description":"°F"}` }

// A result type that writes its own JSON declares its schema, a
// component of the document; without one (and without WithTypeSchema),
// New fails rather than describe it as any JSON value.
func ExampleSchemaDeclarer() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "temperature", func(context.Context) (fahrenheit, error) { return 70.7, nil })
	doc, err := openrpc.New(t)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(doc.Methods[0].Result.Schema))
	fmt.Println(string(doc.Components.Schemas["fahrenheit"]))

	handler.RegisterNoParams(t, "celsius", func(context.Context) (celsius, error) { return 21.5, nil })
	_, err = openrpc.New(t)
	fmt.Println(err)
	// Output:
	// {"$ref":"#/components/schemas/fahrenheit"}
	// {"type":"number","description":"°F"}
	// openrpc: types that write their own JSON (handler.JSONAppender) declare no schema: openrpc_test.celsius (method "celsius" result); declare each with a JSONSchemaText method (SchemaDeclarer) or WithTypeSchema, WithTypeSchema(t, "true") for any JSON value
}

// WithTypeSchema describes a type that writes its own JSON, which
// reflection cannot see through.
func ExampleWithTypeSchema() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "temperature", func(context.Context) (celsius, error) { return 21.5, nil })
	doc, err := openrpc.New(t, openrpc.WithTypeSchema(reflect.TypeFor[celsius](), `{"type":"number","description":"°C"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(doc.Methods[0].Result.Schema))
	// Output:
	// {"type":"number","description":"°C"}
}

// EditMethod corrects what the Go types cannot say: here, params taken as
// raw JSON that the method reads as numbers.
func ExampleEditMethod() {
	t := handler.NewTable()
	handler.Register(t, "max", func(context.Context, handler.Raw) (float64, error) { return 0, nil }, handler.ParamNames("values"))
	edit := openrpc.EditMethod("max", func(m *openrpc.Method) {
		m.ParamStructure = "by-position"
		m.Params[0].Schema = json.RawMessage(`{"type":"number"}`)
		m.Params[0].Description = "any number of numbers, by position"
	})
	doc, err := openrpc.Document(t, edit)
	if err != nil {
		panic(err)
	}
	_, methods, _ := strings.Cut(string(doc), `"methods":`)
	fmt.Println(methods)
	// Output:
	// [{"name":"max","params":[{"name":"values","description":"any number of numbers, by position","schema":{"type":"number"}}],"result":{"name":"result","schema":{"type":"number"}},"paramStructure":"by-position"}]}
}

// FilterByGrants tells each caller only of the methods its grants let it
// call: here, a caller without the admin grant is not told of reset.
// (A transport's handler.Authorizer gives a call its grants;
// handler.WithGrants stands in for it here.)
func ExampleFilterByGrants() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "status", func(context.Context) (string, error) { return "ok", nil }, handler.Inline())
	handler.RegisterNoParams(t, "reset", func(context.Context) (bool, error) { return true, nil },
		handler.Inline(), handler.Require("admin"))
	if err := openrpc.Register(t, openrpc.FilterByGrants(true)); err != nil {
		panic(err)
	}
	for _, g := range []handler.Grants{nil, {"admin"}} {
		reply := t.Dispatch(handler.WithGrants(context.Background(), g), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
		var r struct {
			Result openrpc.Doc `json:"result"`
		}
		if err := json.Unmarshal(reply, &r); err != nil {
			panic(err)
		}
		var names []string
		for _, m := range r.Result.Methods {
			names = append(names, m.Name)
		}
		fmt.Printf("grants %q: %s\n", g, strings.Join(names, ", "))
	}
	// Output:
	// grants []: status
	// grants ["admin"]: reset, status
}

// ForGrants gives the document of a caller holding the grants.
func ExampleForGrants() {
	t := handler.NewTable()
	handler.RegisterNoParams(t, "status", func(context.Context) (string, error) { return "ok", nil })
	handler.RegisterNoParams(t, "reset", func(context.Context) (bool, error) { return true, nil }, handler.Require("admin"))
	doc, err := openrpc.New(t, openrpc.ForGrants(handler.Grants{"read"}))
	if err != nil {
		panic(err)
	}
	for _, m := range doc.Methods {
		fmt.Println(m.Name)
	}
	// Output:
	// status
}
