package openrpc

import (
	"context"
	"sync"

	"github.com/jetrpc/jetrpc/handler"
)

// Register registers rpc.discover on t (handler.RegisterExtension), an
// inline method that takes no params (absent, [] or {}) and answers the
// OpenRPC document of t built with opts. The document is built once, on
// the first call (t is sealed by then: every method is in it), and every
// call answers the same bytes without allocating; a document that cannot
// be built is answered -32603 (handler.CodeInternalError) on every call,
// with the error's text only under handler.Options.ExposeErrors. Options
// that cannot be right (WithTypeSchema text that is no schema, a nil
// EditMethod function) make Register fail at once; so does a table that
// has rpc.discover already, or that is dispatching.
func Register(t *handler.Table, opts ...Option) error {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return c.err
	}
	d := &discovery{table: t, opts: opts}
	d.buildFunc = d.build
	return handler.TryRegisterExtension(t, DiscoverMethod, d.discover, handler.Inline(),
		handler.Summary("Returns an OpenRPC schema as a description of this service"),
		handler.Description("the OpenRPC document of this server (https://spec.open-rpc.org/)"))
}

// discovery is the state of one table's rpc.discover.
type discovery struct {
	table     *handler.Table // immutable
	opts      []Option       // immutable
	buildFunc func()         // build, made once so that a call does not make it
	once      sync.Once      // guards doc and err
	doc       handler.Raw    // the encoded document; immutable once built
	err       error          // why it could not be built; immutable once built
}

// discover is rpc.discover. Safe from any goroutine; it does not block
// but for the first call, which builds the document.
func (d *discovery) discover(context.Context, struct{}) (handler.Raw, error) {
	d.once.Do(d.buildFunc)
	return d.doc, d.err
}

// build encodes the document, once.
func (d *discovery) build() {
	doc, err := Document(d.table, d.opts...)
	if err != nil {
		d.table.Options().Logger.Error("openrpc: rpc.discover cannot build the document", "err", err)
		d.err = err
		return
	}
	d.doc = doc
}
