package openrpc

// NOTE: the generator turns Go types into JSON Schemas with
// github.com/invopop/jsonschema, then corrects what that library does
// otherwise than jetrpc's table and encoding/json:
//
//   - Mapper (mapType) decides the types that reflection must not look
//     into: WithTypeSchema's, handler.Raw and json.RawMessage, types that
//     encode themselves;
//   - Namer (typeName) gives every named Go type one component name,
//     unique in the document (the library keys its definitions by bare
//     type name, which two packages may share);
//   - fix walks each schema beside its Go type: the library reflects a *T
//     as T, so fix makes pointers nullable, and it sets each object's
//     required list by the table's rule (jsonFields, which reads it from
//     handler/internal/jsonfields, where handler's params plans read it).
//
// The library writes references as #/$defs/NAME, which the encoded text
// turns into #/components/schemas/NAME (schemaJSON).

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/internal/jsonfields"
)

var (
	rawType            = reflect.TypeFor[handler.Raw]()
	rawMessageType     = reflect.TypeFor[json.RawMessage]()
	timeType           = reflect.TypeFor[time.Time]()
	appenderType       = reflect.TypeFor[handler.JSONAppender]()
	marshalerType      = reflect.TypeFor[json.Marshaler]()
	unmarshalerType    = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType  = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalType  = reflect.TypeFor[encoding.TextUnmarshaler]()
	customSchemaType   = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()
	aliasSchemaType    = reflect.TypeFor[interface{ JSONSchemaAlias() any }]()
	declarerType       = reflect.TypeFor[SchemaDeclarer]()
	definitionsRef     = []byte(`"$ref":"#/$defs/`)
	componentsRef      = []byte(`"$ref":"#/components/schemas/`)
	anySchemaText      = []byte("true")
	nullSchema         = &jsonschema.Schema{Type: "null"}
	minimumUnsignedInt = json.Number("0")
)

// generator makes the schemas of one document. Not safe for concurrent
// use.
type generator struct {
	r     *jsonschema.Reflector
	types map[reflect.Type]json.RawMessage // WithTypeSchema
	names map[reflect.Type]string          // the component name of each named type seen
	owner map[string]reflect.Type          // names, inverted
	defs  map[string]*jsonschema.Schema    // the components made so far, fixed
	where string                           // what is being described ("method \"m\" result"), for undeclared
	// undeclared lists the types that write themselves without a schema,
	// each with where it was met.
	undeclared undeclared
}

func newGenerator(types map[reflect.Type]json.RawMessage) *generator {
	g := &generator{
		types: types,
		names: map[reflect.Type]string{},
		owner: map[string]reflect.Type{},
		defs:  map[string]*jsonschema.Schema{},
	}
	g.r = &jsonschema.Reflector{
		Anonymous:                  true, // no $id
		AllowAdditionalProperties:  true, // the table ignores unknown members
		RequiredFromJSONSchemaTags: true, // required lists are fix's
		Mapper:                     g.mapType,
		Namer:                      g.typeName,
	}
	return g
}

// schema returns the schema of t, its components added to g.defs.
func (g *generator) schema(t reflect.Type) *jsonschema.Schema {
	return g.fix(g.reflect(t), t)
}

// reflect returns the library's schema of t, unfixed, its components
// added to g.defs and fixed.
func (g *generator) reflect(t reflect.Type) *jsonschema.Schema {
	root := g.r.ReflectFromType(t)
	defs := root.Definitions
	root.Definitions, root.Version, root.ID = nil, "", ""
	var added []string
	for name, def := range defs {
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = def
			added = append(added, name)
		}
	}
	for _, name := range added {
		if owner := g.owner[name]; owner != nil {
			g.defs[name] = g.fix(g.defs[name], owner)
		}
	}
	return root
}

// component returns a reference to the component of the named type t,
// made by build the first time (g.defs holds a placeholder meanwhile, so
// that build may refer to t); build's schema itself when t has no name.
func (g *generator) component(t reflect.Type, build func() *jsonschema.Schema) *jsonschema.Schema {
	name := g.typeName(t)
	if name == "" {
		return build()
	}
	if _, ok := g.defs[name]; !ok {
		g.defs[name] = &jsonschema.Schema{}
		g.defs[name] = build()
	}
	return &jsonschema.Schema{Ref: "#/$defs/" + name}
}

// schemaText returns the schema of t as JSON text.
func (g *generator) schemaText(t reflect.Type) (json.RawMessage, error) {
	return schemaJSON(g.schema(t))
}

// defText returns the component name as JSON text.
func (g *generator) defText(name string) (json.RawMessage, bool) {
	s, ok := g.defs[name]
	if !ok {
		return nil, false
	}
	text, err := schemaJSON(s)
	return text, err == nil
}

// properties returns the schemas of the properties of the struct type t,
// by name, as JSON text.
func (g *generator) properties(t reflect.Type) (map[string]json.RawMessage, error) {
	s := g.schema(t)
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		s = g.defs[name]
	}
	out := map[string]json.RawMessage{}
	if s == nil || s.Properties == nil {
		return out, nil
	}
	for name, p := range s.Properties.FromOldest() {
		text, err := schemaJSON(p)
		if err != nil {
			return nil, err
		}
		out[name] = text
	}
	return out, nil
}

// schemaJSON encodes s, its references pointing into components.schemas.
func schemaJSON(s *jsonschema.Schema) (json.RawMessage, error) {
	text, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(text, definitionsRef, componentsRef), nil
}

// mapType is the Reflector's Mapper: the schema of the types that are
// not to be reflected (t is never a pointer), or nil.
func (g *generator) mapType(t reflect.Type) *jsonschema.Schema {
	if text, ok := g.types[t]; ok {
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(text, s); err != nil { // checked by WithTypeSchema
			panic(err)
		}
		return s
	}
	switch t {
	case rawType, rawMessageType:
		return &jsonschema.Schema{} // any JSON value
	case timeType:
		return nil // the library's date-time string
	}
	if implements(t, customSchemaType) || implements(t, aliasSchemaType) {
		return nil // the type gives its own schema to the library
	}
	if implements(t, declarerType) {
		return g.component(t, func() *jsonschema.Schema { return declaredSchema(t) })
	}
	if t.Kind() == reflect.Struct && embedsCycle(t) {
		return g.component(t, func() *jsonschema.Schema { return g.flatStruct(t) })
	}
	switch {
	case implements(t, appenderType) && implements(t, marshalerType):
		g.undeclared.add(t, g.where) // jetrpc's own kind of type, which writes itself: it owes a schema
		return &jsonschema.Schema{}
	case implements(t, marshalerType), implements(t, unmarshalerType):
		return &jsonschema.Schema{} // it writes (or reads) itself: any JSON value
	case implements(t, textMarshalerType), implements(t, textUnmarshalType):
		return &jsonschema.Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &jsonschema.Schema{Type: "integer", Minimum: minimumUnsignedInt}
	case reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return &jsonschema.Schema{} // not JSON (encoding/json fails on them): no constraint to state
	}
	return nil
}

// declaredSchema returns the schema that the type t declares with its
// JSONSchemaText method (SchemaDeclarer), called on a new *t. Text that
// is no JSON Schema panics with an error, which New returns.
func declaredSchema(t reflect.Type) *jsonschema.Schema {
	text := reflect.New(t).Interface().(SchemaDeclarer).JSONSchemaText()
	s := new(jsonschema.Schema)
	if !isSchemaText(text) || json.Unmarshal([]byte(text), s) != nil {
		panic(fmt.Errorf("%v.JSONSchemaText: not a JSON Schema: %q", t, text))
	}
	return s
}

// declares reports whether the type t gives its schema itself: with
// JSONSchemaText (SchemaDeclarer) or with one of invopop/jsonschema's
// methods.
func declares(t reflect.Type) bool {
	return implements(t, declarerType) || implements(t, customSchemaType) || implements(t, aliasSchemaType)
}

// writesItself reports whether handler writes a result (or a
// notification) of type t with its AppendJSON method, as it does when t
// or *t is a handler.JSONAppender, at the top level only: a JSONAppender
// inside a result is written by sonic, as encoding/json would.
func writesItself(t reflect.Type) bool { return implements(t, appenderType) }

// hasSchema reports whether the result type t, which writes itself, has
// a schema: WithTypeSchema's (of t, or of *t's t) or its own (declares).
func hasSchema(types map[reflect.Type]json.RawMessage, t reflect.Type) bool {
	if _, ok := types[t]; ok {
		return true
	}
	if t.Kind() == reflect.Pointer {
		if _, ok := types[t.Elem()]; ok {
			return true
		}
		t = t.Elem()
	}
	return declares(t)
}

// undeclared lists the types that write themselves but have no schema,
// in the order met, each with where.
type undeclared []undeclaredType

type undeclaredType struct {
	t     reflect.Type
	where []string
}

// add records t, met at where.
func (u *undeclared) add(t reflect.Type, where string) {
	for i := range *u {
		if e := &(*u)[i]; e.t == t {
			if !slices.Contains(e.where, where) {
				e.where = append(e.where, where)
			}
			return
		}
	}
	*u = append(*u, undeclaredType{t, []string{where}})
}

// err returns the error that names every type of u, nil for none.
func (u undeclared) err() error {
	if len(u) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("openrpc: types that write their own JSON (handler.JSONAppender) declare no schema: ")
	for i, e := range u {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%v (%s)", e.t, strings.Join(e.where, ", "))
	}
	b.WriteString(`; declare each with a JSONSchemaText method (SchemaDeclarer) or WithTypeSchema, WithTypeSchema(t, "true") for any JSON value`)
	return errors.New(b.String())
}

// implements reports whether t or *t implements the interface it.
func implements(t, it reflect.Type) bool {
	return t.Implements(it) || reflect.PointerTo(t).Implements(it)
}

// typeName is the Reflector's Namer: a name, unique in the document, for
// each named type; "" for the others.
func (g *generator) typeName(t reflect.Type) string {
	if t.Name() == "" {
		return ""
	}
	if name, ok := g.names[t]; ok {
		return name
	}
	name := sanitize(t.Name())
	if _, taken := g.owner[name]; taken && t.PkgPath() != "" {
		pkg := t.PkgPath()
		pkg = pkg[strings.LastIndexByte(pkg, '/')+1:]
		name = sanitize(pkg + "." + t.Name())
	}
	for i, base := 2, name; ; i++ {
		if _, taken := g.owner[name]; !taken {
			break
		}
		name = base + "_" + strconv.Itoa(i)
	}
	g.names[t], g.owner[name] = name, t
	return name
}

// sanitize keeps the characters of a component name that OpenRPC tools
// take in keys and references: letters, digits, '.', '-' and '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// fix corrects the library's schema s of the Go type t: a pointer is
// nullable, and an object's required properties are those the table
// requires. References are left as they are (their components are fixed
// on their own).
func (g *generator) fix(s *jsonschema.Schema, t reflect.Type) *jsonschema.Schema {
	if t.Kind() == reflect.Pointer {
		return nullable(g.fix(s, t.Elem()))
	}
	if s == nil || s.Ref != "" {
		return s
	}
	if _, mapped := g.types[t]; mapped || declares(t) {
		return s // a schema given whole, not reflected
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			s.Items = g.fix(s.Items, t.Elem())
		}
	case reflect.Map:
		if s.AdditionalProperties != nil && s.AdditionalProperties != jsonschema.FalseSchema {
			s.AdditionalProperties = g.fix(s.AdditionalProperties, t.Elem())
		}
		for k, p := range s.PatternProperties {
			s.PatternProperties[k] = g.fix(p, t.Elem())
		}
	case reflect.Struct:
		if s.Properties == nil {
			return s // mapped or special (time.Time)
		}
		s.Required = nil
		for _, f := range jsonFields(t) {
			p, ok := s.Properties.Get(f.Name)
			if !ok {
				continue
			}
			s.Properties.Set(f.Name, g.fix(p, f.Type))
			if f.Required {
				s.Required = append(s.Required, f.Name)
			}
		}
	}
	return s
}

// embedsCycle reports whether the struct type t flattens (as the library
// does: untagged embedded structs and pointers to them, and fields tagged
// inline) a struct that flattens itself, which embedding through pointers
// allows: the library would recurse on it until the stack overflows.
func embedsCycle(t reflect.Type) bool {
	onPath := map[reflect.Type]bool{}
	var walk func(t reflect.Type) bool
	walk = func(t reflect.Type) bool {
		if onPath[t] {
			return true
		}
		onPath[t] = true
		defer delete(onPath, t)
		for i := range t.NumField() {
			if ft := flattened(t.Field(i)); ft != nil && walk(ft) {
				return true
			}
		}
		return false
	}
	return walk(t)
}

// flattened returns the struct type whose fields the library flattens
// into the struct of the field f, or nil (invopop/jsonschema's
// reflectFieldName).
func flattened(f reflect.StructField) reflect.Type {
	tags := strings.Split(f.Tag.Get("json"), ",")
	if tags[0] == "-" || strings.Split(f.Tag.Get("jsonschema"), ",")[0] == "-" {
		return nil
	}
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() != reflect.Struct {
		return nil
	}
	if (f.Anonymous && tags[0] == "") || slices.Contains(tags[1:], "inline") {
		return ft
	}
	return nil
}

// flatStruct returns the schema of the struct type t, which embeds a
// cycle (embedsCycle), with the fields encoding/json writes (jsonFields,
// which cuts the cycle) as its own: the library reflects a struct made of
// them, unembedded. invopop's jsonschema struct tags are not honoured in
// such a type.
func (g *generator) flatStruct(t reflect.Type) *jsonschema.Schema {
	fields := jsonFields(t)
	flat := make([]reflect.StructField, len(fields))
	for i, f := range fields {
		flat[i] = reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: f.Type,
			Tag:  reflect.StructTag("json:" + strconv.Quote(f.Name)),
		}
	}
	return g.fix(g.reflect(reflect.StructOf(flat)), t)
}

// nullable returns s or null.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	if text, err := json.Marshal(s); err != nil || bytes.Equal(text, anySchemaText) {
		return s // any value: null is one
	}
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, nullSchema}}
}

// opaqueParams reports whether params of type t are any JSON value for
// the table: the value verbatim, an interface, or a struct that decodes
// itself.
func opaqueParams(t reflect.Type) bool {
	switch {
	case t == rawType, t == rawMessageType, t.Kind() == reflect.Interface:
		return true
	case t.Kind() == reflect.Struct:
		pt := reflect.PointerTo(t)
		return pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalType)
	}
	return false
}

// jsonFields lists the fields of the struct type t as encoding/json
// encodes them, each required or not by the table's rule for params: the
// rule of package jsonfields (handler/internal/jsonfields), which
// handler.Register's params plans follow too. Embedded pointers are
// followed (handler refuses them in params, not in results).
func jsonFields(t reflect.Type) []jsonfields.Field {
	return jsonfields.Of(t, rawType, rawMessageType).Fields
}
