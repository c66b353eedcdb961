// Package openrpc describes a handler.Table as an OpenRPC 1.3 document
// (https://spec.open-rpc.org/) and serves it as OpenRPC's service
// discovery method, rpc.discover.
//
// # Overview
//
// The document is generated from the table's registrations
// (handler.Table.Methods): the names, the descriptions and summaries, the
// params and result Go types, the errors declared with handler.Errors and
// the subscriptions of handler.RegisterSubscription. Register serves it:
//
//	t := handler.NewTable()
//	// ... register the methods ...
//	if err := openrpc.Register(t, openrpc.WithInfo(openrpc.Info{Title: "my API", Version: "1.2.0"})); err != nil {
//		return err
//	}
//
// Document encodes it without serving it (a command that prints it, a
// test), and New returns it as a Doc to inspect. Not calling Register is
// how a server turns discovery off.
//
// # Terminology
//
// A content descriptor is OpenRPC's description of one param or of the
// result: a name, whether it is required, and a JSON Schema (draft 7, as
// OpenRPC 1.3 wants). A component is a schema of a named Go type, shared
// by every place that uses the type under components.schemas and
// referred to with {"$ref":"#/components/schemas/Name"}; recursive types
// work through it. Component names are the Go type names, made unique
// when two types share one: the second is qualified by its package
// name, the next numbered (item, pkg.item, pkg.item_2).
//
// # Params
//
// A method's params are described by its params type P (handler.Register
// lists the accepted types):
//
//   - a struct: one content descriptor per field, named by its JSON name,
//     in field order, with paramStructure "either" (the table takes both
//     an array and an object). A field is required by the table's rule:
//     unless it is a pointer, a slice (handler.Raw and json.RawMessage are
//     values, not lists), a map or an interface, or is tagged omitempty or
//     omitzero. OpenRPC wants the optional params after the required ones,
//     so an optional field followed by a required one is reported as
//     required (by position it must be given to reach the next one).
//     handler.ParamNames does not rename struct fields here: by name the
//     table takes the JSON names.
//   - an array [N]T: N required descriptors of T, "by-position", named by
//     handler.ParamNames when it gives N names, else param1 … paramN.
//   - a slice: "by-position", a map: "by-name", an optional descriptor of
//     the element type per handler.ParamNames name (the table takes any
//     number of them).
//   - handler.Raw, json.RawMessage, an interface, or a struct that decodes
//     itself (UnmarshalJSON): "either", a descriptor of any JSON value per
//     handler.ParamNames name, none without names.
//   - no params (handler.RegisterNoParams, struct{}, [0]T): params is
//     empty and paramStructure absent.
//
// # Schemas
//
// Schemas are derived from the Go types with
// github.com/invopop/jsonschema, as encoding/json encodes them: json tags
// name and omit fields, embedded structs are flattened, a pointer is
// nullable ({"anyOf":[…,{"type":"null"}]}), a slice or an array is an
// array ([N]T with minItems and maxItems N; []byte a base64 string), a
// map an object, time.Time a date-time string, unsigned integers have
// minimum 0. handler.Raw, json.RawMessage, interfaces and types that
// encode themselves (MarshalJSON) are any JSON value (the schema true);
// types that are text (MarshalText) are strings. A struct that embeds
// itself through pointers is a component of the fields encoding/json
// writes (invopop's struct tags are not honoured in it).
// Objects allow additional properties: the table ignores unknown members.
// An object's required properties follow the table's rule for params
// (see Params), in results too, where it is looser than what is sent
// (encoding/json writes every field that is not omitempty). A nil slice
// or map, which encoding/json writes as null, does not fit its schema:
// return empty ones.
// invopop's jsonschema struct tags (jsonschema:"…",
// jsonschema_description) are honoured. WithTypeSchema gives the schema
// of a type that reflection cannot see through, and EditMethod edits a
// method's description.
//
// # Types that write themselves
//
// handler writes a result (or a subscription's notification) whose type
// is a handler.JSONAppender with its AppendJSON method, which no
// reflection sees through. Such a type declares its schema: with a
// JSONSchemaText method (SchemaDeclarer; the schema is the type's
// component), with invopop/jsonschema's JSONSchema method, or with
// WithTypeSchema, which wins over the others; WithTypeSchema(t, "true")
// says that it may be any JSON value. Without one, New and Document fail
// with an error that names each such type and the methods that return it,
// and Register fails at once for the methods registered before it (for
// one registered after, rpc.discover answers -32603 and the table's
// logger reports the error): never a silent true. A JSONAppender inside a
// result (a field, an element) is written by sonic as encoding/json
// would, so it is reflected, unless it is a json.Marshaler too: then it
// must declare its schema too.
//
// # Results, errors and subscriptions
//
// The result descriptor is named "result" ("subscription" for a
// subscribe method); a method registered with handler.RegisterNoResult
// answers {"type":"null"}. The errors declared with handler.Errors are
// the method's errors, in order; the errors every JSON-RPC server may
// answer (-32700 … -32603, and jetrpc's -32000 … -32099 for limits) are
// not listed, as OpenRPC says they are to be assumed.
//
// A <ns>_subscribe method of handler.RegisterSubscription carries two
// specification extensions: "x-notification", the notification its
// subscriptions send, written as an OpenRPC method object without result
// (a notification, in OpenRPC's terms) named <ns>_subscription, whose
// params are "subscription" (the id) and "result" (of the type declared
// with handler.Notifies, any JSON value without it), by name; and
// "x-unsubscribe", the name of the method that ends a subscription.
// <ns>_unsubscribe is an ordinary method. The names are those
// handler.SubscriptionMethods chose, if given; the subscribe method of
// handler.RegisterSubscriptionKinds takes "kind" and "params", by
// position.
//
// # rpc.discover
//
// Register registers rpc.discover with handler.RegisterExtension, as an
// inline method that takes no params (absent, [] or {}) and answers the
// document. The document is built once, on the first call, when the table
// is sealed and no method can be added any more (so methods registered
// after Register are in it); that call takes the milliseconds of the
// reflection, on the caller, once. Register checks at once what it can:
// the options, and the result types of the methods registered so far. Every call then answers the same
// pre-encoded bytes, without allocating. A document that cannot be built
// is answered -32603 on every call.
//
// rpc.discover itself is not listed in the document: the OpenRPC
// specification defines it (its Service Discovery Method section gives
// its method object), and core-geth, whose document is generated from its
// Go methods too, leaves out its own rpc module, where its discovery
// method lives. schema-utils-js's MethodCallValidator likewise takes
// rpc.discover without looking it up.
//
// # Documents by grant
//
// A caller may call only the methods whose permissions (handler.Require)
// its grants hold; by default, rpc.discover still tells every caller of
// every method. With FilterByGrants, each caller gets the document of the
// methods it may call, as ForGrants gives it to New: the same check
// (handler.Grants.HasAll) that a call of the method passes, on the
// grants the call carries (handler.GrantsFrom: the transport's
// Authorizer, or an interceptor's handler.WithGrants). The components
// that only the left-out methods use are left out too. Two callers that
// hold the same of the permissions the methods require get the same
// document: documents are built on the first call that needs them, kept
// per such set (at most WithMaxDocuments, DefaultMaxDocuments by
// default), and answered without allocating. A table whose methods
// require nothing has one document for every caller.
//
// # Concurrency
//
// New, Document and Register read the table with handler.Table.Methods:
// they are safe from any goroutine, concurrently with Dispatch. The
// rpc.discover method is safe from any goroutine.
//
// # Buffer lifetimes
//
// Document returns a new slice, the caller's to keep. The documents that
// rpc.discover answers are kept for the table's life; each is written
// into each reply.
//
// # Limits
//
// The document must fit the table's MaxResponseSize (handler.Options):
// a larger one is answered parser.CodeResponseTooLarge. Under
// FilterByGrants, rpc.discover keeps at most WithMaxDocuments documents
// (DefaultMaxDocuments, 64); a caller beyond them gets one built for its
// call.
package openrpc
