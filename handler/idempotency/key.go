package idempotency

import (
	"context"

	"github.com/bytedance/sonic"
	"github.com/jetrpc/jetrpc/handler"
)

// HeaderKey returns a Key func that reads the key from the header field
// name of the call's HTTP request (handler.Meta.Header); a call without
// the field, or not over HTTP, has no key. Over WebSocket the header is
// the upgrade request's, the same for every call of the connection: key
// such calls by a param instead (ParamKey). It allocates nothing.
func HeaderKey(name string) func(context.Context, *handler.Call) (string, bool) {
	return func(ctx context.Context, _ *handler.Call) (string, bool) {
		k := handler.MetaFrom(ctx).Header(name)
		return k, k != ""
	}
}

// ParamKey returns a Key func that reads the key from the member name of
// the call's params, an object, which must be a non-empty string; a call
// without it has no key. It decodes the member, which allocates.
func ParamKey(name string) func(context.Context, *handler.Call) (string, bool) {
	return func(_ context.Context, call *handler.Call) (string, bool) {
		p := call.Params()
		if len(p) == 0 {
			return "", false
		}
		n, err := sonic.Get(p, name)
		if err != nil {
			return "", false
		}
		k, err := n.String()
		if err != nil || k == "" {
			return "", false
		}
		return k, true
	}
}

// HeaderOrParamKey returns a Key func that takes the header field
// header, else the params member param: one Store for HTTP and
// WebSocket clients.
func HeaderOrParamKey(header, param string) func(context.Context, *handler.Call) (string, bool) {
	h, p := HeaderKey(header), ParamKey(param)
	return func(ctx context.Context, call *handler.Call) (string, bool) {
		if k, ok := h(ctx, call); ok {
			return k, true
		}
		return p(ctx, call)
	}
}

// DefaultScope is the default Scope: the caller's principal
// (handler.Meta.Principal, named by the transport's Authorizer), else —
// for an anonymous caller — its IP address (handler.Meta.ClientIP),
// else, in process and over Unix sockets, one scope shared by all.
// Principals and addresses are scoped apart ("p:", "ip:"). Anonymous
// callers behind one address (a NAT) share its keys, and a client whose
// address changes between its call and its retry (a phone changing
// networks) does not find its key: authenticate the callers whose
// retries matter. It allocates the scope's string.
func DefaultScope(ctx context.Context) (string, bool) {
	m := handler.MetaFrom(ctx)
	if m.Principal != "" {
		return "p:" + m.Principal, true
	}
	if ip := m.ClientIP(); ip.IsValid() {
		return "ip:" + ip.String(), true
	}
	return "local", true
}
