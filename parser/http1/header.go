package http1

import "bytes"

// Header returns the value, OWS-trimmed, of the first field named name
// in head, a complete head that ParseHead accepted (b[:r.HeadLen]). name
// must be lower-case ASCII; field names match it ignoring ASCII case. It
// returns nil when no field has that name, and an empty, non-nil slice
// for a field whose value is empty. It allocates nothing and may run on
// any goroutine. On a head ParseHead did not accept it does not panic,
// but it may miss fields.
// The returned value is valid until head changes and must not be
// modified; copy it to keep it.
func Header(head []byte, name string) []byte {
	f := NewFields(head)
	for n, v, ok := f.Next(); ok; n, v, ok = f.Next() {
		if EqualFold(n, name) {
			return v
		}
	}
	return nil
}

// Fields iterates over the header fields of a head, in order, without
// allocating:
//
//	f := http1.NewFields(head)
//	for name, value, ok := f.Next(); ok; name, value, ok = f.Next() {
//		...
//	}
//
// The zero value has no fields. A Fields is not safe for concurrent use.
type Fields struct {
	b []byte // the lines left, from the start of the next field line; nil when done
}

// NewFields returns an iterator over the fields of head, a complete head
// that ParseHead accepted (b[:r.HeadLen]): it skips the empty lines
// before the start line and the start line itself, so it also reads a
// response head. On other input it does not panic, but it stops at the
// first line that is not a field.
func NewFields(head []byte) Fields {
	i := 0
	for i+1 < len(head) && head[i] == '\r' && head[i+1] == '\n' {
		i += 2
	}
	k := bytes.IndexByte(head[i:], '\n')
	if k < 0 {
		return Fields{}
	}
	return Fields{b: head[i+k+1:]}
}

// Next returns the next field's name, as sent, and value, OWS-trimmed
// (empty, non-nil, when the value is empty). ok is false once the blank
// line that ends the head is reached, and from then on.
// The returned name and value are valid until head changes and must not
// be modified; copy them to keep them.
func (f *Fields) Next() (name, value []byte, ok bool) {
	b := f.b
	k := bytes.IndexByte(b, '\n')
	colon := -1
	if k > 0 {
		colon = bytes.IndexByte(b[:k], ':')
	}
	if colon <= 0 {
		f.b = nil // the blank line, or not a field
		return nil, nil, false
	}
	end := k
	if end > colon+1 && b[end-1] == '\r' {
		end--
	}
	f.b = b[k+1:]
	return b[:colon], TrimOWS(b[colon+1 : end]), true
}
