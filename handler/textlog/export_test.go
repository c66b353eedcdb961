package textlog

import "log/slog"

// FastPath reports whether h formats r itself rather than through its
// fallback.
func FastPath(h slog.Handler, r slog.Record) bool {
	t, ok := h.(*Handler)
	if !ok || !t.fast {
		return false
	}
	b := getBuffer()
	defer putBuffer(b)
	buf, ok := b.appendRecord(b.b[:0], t.attrs, &r)
	b.b = buf
	return ok
}
