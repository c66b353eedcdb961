package mcp

import (
	"strings"

	"github.com/jetrpc/jetrpc/handler"
)

// ProtocolVersionHeader is the HTTP header field in which an MCP client
// names the revision it speaks, on every request after initialize.
const ProtocolVersionHeader = "MCP-Protocol-Version"

// statelessVersion is the first revision whose clients probe a server
// with server/discover (SEP-2575) before falling back to initialize: a
// request naming it, or a later one, is let through, and the method it
// calls answers (server/discover: -32601, the fallback's cue).
const statelessVersion = "2026-07-28"

// errUnsupportedVersion is the refusal of an unsupported revision: made
// once, so that a refusal allocates nothing.
var errUnsupportedVersion = &handler.HTTPRefusal{
	Status: 400,
	Text:   "Bad Request: Unsupported protocol version (supported versions: " + strings.Join(Versions, ",") + ")",
}

// CheckProtocolVersion returns an Authorizer that refuses, with 400
// Bad Request and the supported revisions, an HTTP request whose
// MCP-Protocol-Version header names a revision this server does not
// speak, as the transport asks (2025-06-18, "Protocol Version Header"),
// and asks next about every other (nil next: everyone is let in, with
// no grants). A request without the header, a WebSocket upgrade and a
// stream connection are not checked; one naming 2026-07-28 or a later
// date is
// let through, as the official Go SDK's server does, so that a client
// of the stateless revision hears server/discover answered -32601 and
// falls back to initialize. next's acceptance is not kept for the
// connection's later requests (Meta.AuthorizedUntil: the engine answers
// a request with the Authorization of the last from its cache, without
// asking), so that each request's header is checked; with API keys or
// JWT behind it, each request is authorized anew.
func CheckProtocolVersion(next handler.Authorizer) handler.Authorizer {
	return func(m *handler.Meta) (handler.Grants, error) {
		v := m.Header(ProtocolVersionHeader)
		if v != "" && !supported(v) && !(isDate(v) && v >= statelessVersion) && m.Header("Upgrade") == "" {
			return nil, errUnsupportedVersion
		}
		if next == nil {
			return nil, nil
		}
		g, err := next(m)
		// Not kept for the connection's next requests: the engine would
		// answer them from its cache without this check.
		m.AuthorizedUntil = 0
		return g, err
	}
}

// supported reports whether v is one of Versions.
func supported(v string) bool {
	for _, s := range Versions {
		if v == s {
			return true
		}
	}
	return false
}

// isDate reports whether v is written as a revision is: YYYY-MM-DD.
func isDate(v string) bool {
	if len(v) != len("2006-01-02") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i == 4 || i == 7 {
			if v[i] != '-' {
				return false
			}
		} else if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
