package openrpc

// NOTE: rpc.discover. Without FilterByGrants every caller gets one
// document, built on the first call (once). With it, a caller gets the
// document of the methods its grants let it call. Which those are
// depends only on which of the permissions that the methods require
// (perms, found on the first call) the caller holds: a bit set, the
// caller's key, made on the stack. The documents are kept by key in an
// immutable map that a build replaces (copy on write, under mu), so
// that a call whose document is built reads it with one atomic load and
// no lock.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/handler"
)

// Register registers rpc.discover on t (handler.RegisterExtension), an
// inline method that takes no params (absent, [] or {}) and answers the
// OpenRPC document of t built with opts. The document is built once, on
// the first call (t is sealed by then: every method is in it), and every
// call answers the same bytes without allocating; a document that cannot
// be built is answered -32603 (parser.CodeInternalError) on every call,
// with the error's text only under handler.Options.ExposeErrors. With
// FilterByGrants, each caller gets the document of the methods its
// grants let it call, built on the first call that needs it and kept
// (WithMaxDocuments). Options that cannot be right (WithTypeSchema text
// that is no schema, a nil EditMethod function) make Register fail at
// once; so does a table that has rpc.discover already, or that is
// dispatching, and a method registered before Register whose result
// writes itself and has no schema (see New). Such a method registered
// after Register makes the document fail to build: rpc.discover then
// answers -32603, and the table's logger (handler.Options.Logger) logs
// the error, naming the types and methods, at ERROR on the first call.
func Register(t *handler.Table, opts ...Option) error {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return c.err
	}
	var u undeclared
	for _, mi := range t.Methods() {
		if rt := mi.ResultType; rt != nil && writesItself(rt) && !hasSchema(c.types, rt) {
			u.add(rt, fmt.Sprintf("method %q result", mi.Name))
		}
		if nt := mi.NotificationType; nt != nil && writesItself(nt) && !hasSchema(c.types, nt) {
			u.add(nt, fmt.Sprintf("method %q notification", mi.Name))
		}
	}
	if err := u.err(); err != nil {
		return err
	}
	d := &discovery{table: t, opts: slices.Clip(opts), byGrants: c.byGrants, maxDocs: c.maxDocs}
	if d.maxDocs == 0 {
		d.maxDocs = DefaultMaxDocuments
	}
	d.buildFunc = d.build
	return registerExtension(func() {
		handler.RegisterExtension(t, DiscoverMethod, d.discover, handler.Inline(),
			handler.Summary("Returns an OpenRPC schema as a description of this service"),
			handler.Description("the OpenRPC document of this server (https://spec.open-rpc.org/)"))
	})
}

// registerExtension runs a registration and returns the error it
// panicked with (handler.RegisterExtension panics with an error: a
// table that has rpc.discover already, or that is dispatching).
func registerExtension(register func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			e, ok := v.(error)
			if !ok {
				panic(v)
			}
			err = e
		}
	}()
	register()
	return nil
}

// discovery is the state of one table's rpc.discover.
type discovery struct {
	table     *handler.Table // immutable
	opts      []Option       // immutable; clipped, so that appending copies
	byGrants  bool           // FilterByGrants; immutable
	maxDocs   int            // WithMaxDocuments or its default; immutable
	buildFunc func()         // build, made once so that a call does not make it
	once      sync.Once      // guards doc, err and perms
	doc       handler.Raw    // the encoded document of every caller; immutable once built
	err       error          // why it could not be built; immutable once built
	// perms are, under FilterByGrants, the distinct permissions that the
	// methods require, sorted: bit i of a caller's key says whether it
	// holds perms[i]. Immutable once built; nil when every caller gets
	// doc.
	perms []string

	mu   sync.Mutex                          // guards building documents by key, and replacing docs
	docs atomic.Pointer[map[string]grantDoc] // the documents by key; the map is never modified, but replaced under mu
	full atomic.Bool                         // a document found no room in docs (logged once)
}

// grantDoc is the document of the callers of one key, or why it could
// not be built.
type grantDoc struct {
	doc handler.Raw
	err error
}

// keyOnStack is the longest key made without allocating, in bytes: the
// keys of tables whose methods require up to 256 distinct permissions.
const keyOnStack = 32

// discover is rpc.discover. Safe from any goroutine; it does not block
// but for a call that builds a document (the first, and with
// FilterByGrants the first of each key).
func (d *discovery) discover(ctx context.Context, _ struct{}) (handler.Raw, error) {
	d.once.Do(d.buildFunc)
	if d.perms == nil {
		return d.doc, d.err
	}
	g := handler.GrantsFrom(ctx)
	var stack [keyOnStack]byte
	n := (len(d.perms) + 7) / 8
	key := stack[:0]
	if n > len(stack) {
		key = make([]byte, 0, n)
	}
	key = key[:n]
	for i, p := range d.perms {
		if g.Has(p) { // the permissions held decide handler.Grants.HasAll of every method
			key[i/8] |= 1 << (i % 8)
		}
	}
	if m := d.docs.Load(); m != nil {
		if e, ok := (*m)[string(key)]; ok {
			return e.doc, e.err
		}
	}
	return d.buildKey(key)
}

// build makes what every call needs, once: under FilterByGrants, perms;
// the document of every caller without it, or when no method requires a
// permission.
func (d *discovery) build() {
	if d.byGrants {
		d.perms = requiredPerms(d.table)
		if d.perms != nil {
			return
		}
	}
	doc, err := Document(d.table, d.opts...)
	if err != nil {
		d.table.Options().Logger.Error("openrpc: rpc.discover cannot build the document", "err", err)
		d.err = err
		return
	}
	d.doc = doc
}

// buildKey returns the document of the callers of key, building it and
// keeping it if no other call has.
func (d *discovery) buildKey(key []byte) (handler.Raw, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.docs.Load()
	if m != nil {
		if e, ok := (*m)[string(key)]; ok {
			return e.doc, e.err
		}
	}
	var held handler.Grants
	for i, p := range d.perms {
		if key[i/8]&(1<<(i%8)) != 0 {
			held = append(held, p)
		}
	}
	var e grantDoc
	e.doc, e.err = Document(d.table, append(d.opts, ForGrants(held))...)
	kept := 0
	if m != nil {
		kept = len(*m)
	}
	log := d.table.Options().Logger
	if kept >= d.maxDocs {
		if !d.full.Swap(true) {
			log.Warn("openrpc: rpc.discover keeps no more documents by grants; callers holding other permissions get one built for each call",
				"documents", kept, "permissions", held)
		}
		return e.doc, e.err
	}
	if e.err != nil {
		log.Error("openrpc: rpc.discover cannot build the document", "permissions", held, "err", e.err)
	}
	next := make(map[string]grantDoc, kept+1)
	if m != nil {
		maps.Copy(next, *m)
	}
	next[string(key)] = e
	d.docs.Store(&next)
	return e.doc, e.err
}

// requiredPerms returns the distinct permissions that t's methods
// require (handler.Require), sorted; nil for none.
func requiredPerms(t *handler.Table) []string {
	var perms []string
	for _, mi := range t.Methods() {
		if mi.Name != DiscoverMethod {
			perms = append(perms, mi.Require...)
		}
	}
	if len(perms) == 0 {
		return nil
	}
	slices.Sort(perms)
	return slices.Compact(perms)
}
