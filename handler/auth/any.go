package auth

import (
	"errors"
	"fmt"
	"slices"

	"github.com/jetrpc/jetrpc/handler"
)

// errNoAuthorizer refuses every caller of Any().
var errNoAuthorizer = fmt.Errorf("%w: no authorizer configured", handler.ErrUnauthenticated)

// Any returns an Authorizer that asks authorizers in order and accepts
// with the grants of the first that accepts; if none does, it refuses
// with the error of the first (so that, with API keys first, a caller
// without credentials is told about the keys) — unless that one found
// no credentials (handler.ErrNoCredentials) and a later one refused
// some: then with the first such later one's, so that a caller is
// anonymous (handler.HTTPPolicy.AuthOptional) only when none of them
// found credentials it refuses. It lets several ways in
// open one server:
//
//	engine.WithAuthorize(auth.Any(keys.Authorize, jwt.Authorize))
//
// Beware that an authorizer that accepts without credentials, such as
// IPFilter.Authorize, makes the others optional for the addresses it
// allows (that is "IP or key"; for "IP and key", filter connections with
// engine.Options.AcceptConn and IPFilter.Allowed). Any with no
// authorizers refuses everyone (handler.ErrUnauthenticated); with one,
// it returns that one. Any panics if an authorizer is nil. The list is
// copied. The result is safe from any goroutine if the authorizers are,
// and allocates nothing of its own.
func Any(authorizers ...handler.Authorizer) handler.Authorizer {
	as := slices.Clone(authorizers)
	for i, a := range as {
		if a == nil {
			panic(fmt.Sprintf("jetrpc: auth.Any: authorizer %d is nil", i))
		}
	}
	switch len(as) {
	case 0:
		return func(*handler.Meta) (handler.Grants, error) { return nil, errNoAuthorizer }
	case 1:
		return as[0]
	}
	return func(m *handler.Meta) (handler.Grants, error) {
		var first error
		for _, a := range as {
			g, err := a(m)
			if err == nil {
				return g, nil
			}
			if first == nil || errors.Is(first, handler.ErrNoCredentials) && !errors.Is(err, handler.ErrNoCredentials) {
				first = err
			}
		}
		return nil, first
	}
}
