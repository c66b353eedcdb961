// Package compact appends JSON text without the whitespace outside its
// strings. It is the one piece of handler's encoding that package
// handler/topics needs on its hot path (a message checked and compacted
// once, then sent to many subscriptions) without boxing the bytes in an
// interface, as handler.AppendJSON would: internal to the module, so
// that handler exports no more for it.
package compact

import "github.com/jetrpc/jetrpc/parser"

// Append appends the valid JSON text raw without the whitespace outside
// its strings. raw is not checked: it must be valid. It allocates only
// to grow dst. Safe from any goroutine.
func Append(dst, raw []byte) []byte {
	inStr, esc := false, false
	start := 0
	for i, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

// AppendValid appends raw compacted, as Append does, after checking that
// it is one valid JSON value (parser.Valid); an empty raw is appended as
// null, as handler.Raw encodes it. It returns dst unchanged and false
// for invalid text. Safe from any goroutine.
func AppendValid(dst, raw []byte) ([]byte, bool) {
	if len(raw) == 0 {
		return append(dst, "null"...), true
	}
	if !parser.Valid(raw) {
		return dst, false
	}
	return Append(dst, raw), true
}
