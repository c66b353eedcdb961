package handler

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/bytedance/sonic/encoder"
	"github.com/jetrpc/jetrpc/handler/internal/compact"
)

// resultPlan says how to encode a result type R. Immutable after build.
type resultPlan struct {
	kind     vkind   // hand-coded scalar kind, or kSlow
	seq      bool    // a slice or array of a hand-coded kind
	array    int     // length when seq is an array; -1 for a slice
	elem     vkind   // seq: element kind
	elemSize uintptr // seq: element size
	appender bool    // R or *R implements JSONAppender
	null     bool    // no result: always null
	pointer  bool    // R is a pointer type
}

// fast reports whether appendFast can encode R.
func (rp *resultPlan) fast() bool { return rp.null || rp.kind != kSlow || rp.seq }

// buildResult builds the plan for R.
func buildResult(t reflect.Type) (*resultPlan, error) {
	rp := &resultPlan{array: -1, pointer: t.Kind() == reflect.Pointer}
	if t == noResultType {
		rp.null = true
		return rp, nil
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return nil, typeError(t, "a result must be encodable as JSON")
	}
	if t.Implements(appenderType) || reflect.PointerTo(t).Implements(appenderType) {
		rp.appender = true
		return rp, nil
	}
	rp.kind = kindOf(t, false)
	if rp.kind != kSlow {
		return rp, nil
	}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return rp, nil // byte slices are base64 in JSON: sonic does it
		}
		if k := kindOf(t.Elem(), false); k != kSlow {
			rp.seq, rp.elem, rp.elemSize = true, k, t.Elem().Size()
			if t.Kind() == reflect.Array {
				rp.array = t.Len()
			}
		}
	}
	return rp, nil
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// appendFast encodes the R at ptr, which fast() must allow. It returns ""
// or the reason the value cannot be encoded. It never lets ptr escape.
func (rp *resultPlan) appendFast(dst []byte, ptr unsafe.Pointer) ([]byte, string) {
	switch {
	case rp.null:
		return append(dst, "null"...), ""
	case !rp.seq:
		return appendValue(dst, rp.kind, ptr)
	}
	n := rp.array
	data := ptr
	if n < 0 {
		h := (*sliceHeader)(ptr)
		if h.data == nil {
			return append(dst, "null"...), ""
		}
		n, data = h.len, h.data
	}
	dst = append(dst, '[')
	var reason string
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, reason = appendValue(dst, rp.elem, unsafe.Add(data, uintptr(i)*rp.elemSize)); reason != "" {
			return dst, reason
		}
	}
	return append(dst, ']'), ""
}

// sonicOptions: compact output (a reply never holds a raw newline), and
// invalid UTF-8 in strings corrected, so that every reply is valid JSON.
const sonicOptions = encoder.CompactMarshaler | encoder.ValidateString

// appendSlow encodes v (a *R, or an R that is a pointer) with its
// AppendJSON method or sonic.
func (rp *resultPlan) appendSlow(st *state, dst []byte, v any, direct any) (out []byte, reason string) {
	// AppendJSON and MarshalJSON are the user's code: a panic there is a
	// failed call, not a crash.
	defer func() {
		if recover() != nil {
			out, reason = dst, reasonPanicked
		}
	}()
	if rp.appender {
		a, ok := v.(JSONAppender)
		if !ok {
			a, ok = direct.(JSONAppender)
		}
		if ok {
			out, err := a.AppendJSON(dst)
			if err != nil {
				return dst, reasonBadValue
			}
			return out, ""
		}
	}
	st.enc = st.enc[:0]
	if err := encoder.EncodeInto(&st.enc, v, sonicOptions); err != nil {
		if errors.Is(err, errInvalidRaw) {
			return dst, reasonInvalidRaw // a Raw inside the result
		}
		return dst, reasonBadValue
	}
	return append(dst, st.enc...), ""
}

// appendRaw appends raw JSON text after checking it, compacted.
func appendRaw(dst, raw []byte) ([]byte, string) {
	out, ok := compact.AppendValid(dst, raw)
	if !ok {
		return dst, reasonInvalidRaw
	}
	return out, ""
}
