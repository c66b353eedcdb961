// Package demodoc describes the bundled server (package demo's
// RegisterServer) in OpenRPC: what the Go types of its methods cannot
// say. A package apart, so that demo, which the tests of every transport
// use, does not link the OpenRPC generator and its JSON Schema library.
package demodoc

import (
	"encoding/json"
	"reflect"

	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/openrpc"
)

// Options returns the options of the bundled server's OpenRPC document
// (package handler/openrpc), its version version: its info, and what the
// Go types of the methods cannot say (subtract and sum read their
// operands from raw JSON: JSON numbers, as their result, which writes
// itself, is; the clock's notifications count 1, 2, 3, …). demo.Number
// declares its schema (JSONSchemaText); WithTypeSchema writes it in
// full where the result is, as the bundled document always has.
func Options(version string) []openrpc.Option {
	number := json.RawMessage(`{"type":"number"}`)
	return []openrpc.Option{
		openrpc.WithInfo(openrpc.Info{
			Title:   "jetrpc",
			Version: version,
			Description: "The bundled JSON-RPC 2.0 server of jetrpc: the examples of the JSON-RPC 2.0 specification, " +
				"the benchmark methods and a demo subscription (package handler/demo), and admin_stats.",
		}),
		openrpc.WithTypeSchema(reflect.TypeFor[demo.Number](), `{"type":"number"}`),
		openrpc.EditMethod("subtract", func(m *openrpc.Method) {
			for _, p := range m.Params {
				p.Schema = number
			}
		}),
		openrpc.EditMethod("sum", func(m *openrpc.Method) {
			m.ParamStructure = "by-position"
			for _, p := range m.Params {
				p.Schema, p.Description = number, "any number of numbers, by position"
			}
		}),
		openrpc.EditMethod("clock_subscribe", func(m *openrpc.Method) {
			if n := m.Notification; n != nil && len(n.Params) == 2 {
				n.Params[1].Schema = json.RawMessage(`{"type":"integer","minimum":1}`)
				n.Params[1].Description = "the count of the notifications sent: 1, 2, 3, …"
			}
		}),
	}
}
