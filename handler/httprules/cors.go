package httprules

// NOTE: the browser-facing checks of JSON-RPC over HTTP, shared by the
// engine and handler.HTTPHandler: which origins may call cross-origin (CORS, and
// the WebSocket handshake's Origin check), and which Host names a request
// may carry (DNS-rebinding protection, geth's --http.vhosts). Both work
// on bytes or strings without allocating.

import (
	"strconv"
	"strings"
	"time"
)

// DefaultCORSMaxAge is how long a browser may cache a preflight's answer.
const DefaultCORSMaxAge = 10 * time.Minute

// DefaultCORSHeaders are the request headers a cross-origin page may
// send.
var DefaultCORSHeaders = []string{"Content-Type", "Authorization"}

// CORS configures cross-origin calls from browsers. The zero value allows
// none: replies carry no CORS header, and browsers refuse to hand them to
// a page of another origin. With Origins, a request carrying an Origin
// not allowed is refused with 403 (TextOriginNotAllowed) before it runs.
type CORS struct {
	// Origins are the origins whose pages may call ("https://app.example",
	// matched ignoring ASCII case), or "*" for any. They also bound the
	// WebSocket handshakes that carry an Origin.
	Origins []string
	// Headers are the request headers a page may send; nil means
	// DefaultCORSHeaders.
	Headers []string
	// MaxAge is how long a browser may cache a preflight's answer; 0 means
	// DefaultCORSMaxAge, negative sends no Access-Control-Max-Age.
	MaxAge time.Duration
}

// Enabled reports whether any origin is allowed.
func (c *CORS) Enabled() bool { return len(c.Origins) > 0 }

// AllowOrigin returns the Access-Control-Allow-Origin value for a request
// with the Origin origin: "*" when every origin is allowed, else the
// allowed origin as configured; ok is false when origin is empty or not
// allowed. It allocates nothing.
func AllowOrigin[T ~string | ~[]byte](c *CORS, origin T) (value string, ok bool) {
	if len(origin) == 0 {
		return "", false
	}
	for _, o := range c.Origins {
		if string(origin) == o { // the usual case, at memory-compare speed
			return o, true
		}
	}
	for _, o := range c.Origins {
		if o == "*" {
			return "*", true
		}
		if EqualFold(origin, o) {
			return o, true
		}
	}
	return "", false
}

// OriginAllowed reports whether a request with the Origin origin — a
// call, a page, a preflight, a WebSocket handshake — may go on: an empty
// Origin (not a browser's cross-origin page) always may; with no origins
// configured, every origin may; else origin must be allowed
// (AllowOrigin). It is the rule of the engine (which answers it from its
// per-connection cache of AllowOrigin's answer) and of HTTPHandler.
func OriginAllowed[T ~string | ~[]byte](c *CORS, origin T) bool {
	if len(origin) == 0 || len(c.Origins) == 0 {
		return true
	}
	_, ok := AllowOrigin(c, origin)
	return ok
}

// PreflightHeaders returns the header lines, each ending in CRLF, that
// answer a preflight besides Access-Control-Allow-Origin: the allowed
// methods, the allowed headers and the max age. Build it once.
func (c *CORS) PreflightHeaders() string {
	var b strings.Builder
	b.WriteString("Access-Control-Allow-Methods: " + corsMethods + "\r\n")
	if h := c.allowHeaders(); h != "" {
		b.WriteString("Access-Control-Allow-Headers: " + h + "\r\n")
	}
	if age := c.maxAge(); age != "" {
		b.WriteString("Access-Control-Max-Age: " + age + "\r\n")
	}
	return b.String()
}

// corsMethods are the methods a preflight allows.
const corsMethods = "POST, GET, OPTIONS"

// allowHeaders returns the Access-Control-Allow-Headers value.
func (c *CORS) allowHeaders() string {
	h := c.Headers
	if h == nil {
		h = DefaultCORSHeaders
	}
	return strings.Join(h, ", ")
}

// maxAge returns the Access-Control-Max-Age value, or "" for none.
func (c *CORS) maxAge() string {
	age := c.MaxAge
	if age == 0 {
		age = DefaultCORSMaxAge
	}
	if age < 0 {
		return ""
	}
	return strconv.FormatInt(int64(max(age/time.Second, 1)), 10) // 0 would forbid caching
}

// HostAllowed reports whether an HTTP request's Host value (port
// optional) names this server, by the allow list hosts (geth's vhosts):
// with no list, or "*" in it, every host is; so are an IP address — a
// real one: a dotted IPv4 address or a bracketed IPv6 address, without a
// zone — since a DNS-rebinding attack needs a name, and an empty or
// missing Host, which no browser sends; else the name must be in the
// list, ignoring ASCII case. HostAllowedStrict admits neither. It
// allocates nothing.
func HostAllowed[T ~string | ~[]byte](hosts []string, host T) bool {
	return hostAllowed(hosts, host, false)
}

// HostAllowedStrict is HostAllowed with a strict list: an IP address
// passes only when the list names it (as the Host carries it, "[::1]"
// for IPv6), and an empty or missing Host never does (unless the list
// holds "*"). For a server that only ever answers under its names.
func HostAllowedStrict[T ~string | ~[]byte](hosts []string, host T) bool {
	return hostAllowed(hosts, host, true)
}

func hostAllowed[T ~string | ~[]byte](hosts []string, host T, strict bool) bool {
	if len(hosts) == 0 {
		return true
	}
	name := stripPort(host)
	if len(name) > 0 {
		for _, h := range hosts {
			if string(name) == h { // the usual case, at memory-compare speed
				return true
			}
		}
	}
	if !strict && (len(host) == 0 || isIPv4(name) || isBracketedIPv6(name)) {
		return true
	}
	for _, h := range hosts {
		if h == "*" || len(name) > 0 && EqualFold(name, h) {
			return true
		}
	}
	return false
}

// stripPort returns host without a ":port" suffix.
func stripPort[T ~string | ~[]byte](host T) T {
	for i := len(host) - 1; i >= 0; i-- {
		switch c := host[i]; {
		case c == ':':
			if i > 0 && host[0] == '[' && host[i-1] != ']' {
				return host // an IPv6 literal's colon
			}
			return host[:i]
		case c < '0' || c > '9':
			return host
		}
	}
	return host
}

// isIPv4 reports whether s is a dotted IPv4 address: four decimal
// numbers of at most 255, without leading zeros (as net/netip reads
// them).
func isIPv4[T ~string | ~[]byte](s T) bool {
	dots, digits, v := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if digits == 0 {
				return false
			}
			dots, digits, v = dots+1, 0, 0
		case c >= '0' && c <= '9':
			if digits > 0 && v == 0 { // a leading zero
				return false
			}
			digits, v = digits+1, v*10+int(c-'0')
			if v > 255 {
				return false
			}
		default:
			return false
		}
	}
	return dots == 3 && digits > 0
}

// isBracketedIPv6 reports whether s is an IPv6 address in brackets, as
// a Host carries it: groups of one to four hex digits, eight of them or
// fewer with one "::", the last two possibly a dotted IPv4 address; no
// zone.
func isBracketedIPv6[T ~string | ~[]byte](s T) bool {
	if len(s) < 4 || s[0] != '[' || s[len(s)-1] != ']' {
		return false
	}
	s = s[1 : len(s)-1]
	groups, gap := 0, false
	i := 0
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		gap, i = true, 2
		if i == len(s) {
			return true // "::"
		}
	}
	for i < len(s) {
		j := i
		for j < len(s) && j-i < 5 && isHex(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '.' { // the dotted IPv4 tail
			if !isIPv4(s[i:]) {
				return false
			}
			groups += 2
			break
		}
		if j == i || j-i > 4 {
			return false
		}
		groups++
		if j == len(s) {
			break
		}
		if s[j] != ':' || j+1 == len(s) {
			return false
		}
		i = j + 1
		if s[i] == ':' {
			if gap {
				return false
			}
			gap, i = true, i+1
			if i == len(s) {
				break
			}
		}
	}
	if gap {
		return groups < 8
	}
	return groups == 8
}

// isHex reports whether c is a hex digit.
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// EqualFold reports whether a equals b ignoring ASCII case, as header
// names, origins and host names compare. It allocates nothing.
func EqualFold[T ~string | ~[]byte](a T, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
