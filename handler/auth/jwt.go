package auth

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/pool/clock"
)

// JWTMaxSkew is how far a JWT's iat (issued-at) claim may be from the
// server's clock, either way: geth's jwtExpiryTimeout.
const JWTMaxSkew = 60 * time.Second

// JWTPrincipal is the principal JWT.Authorize names the caller of a
// token without a sub claim (handler.Meta.Principal).
const JWTPrincipal = "jwt"

// JWTSecretLength is the length in bytes of a JWT secret, as the engine
// API's authentication specification requires.
const JWTSecretLength = 32

// jwtAlg is the one signing algorithm accepted, as in geth.
const jwtAlg = "HS256"

// Refusals of JWT.Authorize, built once; geth's reasons.
var (
	errMissingToken = fmt.Errorf("%w: missing token", handler.ErrUnauthenticated)
	errInvalidToken = fmt.Errorf("%w: invalid token", handler.ErrUnauthenticated)
	errExpiredToken = fmt.Errorf("%w: token is expired", handler.ErrUnauthenticated)
	errMissingIAT   = fmt.Errorf("%w: missing issued-at", handler.ErrUnauthenticated)
	errStaleToken   = fmt.Errorf("%w: stale token", handler.ErrUnauthenticated)
	errFutureToken  = fmt.Errorf("%w: future token", handler.ErrUnauthenticated)
	errNotHS256     = errors.New("signing method is not " + jwtAlg) // wrapped by jwt
)

// JWT authenticates callers the way geth's engine API does
// (go-ethereum node/jwt_handler.go): the request's Authorization header
// carries "Bearer <token>", a JSON Web Token
//
//   - signed with HMAC-SHA256 (alg HS256) under the shared secret; every
//     other algorithm is refused, "none", HS384, HS512 and the public-key
//     ones (RS256, ES256, EdDSA...) included;
//   - with an iat (issued-at) claim within JWTMaxSkew (60 s) of the
//     server's clock, either way, so that a token seen by an eavesdropper
//     is soon useless;
//   - and, if it has an exp claim, not expired. Other claims (nbf, aud,
//     iss...) are ignored, as in geth.
//
// Unlike Keys, JWT reads the Authorization header only, as geth does:
// not the WebSocket subprotocol nor the query (clients of the engine API
// are consensus clients, not browsers). Build it with NewJWT; it is
// immutable from then on, and its methods are safe from any goroutine.
type JWT struct {
	secret []byte         // immutable; never empty
	grants handler.Grants // immutable; given to every caller accepted
	parser *jwt.Parser    // HS256 only, claims checked by Authorize
	key    jwt.Keyfunc    // returns secret for HS256 tokens only
	now    func() time.Time
}

// NewJWT returns a JWT that accepts tokens signed with secret and gives
// their callers grants (nil: authenticated, nothing granted). secret
// should be JWTSecretLength random bytes (LoadJWTSecret); it is copied.
// NewJWT panics if secret is empty, which would make every token easy to
// forge.
func NewJWT(secret []byte, grants handler.Grants) *JWT {
	if len(secret) == 0 {
		panic("jetrpc: auth.NewJWT: empty secret")
	}
	j := &JWT{
		secret: bytes.Clone(secret),
		grants: grants,
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwtAlg}), jwt.WithoutClaimsValidation()),
		now:    time.Now,
	}
	j.key = func(t *jwt.Token) (any, error) {
		// WithValidMethods already refused the rest; check again, since
		// handing an HMAC secret to another method is the classic
		// algorithm-confusion attack.
		if t.Method != jwt.SigningMethodHS256 {
			return nil, errNotHS256
		}
		return j.secret, nil
	}
	return j
}

// Authorize accepts the request m describes if its Authorization header
// carries a valid token (see JWT): it returns j's grants and sets
// m.Principal to the token's sub claim, or to "jwt" when it has none
// (geth's tokens have none: every caller of the secret is one
// principal, and rate limits count its calls together). Otherwise it
// returns an error wrapping handler.ErrUnauthenticated, with the reason
// (geth's: "missing token", "stale token", "future token", "missing
// issued-at", "token is expired", or the JWT library's for a malformed
// token or a bad signature or algorithm), and leaves m alone; a request
// that presents nothing at all — no Authorization field, no token in its
// URL or subprotocols — gets handler.ErrNoCredentials instead ("none
// presented"), which handler.HTTPPolicy.AuthOptional lets in anonymous.
// A stream connection, which has no request head, is always refused,
// with handler.ErrNoCredentials. The method
// value j.Authorize is a handler.Authorizer. An accepted token holds
// until its iat window closes or it expires, whichever comes first
// (handler.Meta.AuthorizedUntil): the engine gives the same answer to a
// connection's next requests with the same header until then, without
// verifying the token again.
//
// It allocates (the token's JSON is decoded) and does not block. Safe
// from any goroutine.
func (j *JWT) Authorize(m *handler.Meta) (handler.Grants, error) {
	t := headerToken(m)
	if t == "" {
		switch {
		case TokenInURL(m):
			return nil, handler.ErrTokenInURL
		case presented(m):
			return nil, errMissingToken
		}
		return nil, handler.ErrNoCredentials
	}
	var claims jwt.RegisteredClaims
	token, err := j.parser.ParseWithClaims(t, &claims, j.key)
	now := j.now()
	switch {
	case err != nil:
		// %v, not %w: handler.AuthStatus follows a single Unwrap chain.
		return nil, fmt.Errorf("%w: %v", handler.ErrUnauthenticated, err)
	case !token.Valid:
		return nil, errInvalidToken
	case claims.ExpiresAt != nil && !now.Before(claims.ExpiresAt.Time):
		return nil, errExpiredToken
	case claims.IssuedAt == nil:
		return nil, errMissingIAT
	case now.Sub(claims.IssuedAt.Time) > JWTMaxSkew:
		return nil, errStaleToken
	case claims.IssuedAt.Time.Sub(now) > JWTMaxSkew:
		return nil, errFutureToken
	}
	m.Principal = claims.Subject
	if m.Principal == "" {
		m.Principal = JWTPrincipal
	}
	// The same token holds until its iat window closes, or it expires.
	until := claims.IssuedAt.Add(JWTMaxSkew)
	if claims.ExpiresAt != nil && claims.ExpiresAt.Before(until) {
		until = claims.ExpiresAt.Time
	}
	m.AuthorizedUntil = clock.Now() + int64(until.Sub(now))
	return j.grants, nil
}

// NewJWTToken returns a token for a JWT with the same secret to accept,
// made as geth's node.NewJWTAuth makes it: HS256, with the single claim
// iat (whole seconds). A client sends it as "Authorization: Bearer
// <token>" and mints a new one at least every JWTMaxSkew (geth's
// clients mint one per request). It returns an error if secret is empty.
func NewJWTToken(secret []byte, iat time.Time) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("jetrpc: JWT token: empty secret")
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iat": jwt.NewNumericDate(iat),
	})
	s, err := t.SignedString(secret)
	if err != nil {
		return "", fmt.Errorf("jetrpc: JWT token: %w", err)
	}
	return s, nil
}

// LoadJWTSecret reads a JWT secret file in geth's format: 32 bytes
// (JWTSecretLength) as 64 hex digits, with an optional 0x prefix and
// white space around it ignored. Anything else — a missing or unreadable
// file, another length, an odd number of digits, a character that is not
// a hex digit — is an error (geth, unlike LoadJWTSecret, makes a new
// secret when the file is missing; make one with crypto/rand and
// hex.EncodeToString).
func LoadJWTSecret(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jetrpc: reading JWT secret: %w", err)
	}
	secret, err := parseJWTSecret(data)
	if err != nil {
		return nil, fmt.Errorf("jetrpc: JWT secret %s: %w", path, err)
	}
	return secret, nil
}

// parseJWTSecret decodes the text of a JWT secret file.
func parseJWTSecret(data []byte) ([]byte, error) {
	h := bytes.TrimSpace(data)
	if len(h) >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
		h = h[2:]
	}
	if len(h) != 2*JWTSecretLength {
		return nil, fmt.Errorf("want %d hex digits (%d bytes), have %d characters", 2*JWTSecretLength, JWTSecretLength, len(h))
	}
	secret := make([]byte, JWTSecretLength)
	if _, err := hex.Decode(secret, h); err != nil {
		return nil, errors.New("not hex")
	}
	return secret, nil
}
