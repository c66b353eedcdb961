package handler

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// Defaults of HTTPHandler.
const (
	// DefaultMaxBodySize is the largest request body HTTPHandler reads:
	// the same limit as one message on a stream, parser.DefaultMaxSize.
	DefaultMaxBodySize = parser.DefaultMaxSize
	// DefaultHealthPath is the path where GET answers 200.
	DefaultHealthPath = "/health"
)

// HealthBody is the body of the 200 reply to a health check.
const HealthBody = `{"status":"ok"}`

// HTTPHandler serves a Table over HTTP as a net/http.Handler, so that
// jetrpc can be mounted in an existing net/http server:
//
//	http.Handle("/rpc", handler.NewHTTPHandler(table))
//
// It follows the transport rules of JSON-RPC over HTTP, the same as the
// engine's: a Host not allowed → 403; a CORS preflight answered (CORS);
// POST with the message as body (AcceptableContentType; another
// type → 415); reply 200 application/json, or 204 No Content when there
// is nothing to reply (notifications); a body over MaxBodySize → 413;
// other methods → 405 with Allow: POST, except a health check
// (IsHealthCheck) → 200 HealthBody; a caller the Authorizer refuses →
// 401 or 403. A JSON-RPC error is a 200 reply: the error is in the body.
// The refusals carry HTTPErrorText, and the table's access log records
// them (Table.Refused). Methods and interceptors see the request in
// their Meta (MetaFrom: TransportHTTP, the addresses, the headers). Safe
// for concurrent use.
type HTTPHandler struct {
	// Table serves the calls; immutable; never nil.
	Table *Table
	// MaxBodySize limits the request body; 0 means DefaultMaxBodySize.
	MaxBodySize int64
	// HTTPPolicy is the policy of requests' heads, the engine's: health
	// path, CORS, Hosts, Authorize, TrustedProxies.
	HTTPPolicy
}

// NewHTTPHandler returns an HTTPHandler over t with the defaults.
func NewHTTPHandler(t *Table) *HTTPHandler { return &HTTPHandler{Table: t} }

var _ http.Handler = (*HTTPHandler)(nil)

// AcceptableContentType reports whether a request's Content-Type value
// is one JSON-RPC over HTTP accepts: empty, or application/json,
// application/json-rpc or application/jsonrequest in any case, with any
// parameters. It is the one rule of the engine and of HTTPHandler, on
// bytes or a string, without allocating.
func AcceptableContentType[T ~string | ~[]byte](v T) bool {
	if len(v) == 0 || string(v) == "application/json" { // the usual ones at once
		return true
	}
	for i := 0; i < len(v); i++ {
		if v[i] == ';' {
			v = v[:i]
			break
		}
	}
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	var want string // the one type of v's length, lower-case
	switch len(v) {
	case len("application/json"):
		want = "application/json"
	case len("application/json-rpc"):
		want = "application/json-rpc"
	case len("application/jsonrequest"):
		want = "application/jsonrequest"
	default:
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// IsHealthCheck reports whether an HTTP request — its method and its
// request target, query included — is the health check at path: a GET
// of path, whatever the query. An empty path means DefaultHealthPath;
// "-" is no path: no request is the health check. It is the one rule of
// the engine and of HTTPHandler, on bytes or a string, without
// allocating.
func IsHealthCheck[T ~string | ~[]byte](method, target T, path string) bool {
	switch path {
	case "":
		path = DefaultHealthPath
	case "-":
		return false
	}
	for i := 0; i < len(target); i++ {
		if target[i] == '?' {
			target = target[:i]
			break
		}
	}
	return string(method) == "GET" && string(target) == path
}

// HTTPErrorText returns the plain-text body jetrpc sends with an HTTP
// status that refuses a request (405, 413, 415 ...), the same from the
// engine and from HTTPHandler; "malformed request" for a status it does
// not name.
func HTTPErrorText(status int) string {
	switch status {
	case http.StatusMethodNotAllowed:
		return "JSON-RPC requires POST\n"
	case http.StatusRequestEntityTooLarge:
		return "request body too large\n"
	case http.StatusUnsupportedMediaType:
		return "JSON-RPC requires Content-Type application/json\n"
	case http.StatusRequestHeaderFieldsTooLarge:
		return "request head too large\n"
	case http.StatusNotImplemented:
		return "unsupported transfer encoding\n"
	case http.StatusHTTPVersionNotSupported:
		return "only HTTP/1.0 and HTTP/1.1\n"
	case http.StatusNotFound:
		return "not found\n"
	case http.StatusUnauthorized:
		return "missing or invalid credentials\n"
	case http.StatusForbidden:
		return "access denied\n"
	case http.StatusInternalServerError:
		return "internal server error\n"
	case http.StatusServiceUnavailable:
		return "server busy\n"
	}
	return "malformed request\n"
}

// TextTokenInURL is the body of the 401 answering ErrTokenInURL.
const TextTokenInURL = "a token in the URL (access_token) is accepted on a WebSocket upgrade only: send the header Authorization: Bearer TOKEN\n"

// AuthText is the body of the HTTP refusal of an Authorizer's error err:
// TextTokenInURL for ErrTokenInURL, else HTTPErrorText of its status
// (AuthStatus).
func AuthText(err error) string {
	if errors.Is(err, ErrTokenInURL) {
		return TextTokenInURL
	}
	return HTTPErrorText(AuthStatus(err))
}

// Texts of the 403 refusals of the browser checks, the same from the
// engine and from HTTPHandler.
const (
	// TextOriginNotAllowed refuses a WebSocket handshake or a CORS
	// preflight from an origin not allowed (CORS.Origins).
	TextOriginNotAllowed = "origin not allowed\n"
	// TextHostNotAllowed refuses a request whose Host is not allowed
	// (HostAllowed); geth's words.
	TextHostNotAllowed = "invalid host specified\n"
)

// httpError answers a refusal with its status and HTTPErrorText.
func httpError(w http.ResponseWriter, status int) {
	httpErrorText(w, status, HTTPErrorText(status))
}

// httpErrorText answers a refusal with its status and text.
func httpErrorText(w http.ResponseWriter, status int, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

// ServeHTTP answers one HTTP request.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !HostAllows(&h.HTTPPolicy, r.Host) {
		h.refused(r, nil, http.StatusForbidden, "forbidden_host")
		httpErrorText(w, http.StatusForbidden, TextHostNotAllowed)
		return
	}
	if h.CORS.Enabled() {
		origin := r.Header.Get("Origin")
		v, ok := AllowOrigin(&h.CORS, origin)
		if !ok && origin != "" { // a page of another origin, or its preflight: nothing runs
			h.refused(r, nil, http.StatusForbidden, "forbidden_origin")
			httpErrorText(w, http.StatusForbidden, TextOriginNotAllowed)
			return
		}
		if ok {
			hdr := w.Header()
			hdr.Set("Access-Control-Allow-Origin", v)
			hdr.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.preflight(w)
				return
			}
		}
	}
	if r.Method != http.MethodPost {
		if IsHealthCheck(r.Method, r.URL.Path, h.HealthPath) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, HealthBody)
			return
		}
		h.refused(r, nil, http.StatusMethodNotAllowed, "method_not_allowed")
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed)
		return
	}
	if !AcceptableContentType(r.Header.Get("Content-Type")) {
		h.refused(r, nil, http.StatusUnsupportedMediaType, "unsupported_media_type")
		httpError(w, http.StatusUnsupportedMediaType)
		return
	}
	limit := h.MaxBodySize
	if limit <= 0 {
		limit = DefaultMaxBodySize
	}
	if r.ContentLength > limit {
		h.refused(r, nil, http.StatusRequestEntityTooLarge, "body_too_large")
		httpError(w, http.StatusRequestEntityTooLarge)
		return
	}
	cc := h.callContext(r)
	if h.Authorize != nil {
		g, err := h.Authorize(&cc.Meta)
		if err != nil {
			status := AuthStatus(err)
			h.refused(r, cc, status, authReason(err, status))
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", "Bearer")
			}
			httpErrorText(w, status, AuthText(err))
			return
		}
		cc.Meta.Grants = g
	}
	body := pool.Requests.Get()
	defer pool.Requests.Put(body)
	if _, err := body.ReadFrom(io.LimitReader(r.Body, limit+1)); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			// An outer limit (http.MaxBytesHandler) cut the body off.
			h.refused(r, cc, http.StatusRequestEntityTooLarge, "body_too_large")
			httpError(w, http.StatusRequestEntityTooLarge)
			return
		}
		h.refused(r, cc, http.StatusBadRequest, "bad_request")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "cannot read request body\n")
		return
	}
	if int64(len(body.B)) > limit {
		h.refused(r, cc, http.StatusRequestEntityTooLarge, "body_too_large")
		httpError(w, http.StatusRequestEntityTooLarge)
		return
	}
	out := pool.Responses.Get()
	defer pool.Responses.Put(out)
	out.B = h.Table.Dispatch(cc, out.B, body.B)
	if len(out.B) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	hdr["Content-Length"] = []string{strconv.Itoa(len(out.B))}
	_, _ = w.Write(out.B)
}

// preflight answers the CORS preflight of an allowed origin (its
// Access-Control-Allow-Origin is set already): 204 with the allowed
// methods and headers.
func (h *HTTPHandler) preflight(w http.ResponseWriter) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Methods", corsMethods)
	if v := h.CORS.allowHeaders(); v != "" {
		hdr.Set("Access-Control-Allow-Headers", v)
	}
	if v := h.CORS.maxAge(); v != "" {
		hdr.Set("Access-Control-Max-Age", v)
	}
	w.WriteHeader(http.StatusNoContent)
}

var jsonContentType = []string{"application/json"}
