package auth_test

// The principal an authorizer names (handler.Meta.Principal), by which
// the rate limits count calls.

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

func TestKeys_Authorize_principal(t *testing.T) {
	const other = "fedcba9876543210fedcba9876543210"
	k := auth.NewKeys(map[string]handler.Grants{keyAdmin: {"admin"}, other: nil})
	for _, key := range []string{keyAdmin, other} {
		m := bearerMeta(key)
		if _, err := k.Authorize(m); err != nil {
			t.Fatal(err)
		}
		if want := auth.KeyName(key); m.Principal != want {
			t.Errorf("Principal = %q; want %q", m.Principal, want)
		}
	}
	if auth.KeyName(keyAdmin) == auth.KeyName(other) {
		t.Error("two keys, one name")
	}
	name := auth.KeyName(keyAdmin)
	if !strings.HasPrefix(name, "key:") || len(name) != len("key:")+16 || strings.Contains(name, keyAdmin[:8]) {
		t.Errorf("KeyName = %q; want key: and 16 hex digits, not the key", name)
	}
	// A refusal leaves the principal alone.
	m := bearerMeta("wrong")
	m.Principal = "before"
	if _, err := k.Authorize(m); err == nil || m.Principal != "before" {
		t.Errorf("refused: Principal = %q, err %v; want it unchanged", m.Principal, err)
	}
}

func TestJWT_Authorize_principal(t *testing.T) {
	j := newTestJWT()
	noSub, err := auth.NewJWTToken(jwtSecret, jwtNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at, tok, want string
	}{
		{at: here(), tok: noSub, want: auth.JWTPrincipal},
		{at: here(), tok: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Unix(), "sub": "beacon-1"}, jwtSecret), want: "beacon-1"},
		{at: here(), tok: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Unix(), "sub": ""}, jwtSecret), want: auth.JWTPrincipal},
		{at: here(), tok: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Add(-time.Hour).Unix(), "sub": "late"}, jwtSecret), want: ""},
	} {
		m := bearerMeta(c.tok)
		_, err := j.Authorize(m)
		if (err == nil) != (c.want != "") || m.Principal != c.want {
			t.Errorf("%s: Principal = %q, err %v; want %q", c.at, m.Principal, err, c.want)
		}
	}
}
