package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/pool/clock"
)

var (
	jwtSecret = []byte("0123456789abcdef0123456789abcdef")
	jwtNow    = time.Unix(1_700_000_000, 0)
)

// sign returns a token of claims signed by method with key.
func sign(t *testing.T, method jwt.SigningMethod, claims jwt.MapClaims, key any) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bearerMeta returns a Meta for a request with "Authorization: Bearer tok".
func bearerMeta(tok string) *handler.Meta {
	return httpMeta("/", "Authorization: Bearer "+tok)
}

func newTestJWT() *auth.JWT {
	j := auth.NewJWT(jwtSecret, handler.Grants{"engine"})
	auth.SetNow(j, func() time.Time { return jwtNow })
	return j
}

func TestJWT_Authorize(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iat := func(d time.Duration) jwt.MapClaims {
		return jwt.MapClaims{"iat": jwt.NewNumericDate(jwtNow.Add(d))}
	}
	valid, err := auth.NewJWTToken(jwtSecret, jwtNow)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	for _, c := range []struct {
		at   string
		m    *handler.Meta
		want string // "" accepts; else in the error
	}{
		{at: here(), m: bearerMeta(valid)},
		{at: here(), m: httpMeta("/", "authorization: bearer "+valid)},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(0), jwtSecret))},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(60*time.Second), jwtSecret))},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(-60*time.Second), jwtSecret))},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": float64(jwtNow.Unix()) + 0.5}, jwtSecret))},
		// Claims geth ignores: nbf, aud, iss; exp in the future.
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{
			"iat": jwtNow.Unix(), "nbf": jwtNow.Add(time.Hour).Unix(), "aud": "x", "iss": "y", "exp": jwtNow.Add(time.Second).Unix(),
		}, jwtSecret))},

		// Time.
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(-61*time.Second), jwtSecret)), want: "stale token"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(61*time.Second), jwtSecret)), want: "future token"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(-time.Hour), jwtSecret)), want: "stale token"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{}, jwtSecret)), want: "missing issued-at"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "x"}, jwtSecret)), want: "missing issued-at"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": "now"}, jwtSecret)), want: "malformed"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Unix(), "exp": jwtNow.Unix()}, jwtSecret)), want: "token is expired"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Unix(), "exp": jwtNow.Add(-time.Second).Unix()}, jwtSecret)), want: "token is expired"},

		// Signature and algorithm.
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS256, iat(0), []byte("another secret, 32 bytes long..."))), want: "signature is invalid"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS512, iat(0), jwtSecret)), want: "signing method HS512 is invalid"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodHS384, iat(0), jwtSecret)), want: "signing method HS384 is invalid"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodRS256, iat(0), rsaKey)), want: "signing method RS256 is invalid"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodES256, iat(0), ecKey)), want: "signing method ES256 is invalid"},
		{at: here(), m: bearerMeta(sign(t, jwt.SigningMethodNone, iat(0), jwt.UnsafeAllowNoneSignatureType)), want: "signing method none is invalid"},
		// alg none, signed with the secret anyway; and an unknown alg.
		{at: here(), m: bearerMeta(b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + strings.Split(valid, ".")[1] + "." + strings.Split(valid, ".")[2]), want: "signing method none is invalid"},
		{at: here(), m: bearerMeta(b64([]byte(`{"alg":"XX256","typ":"JWT"}`)) + "." + strings.Split(valid, ".")[1] + "." + strings.Split(valid, ".")[2]), want: "unavailable"},
		{at: here(), m: bearerMeta(b64([]byte(`{"typ":"JWT"}`)) + "." + strings.Split(valid, ".")[1] + "." + strings.Split(valid, ".")[2]), want: "unspecified"},
		// A valid payload under the header of another token.
		{at: here(), m: bearerMeta(strings.Split(valid, ".")[0] + "." + b64([]byte(`{"iat":1700000001}`)) + "." + strings.Split(valid, ".")[2]), want: "signature is invalid"},

		// Malformed and missing.
		{at: here(), m: bearerMeta("x.y"), want: "malformed"},
		{at: here(), m: bearerMeta(valid + ".x"), want: "malformed"},
		{at: here(), m: bearerMeta("!!!.!!!.!!!"), want: "malformed"},
		{at: here(), m: httpMeta("/"), want: "none presented"},
		{at: here(), m: httpMeta("/", "Authorization: Basic "+valid), want: "missing token"},
		{at: here(), m: &handler.Meta{Transport: handler.TransportStream, Remote: tcp("127.0.0.1")}, want: "none presented"},
		// geth reads the Authorization header only.
		{at: here(), m: wsMeta("/?access_token=" + valid), want: "missing token"},
		{at: here(), m: httpMeta("/?access_token=" + valid), want: "accepted on a WebSocket upgrade only"},
		{at: here(), m: httpMeta("/", "Sec-WebSocket-Protocol: jsonrpc, bearer."+valid), want: "missing token"},
	} {
		g, err := newTestJWT().Authorize(c.m)
		if c.want == "" {
			if err != nil || !slices.Equal(g, handler.Grants{"engine"}) {
				t.Errorf("%s: Authorize = %q, %v; want [engine], nil", c.at, g, err)
			}
			continue
		}
		if g != nil || !errors.Is(err, handler.ErrUnauthenticated) || handler.AuthStatus(err) != 401 {
			t.Errorf("%s: Authorize = %q, %v; want nil, ErrUnauthenticated (401)", c.at, g, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want %q in it", c.at, err, c.want)
		}
	}
}

// TestJWT_Authorize_realClock checks the default clock.
func TestJWT_Authorize_realClock(t *testing.T) {
	j := auth.NewJWT(jwtSecret, nil)
	tok, err := auth.NewJWTToken(jwtSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if g, err := j.Authorize(bearerMeta(tok)); err != nil || g != nil {
		t.Errorf("Authorize = %q, %v; want nil, nil", g, err)
	}
	tok, _ = auth.NewJWTToken(jwtSecret, time.Now().Add(-2*auth.JWTMaxSkew))
	if _, err := j.Authorize(bearerMeta(tok)); !errors.Is(err, handler.ErrUnauthenticated) {
		t.Errorf("stale: err = %v; want ErrUnauthenticated", err)
	}
}

// TestJWT_secretCopied checks that NewJWT keeps its own copy.
func TestJWT_secretCopied(t *testing.T) {
	secret := slices.Clone(jwtSecret)
	j := auth.NewJWT(secret, nil)
	auth.SetNow(j, func() time.Time { return jwtNow })
	secret[0] ^= 1
	tok, _ := auth.NewJWTToken(jwtSecret, jwtNow)
	if _, err := j.Authorize(bearerMeta(tok)); err != nil {
		t.Errorf("Authorize: %v", err)
	}
}

func TestNewJWT_emptySecret(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewJWT(nil) did not panic")
		}
	}()
	auth.NewJWT(nil, nil)
}

// TestNewJWTToken checks that the token is geth's: HS256, typ JWT, the
// single claim iat in whole seconds.
func TestNewJWTToken(t *testing.T) {
	tok, err := auth.NewJWTToken(jwtSecret, jwtNow.Add(700*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q: %d parts", tok, len(parts))
	}
	for i, want := range []string{`{"alg":"HS256","typ":"JWT"}`, `{"iat":1700000000}`} {
		got, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || string(got) != want {
			t.Errorf("part %d = %s, %v; want %s", i, got, err, want)
		}
	}
	if _, err := auth.NewJWTToken(nil, jwtNow); err == nil {
		t.Error("NewJWTToken(nil) succeeded")
	}
}

func TestLoadJWTSecret(t *testing.T) {
	const hex64 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	want := make([]byte, 32)
	for i := range want {
		want[i] = byte(i)
	}
	for _, c := range []struct {
		at   string
		text string
		ok   bool
	}{
		{at: here(), text: hex64, ok: true},
		{at: here(), text: "0x" + hex64, ok: true},
		{at: here(), text: "0X" + hex64, ok: true},
		{at: here(), text: strings.ToUpper(hex64), ok: true},
		{at: here(), text: "\n  0x" + hex64 + "\r\n\t", ok: true},
		{at: here(), text: ""},
		{at: here(), text: "0x"},
		{at: here(), text: hex64[:62]},
		{at: here(), text: hex64 + "20"},
		{at: here(), text: hex64[1:]},
		{at: here(), text: hex64 + "0"},
		{at: here(), text: hex64[:63] + "g"},
		{at: here(), text: "0x 0x" + hex64},
		{at: here(), text: "0x0x" + hex64[4:]},
		{at: here(), text: hex64[:32] + " " + hex64[32:]},
		{at: here(), text: string(want)},
	} {
		path := filepath.Join(t.TempDir(), "jwtsecret")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := auth.LoadJWTSecret(path)
		switch {
		case c.ok && (err != nil || !slices.Equal(got, want)):
			t.Errorf("%s: LoadJWTSecret = %x, %v; want %x", c.at, got, err, want)
		case !c.ok && err == nil:
			t.Errorf("%s: LoadJWTSecret = %x; want an error", c.at, got)
		case !c.ok && !strings.Contains(err.Error(), path):
			t.Errorf("%s: err = %v; want the path in it", c.at, err)
		}
	}
	if _, err := auth.LoadJWTSecret(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v; want os.ErrNotExist", err)
	}
}

func FuzzParseJWTSecret(f *testing.F) {
	f.Add([]byte("0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"))
	f.Add([]byte(" 0X0g\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		s, err := auth.ParseJWTSecret(text)
		if err == nil && len(s) != auth.JWTSecretLength {
			t.Fatalf("secret of %d bytes", len(s))
		}
	})
}

// TestJWT_Authorize_answerHolds: an accepted token holds for the same
// header (AuthorizedUntil) until its iat window closes, or until it
// expires when that comes first; a refusal says nothing.
func TestJWT_Authorize_answerHolds(t *testing.T) {
	j := newTestJWT() // its clock: jwtNow
	for _, c := range []struct {
		at     string
		token  string
		remain time.Duration // how long it holds from now; 0: it says nothing
	}{
		{at: here(), token: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Unix()}, jwtSecret), remain: auth.JWTMaxSkew},
		{at: here(), token: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Add(-50 * time.Second).Unix()}, jwtSecret), remain: 10 * time.Second},
		{at: here(), token: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Unix(), "exp": jwtNow.Add(5 * time.Second).Unix()}, jwtSecret), remain: 5 * time.Second},
		{at: here(), token: sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"iat": jwtNow.Add(-2 * time.Minute).Unix()}, jwtSecret)},
	} {
		m := bearerMeta(c.token)
		before := clock.Now()
		_, err := j.Authorize(m)
		after := clock.Now()
		if c.remain == 0 {
			if err == nil || m.AuthorizedUntil != 0 {
				t.Errorf("%s: %v, AuthorizedUntil %d; want a refusal saying nothing", c.at, err, m.AuthorizedUntil)
			}
			continue
		}
		if err != nil || m.AuthorizedUntil < before+int64(c.remain) || m.AuthorizedUntil > after+int64(c.remain) {
			t.Errorf("%s: %v, AuthorizedUntil now+%v; want now+%v", c.at, err, time.Duration(m.AuthorizedUntil-before), c.remain)
		}
	}
}
