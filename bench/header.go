package bench

// NOTE: extra request headers and JWT authentication. Every HTTP request
// starts with the same head up to its Content-Length value: the request
// line, Host, Config.Header, the Accept-Encoding of Config.Compression,
// the Authorization of the current JWT and Content-Type. It is built once per token (httpHead) and published with
// an atomic pointer, which push loads once per request: a request costs
// one atomic load and one append, never an allocation. With a JWT secret,
// refreshJWT re-mints the token every Config.JWTRefresh and publishes a
// new head; requests already written keep the old one, which is still
// well within the server's tolerance (geth's is ±60 s around iat). A
// WebSocket sends the headers only with its upgrade request, at each
// (re)dial, with the token current then.

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultJWTRefresh is how often the JWT is re-minted by default: half of
// the ±60 s that geth allows around a token's iat.
const DefaultJWTRefresh = 30 * time.Second

// ownedHeaders are the headers the tool writes itself, in canonical form;
// Config.Header may not set them (nor Sec-WebSocket-*).
var ownedHeaders = []string{"Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection", "Upgrade"}

// ParseHeader splits a header line "Name: Value" (as curl's -H takes it)
// into its name and its value, without the spaces around the value, and
// checks them as Config.Header's are: the name must be an HTTP token, the
// value must hold no control character but tab (no CR or LF), and the
// name must not be one of the headers the tool writes itself (Host,
// Content-Length, Content-Type, Transfer-Encoding, Connection, Upgrade,
// Sec-WebSocket-*). An empty value is valid.
func ParseHeader(line string) (name, value string, err error) {
	name, value, ok := strings.Cut(line, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q: want 'Name: Value'", line)
	}
	value = strings.Trim(value, " \t")
	if err := checkHeader(name, value); err != nil {
		return "", "", err
	}
	return name, value, nil
}

// checkHeader checks one extra header; see ParseHeader.
func checkHeader(name, value string) error {
	if name == "" {
		return errors.New("a header without a name")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("header name %q: not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("header %s: its value holds a control character (CR, LF or another)", name)
		}
	}
	for _, h := range ownedHeaders {
		if strings.EqualFold(name, h) {
			return fmt.Errorf("header %s is the tool's own; it cannot be set", name)
		}
	}
	if len(name) >= len("Sec-WebSocket-") && strings.EqualFold(name[:len("Sec-WebSocket-")], "Sec-WebSocket-") {
		return fmt.Errorf("header %s: the Sec-WebSocket-* headers are the tool's own; they cannot be set", name)
	}
	return nil
}

// isTokenChar reports whether c may appear in an HTTP token (RFC 9110
// 5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// ParseJWTSecret decodes a JWT secret file's text as geth writes and
// reads it (jwt.hex): 32 bytes in hex, with an optional 0x and
// whitespace around. The returned secret is a new slice.
func ParseJWTSecret(text []byte) ([]byte, error) {
	s := strings.TrimSpace(string(text))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	secret, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("the JWT secret is not hex")
	}
	if len(secret) != 32 {
		return nil, fmt.Errorf("the JWT secret is %d bytes; want 32 (64 hex digits)", len(secret))
	}
	return secret, nil
}

// checkHeaders checks Config.Header and JWTSecret against the target t.
func (c *Config) checkHeaders(t *target) error {
	if len(c.Header) == 0 && len(c.JWTSecret) == 0 {
		return nil
	}
	if !t.http && !t.ws {
		return fmt.Errorf("target %q is a raw stream: headers and a JWT can only be sent over http:// or ws://", c.Target)
	}
	for name, values := range c.Header {
		for _, v := range values {
			if err := checkHeader(name, v); err != nil {
				return err
			}
		}
		if len(c.JWTSecret) > 0 && strings.EqualFold(name, "Authorization") {
			return errors.New("an Authorization header and a JWT secret: the JWT is sent as Authorization")
		}
	}
	return nil
}

// appendHeaders appends h as header lines, sorted by name.
func appendHeaders(dst []byte, h http.Header) []byte {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range h[name] {
			dst = append(dst, name...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, "\r\n"...)
		}
	}
	return dst
}

// httpHead is what every HTTP request of a run starts with, up to its
// Content-Length value, and the token in it. Immutable once published.
type httpHead struct {
	text  []byte // "POST /path HTTP/1.1\r\nHost: …\r\n…Content-Length: "
	token string // the JWT in it, or ""
}

// setToken builds the request head for token ("" for none) and publishes
// it. Safe from any goroutine.
func (r *runner) setToken(token string) {
	b := make([]byte, 0, len(r.headers)+len(token)+len(r.t.path)+len(r.t.host)+160)
	b = append(b, "POST "...)
	b = append(b, r.t.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, r.t.host...)
	b = append(b, "\r\n"...)
	b = append(b, r.headers...)
	b = appendAcceptEncoding(b, r.cfg.Compression)
	if token != "" {
		b = append(b, "Authorization: Bearer "...)
		b = append(b, token...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
	r.head.Store(&httpHead{text: b, token: token})
}

// upgradeHeader returns the extra headers of a WebSocket upgrade request:
// Config.Header and the current JWT; nil for none. Safe from any
// goroutine.
func (r *runner) upgradeHeader() http.Header {
	token := r.head.Load().token
	if len(r.cfg.Header) == 0 && token == "" {
		return nil
	}
	h := r.cfg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// upgradeHeader returns the extra headers of w's WebSocket upgrade
// request: the runner's, and a traceparent with a share of
// Config.TraceSample, drawn once per (re)connection; nil for none. The
// worker's goroutine only (or redial's, while w has no event loop).
func (w *worker) upgradeHeader() http.Header {
	h := w.r.upgradeHeader()
	if w.trace == nil || !w.traced() {
		return h
	}
	if h == nil {
		h = http.Header{}
	}
	h[traceparentName] = []string{string(appendTraceparentValue(nil, w.trace))}
	return h
}

// mintJWT returns an HS256 JWT signed with secret whose only claim is
// iat, now in whole seconds, as geth's node.NewJWTAuth makes them.
func mintJWT(secret []byte, now time.Time) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iat": now.Unix()}).SignedString(secret)
}

// startJWT mints the first token and starts re-minting it every
// Config.JWTRefresh until the returned stop is called; stop waits for the
// refresher to end. Without a secret it does nothing.
func (r *runner) startJWT() (stop func(), err error) {
	if len(r.cfg.JWTSecret) == 0 {
		return func() {}, nil
	}
	token, err := mintJWT(r.cfg.JWTSecret, time.Now())
	if err != nil {
		return nil, fmt.Errorf("minting the JWT: %w", err)
	}
	r.setToken(token)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(r.cfg.JWTRefresh)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// HS256 with a []byte key does not fail; if it did, the
				// old token stays, and the server's refusals show it.
				if token, err := mintJWT(r.cfg.JWTSecret, time.Now()); err == nil {
					r.setToken(token)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }, nil
}
