package textlog

// NOTE: the formatting of the fast path. Each appendX mirrors the code of
// log/slog that writes the same thing (handler.go, text_handler.go,
// value.go, level.go); the comment on each names it. The differential
// and fuzz tests hold the two to the same bytes.

import (
	"log/slog"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// buffer is a pooled formatting buffer with a one-entry cache of the
// formatted time.
type buffer struct {
	b []byte // the record being formatted

	// The cache: stamp[:n] is appendRFC3339Millis of a time in second sec
	// (Unix) of location loc; n == 0 when empty. Only times whose text has
	// the usual shape (a four-digit year: "2006-01-02T15:04:05.000" and
	// the zone) are kept, so that the milliseconds are stamp[20:23].
	loc   *time.Location
	sec   int64
	n     int
	stamp [48]byte
}

// appendRecord appends r as slog.TextHandler writes it (commonHandler.handle),
// attrs being the preformatted WithAttrs attributes. It reports false,
// leaving dst in some state, when r has an attribute the fast path does
// not cover.
func (b *buffer) appendRecord(dst, attrs []byte, r *slog.Record) ([]byte, bool) {
	if !r.Time.IsZero() {
		dst = append(dst, "time="...)
		dst = b.appendTime(dst, r.Time)
		dst = append(dst, ' ')
	}
	dst = append(dst, "level="...)
	dst = appendLevel(dst, r.Level)
	dst = append(dst, " msg="...)
	dst = appendString(dst, r.Message)
	dst = append(dst, attrs...)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		dst, ok = b.appendAttr(dst, a)
		return ok
	})
	return append(dst, '\n'), ok
}

// appendAttr appends " key=value" for a flat attribute a, nothing for the
// empty Attr{} (elided, as by slog's handleState.appendAttr), and reports
// false for any other attribute.
func (b *buffer) appendAttr(dst []byte, a slog.Attr) ([]byte, bool) {
	v := a.Value
	k := v.Kind()
	if k == slog.KindAny && a.Key == "" && v.Any() == nil { // Attr{}: isEmpty
		return dst, true
	}
	if !flat(k) {
		return dst, false
	}
	dst = append(dst, ' ')
	dst = appendString(dst, a.Key)
	dst = append(dst, '=')
	// appendTextValue and Value.append
	switch k {
	case slog.KindString:
		dst = appendString(dst, v.String())
	case slog.KindInt64:
		dst = strconv.AppendInt(dst, v.Int64(), 10)
	case slog.KindUint64:
		dst = strconv.AppendUint(dst, v.Uint64(), 10)
	case slog.KindFloat64:
		dst = strconv.AppendFloat(dst, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		dst = strconv.AppendBool(dst, v.Bool())
	case slog.KindDuration:
		dst = append(dst, v.Duration().String()...) // at most 25 bytes: on the stack
	case slog.KindTime:
		dst = b.appendTime(dst, v.Time())
	}
	return dst, true
}

// flat reports whether the fast path formats values of kind k.
func flat(k slog.Kind) bool {
	switch k {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindFloat64,
		slog.KindBool, slog.KindDuration, slog.KindTime:
		return true
	}
	return false
}

// appendLevel appends l.String() (slog's Level.String) without building a
// string.
func appendLevel(dst []byte, l slog.Level) []byte {
	var base string
	var d slog.Level
	switch {
	case l < slog.LevelInfo:
		base, d = "DEBUG", l-slog.LevelDebug
	case l < slog.LevelWarn:
		base, d = "INFO", l-slog.LevelInfo
	case l < slog.LevelError:
		base, d = "WARN", l-slog.LevelWarn
	default:
		base, d = "ERROR", l-slog.LevelError
	}
	dst = append(dst, base...)
	if d == 0 {
		return dst
	}
	if d > 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(d), 10)
}

// appendString appends s, quoted as by strconv.Quote when needsQuoting
// (slog's handleState.appendString, text).
func appendString(dst []byte, s string) []byte {
	if len(s) > 0 && plainPrefix(s) == len(s) {
		return append(dst, s...)
	}
	return appendStringSlow(dst, s)
}

// appendStringSlow is appendString of a string that is empty or has a
// byte that is not plain.
func appendStringSlow(dst []byte, s string) []byte {
	if needsQuoting(s) {
		return appendQuoted(dst, s)
	}
	return append(dst, s...)
}

// needsQuoting is slog's needsQuoting (text_handler.go): s is empty, or
// has a space (ASCII or Unicode), '=', '"', a control or non-printing
// character or invalid UTF-8. A backslash alone does not need quoting.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	i := plainPrefix(s)
	if i == len(s) {
		return false
	}
	return needsQuotingSlow(s[i:])
}

// needsQuotingSlow is needsQuoting of a non-empty s that does not start
// with plain ASCII: slog's loop as it is.
func needsQuotingSlow(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !plain[c] {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// plain[c] reports whether the byte c is ASCII that may be written
// unquoted: slog's test "c != '\\' && (c == ' ' || c == '=' ||
// !safeSet[c])" negated, safeSet being encoding/json's (all but the
// controls 0-31, '"' and '\\'; DEL is safe). Bytes from 0x80 are not
// plain: they start a rune that needsQuotingSlow decodes.
var plain = func() (p [256]bool) {
	for c := 0x21; c < utf8.RuneSelf; c++ {
		p[c] = c != '=' && c != '"'
	}
	return p
}()

// Bytes repeated in each byte of a word, for plainPrefix.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix returns len(s) when all the bytes of s are plain, and
// otherwise an index, at or before the first byte that is not, after
// which s starts a rune (the bytes before it are plain ASCII). It reads
// s eight bytes at a time, and a tail of under eight in at most two
// overlapping loads.
func plainPrefix(s string) int {
	n := len(s)
	i := 0
	for ; n-i >= 8; i += 8 {
		w := s[i : i+8] // one load, no bounds checks
		if !plain8(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) {
			return i
		}
	}
	var x uint64 // the bytes of s from i, filled with plain 'a's
	switch r := n - i; {
	case r == 0:
		return n
	case n >= 8: // the last eight bytes, overlapping those checked
		w := s[n-8:]
		x = uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	case r >= 4: // two overlapping fours
		w, v := s[i:i+4], s[n-4:]
		x = uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(v[0])<<32 | uint64(v[1])<<40 | uint64(v[2])<<48 | uint64(v[3])<<56
	default: // one to three: byte by byte
		for ; i < n && plain[s[i]]; i++ {
		}
		return i
	}
	if plain8(x) {
		return n
	}
	return i
}

// plain8 reports whether the eight bytes of x are all plain: none is from
// 0x80 (high bit), under 0x21 (a control or space), '"' or '='. Each test
// is exact for the word as a whole, not for the byte it flags.
func plain8(x uint64) bool {
	under := (x - 0x21*ones) &^ x                      // high bit: a byte under 0x21 (of those under 0x80)
	quote := ((x ^ '"'*ones) - ones) &^ (x ^ '"'*ones) // high bit: a byte equal to '"'
	equal := ((x ^ '='*ones) - ones) &^ (x ^ '='*ones) // high bit: a byte equal to '='
	return (x|under|quote|equal)&highs == 0
}

// appendQuoted appends strconv.Quote(s): printable ASCII as it is (with
// '"' and '\\' escaped), and from the first other byte on, what
// strconv.AppendQuote writes for the rest of s, which begins a rune there.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		if c == '"' || c == '\\' {
			dst = append(dst, '\\', c)
			continue
		}
		n := len(dst)
		dst = strconv.AppendQuote(dst, s[i:]) // with its own opening quote, at n
		return append(dst[:n], dst[n+1:]...)
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendTime appends t as appendRFC3339Millis does, from the cache when t
// is in its second and location.
func (b *buffer) appendTime(dst []byte, t time.Time) []byte {
	if b.n == 0 || t.Unix() != b.sec || t.Location() != b.loc {
		return b.appendTimeSlow(dst, t)
	}
	ms := uint(t.Nanosecond()) / 1e6
	dst = append(dst, b.stamp[:20]...)
	dst = append(dst, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(dst, b.stamp[23:b.n]...)
}

// appendTimeSlow appends t with appendRFC3339Millis and keeps the text in
// the cache when it has the usual shape.
func (b *buffer) appendTimeSlow(dst []byte, t time.Time) []byte {
	n := len(dst)
	dst = appendRFC3339Millis(dst, t)
	s := dst[n:]
	b.n = 0
	if len(s) >= 24 && len(s) <= len(b.stamp) && s[4] == '-' && s[19] == '.' {
		b.n = copy(b.stamp[:], s)
		b.sec, b.loc = t.Unix(), t.Location()
	}
	return dst
}

// appendRFC3339Millis is slog's (handler.go), copied: RFC 3339 with
// exactly three digits of milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	// Format according to time.RFC3339Nano since it is highly optimized,
	// but truncate it to use millisecond resolution.
	// Unfortunately, that format trims trailing 0s, so add 1/10 millisecond
	// to guarantee that there are exactly 4 digits after the period.
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
	return b
}
