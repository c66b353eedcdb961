package auth

import (
	"encoding/binary"
	"strings"
	"unsafe"

	"github.com/jetrpc/jetrpc/handler"
)

// ProtocolPrefix begins the WebSocket subprotocol that carries a bearer
// token: a browser, whose WebSocket cannot set an Authorization header,
// offers "bearer.<token>" among its subprotocols
// (new WebSocket(url, ["jsonrpc", "bearer." + token])). The prefix is
// matched case-sensitively.
//
// A browser fails the handshake unless the server selects one of the
// subprotocols it offered, so a client should offer another besides the
// token, which the server selects; the server must never echo the token
// back.
const ProtocolPrefix = "bearer."

// Header and query names Token reads.
const (
	headerAuthorization = "Authorization"
	headerProtocol      = "Sec-Websocket-Protocol" // net/http's canonical form: Header.Get does not allocate
	queryAccessToken    = "access_token"
)

// Token returns the bearer token of the request m describes, looked for
// in this order:
//
//  1. the Authorization header with the scheme "Bearer", matched
//     ignoring case, then one or more spaces and the token (RFC 6750
//     2.1);
//  2. on a WebSocket upgrade only (GET with Upgrade: websocket), which a
//     browser cannot give an Authorization header: the first element
//     "bearer.<token>" of the Sec-WebSocket-Protocol list, across all
//     its fields (see ProtocolPrefix);
//  3. on a WebSocket upgrade only: the query parameter access_token,
//     percent-decoded (RFC 6750 2.3). Anywhere else a token in the URL
//     is refused (handler.ErrTokenInURL, see TokenInURL): URLs end up
//     in proxies' and servers' logs.
//
// A source that is absent, empty or malformed (another scheme, a token
// containing white space) is skipped. Token returns "" when no source
// has a token, and for a Meta without HTTP (a stream, in process).
//
// Token does not allocate when the token is in the Authorization header
// or the first Sec-WebSocket-Protocol field, nor when there is none;
// only percent-decoding the query, or reading Sec-WebSocket-Protocol
// fields past a first one without a token, does. Safe from any
// goroutine that may read m.
//
// The returned string is valid until the call returns and must not be
// modified; copy it (strings.Clone) to keep it.
func Token(m *handler.Meta) string {
	if t := bearer(m.Header(headerAuthorization)); t != "" {
		return t
	}
	if !isUpgrade(m) {
		return ""
	}
	if t := wsToken(m); t != "" {
		return t
	}
	if t := m.Query(queryAccessToken); t != "" && !hasSpace(t) {
		return t
	}
	return ""
}

// TokenInURL reports whether the request m describes carries a token in
// its URL (the access_token query parameter) that Token does not take:
// the request is not a WebSocket upgrade. An Authorizer refuses it with
// handler.ErrTokenInURL rather than as a request without a token, so
// that the client learns why.
func TokenInURL(m *handler.Meta) bool {
	return !isUpgrade(m) && m.Query(queryAccessToken) != ""
}

// presented reports whether the request m describes carries
// credentials that Token did not take (a token it did take is presented
// too): an Authorization field of any value — another scheme, a
// malformed one —, an access_token query parameter, or a
// "bearer.<token>" subprotocol. An Authorizer that finds no token
// refuses a request without any with handler.ErrNoCredentials (which
// handler.HTTPPolicy.AuthOptional may let in anonymous), and one with
// some as wrong credentials. It allocates nothing unless wsToken does.
func presented(m *handler.Meta) bool {
	return m.Header(headerAuthorization) != "" || m.Query(queryAccessToken) != "" || wsToken(m) != ""
}

// isUpgrade reports whether m describes a WebSocket upgrade: a GET with
// Upgrade: websocket. It does not allocate.
func isUpgrade(m *handler.Meta) bool {
	return m.Method() == "GET" && strings.EqualFold(m.Header("Upgrade"), "websocket")
}

// headerToken returns the token of m's Authorization header alone, as
// geth reads it, or "".
func headerToken(m *handler.Meta) string {
	return bearer(m.Header(headerAuthorization))
}

// bearer returns the token of an Authorization header value with the
// Bearer scheme (credentials = "Bearer" 1*SP token), or "" for another
// scheme or a malformed value. It does not allocate.
func bearer(h string) string {
	const scheme = "Bearer"
	if len(h) <= len(scheme)+1 || (h[len(scheme)] != ' ' && h[len(scheme)] != '\t') ||
		h[:len(scheme)] != scheme && !strings.EqualFold(h[:len(scheme)], scheme) {
		return ""
	}
	t := h[len(scheme)+1:]
	for len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
		t = t[1:]
	}
	if hasSpace(t) {
		return ""
	}
	return t
}

// wsToken returns the token of the first element ProtocolPrefix + token
// of m's Sec-WebSocket-Protocol fields, or "". It reads the first field
// without allocating, and leaves the others, rare, to wsTokenSlow.
func wsToken(m *handler.Meta) string {
	first := m.Header(headerProtocol)
	if first == "" {
		return ""
	}
	if t := protocolToken(first); t != "" {
		return t
	}
	return wsTokenSlow(m)
}

// wsTokenSlow is wsToken for the fields after the first, through
// Headers, which allocates (hence a function apart: its closure's
// variables would escape in wsToken's frame).
//
//go:noinline
func wsTokenSlow(m *handler.Meta) string {
	n := 0
	for name, value := range m.Headers() {
		if !strings.EqualFold(name, headerProtocol) {
			continue
		}
		if n++; n == 1 {
			continue // read by wsToken
		}
		if t := protocolToken(value); t != "" {
			return t
		}
	}
	return ""
}

// protocolToken returns the token of the first element ProtocolPrefix +
// token of a Sec-WebSocket-Protocol list, or "".
func protocolToken(list string) string {
	for list != "" {
		var e string
		e, list, _ = strings.Cut(list, ",")
		e = strings.Trim(e, " \t")
		if t, ok := strings.CutPrefix(e, ProtocolPrefix); ok && t != "" && !hasSpace(t) {
			return t
		}
	}
	return ""
}

// hasSpace reports whether s holds a space, a tab or a control
// character: no bearer token does.
func hasSpace(s string) bool {
	// Eight bytes at a time: a word has a byte under 0x21 when
	// (x - 0x21…) & ^x & 0x80… is not 0, and a byte 0x7f when x ^ 0x7f…
	// has a zero byte.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
		del := x ^ 0x7f*ones
		if (x-0x21*ones)&^x&highs != 0 || (del-ones)&^del&highs != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
