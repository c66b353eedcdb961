package handler

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// HTTPHandler serves a Table over HTTP as a net/http.Handler, so that
// jetrpc can be mounted in an existing net/http server:
//
//	http.Handle("/rpc", handler.NewHTTPHandler(table))
//
// It follows the transport rules of JSON-RPC over HTTP, the same as the
// engine's: a Host not allowed → 403; a CORS preflight answered (CORS);
// POST with the message as body (httprules.AcceptableContentType; another
// type → 415); reply 200 application/json, or 204 No Content when there
// is nothing to reply (notifications); a body over MaxBodySize → 413;
// other methods → 405 with Allow: POST, except a health check
// (httprules.IsHealthCheck) → 200 httprules.HealthBody (503
// httprules.NotReadyBody after SetNotReady or while the policy's Ready
// fails); a caller the Authorizer refuses →
// 401 or 403 (one without credentials goes on with no grants under
// AuthOptional). A JSON-RPC error is a 200 reply: the error is in the body.
// The refusals carry httprules.ErrorText, and the table's access log records
// them (Table.Refused). Methods and interceptors see the request in
// their Meta (MetaFrom: TransportHTTP, the addresses, the headers). Safe
// for concurrent use.
type HTTPHandler struct {
	// Table serves the calls; immutable; never nil.
	Table *Table
	// MaxBodySize limits the request body; 0 means parser.DefaultMaxSize, a
	// message's limit on a stream too.
	MaxBodySize int64
	// HTTPPolicy is the policy of requests' heads, the engine's: health
	// path and readiness check, CORS, Hosts, Authorize, AuthOptional,
	// TrustedProxies.
	HTTPPolicy

	notReady atomic.Pointer[string] // the health check's 503 body (SetNotReady), nil while ready
}

// NewHTTPHandler returns an HTTPHandler over t with the defaults.
func NewHTTPHandler(t *Table) *HTTPHandler { return &HTTPHandler{Table: t} }

var _ http.Handler = (*HTTPHandler)(nil)

// SetNotReady makes the health check answer 503
// {"status":"not_ready","reason":REASON} (httprules.NotReadyBody) until
// SetReady, whatever the policy's Ready says: the application's own
// readiness — warming up, or taken out of its load balancer's pool by
// hand. Calls are still served. Safe from any goroutine; the last call
// wins.
func (h *HTTPHandler) SetNotReady(reason string) {
	body := httprules.NotReadyBody(reason)
	h.notReady.Store(&body)
}

// SetReady undoes SetNotReady: the health check answers as the policy's
// Ready says (200 without one). Safe from any goroutine.
func (h *HTTPHandler) SetReady() { h.notReady.Store(nil) }

// health returns the health check's status and body: 503 after
// SetNotReady or while the policy's Ready fails, else 200
// httprules.HealthBody.
func (h *HTTPHandler) health() (int, string) {
	if b := h.notReady.Load(); b != nil {
		return http.StatusServiceUnavailable, *b
	}
	if h.Ready != nil {
		if err := h.Ready(); err != nil {
			return http.StatusServiceUnavailable, httprules.NotReadyBody(err.Error())
		}
	}
	return http.StatusOK, httprules.HealthBody
}

// AuthText is the body of the HTTP refusal of an Authorizer's error err:
// httprules.TextTokenInURL for ErrTokenInURL, an HTTPRefusal's Text,
// else httprules.ErrorText of its status (AuthStatus).
func AuthText(err error) string {
	if errors.Is(err, ErrTokenInURL) {
		return httprules.TextTokenInURL
	}
	var r *HTTPRefusal
	if errors.As(err, &r) && r != nil && r.Status >= 400 && r.Status <= 499 {
		return r.Text
	}
	return httprules.ErrorText(AuthStatus(err))
}

// httpError answers a refusal with its status and httprules.ErrorText.
func httpError(w http.ResponseWriter, status int) {
	httpErrorText(w, status, httprules.ErrorText(status))
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
		h.refused(r, nil, http.StatusForbidden, httprules.ReasonForbiddenHost)
		httpErrorText(w, http.StatusForbidden, httprules.TextHostNotAllowed)
		return
	}
	if h.CORS.Enabled() {
		origin := r.Header.Get("Origin")
		v, ok := httprules.AllowOrigin(&h.CORS, origin)
		if !ok && origin != "" { // a page of another origin, or its preflight: nothing runs
			h.refused(r, nil, http.StatusForbidden, httprules.ReasonForbiddenOrigin)
			httpErrorText(w, http.StatusForbidden, httprules.TextOriginNotAllowed)
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
		if httprules.IsHealthCheck(r.Method, r.URL.Path, h.HealthPath) {
			status, body := h.health()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
		h.refused(r, nil, http.StatusMethodNotAllowed, httprules.ReasonMethodNotAllowed)
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed)
		return
	}
	if !httprules.AcceptableContentType(r.Header.Get("Content-Type")) {
		h.refused(r, nil, http.StatusUnsupportedMediaType, httprules.ReasonUnsupportedType)
		httpError(w, http.StatusUnsupportedMediaType)
		return
	}
	limit := h.MaxBodySize
	if limit <= 0 {
		limit = parser.DefaultMaxSize
	}
	if r.ContentLength > limit {
		h.refused(r, nil, http.StatusRequestEntityTooLarge, httprules.ReasonBodyTooLarge)
		httpError(w, http.StatusRequestEntityTooLarge)
		return
	}
	cc := h.callContext(r)
	if h.Authorize != nil {
		g, err := h.Authorize(&cc.Meta)
		if err != nil && !h.AdmitsAnonymous(err) {
			status := AuthStatus(err)
			h.refused(r, cc, status, authReason(err, status))
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", "Bearer")
			}
			httpErrorText(w, status, AuthText(err))
			return
		}
		if err != nil { // anonymous (AuthOptional): no grants, no principal, whatever the Authorizer left
			g, cc.Meta.Principal = nil, ""
		}
		cc.Meta.Grants = g
	}
	body := pool.Requests.Get()
	defer pool.Requests.Put(body)
	if _, err := body.ReadFrom(io.LimitReader(r.Body, limit+1)); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			// An outer limit (http.MaxBytesHandler) cut the body off.
			h.refused(r, cc, http.StatusRequestEntityTooLarge, httprules.ReasonBodyTooLarge)
			httpError(w, http.StatusRequestEntityTooLarge)
			return
		}
		h.refused(r, cc, http.StatusBadRequest, httprules.ReasonBadRequest)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "cannot read request body\n")
		return
	}
	if int64(len(body.B)) > limit {
		h.refused(r, cc, http.StatusRequestEntityTooLarge, httprules.ReasonBodyTooLarge)
		httpError(w, http.StatusRequestEntityTooLarge)
		return
	}
	out := pool.Responses.Get()
	defer pool.Responses.Put(out)
	sink := httpSink{w: w}
	out.B = h.Table.dispatchStreaming(cc, out.B, body.B, &sink)
	if sink.begun {
		_, _ = w.Write(out.B) // a streamed reply's last part; net/http ends the chunked body
		return
	}
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
// Access-Control-Allow-Origin is set already): 204 with the lines of
// CORS.PreflightHeaders, the engine's.
func (h *HTTPHandler) preflight(w http.ResponseWriter) {
	hdr := w.Header()
	for line := range strings.SplitSeq(h.CORS.PreflightHeaders(), "\r\n") {
		if name, value, ok := strings.Cut(line, ": "); ok {
			hdr.Set(name, value)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

var jsonContentType = []string{"application/json"}

// httpSink sends the parts of a streamed reply (RegisterStream) through
// a ResponseWriter, each flushed as it comes: net/http sends the body
// chunked (HTTP/1.1), and a client that reads slowly blocks the Write.
type httpSink struct {
	w     http.ResponseWriter
	begun bool // the head went, with the first part
}

func (s *httpSink) SendPart(part []byte) error {
	if !s.begun {
		s.begun = true
		s.w.Header()["Content-Type"] = jsonContentType
	}
	if _, err := s.w.Write(part); err != nil {
		return err
	}
	return http.NewResponseController(s.w).Flush()
}
