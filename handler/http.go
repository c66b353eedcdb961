package handler

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/jetrpc/jetrpc/pool"
)

// Defaults of HTTPHandler.
const (
	// DefaultMaxBodySize is the largest request body HTTPHandler reads.
	DefaultMaxBodySize = 5 << 20
	// DefaultHealthPath is the path where GET answers 200.
	DefaultHealthPath = "/health"
)

// HTTPHandler serves a Table over HTTP as a net/http.Handler, so that
// jetrpc can be mounted in an existing net/http server:
//
//	http.Handle("/rpc", handler.NewHTTPHandler(table))
//
// It follows the transport rules of JSON-RPC over HTTP: POST with the
// message as body (Content-Type application/json, application/json-rpc,
// application/jsonrequest, any parameters, or none; another type → 415);
// reply 200 application/json, or 204 No Content when there is nothing to
// reply (notifications); a body over MaxBodySize → 413; other methods →
// 405 with Allow: POST, except GET of HealthPath → 200. A JSON-RPC error is
// a 200 reply: the error is in the body. Safe for concurrent use.
type HTTPHandler struct {
	// Table serves the calls; immutable; never nil.
	Table *Table
	// MaxBodySize limits the request body; 0 means DefaultMaxBodySize.
	MaxBodySize int64
	// HealthPath is the path where GET answers 200 {"status":"ok"};
	// "" means DefaultHealthPath, "-" turns it off.
	HealthPath string
}

// NewHTTPHandler returns an HTTPHandler over t with the defaults.
func NewHTTPHandler(t *Table) *HTTPHandler { return &HTTPHandler{Table: t} }

var _ http.Handler = (*HTTPHandler)(nil)

// AcceptableContentType reports whether a request Content-Type header
// value is one JSON-RPC over HTTP accepts: empty, application/json,
// application/json-rpc or application/jsonrequest, with any parameters.
func AcceptableContentType(v string) bool {
	if v == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
	}
	switch mt {
	case "application/json", "application/json-rpc", "application/jsonrequest":
		return true
	}
	return false
}

// ServeHTTP answers one HTTP request.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		health := h.HealthPath
		if health == "" {
			health = DefaultHealthPath
		}
		if r.Method == http.MethodGet && r.URL.Path == health {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":"ok"}`)
			return
		}
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "JSON-RPC requires POST", http.StatusMethodNotAllowed)
		return
	}
	if !AcceptableContentType(r.Header.Get("Content-Type")) {
		http.Error(w, "JSON-RPC requires Content-Type application/json", http.StatusUnsupportedMediaType)
		return
	}
	limit := h.MaxBodySize
	if limit <= 0 {
		limit = DefaultMaxBodySize
	}
	if r.ContentLength > limit {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	body := pool.Requests.Get()
	defer pool.Requests.Put(body)
	if _, err := body.ReadFrom(io.LimitReader(r.Body, limit+1)); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			// An outer limit (http.MaxBytesHandler) cut the body off.
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return
	}
	if int64(len(body.B)) > limit {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	out := pool.Responses.Get()
	defer pool.Responses.Put(out)
	out.B = h.Table.Dispatch(r.Context(), out.B, body.B)
	if len(out.B) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	hdr["Content-Length"] = []string{strconv.Itoa(len(out.B))}
	_, _ = w.Write(out.B)
}

var jsonContentType = []string{"application/json"}
