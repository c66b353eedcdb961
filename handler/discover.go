package handler

// NOTE: what discovery needs of a method beyond what serving it needs:
// the options that only describe it (Summary, Errors, Notifies), recorded
// in MethodInfo at registration, and RegisterExtension, through which a
// package that implements a JSON-RPC 2.0 system extension (OpenRPC's
// rpc.discover: package handler/openrpc) serves an "rpc." method that
// Register refuses. Package handler builds no document itself: it only
// keeps the Go types (MethodInfo.ParamsType, ResultType) for a generator.

import (
	"context"
	"fmt"
	"reflect"
	"strings"
)

// Summary sets a one-line summary of the method, reported by MethodInfo
// (and by an OpenRPC document) beside the longer Description.
func Summary(text string) MethodOption { return func(c *methodConfig) { c.summary = text } }

// Errors declares the JSON-RPC errors the method may return, by code and
// message (and data, if set), for discovery: MethodInfo.Errors, and the
// errors of an OpenRPC document. Given more than once, it adds to the
// list. It changes nothing in how a call is answered: the method still
// returns the error itself. A nil error, or two errors with one code
// (OpenRPC wants them unique), makes the registration fail. The errors
// are kept, not copied, and must not be modified afterwards (as
// package-level error values never are).
func Errors(errs ...*Error) MethodOption {
	return func(c *methodConfig) { c.errs = append(c.errs, errs...) }
}

// Notifies declares T as the type of the result member of the
// notifications that the subscriptions of a RegisterSubscription or
// RegisterSubscriptionKinds send (Subscription.Notify), for discovery
// (MethodInfo.NotificationType). It checks nothing at run time. Given to
// any other registration, it makes that registration fail.
func Notifies[T any]() MethodOption {
	return func(c *methodConfig) { c.notifies = reflect.TypeFor[T]() }
}

// subRole says which method of a subscription namespace a method is.
type subRole struct {
	ns        string
	names     SubscriptionNames // all three set
	subscribe bool              // the subscribe method, not the unsubscribe method
}

// subscription marks a method that RegisterSubscription or
// RegisterSubscriptionKinds registers for the namespace ns.
func subscription(ns string, names SubscriptionNames, subscribe bool) MethodOption {
	r := &subRole{ns: ns, names: names, subscribe: subscribe}
	return func(c *methodConfig) { c.sub = r }
}

// check reports a misuse of the discovery options: a nil error or a
// repeated code in Errors, Notifies on a method that sends no
// notifications.
func (c *methodConfig) check(name string) error {
	for i, e := range c.errs {
		if e == nil {
			return fmt.Errorf("jetrpc: method %q: Errors: nil error", name)
		}
		for _, o := range c.errs[:i] {
			if o.Code == e.Code {
				return fmt.Errorf("jetrpc: method %q: Errors: code %d declared twice", name, e.Code)
			}
		}
	}
	subscribe := c.sub != nil && c.sub.subscribe
	if c.notifies != nil && !subscribe {
		return fmt.Errorf("jetrpc: method %q: Notifies is for RegisterSubscription", name)
	}
	if c.subNames != nil && !subscribe {
		return fmt.Errorf("jetrpc: method %q: SubscriptionMethods is for RegisterSubscription", name)
	}
	for i := 0; i < len(c.cacheControl); i++ {
		if b := c.cacheControl[i]; b < 0x20 || b >= 0x7f {
			return fmt.Errorf("jetrpc: method %q: HTTPGet: Cache-Control value %q is not printable ASCII", name, c.cacheControl)
		}
	}
	return nil
}

// extensionPrefix begins the names of the JSON-RPC 2.0 system extensions
// (RegisterExtension); Register refuses such names (ErrReservedName).
const extensionPrefix = "rpc."

// RegisterExtension adds the extension method name to t: a method of the
// JSON-RPC 2.0 system extensions, whose name begins with "rpc." (such as
// OpenRPC's rpc.discover, which package handler/openrpc registers). It is
// meant for packages that implement such an extension, not for
// application methods. It registers as Register does, with the same
// signatures and options, and panics if the name does not begin with
// "rpc." (or is just "rpc.") or for any reason Register panics, with an
// error as Register does.
func RegisterExtension[P, R any](t *Table, name string, fn func(context.Context, P) (R, error), opts ...MethodOption) {
	if !strings.HasPrefix(name, extensionPrefix) || len(name) == len(extensionPrefix) {
		panic(fmt.Errorf("jetrpc: extension method %q: the name must begin with %q", name, extensionPrefix))
	}
	mustNotNil(name, fn == nil)
	must(registerMethod(t, name, fn, opts, true))
}
