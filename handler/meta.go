package handler

// NOTE: call metadata. A transport describes who is calling in a Meta —
// the transport, the addresses, the HTTP head (or the WebSocket upgrade's)
// and the caller's grants — and hands it to the table inside a
// CallContext, a context.Context it keeps and refills without allocating
// (one per connection, or per job on a worker). Methods and interceptors
// read it with MetaFrom. A Meta does not copy the head: its strings are
// views of the transport's buffer, valid for the call.

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unsafe"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/handler/ratelimit"
	"github.com/jetrpc/jetrpc/parser/http1"
)

// Transport is the protocol a call arrived by.
type Transport uint8

// Transports.
const (
	// TransportInProcess: Table.Dispatch called directly, with no
	// transport's metadata in the context.
	TransportInProcess Transport = iota
	// TransportHTTP: an HTTP request (the engine's HTTP/1.1, or net/http
	// through HTTPHandler).
	TransportHTTP
	// TransportWebSocket: a WebSocket connection; the head is the upgrade
	// request's, kept for the connection's life.
	TransportWebSocket
	// TransportStream: a stream of JSON messages over TCP or a Unix
	// socket; there is no head.
	TransportStream
)

// String returns "in-process", "http", "websocket" or "stream".
func (t Transport) String() string {
	switch t {
	case TransportHTTP:
		return "http"
	case TransportWebSocket:
		return "websocket"
	case TransportStream:
		return "stream"
	}
	return "in-process"
}

// Meta describes who is calling: what a transport knows of a call
// besides its message. The zero value is an in-process call with nothing
// known. A Meta is read-only for methods and interceptors; transports
// fill it (SetHTTPHead, SetHTTPRequest, CopyTo).
//
// Its strings (Method, Target, Path, Query, Header, Headers) are views
// of the transport's buffer: the returned string is valid until the call
// returns; copy it (strings.Clone) to keep it.
type Meta struct {
	// Transport is the protocol of the call.
	Transport Transport
	// Remote and Local are the connection's addresses (nil in process;
	// for net/http, Remote is parsed from http.Request.RemoteAddr and
	// Local is the server's address, when net/http has it).
	Remote, Local net.Addr
	// Grants are the permissions the transport's Authorizer gave the
	// caller, for methods registered with Require. See GrantsFrom, which
	// also sees grants an interceptor added with WithGrants.
	Grants Grants
	// Principal names the authenticated caller: the Authorizer sets it
	// (handler/auth: an API key's name, a JWT's sub claim), and the
	// transport clears it before calling the Authorizer; "" when there is
	// none. The rate limits count calls by it (Options.RateLimit). It is a string
	// of its own, not a view of the request (CopyTo does not move it).
	Principal string
	// AuthorizedUntil is set by an Authorizer whose answer — the grants
	// it returns and Principal — depends on the request's Authorization
	// field alone, to say until when that answer holds for the same
	// field: a reading of package clock, or math.MaxInt64 for good. A
	// transport may then give the connection's next requests that carry
	// the same Authorization field the same answer without asking again
	// (the engine does, on HTTP keep-alive connections). The transport
	// sets it to 0, ask every time, before calling the Authorizer.
	// handler/auth's Keys set it for good when the key came in the
	// Authorization field; its JWT until the token's time window closes.
	AuthorizedUntil int64
	// Proxies, set by the transport when the connection comes from a
	// proxy it trusts (engine.WithTrustedProxies,
	// HTTPHandler.TrustedProxies), are the trusted proxies: ClientIP then
	// reads the client's address from the fields the proxies set. nil
	// otherwise: Remote is the client.
	Proxies httprules.Proxies
	// Quota is the connection's rate-limit state (Table.NewQuota), kept
	// by the transport for the connection's life; nil when the table has
	// no rate limit or the transport keeps none (then calls have no
	// per-connection limit). A Meta copied to a worker carries the same
	// Quota.
	Quota *ratelimit.Quota

	head           []byte        // the HTTP request head (engine); nil otherwise
	method, target string        // views of head, or of req
	auth           string        // the Authorization value, when parsed (a view of head)
	traceparent    string        // the traceparent value, when parsed (a view of head)
	parsed         bool          // the transport gave the values of the fields its parser reads (SetHTTPHeadParsed)
	req            *http.Request // net/http's request (HTTPHandler); nil otherwise
	prepaid        string        // the method whose rate-limit cost Table.Admit spent for this request (its name, the table's string); "" for none
}

// SetHTTPHead makes head the call's HTTP request: a complete request head
// (optional empty lines, the request line, the header fields and the
// blank line) that the transport has validated. m keeps head, not a copy:
// it must stay unchanged for as long as m is used. For transports.
func (m *Meta) SetHTTPHead(head []byte) {
	m.head, m.req, m.auth, m.traceparent, m.parsed = head, nil, "", "", false
	line := head
	for len(line) >= 2 && line[0] == '\r' && line[1] == '\n' {
		line = line[2:]
	}
	if k := bytes.IndexByte(line, '\n'); k >= 0 {
		line = line[:k]
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		m.method, m.target = "", ""
		return
	}
	m.method = view(line[:sp])
	rest := line[sp+1:]
	if sp2 := bytes.IndexByte(rest, ' '); sp2 >= 0 {
		rest = rest[:sp2]
	}
	m.target = view(rest)
}

// SetHTTPHeadParsed is SetHTTPHead for a transport that has parsed the
// head already into r (nil: a head with no request line and no fields
// known): the request line's method and target, and the first
// Authorization and traceparent values, all subslices of head. It parses
// nothing, and Header finds those two fields without a search: the
// credentials an Authorizer reads, and the trace context a tracer reads
// for every call. For transports.
func (m *Meta) SetHTTPHeadParsed(head []byte, r *http1.Request) {
	m.head, m.req, m.parsed, m.prepaid = head, nil, true, ""
	if r == nil {
		m.method, m.target, m.auth, m.traceparent = "", "", "", ""
		return
	}
	m.method, m.target = view(r.Method), view(r.Target)
	m.auth, m.traceparent = view(r.Auth), view(r.Traceparent)
}

// SetHTTPRequest makes r the call's HTTP request (net/http). For
// transports.
func (m *Meta) SetHTTPRequest(r *http.Request) {
	m.head, m.req, m.auth, m.traceparent, m.parsed, m.prepaid = nil, r, "", "", false, ""
	m.method, m.target = r.Method, r.RequestURI
	if m.target == "" && r.URL != nil {
		m.target = r.URL.RequestURI()
	}
}

// CopyTo copies m into dst with its own copy of the head, made in buf
// (grown as needed), and returns buf: a transport that runs the call on
// another goroutine copies the head once, not each header. For
// transports.
func (m *Meta) CopyTo(dst *Meta, buf []byte) []byte {
	*dst = *m
	if m.head != nil {
		buf = append(buf[:0], m.head...)
		dst.head = buf
		dst.method, dst.target, dst.auth = rebase(m.method, m.head, buf), rebase(m.target, m.head, buf), rebase(m.auth, m.head, buf)
		dst.traceparent = rebase(m.traceparent, m.head, buf)
	}
	return buf
}

// rebase returns the view of to at the place where v lies in from, or ""
// for a v that is empty or not a view of from.
func rebase(v string, from, to []byte) string {
	if v == "" || len(from) == 0 {
		return ""
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(from))))
	if off < 0 || off+len(v) > len(to) {
		return ""
	}
	return view(to[off : off+len(v)])
}

// view is a string viewing b, without a copy.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Method returns the HTTP request method ("POST"; "GET" for a WebSocket
// upgrade), or "" without HTTP. The returned string is valid until the
// call returns; copy it (strings.Clone) to keep it.
func (m *Meta) Method() string { return m.method }

// Target returns the HTTP request target as sent ("/rpc?key=x"), or ""
// without HTTP. The returned string is valid until the call returns;
// copy it (strings.Clone) to keep it.
func (m *Meta) Target() string { return m.target }

// Path returns the target without its query ("/rpc"). The returned
// string is valid until the call returns; copy it (strings.Clone) to keep
// it.
func (m *Meta) Path() string {
	if k := strings.IndexByte(m.target, '?'); k >= 0 {
		return m.target[:k]
	}
	return m.target
}

// Query returns the first value of the query parameter name in the
// target, percent-decoded, or "" when there is none. The returned string
// is valid until the call returns; copy it (strings.Clone) to keep it.
func (m *Meta) Query(name string) string {
	k := strings.IndexByte(m.target, '?')
	if k < 0 {
		return ""
	}
	q := m.target[k+1:]
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(pair, "=")
		if key != name {
			continue
		}
		if strings.ContainsAny(value, "%+") {
			if v, err := url.QueryUnescape(value); err == nil {
				return v
			}
		}
		return value
	}
	return ""
}

// Header returns the first value of the header field name (matched
// ignoring ASCII case), without leading and trailing white space, or ""
// when the request has no such field or there is no HTTP. For a
// WebSocket it reads the upgrade request. The returned string is valid
// until the call returns; copy it (strings.Clone) to keep it.
func (m *Meta) Header(name string) string {
	if m.req != nil {
		if len(name) == len("host") && strings.EqualFold(name, "host") {
			return m.req.Host // net/http keeps it out of Header
		}
		return m.req.Header.Get(name)
	}
	if v, ok := m.parsedField(name); ok {
		return v
	}
	f := http1.NewFields(m.head)
	for n, v, ok := f.Next(); ok; n, v, ok = f.Next() {
		if len(n) == len(name) && httprules.EqualFold(n, name) {
			return view(v)
		}
	}
	return ""
}

// parsedField returns the value of the field name when the transport's
// parser found it (SetHTTPHeadParsed): Authorization and traceparent.
// Kept inlinable.
func (m *Meta) parsedField(name string) (string, bool) {
	if !m.parsed {
		return "", false
	}
	switch {
	case len(name) == len("traceparent") && (name == "traceparent" || httprules.EqualFold(name, "traceparent")):
		return m.traceparent, true
	case len(name) == len("authorization") && (name == "Authorization" || httprules.EqualFold(name, "authorization")):
		return m.auth, true // the bearer token's field
	}
	return "", false
}

// HasHeaders reports whether the call came with HTTP header fields: an
// HTTP request, or a WebSocket's upgrade request. A stream's calls and
// calls in process have none, and Header answers "" for every name.
// Kept inlinable.
func (m *Meta) HasHeaders() bool { return m.head != nil || m.req != nil }

// HeaderValues is Header for several names (at most 64) in one pass
// over the head: values[i] is set to the first value of the field
// names[i], matched ignoring ASCII case, or "" (values must be at least
// as long as names). A tracer reads its fields this way, once per call;
// it allocates nothing. The strings are valid until the call returns.
func (m *Meta) HeaderValues(names, values []string) {
	values = values[:len(names)]
	if !m.HasHeaders() { // no HTTP: a stream, a call in process
		for i := range values {
			values[i] = ""
		}
		return
	}
	if m.req != nil || len(names) > 64 {
		for i, n := range names {
			values[i] = m.Header(n)
		}
		return
	}
	var found uint64
	for i, name := range names {
		v, ok := m.parsedField(name)
		if ok {
			found |= 1 << i
		}
		values[i] = v // "" unless found: one write each, not a clear of the slice (a call, with write barriers)
	}
	all := uint64(1)<<len(names) - 1
	if found == all {
		return // every name a field the transport's parser found: no pass over the head
	}
	f := http1.NewFields(m.head)
	for n, v, ok := f.Next(); ok; n, v, ok = f.Next() {
		for i, name := range names {
			if found&(1<<i) == 0 && len(n) == len(name) && httprules.EqualFold(n, name) {
				values[i], found = view(v), found|1<<i
				break
			}
		}
		if found == all {
			return
		}
	}
}

// Headers yields every header field of the request, name as sent and
// value trimmed, in order (net/http: in its map's order, one pair per
// value, Host first). The yielded strings are valid until the call returns; copy
// them (strings.Clone) to keep them.
func (m *Meta) Headers() iter.Seq2[string, string] {
	if m.req != nil {
		return func(yield func(string, string) bool) {
			if m.req.Host != "" && !yield("Host", m.req.Host) {
				return
			}
			for n, vs := range m.req.Header {
				for _, v := range vs {
					if !yield(n, v) {
						return
					}
				}
			}
		}
	}
	return m.fields()
}

// fields iterates over the fields of m.head.
func (m *Meta) fields() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		f := http1.NewFields(m.head)
		for n, v, ok := f.Next(); ok; n, v, ok = f.Next() {
			if !yield(view(n), view(v)) {
				return
			}
		}
	}
}

// CallContext is the context.Context a transport passes with a call: its
// Parent's deadline, cancellation and values, plus the call's Meta
// (MetaFrom) and grants (GrantsFrom). A transport keeps one and refills
// it call after call, so that the metadata costs no allocation; it must
// not be changed while a call that was given it runs. Methods see it only
// as a context.Context.
type CallContext struct {
	// Parent gives the deadline, the cancellation and other values; it
	// must not be nil while the CallContext is in use.
	Parent context.Context
	// Meta is the call's metadata.
	Meta Meta
	// Conn, when not nil, is the Conn of this call alone, which ConnFrom
	// returns in place of Parent's: an HTTP call answered as an event
	// stream, whose notifications go with its reply.
	Conn Conn
}

var _ context.Context = (*CallContext)(nil)

// Deadline returns Parent's deadline.
func (c *CallContext) Deadline() (time.Time, bool) { return c.Parent.Deadline() }

// Done returns Parent's Done channel.
func (c *CallContext) Done() <-chan struct{} { return c.Parent.Done() }

// Err returns Parent's error.
func (c *CallContext) Err() error { return c.Parent.Err() }

// Value returns the Meta and the grants for MetaFrom and GrantsFrom, and
// Parent's values for every other key.
func (c *CallContext) Value(key any) any {
	switch key.(type) {
	case metaKey:
		return &c.Meta
	case grantsKey:
		if c.Meta.Grants != nil {
			return &c.Meta.Grants
		}
	case connKey:
		if c.Conn != nil {
			return c.Conn
		}
	}
	return c.Parent.Value(key)
}

type (
	metaKey   struct{}
	grantsKey struct{}
)

// MetaFrom returns the metadata of the call whose context is ctx (or a
// context derived from it); never nil: a zero Meta, TransportInProcess,
// when the transport gave none (Table.Dispatch called directly). It is
// read-only, and its strings are valid until the call returns; copy
// them (strings.Clone) to keep them.
func MetaFrom(ctx context.Context) *Meta {
	if c, ok := unwrapCall(ctx).(*CallContext); ok {
		return &c.Meta
	}
	if m, ok := ctx.Value(metaKey{}).(*Meta); ok {
		return m
	}
	return &noMeta
}

// noMeta is the Meta of calls without one; read-only.
var noMeta Meta

// Grants are the permissions a caller holds, by name; "*" holds every
// permission. A transport's Authorizer returns them, and methods
// registered with Require check them. A Grants value is shared, not
// copied: it must not be modified once handed out.
type Grants []string

// Has reports whether g holds the permission perm (or "*").
func (g Grants) Has(perm string) bool {
	for _, p := range g {
		if p == perm || p == "*" {
			return true
		}
	}
	return false
}

// HasAll reports whether g holds every permission of perms (each, or
// "*"): the check that a call of a method registered with Require
// passes; true for no perms. Discovery uses it to list only the methods
// a caller may call (package handler/openrpc).
func (g Grants) HasAll(perms ...string) bool {
	for _, p := range perms {
		if !g.Has(p) {
			return false
		}
	}
	return true
}

// WithGrants returns a context whose calls hold g instead of the grants
// their transport gave, for an interceptor that authenticates by itself
// (say, from a token in the params).
func WithGrants(ctx context.Context, g Grants) context.Context {
	return context.WithValue(ctx, grantsKey{}, &g)
}

// GrantsFrom returns the grants of the call whose context is ctx: those
// of the innermost WithGrants or transport's Authorizer (a CallContext's
// Meta.Grants, when not nil), else none.
func GrantsFrom(ctx context.Context) Grants {
	if c, ok := unwrapCall(ctx).(*CallContext); ok && c.Meta.Grants != nil {
		return c.Meta.Grants
	}
	if g, ok := ctx.Value(grantsKey{}).(*Grants); ok {
		return *g
	}
	return nil
}

// Authorizer decides, from the head of an HTTP request (a JSON-RPC POST
// or a WebSocket upgrade) or from the address of a stream connection,
// whether the caller may go on, before any JSON-RPC is read: it returns
// the caller's grants (and may name the caller in m.Principal, which
// the transport has cleared), or ErrUnauthenticated (answered 401 with
// WWW-Authenticate: Bearer) or another error (answered 403). A stream
// refused is closed. It runs on the transport's goroutine — the engine's
// event loop — and must not block. Package handler/auth builds the
// usual ones (API keys, geth's JWT).
type Authorizer func(m *Meta) (Grants, error)

// AuthStatus returns the HTTP status that answers an Authorizer's
// error: an HTTPRefusal's own, 401 for ErrUnauthenticated (or an error
// wrapping it), else 403.
func AuthStatus(err error) int {
	var r *HTTPRefusal
	switch {
	case errors.As(err, &r) && r != nil && r.Status >= 400 && r.Status <= 499:
		return r.Status
	case errors.Is(err, ErrUnauthenticated):
		return http.StatusUnauthorized
	}
	return http.StatusForbidden
}

// HTTPRefusal is an Authorizer's refusal of an HTTP request with a
// status and a text of its own: for a request the Authorizer finds
// malformed rather than unauthorized (an MCP client's unsupported
// MCP-Protocol-Version is answered 400). A stream connection refused
// with one is closed, as for any refusal. Make it once and return the
// same pointer: a refusal then costs no allocation.
type HTTPRefusal struct {
	Status int    // a 4xx status (another is answered 403)
	Text   string // the body, as text/plain
}

// Error returns the Text.
func (r *HTTPRefusal) Error() string { return r.Text }
