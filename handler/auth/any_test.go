package auth_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

func TestAny(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	var calls []string
	refuse := func(name string, err error) handler.Authorizer {
		return func(*handler.Meta) (handler.Grants, error) { calls = append(calls, name); return nil, err }
	}
	accept := func(name string, g handler.Grants) handler.Authorizer {
		return func(*handler.Meta) (handler.Grants, error) { calls = append(calls, name); return g, nil }
	}
	for _, c := range []struct {
		at     string
		as     []handler.Authorizer
		grants handler.Grants
		err    error
		calls  []string
	}{
		{at: here(), as: []handler.Authorizer{accept("a", handler.Grants{"x"})}, grants: handler.Grants{"x"}, calls: []string{"a"}},
		{at: here(), as: []handler.Authorizer{refuse("a", errA)}, err: errA, calls: []string{"a"}},
		{at: here(), as: []handler.Authorizer{refuse("a", errA), accept("b", handler.Grants{"y"}), accept("c", nil)}, grants: handler.Grants{"y"}, calls: []string{"a", "b"}},
		{at: here(), as: []handler.Authorizer{accept("a", nil), accept("b", handler.Grants{"y"})}, calls: []string{"a"}},
		{at: here(), as: []handler.Authorizer{refuse("a", errA), refuse("b", errB)}, err: errA, calls: []string{"a", "b"}},
		{at: here(), as: []handler.Authorizer{refuse("a", errA), refuse("b", errB), accept("c", handler.Grants{"z"})}, grants: handler.Grants{"z"}, calls: []string{"a", "b", "c"}},
	} {
		calls = nil
		g, err := auth.Any(c.as...)(&handler.Meta{})
		if !slices.Equal(g, c.grants) || err != c.err || !slices.Equal(calls, c.calls) {
			t.Errorf("%s: Any = %q, %v after %q; want %q, %v after %q", c.at, g, err, calls, c.grants, c.err, c.calls)
		}
	}
}

func TestAny_none(t *testing.T) {
	g, err := auth.Any()(&handler.Meta{})
	if g != nil || !errors.Is(err, handler.ErrUnauthenticated) {
		t.Errorf("Any() = %q, %v; want nil, ErrUnauthenticated", g, err)
	}
}

func TestAny_nil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Any(nil) did not panic")
		}
	}()
	auth.Any(auth.NewKeys(nil).Authorize, nil)
}

// TestAny_keysOrJWT opens one server to API keys and JWTs.
func TestAny_keysOrJWT(t *testing.T) {
	keys := auth.NewKeys(map[string]handler.Grants{keyAdmin: {"admin"}})
	j := newTestJWT()
	a := auth.Any(keys.Authorize, j.Authorize)
	tok, err := auth.NewJWTToken(jwtSecret, jwtNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at     string
		m      *handler.Meta
		grants handler.Grants
		err    error // errors.Is
	}{
		{at: here(), m: bearerMeta(keyAdmin), grants: handler.Grants{"admin"}},
		{at: here(), m: bearerMeta(tok), grants: handler.Grants{"engine"}},
		{at: here(), m: bearerMeta("wrong"), err: handler.ErrUnauthenticated},
		{at: here(), m: httpMeta("/"), err: handler.ErrNoCredentials},
	} {
		g, err := a(c.m)
		if !slices.Equal(g, c.grants) || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: = %q, %v; want %q, %v", c.at, g, err, c.grants, c.err)
		}
	}
	// The keys' error, the first authorizer's, comes back.
	if _, err := a(bearerMeta("wrong")); err == nil || err.Error() != "jetrpc: missing or invalid credentials: unknown API key" {
		t.Errorf("err = %v; want the keys' error", err)
	}
}

// TestAny_noCredentials: Any refuses with handler.ErrNoCredentials — a
// caller AuthOptional lets in anonymous — only when every authorizer
// found no credentials; else with the first refusal of credentials
// found.
func TestAny_noCredentials(t *testing.T) {
	errWrong := errors.New("wrong")
	none := func(*handler.Meta) (handler.Grants, error) { return nil, handler.ErrNoCredentials }
	wrong := func(*handler.Meta) (handler.Grants, error) { return nil, errWrong }
	denied := func(*handler.Meta) (handler.Grants, error) { return nil, handler.ErrAccessDenied }
	for _, c := range []struct {
		at  string
		as  []handler.Authorizer
		err error
	}{
		{at: here(), as: []handler.Authorizer{none, none}, err: handler.ErrNoCredentials},
		{at: here(), as: []handler.Authorizer{none, wrong, denied}, err: errWrong},
		{at: here(), as: []handler.Authorizer{none, denied, wrong}, err: handler.ErrAccessDenied},
		{at: here(), as: []handler.Authorizer{wrong, none}, err: errWrong},
	} {
		if _, err := auth.Any(c.as...)(&handler.Meta{}); err != c.err {
			t.Errorf("%s: Any = %v; want %v", c.at, err, c.err)
		}
	}
}
