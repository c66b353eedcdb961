package openrpc

// NOTE: the document's types (Doc, Info, Method, ContentDescriptor,
// Error), its options, and New, which turns the table's MethodInfo into
// Methods. The schemas come from a generator (schema.go) shared by the
// whole document, so that a Go type is one component however often it is
// used; they are kept as JSON text (json.RawMessage) in the Doc, so that
// the public API does not expose the schema library.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"

	"github.com/jetrpc/jetrpc/handler"
)

// Version is the OpenRPC version of the documents.
const Version = "1.3.2"

// DiscoverMethod is the name of OpenRPC's service discovery method.
const DiscoverMethod = "rpc.discover"

// Defaults of Info.
const (
	// DefaultTitle is Info.Title when none is given.
	DefaultTitle = "JSON-RPC 2.0 API"
	// DefaultVersion is Info.Version when none is given.
	DefaultVersion = "0.0.0"
)

// Doc is an OpenRPC document.
type Doc struct {
	// OpenRPC is the OpenRPC version, Version.
	OpenRPC string `json:"openrpc"`
	// Info describes the API.
	Info Info `json:"info"`
	// Methods are the table's methods sorted by name, rpc.discover left
	// out (and, with ForGrants, those its grants may not call).
	Methods []*Method `json:"methods"`
	// Components holds the schemas of named Go types, nil when there are
	// none.
	Components *Components `json:"components,omitempty"`
}

// Info is the info object of a document: what the API is. Title and
// Version are required by OpenRPC: empty, they are DefaultTitle and
// DefaultVersion.
type Info struct {
	// Title is the API's name.
	Title string `json:"title"`
	// Description says what the API is for; Markdown.
	Description string `json:"description,omitempty"`
	// TermsOfService is a URL; optional.
	TermsOfService string `json:"termsOfService,omitempty"`
	// Version is the API's version (not OpenRPC's).
	Version string `json:"version"`
	// Contact is whom to ask; optional.
	Contact *Contact `json:"contact,omitempty"`
	// License is the API's license; optional.
	License *License `json:"license,omitempty"`
}

// Contact is the contact object of Info. Every field is optional.
type Contact struct {
	// Name names the person or organisation.
	Name string `json:"name,omitempty"`
	// URL is where to find them.
	URL string `json:"url,omitempty"`
	// Email is their address.
	Email string `json:"email,omitempty"`
}

// License is the license object of Info.
type License struct {
	// Name is the license's name, as an SPDX identifier for instance.
	Name string `json:"name,omitempty"`
	// URL is where its text is.
	URL string `json:"url,omitempty"`
}

// Method is the method object of one method.
type Method struct {
	// Name is the method name.
	Name string `json:"name"`
	// Summary is handler.Summary's text.
	Summary string `json:"summary,omitempty"`
	// Description is handler.Description's text.
	Description string `json:"description,omitempty"`
	// Params are the params in position order; never nil (OpenRPC
	// requires the member).
	Params []*ContentDescriptor `json:"params"`
	// Result describes the result; nil for a notification (x-notification).
	Result *ContentDescriptor `json:"result,omitempty"`
	// Errors are the errors declared with handler.Errors.
	Errors []*Error `json:"errors,omitempty"`
	// ParamStructure is "by-position", "by-name" or "either"; "" (which
	// OpenRPC reads as "either") for a method without params.
	ParamStructure string `json:"paramStructure,omitempty"`
	// Notification is the notification that the subscriptions of a
	// subscribe method send (the extension x-notification); nil for other
	// methods.
	Notification *Method `json:"x-notification,omitempty"`
	// Unsubscribe names the method that ends a subscription of a
	// subscribe method (the extension x-unsubscribe); "" for others.
	Unsubscribe string `json:"x-unsubscribe,omitempty"`
}

// ContentDescriptor describes one param or a result.
type ContentDescriptor struct {
	// Name is the param's name: its key when params are given by name.
	Name string `json:"name"`
	// Summary is a short description.
	Summary string `json:"summary,omitempty"`
	// Description is a longer one; Markdown.
	Description string `json:"description,omitempty"`
	// Required reports whether the param must be given.
	Required bool `json:"required,omitempty"`
	// Schema is the JSON Schema of the value, as JSON text; it must be
	// set (true is any value).
	Schema json.RawMessage `json:"schema"`
}

// Error is a declared error of a method.
type Error struct {
	// Code is the error code.
	Code int64 `json:"code"`
	// Message is the error message.
	Message string `json:"message"`
	// Data is the error's data, as JSON text; nil for none.
	Data json.RawMessage `json:"data,omitempty"`
}

// Components holds the schemas that the document refers to.
type Components struct {
	// Schemas maps component names to schemas (JSON text), which
	// "$ref":"#/components/schemas/NAME" refers to.
	Schemas map[string]json.RawMessage `json:"schemas,omitempty"`
}

// Option configures a document.
type Option func(*config)

type config struct {
	info     Info
	types    map[reflect.Type]json.RawMessage // WithTypeSchema
	edits    []edit                           // EditMethod, in order
	filtered bool                             // ForGrants given: only the methods grants may call
	grants   handler.Grants                   // ForGrants
	byGrants bool                             // FilterByGrants (Register only)
	maxDocs  int                              // WithMaxDocuments; 0: DefaultMaxDocuments
	err      error                            // the first bad option
}

type edit struct {
	method string
	fn     func(*Method)
}

// WithInfo sets the document's info object (title, version, description,
// contact, license).
func WithInfo(info Info) Option { return func(c *config) { c.info = info } }

// SchemaDeclarer is implemented by types that declare the JSON Schema
// (draft 7) of the JSON they write, as JSON text: above all the result
// types that write themselves (handler.JSONAppender), whose JSON
// reflection cannot see. JSONSchemaText is called once per document, on
// a new *T (so a value receiver sees the zero value); text that is not a
// JSON object or boolean makes New fail. The schema is the component of
// the type, which every place that uses the type refers to ($ref).
// WithTypeSchema, given for the same type, wins. A type may declare its
// schema to invopop/jsonschema instead (its JSONSchema() *jsonschema.Schema
// method): the interface here spares the type that library, and
// handler's packages never link it.
type SchemaDeclarer interface {
	JSONSchemaText() string
}

// WithTypeSchema gives the JSON Schema of the Go type t, wherever t
// appears (as params, as a result, as a field or an element; a *t is its
// nullable form), written there in full: for types whose JSON reflection
// cannot see, such as those that encode themselves and do not declare
// their schema (SchemaDeclarer), or to override a declared one.
// WithTypeSchema(t, "true") says that t may be any JSON value: the way to
// accept a result type that writes itself without declaring a schema.
// schema is JSON text; text that is not a JSON object or boolean makes
// New fail.
func WithTypeSchema(t reflect.Type, schema string) Option {
	return func(c *config) {
		if t == nil || !isSchemaText(schema) {
			c.setErr(fmt.Errorf("openrpc: WithTypeSchema(%v): not a JSON Schema: %q", t, schema))
			return
		}
		if c.types == nil {
			c.types = map[reflect.Type]json.RawMessage{}
		}
		c.types[t] = json.RawMessage(schema)
	}
}

// EditMethod lets fn edit the generated description of the method name
// before the document is encoded: to give a schema that the Go types
// cannot (a Raw param that holds a number), examples of descriptions, and
// so on. Edits run in the order given. A name that the table does not
// have makes New fail.
func EditMethod(name string, fn func(*Method)) Option {
	return func(c *config) {
		if fn == nil {
			c.setErr(fmt.Errorf("openrpc: EditMethod(%q): nil function", name))
			return
		}
		c.edits = append(c.edits, edit{name, fn})
	}
}

// ForGrants makes the document describe only the methods that a caller
// holding g may call: a method registered with handler.Require is left
// out unless g holds every permission it requires (handler.Grants.HasAll,
// the check a call passes), and so are the components only such methods
// use. ForGrants(nil) is the document of a caller without grants. Given
// to Register, it is every caller's document; FilterByGrants gives each
// caller its own instead. An EditMethod of a method left out is not
// applied (and is no error).
func ForGrants(g handler.Grants) Option {
	return func(c *config) { c.filtered, c.grants = true, g }
}

// FilterByGrants, on, makes rpc.discover (Register) answer each caller
// the document of the methods its grants let it call — the document New
// gives with ForGrants(handler.GrantsFrom(ctx)), the grants of the call's
// transport (its handler.Authorizer) or an interceptor's
// handler.WithGrants — instead of every method: a caller without the
// grant a method requires does not learn of it. Off, the default, every
// caller gets the whole document. Documents are built on the first call
// that needs them and kept, one per distinct set of the required
// permissions a caller holds (a caller's other grants do not matter), up
// to WithMaxDocuments; a call's grants are matched to them without
// allocating (for up to 256 distinct required permissions). New and
// Document ignore it.
func FilterByGrants(on bool) Option { return func(c *config) { c.byGrants = on } }

// DefaultMaxDocuments is how many documents rpc.discover keeps under
// FilterByGrants, by default (WithMaxDocuments).
const DefaultMaxDocuments = 64

// WithMaxDocuments bounds the documents rpc.discover keeps under
// FilterByGrants, one per distinct set of required permissions held by
// its callers: DefaultMaxDocuments by default (n ≤ 0). A caller whose set
// finds no room gets a document built for its call alone, each time —
// the reflection of its types, milliseconds, on the caller's event loop —
// and the first such call is logged at WARN. At most 2^k sets exist for
// the k distinct permissions that the methods require, so a table with up
// to 6 never reaches the default.
func WithMaxDocuments(n int) Option { return func(c *config) { c.maxDocs = max(n, 0) } }

func (c *config) setErr(err error) {
	if c.err == nil {
		c.err = err
	}
}

// isSchemaText reports whether s is a JSON object or boolean.
func isSchemaText(s string) bool {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return false
	}
	switch v.(type) {
	case map[string]any, bool:
		return true
	}
	return false
}

// New builds the OpenRPC document of t's methods (with ForGrants, of
// those that a caller holding its grants may call). It is safe from any
// goroutine; a method registered afterwards is not in the document.
//
// A result (or notification) type that writes itself
// (handler.JSONAppender) must have a schema: declared by the type
// (SchemaDeclarer) or given with WithTypeSchema. New fails, naming each
// type without one and the methods that return it, rather than describe
// it as any JSON value without being told to; so does a type that is a
// JSONAppender and a json.Marshaler, wherever it appears.
func New(t *handler.Table, opts ...Option) (doc *Doc, err error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.info.Title == "" {
		c.info.Title = DefaultTitle
	}
	if c.info.Version == "" {
		c.info.Version = DefaultVersion
	}
	defer func() {
		if v := recover(); v != nil { // the schema library panics on types it cannot describe
			doc, err = nil, fmt.Errorf("openrpc: %v", v)
		}
	}()
	g := newGenerator(c.types)
	doc = &Doc{OpenRPC: Version, Info: c.info, Methods: []*Method{}}
	byName := map[string]*Method{}
	known := map[string]bool{} // every method of t, for EditMethod's check
	for _, mi := range t.Methods() {
		if mi.Name == DiscoverMethod {
			continue
		}
		known[mi.Name] = true
		if c.filtered && !c.grants.HasAll(mi.Require...) {
			continue
		}
		m, err := g.method(mi)
		if err != nil {
			return nil, err
		}
		doc.Methods = append(doc.Methods, m)
		byName[m.Name] = m
	}
	if err := g.undeclared.err(); err != nil {
		return nil, err
	}
	for _, e := range c.edits {
		m := byName[e.method]
		switch {
		case m != nil:
			e.fn(m)
		case !known[e.method]:
			return nil, fmt.Errorf("openrpc: EditMethod(%q): no such method", e.method)
		}
	}
	if schemas := g.components(doc); len(schemas) > 0 {
		doc.Components = &Components{Schemas: schemas}
	}
	return doc, nil
}

// Document builds the OpenRPC document of t's methods (New) and encodes
// it as compact JSON. It is safe from any goroutine.
func Document(t *handler.Table, opts ...Option) ([]byte, error) {
	doc, err := New(t, opts...)
	if err != nil {
		return nil, err
	}
	return doc.Encode()
}

// Encode returns the document as compact JSON. A content descriptor
// without a schema makes it fail.
func (d *Doc) Encode() ([]byte, error) {
	for _, m := range d.Methods {
		if err := m.check(); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("openrpc: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// check reports a content descriptor of m without a schema.
func (m *Method) check() error {
	cds := append([]*ContentDescriptor{m.Result}, m.Params...)
	for _, cd := range cds {
		if cd != nil && len(cd.Schema) == 0 {
			return fmt.Errorf("openrpc: method %q: %q has no schema", m.Name, cd.Name)
		}
	}
	if m.Notification != nil {
		return m.Notification.check()
	}
	return nil
}

// Param structures.
const (
	byPosition = "by-position"
	byName     = "by-name"
	either     = "either"
)

// method describes one method.
func (g *generator) method(mi handler.MethodInfo) (*Method, error) {
	m := &Method{Name: mi.Name, Summary: mi.Summary, Description: mi.Description}
	var err error
	g.where = fmt.Sprintf("method %q params", mi.Name)
	if m.Params, m.ParamStructure, err = g.params(mi); err != nil {
		return nil, err
	}
	m.Result = &ContentDescriptor{Name: "result", Schema: json.RawMessage(`{"type":"null"}`)}
	if mi.ResultType != nil {
		g.where = fmt.Sprintf("method %q result", mi.Name)
		if m.Result.Schema, err = g.resultSchema(mi.ResultType); err != nil {
			return nil, err
		}
	}
	for _, e := range mi.Errors {
		oe := &Error{Code: int64(e.Code), Message: e.Message}
		if oe.Message == "" {
			oe.Message = e.Code.String()
		}
		if e.Data != nil {
			if oe.Data, err = json.Marshal(e.Data); err != nil {
				return nil, fmt.Errorf("openrpc: method %q: error %d: data: %w", mi.Name, e.Code, err)
			}
		}
		m.Errors = append(m.Errors, oe)
	}
	if mi.Notification != "" {
		m.Result.Name, m.Result.Description = "subscription", "the subscription's id, the subscription member of its notifications"
		result := json.RawMessage("true")
		if mi.NotificationType != nil {
			g.where = fmt.Sprintf("method %q notification", mi.Name)
			if result, err = g.resultSchema(mi.NotificationType); err != nil {
				return nil, err
			}
		}
		m.Notification = &Method{
			Name:        mi.Notification,
			Description: "sent to the client for each event of a subscription, until it ends",
			Params: []*ContentDescriptor{
				{Name: "subscription", Description: "the subscription's id, as subscribe answered it", Required: true, Schema: json.RawMessage(`{"type":"string"}`)},
				{Name: "result", Description: "the event", Required: true, Schema: result},
			},
			ParamStructure: byName,
		}
		m.Unsubscribe = mi.Unsubscribe
	}
	return m, nil
}

// resultSchema returns the schema of a result (or notification) type t as
// JSON text. A t that writes itself (writesItself) without a schema
// (hasSchema) is recorded in g.undeclared, and described as any value.
func (g *generator) resultSchema(t reflect.Type) (json.RawMessage, error) {
	if writesItself(t) && !hasSchema(g.types, t) {
		g.undeclared.add(t, g.where)
		return json.RawMessage("true"), nil
	}
	return g.schemaText(t)
}

// params describes the params of a method and their structure.
func (g *generator) params(mi handler.MethodInfo) ([]*ContentDescriptor, string, error) {
	out := []*ContentDescriptor{}
	pt := mi.ParamsType
	if pt == nil {
		return out, "", nil
	}
	named := func(elem json.RawMessage) []*ContentDescriptor {
		for _, name := range mi.Params {
			out = append(out, &ContentDescriptor{Name: name, Schema: elem})
		}
		return out
	}
	switch {
	case opaqueParams(pt):
		return named(json.RawMessage("true")), either, nil
	case pt.Kind() == reflect.Struct:
		fields := jsonFields(pt)
		if len(fields) == 0 {
			return out, "", nil
		}
		props, err := g.properties(pt)
		if err != nil {
			return nil, "", err
		}
		for _, f := range fields {
			schema, ok := props[f.Name]
			if !ok {
				schema = json.RawMessage("true")
			}
			out = append(out, &ContentDescriptor{Name: f.Name, Required: f.Required, Schema: schema})
		}
		requireBeforeRequired(out)
		return out, either, nil
	case pt.Kind() == reflect.Array:
		if pt.Len() == 0 {
			return out, "", nil
		}
		elem, err := g.schemaText(pt.Elem())
		if err != nil {
			return nil, "", err
		}
		for i := range pt.Len() {
			name := "param" + strconv.Itoa(i+1)
			if len(mi.Params) == pt.Len() {
				name = mi.Params[i]
			}
			out = append(out, &ContentDescriptor{Name: name, Required: true, Schema: elem})
		}
		return out, byPosition, nil
	case pt.Kind() == reflect.Slice, pt.Kind() == reflect.Map:
		elem, err := g.schemaText(pt.Elem())
		if err != nil {
			return nil, "", err
		}
		if pt.Kind() == reflect.Map {
			return named(elem), byName, nil
		}
		return named(elem), byPosition, nil
	}
	return nil, "", fmt.Errorf("openrpc: method %q: unexpected params type %v", mi.Name, pt)
}

// requireBeforeRequired marks required every param followed by a required
// one: OpenRPC wants the optional params last, and by position a param
// must be given to give the next.
func requireBeforeRequired(cds []*ContentDescriptor) {
	required := false
	for i := len(cds) - 1; i >= 0; i-- {
		required = required || cds[i].Required
		cds[i].Required = required
	}
}

// refPattern finds the component references in schema text.
var refPattern = regexp.MustCompile(`"\$ref":"#/components/schemas/([^"]+)"`)

// components returns the schemas of the components that doc refers to,
// directly or through other components.
func (g *generator) components(doc *Doc) map[string]json.RawMessage {
	text, err := json.Marshal(doc.Methods)
	if err != nil {
		return nil // Encode reports it
	}
	out := map[string]json.RawMessage{}
	queue := []string{}
	visit := func(text []byte) {
		for _, m := range refPattern.FindAllSubmatch(text, -1) {
			name := string(m[1])
			if _, seen := out[name]; seen {
				continue
			}
			if s, ok := g.defText(name); ok {
				out[name] = s
				queue = append(queue, name)
			}
		}
	}
	visit(text)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		visit(out[name])
	}
	return out
}
