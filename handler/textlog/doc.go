// Package textlog is a [log/slog] handler whose output is, byte for byte,
// that of [slog.NewTextHandler], written at a fraction of its cost.
//
// # Overview
//
// New(w, opts) returns a *Handler that writes exactly what
// slog.NewTextHandler(w, opts) would write for every record: the same
// keys, the same quoting, the same time, level and value formats. It is
// meant for logs that carry many records of flat attributes — jetrpc's
// access log (handler.AccessLog) sends strings, ints, a bool and a
// float per call — where slog.TextHandler's general machinery costs
// several times the formatting itself:
//
//	logger := slog.New(textlog.New(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
//
// # Terminology
//
// A flat attribute is one whose value's kind is String, Int64, Uint64,
// Float64, Bool, Duration or Time, or the empty Attr{} (which slog
// elides). The fast path formats a record itself; the fallback is an
// embedded *slog.TextHandler, built with the same writer and options,
// that formats the records the fast path does not cover.
//
// # Fast path and fallback
//
// The fast path covers a record when
//
//   - the options set neither ReplaceAttr nor AddSource,
//   - the handler was derived by no WithGroup,
//   - every attribute given to WithAttrs along the way was flat, and
//   - every attribute of the record is flat.
//
// Everything else — ReplaceAttr or AddSource, any WithGroup (and every
// handler derived from it), a WithAttrs with a Group, Any (an error, a
// struct, a []byte) or LogValuer attribute (and every handler derived
// from it), a record with such an attribute — goes to the fallback,
// whole: a record is formatted by one of the two, never partly by each.
// The output is the same either way; only the cost differs.
//
// Flat attributes given to WithAttrs are formatted once, into a prefix
// written after msg=, as slog.TextHandler does.
//
// # Concurrency
//
// A Handler and all derived from it by WithAttrs and WithGroup are safe
// from any goroutine. Each record is one Write to the writer, made under a
// mutex that those handlers and their fallbacks share, so the lines of
// concurrent records never interleave.
//
// # Buffer lifetimes
//
// The fast path formats a record into a pooled buffer, written and then
// returned to the pool; the writer must not keep the slice it is given
// (io.Writer's rule). Buffers over 64 KiB are dropped rather than pooled.
// Each pooled buffer also keeps the formatted date and time of the last
// second it wrote, so a record in the same second and zone only appends
// its milliseconds.
//
// # Limits
//
// Handle on the fast path allocates nothing beyond what the caller's
// slog.Record holds. There is no limit on the length of a record.
package textlog
