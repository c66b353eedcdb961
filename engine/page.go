package engine

// NOTE: pages: documents served on HTTP GET of a path, beside JSON-RPC —
// the Prometheus exposition of engine/metrics. A page may take
// milliseconds to make, so it runs on a worker, as a job whose reply is a
// whole response, and takes its place in the connection's reply order as
// any other held reply does.

import (
	"runtime/debug"
	"strconv"

	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser/http1"
	"github.com/jetrpc/jetrpc/pool"
)

// Page is a document the engine serves on HTTP GET of Path, on every
// listener (WithPage): engine/metrics' Prometheus exposition, say. Its
// body is made on a worker of the engine's pool (Options.Workers), as a
// blocking call is, and answered 503 when the pool is full. A request
// for a page passes the Host check and the Authorizer (Options.Hosts,
// Options.Authorize) as a call does; the health check passes neither.
type Page struct {
	// Path is the URL path, such as "/metrics"; a query is ignored.
	Path string
	// ContentType is the Content-Type of the body.
	ContentType string
	// Append appends the body to dst and returns it. It is called on a
	// worker, for each request; a panic is logged and answered 500.
	Append func(dst []byte) []byte
	// Negotiate, when set, picks the form of the page a request gets
	// from its Accept header field's value ("" when absent): the Page
	// whose ContentType and Append answer it — p itself, or another
	// (engine/metrics answers OpenMetrics, with exemplars, to a scraper
	// that asks for it). Only the chosen Page's ContentType and Append
	// are used. It runs on the event loop, for each request of the page,
	// and must be quick; nil means ContentType and Append always.
	Negotiate func(accept string) *Page
}

// WithPage adds a page (see Page) to Options.Pages.
func WithPage(p Page) Option { return func(o *Options) { o.Pages = append(o.Pages, p) } }

// pageFor returns the page of a GET of target, or nil.
func (e *Engine) pageFor(method, target []byte) *Page {
	if len(e.opts.Pages) == 0 || string(method) != "GET" {
		return nil
	}
	for i, c := range target {
		if c == '?' {
			target = target[:i]
			break
		}
	}
	for i := range e.opts.Pages {
		if p := &e.opts.Pages[i]; p.Path == string(target) {
			return p
		}
	}
	return nil
}

// page answers a GET of p: its body is made on a worker, its response
// held in the connection's reply order; 503 when no worker can take it.
func (h *httpCodec) page(c *conn, out []byte, p *Page, keep bool) []byte {
	r := &h.req
	if p.Negotiate != nil {
		if q := p.Negotiate(headerField(h.head, "accept")); q != nil {
			p = q
		}
	}
	j := newJob(c)
	j.page, j.tag, j.cors = p, tagFramed, h.corsLines
	if keep {
		j.tag |= tagKeepAlive
	}
	if r.Minor == 1 {
		j.tag |= tagHTTP11
	}
	if !c.submit(j) {
		j.release()
		mark := len(out)
		out = appendStatus(out, http1.StatusServiceUnavailable, keep, r.Minor, h.corsLines)
		return h.emit(c, out, mark)
	}
	h.held = append(h.held, heldReply{j: j})
	return out
}

// runPage makes the response of the page job j, on a worker.
func (j *job) runPage() {
	p := j.page
	minor := 0
	if j.tag&tagHTTP11 != 0 {
		minor = 1
	}
	keep := j.tag&tagKeepAlive != 0 // as the request was read (answerHead)
	body := pool.Responses.Get()
	defer func() {
		if v := recover(); v != nil {
			j.c.e.opts.Logger.Error("jetrpc: page failed", "path", p.Path, "panic", v, "stack", string(debug.Stack()))
			j.out = appendStatus(j.out[:0], http1.StatusInternalServerError, keep, minor, j.cors)
		}
		pool.Responses.Put(body)
	}()
	body.B = p.Append(body.B[:0])
	out := appendHeadStart(j.out[:0], statusLine200, keep, minor, j.cors)
	out = append(out, "Content-Type: "...)
	out = append(out, p.ContentType...)
	out = append(out, "\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body.B)), 10)
	out = append(out, "\r\n\r\n"...)
	j.out = append(out, body.B...)
}

// headerField returns the value of the first field name (lower case) of
// the HTTP head, "" when absent.
func headerField(head []byte, name string) string {
	f := http1.NewFields(head)
	for n, v, ok := f.Next(); ok; n, v, ok = f.Next() {
		if len(n) == len(name) && httprules.EqualFold(n, name) {
			return string(v)
		}
	}
	return ""
}
