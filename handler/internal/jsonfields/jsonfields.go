// Package jsonfields lists the fields of a Go struct type as encoding/json
// sees them, with the rule that says which of them a jetrpc params object
// must give. It is the one place of that rule: handler builds its params
// plans from it (handler/params.go) and handler/openrpc its schemas'
// required lists (handler/openrpc/schema.go), so that a document never
// says otherwise than the table.
//
// The rule:
//
//   - a field named "-" by its json tag is left out (a tag "-," names it
//     "-"), and so is an unexported one, embedded or not, tagged or not;
//   - a field's JSON name is its tag's name, or else its Go name;
//   - an embedded struct (or pointer to one) without a tag name is
//     flattened: its fields are the outer struct's, one level deeper;
//   - of the fields with one name, the shallowest wins, then the one
//     named by a tag; when that leaves several, none is kept (ambiguous);
//   - a field is required unless it is a pointer, a map, an interface or
//     a slice other than the value slices (handler.Raw, json.RawMessage:
//     one JSON value each, required as any value), or is tagged omitempty
//     or omitzero.
//
// Where it differs from encoding/json: an embedded struct (or pointer) of
// an unexported type with a tag name is left out, where encoding/json
// takes it as a field; and a tag name encoding/json finds invalid (with a
// quote or a backslash, say) is taken as it is, where encoding/json uses
// the Go name. An embedded struct type met twice at one depth, which
// encoding/json walks once, is walked twice here, to the same end: its
// fields are ambiguous. The package test pins the rule case by case, and
// checks the names and order against encoding/json's where they agree.
package jsonfields

import (
	"reflect"
	"strings"
)

// Field is one field of a struct as encoding/json sees it.
type Field struct {
	Name     string       // JSON name (exact case)
	Type     reflect.Type // Go type of the field
	Index    []int        // index sequence from the outer struct, as reflect.Type.FieldByIndex takes it
	Offset   uintptr      // offset from the outer struct's base; meaningless when ViaPointer
	Depth    int          // embedding depth: 0 for the outer struct's own fields
	Tagged   bool         // named by a json tag
	Required bool         // by the rule above (the table's, for params)
	String   bool         // the ",string" option is given (encoding/json honours it for scalars only; the user decides)

	// ViaPointer: the field is reached through an embedded pointer, so
	// that it has no offset from the outer struct's base.
	ViaPointer bool
}

// Pointer is a struct embedded through a pointer: the field of In whose
// type is Type (a pointer to a struct).
type Pointer struct {
	In   reflect.Type // the struct that embeds it
	Type reflect.Type // the embedded pointer type
}

// Struct is the field list of a struct type.
type Struct struct {
	Fields   []Field   // the fields encoding/json uses, in its order (depth first, in declaration order)
	Pointers []Pointer // the embedded pointers to structs met, in the same order; their fields are ViaPointer
}

// Of lists the fields of the struct type t. values are the slice types
// that hold one JSON value each (handler.Raw, json.RawMessage): fields of
// those types are required, as any value is, where other slices are
// optional. Embedded pointers are followed, and embedding cycles through
// them cut. Of is meant for registration time: it allocates.
func Of(t reflect.Type, values ...reflect.Type) Struct {
	c := collector{values: values, seen: map[reflect.Type]bool{}}
	c.collect(t, nil, 0, false)
	return Struct{Fields: dominant(c.cands), Pointers: c.ptrs}
}

// collector gathers the candidate fields of a struct.
type collector struct {
	values []reflect.Type
	seen   map[reflect.Type]bool // the struct types on the path, against embedding cycles
	cands  []Field
	ptrs   []Pointer
}

// collect lists the candidate fields of t, depth first, in the order
// encoding/json uses. index and base locate t in the outer struct.
func (c *collector) collect(t reflect.Type, index []int, base uintptr, viaPtr bool) {
	if c.seen[t] {
		return
	}
	c.seen[t] = true
	defer delete(c.seen, t)
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(index[:len(index):len(index)], i)
		if sf.Anonymous && name == "" {
			switch ft := sf.Type; {
			case ft.Kind() == reflect.Struct:
				c.collect(ft, idx, base+sf.Offset, viaPtr)
				continue
			case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
				c.ptrs = append(c.ptrs, Pointer{In: t, Type: ft})
				c.collect(ft.Elem(), idx, 0, true)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		tagged := name != ""
		if !tagged {
			name = sf.Name
		}
		has := func(opt string) bool { return strings.Contains(","+opts+",", ","+opt+",") }
		optional := has("omitempty") || has("omitzero")
		switch sf.Type.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Interface:
			optional = true
		case reflect.Slice:
			optional = optional || !c.isValue(sf.Type)
		}
		f := Field{
			Name:       name,
			Type:       sf.Type,
			Index:      idx,
			Depth:      len(index),
			Tagged:     tagged,
			Required:   !optional,
			String:     has("string"),
			ViaPointer: viaPtr,
		}
		if !viaPtr {
			f.Offset = base + sf.Offset
		}
		c.cands = append(c.cands, f)
	}
}

func (c *collector) isValue(t reflect.Type) bool {
	for _, v := range c.values {
		if t == v {
			return true
		}
	}
	return false
}

// dominant keeps, of the candidates with one name, the shallowest, then
// the tagged one; none when that leaves several. The order stays.
func dominant(cands []Field) []Field {
	type group struct{ best, n int } // the winner so far, and how many tie with it
	groups := map[string]*group{}
	for i, c := range cands {
		gr := groups[c.Name]
		if gr == nil {
			groups[c.Name] = &group{best: i, n: 1}
			continue
		}
		switch b := cands[gr.best]; {
		case c.Depth < b.Depth, c.Depth == b.Depth && c.Tagged && !b.Tagged:
			*gr = group{best: i, n: 1}
		case c.Depth == b.Depth && c.Tagged == b.Tagged:
			gr.n++
		}
	}
	var out []Field
	for i, c := range cands {
		if gr := groups[c.Name]; gr.best == i && gr.n == 1 {
			out = append(out, c)
		}
	}
	return out
}
