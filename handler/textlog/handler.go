package textlog

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
)

// Handler is a slog.Handler whose output is that of slog.TextHandler with
// the same writer and options, byte for byte. It formats the records of
// flat attributes itself and hands every other record to an embedded
// *slog.TextHandler (see the package doc for which records are which).
//
// A Handler is immutable; its methods are safe from any goroutine.
type Handler struct {
	opts slog.HandlerOptions // immutable
	out  *lockedWriter       // shared by every handler derived from New's; never nil
	slow slog.Handler        // the fallback, writing through out; never nil
	fast bool                // records may take the fast path; immutable
	// attrs holds the flat attributes given to WithAttrs, formatted as
	// " key=value" each; immutable (WithAttrs clips it before appending).
	attrs []byte
}

var _ slog.Handler = (*Handler)(nil)

// New returns a Handler that writes to w what slog.NewTextHandler(w, opts)
// would write. A nil opts means the default options, as for slog. Each
// record is one call to w.Write, serialized with every other Write of the
// Handler and of the handlers derived from it.
func New(w io.Writer, opts *slog.HandlerOptions) *Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	out := &lockedWriter{w: w}
	return &Handler{
		opts: *opts,
		out:  out,
		slow: slog.NewTextHandler(out, opts),
		fast: opts.ReplaceAttr == nil && !opts.AddSource,
	}
}

// Enabled reports whether the handler handles records at level: whether
// level is at least the options' Level (slog.LevelInfo when nil), as for
// slog.TextHandler. Safe from any goroutine.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	min := slog.LevelInfo
	if h.opts.Level != nil {
		min = h.opts.Level.Level()
	}
	return level >= min
}

// Handle writes r as one line of key=value pairs, as slog.TextHandler's
// Handle does, with one call to the writer's Write; it returns Write's
// error. A record the fast path covers is formatted without allocating;
// any other goes to the embedded slog.TextHandler. Safe from any
// goroutine.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if !h.fast {
		return h.slow.Handle(ctx, r)
	}
	b := getBuffer()
	buf, ok := b.appendRecord(b.b[:0], h.attrs, &r)
	b.b = buf
	if !ok {
		putBuffer(b)
		return h.slow.Handle(ctx, r)
	}
	_, err := h.out.Write(buf)
	putBuffer(b)
	return err
}

// WithAttrs returns a Handler whose records carry attrs after h's own
// attributes, as slog.TextHandler's WithAttrs does. Flat attrs are
// formatted once, here; any other attribute makes the returned handler
// (and those derived from it) use the fallback for every record. Safe
// from any goroutine; attrs is read, not kept or modified.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := &Handler{opts: h.opts, out: h.out, slow: h.slow.WithAttrs(attrs), fast: h.fast}
	if h.fast {
		var b buffer
		buf := slices.Clip(h.attrs)
		for i := range attrs {
			var ok bool
			if buf, ok = b.appendAttr(buf, attrs[i]); !ok {
				h2.fast = false
				return h2
			}
		}
		h2.attrs = buf
	}
	return h2
}

// WithGroup returns a Handler that qualifies the keys of later attributes
// with name, as slog.TextHandler's WithGroup does (an empty name
// included). The returned handler, and every one derived from it, formats
// its records with the fallback. Safe from any goroutine.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{opts: h.opts, out: h.out, slow: h.slow.WithGroup(name)}
}

// lockedWriter serializes the Writes of a Handler, of the handlers derived
// from it and of their fallbacks (which write through it), so that lines
// never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer // immutable; Write guarded by mu
}

// Write writes p to the underlying writer under mu. Safe from any
// goroutine.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// maxPooled is the capacity past which a buffer is dropped rather than
// pooled.
const maxPooled = 64 << 10

// bufferPool holds *buffer.
var bufferPool = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 1024)} }}

// getBuffer returns a buffer from the pool; it must be Put with putBuffer.
func getBuffer() *buffer { return bufferPool.Get().(*buffer) }

// putBuffer returns b to the pool, or drops it when it has grown past
// maxPooled; b and all obtained from it must not be used after.
func putBuffer(b *buffer) {
	if cap(b.b) > maxPooled {
		return
	}
	b.b = b.b[:0]
	bufferPool.Put(b)
}
