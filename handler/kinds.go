package handler

// NOTE: this file holds the value kinds that jetrpc decodes and encodes by
// hand, with no reflection and no allocation per call: booleans, integers,
// floats, strings and raw JSON. Everything else goes through sonic. Which
// kind a Go type has is decided once, at registration (kindOf).

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/jetrpc/jetrpc/parser"
)

// Raw is JSON text passed through verbatim.
//
// As a params type (or a params field) it receives the JSON value as it
// came, without decoding; it is valid until the handler returns and must
// not be modified; copy it to keep it. A params field of type Raw is a
// JSON value, not a list: it is required unless tagged omitempty or
// omitzero (a *Raw field is optional), and a null given for it is the
// text null.
// Inside params that sonic decodes (an element of a slice, a field of a
// nested struct) it receives a copy of the value.
//
// In a result, wherever it appears (the result itself, a struct field, an
// element, a map value, behind a pointer), it is written into the reply as
// it is, compacted, after a check that it is one valid JSON value; an
// empty Raw is written as null. A Raw that is not valid JSON fails the
// call with -32603 rather than sending a broken reply.
type Raw []byte

// errInvalidRaw is the error of Raw.MarshalJSON for text that is not one
// valid JSON value; a result that holds such a Raw is answered with
// reasonInvalidRaw.
var errInvalidRaw = errors.New("jetrpc: raw JSON is not one valid JSON value")

// MarshalJSON returns r itself, after checking that it is one valid JSON
// value (with valid UTF-8), or null when r is empty: a Raw inside a value
// that sonic or encoding/json encodes is written verbatim, not as base64.
// The returned slice is r; it must not be modified.
func (r Raw) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	if !parser.Valid(r) {
		return nil, errInvalidRaw
	}
	return r, nil
}

// UnmarshalJSON sets *r to a copy of data, so that a Raw inside params
// that sonic or encoding/json decodes receives the JSON value verbatim,
// not base64.
func (r *Raw) UnmarshalJSON(data []byte) error {
	*r = append((*r)[:0], data...)
	return nil
}

// JSONAppender is implemented by result types that write their own JSON.
// AppendJSON appends one valid JSON value to dst and returns the extended
// buffer; jetrpc trusts it and does not validate it. It is called for a
// method's result R (R or *R implementing it) and for Notify's params,
// not for a JSONAppender inside them, which sonic encodes.
//
// No reflection sees what AppendJSON writes: to be described by an
// OpenRPC document (package handler/openrpc), such a type declares its
// JSON Schema with a method JSONSchemaText() string (openrpc's
// SchemaDeclarer) or the document is given it (openrpc.WithTypeSchema);
// otherwise the document is not built.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// vkind is a kind of value coded by hand.
type vkind uint8

const (
	kSlow vkind = iota // through sonic
	kBool
	kInt
	kInt8
	kInt16
	kInt32
	kInt64
	kUint
	kUint8
	kUint16
	kUint32
	kUint64
	kFloat32
	kFloat64
	kString
	kRaw     // Raw: aliases the message
	kRawCopy // json.RawMessage: copied
)

var (
	rawType           = reflect.TypeFor[Raw]()
	jsonRawType       = reflect.TypeFor[json.RawMessage]()
	unmarshalerType   = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	appenderType      = reflect.TypeFor[JSONAppender]()
)

// kindOf returns the hand-coded kind of t, or kSlow. decoding selects the
// rules for params (Unmarshalers) rather than results (Marshalers).
func kindOf(t reflect.Type, decoding bool) vkind {
	switch t {
	case rawType:
		return kRaw
	case jsonRawType:
		return kRawCopy
	}
	pt := reflect.PointerTo(t)
	if decoding && (pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalType)) {
		return kSlow
	}
	if !decoding && (t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		pt.Implements(marshalerType) || pt.Implements(textMarshalerType) || pt.Implements(appenderType)) {
		return kSlow
	}
	switch t.Kind() {
	case reflect.Bool:
		return kBool
	case reflect.Int:
		return kInt
	case reflect.Int8:
		return kInt8
	case reflect.Int16:
		return kInt16
	case reflect.Int32:
		return kInt32
	case reflect.Int64:
		return kInt64
	case reflect.Uint:
		return kUint
	case reflect.Uint8:
		return kUint8
	case reflect.Uint16:
		return kUint16
	case reflect.Uint32:
		return kUint32
	case reflect.Uint64:
		return kUint64
	case reflect.Float32:
		return kFloat32
	case reflect.Float64:
		return kFloat64
	case reflect.String:
		return kString
	}
	return kSlow
}

// Reasons for params that do not fit. Constants: no allocation.
const (
	reasonWantBool   = "expected a boolean"
	reasonWantInt    = "expected an integer"
	reasonWantUint   = "expected a non-negative integer"
	reasonIntRange   = "integer out of range"
	reasonWantNumber = "expected a number"
	reasonFloatRange = "number out of range"
	reasonWantString = "expected a string"
	reasonMissing    = "missing required param"
	reasonWantArray  = "params must be an array"
	reasonWantObject = "params must be an object"
	reasonNoParams   = "the method takes no params"
	reasonBadValue   = "invalid value"
	reasonNotFinite  = "result is not a finite number"
	reasonInvalidRaw = "raw result is not valid JSON"
	reasonPanicked   = "encoding the result panicked"
	reasonWantQuoted = "expected a value quoted in a string (json tag option \"string\")"
)

// decodeValue decodes the JSON value raw into the value of kind k at ptr.
// It returns "" or the reason the value does not fit. It never lets ptr
// escape, so that params can live on the caller's stack. A null leaves the
// value unchanged, as encoding/json does.
func decodeValue(st *state, k vkind, ptr unsafe.Pointer, raw []byte) string {
	switch k {
	case kRaw:
		*(*Raw)(ptr) = raw
		return ""
	case kRawCopy:
		*(*json.RawMessage)(ptr) = append(json.RawMessage(nil), raw...)
		return ""
	}
	if len(raw) == 0 {
		return reasonBadValue
	}
	if raw[0] == 'n' {
		return "" // null
	}
	switch k {
	case kBool:
		switch string(raw) {
		case "true":
			*(*bool)(ptr) = true
		case "false":
			*(*bool)(ptr) = false
		default:
			return reasonWantBool
		}
	case kInt, kInt8, kInt16, kInt32, kInt64:
		v, reason := parseInt(raw)
		if reason != "" {
			return reason
		}
		switch k {
		case kInt:
			*(*int)(ptr) = int(v)
		case kInt8:
			if v < math.MinInt8 || v > math.MaxInt8 {
				return reasonIntRange
			}
			*(*int8)(ptr) = int8(v)
		case kInt16:
			if v < math.MinInt16 || v > math.MaxInt16 {
				return reasonIntRange
			}
			*(*int16)(ptr) = int16(v)
		case kInt32:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return reasonIntRange
			}
			*(*int32)(ptr) = int32(v)
		default:
			*(*int64)(ptr) = v
		}
	case kUint, kUint8, kUint16, kUint32, kUint64:
		v, reason := parseUint(raw)
		if reason != "" {
			return reason
		}
		switch k {
		case kUint:
			*(*uint)(ptr) = uint(v)
		case kUint8:
			if v > math.MaxUint8 {
				return reasonIntRange
			}
			*(*uint8)(ptr) = uint8(v)
		case kUint16:
			if v > math.MaxUint16 {
				return reasonIntRange
			}
			*(*uint16)(ptr) = uint16(v)
		case kUint32:
			if v > math.MaxUint32 {
				return reasonIntRange
			}
			*(*uint32)(ptr) = uint32(v)
		default:
			*(*uint64)(ptr) = v
		}
	case kFloat32, kFloat64:
		if c := raw[0]; c != '-' && (c < '0' || c > '9') {
			return reasonWantNumber
		}
		bits := 64
		if k == kFloat32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), bits)
		if err != nil {
			return reasonFloatRange
		}
		if k == kFloat32 {
			*(*float32)(ptr) = float32(f)
		} else {
			*(*float64)(ptr) = f
		}
	case kString:
		if raw[0] != '"' || len(raw) < 2 {
			return reasonWantString
		}
		s := raw[1 : len(raw)-1]
		for _, c := range s {
			if c == '\\' {
				st.scratch = parser.AppendUnquote(st.scratch[:0], s)
				s = st.scratch
				break
			}
		}
		*(*string)(ptr) = string(s)
	default:
		return reasonBadValue
	}
	return ""
}

// parseInt parses a JSON number that must be an integer fitting int64.
func parseInt(b []byte) (int64, string) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, reason := parseDigits(b, reasonWantInt)
	if reason != "" {
		return 0, reason
	}
	if neg {
		if u > 1<<63 {
			return 0, reasonIntRange
		}
		return -int64(u), ""
	}
	if u > math.MaxInt64 {
		return 0, reasonIntRange
	}
	return int64(u), ""
}

// parseUint parses a JSON number that must be a non-negative integer.
func parseUint(b []byte) (uint64, string) {
	if b[0] == '-' {
		return 0, reasonWantUint // even -0, as encoding/json
	}
	return parseDigits(b, reasonWantUint)
}

// parseDigits parses decimal digits into a uint64.
func parseDigits(b []byte, want string) (uint64, string) {
	if len(b) == 0 {
		return 0, want
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, want // a fraction, an exponent or not a number
		}
		if u > math.MaxUint64/10 {
			return 0, reasonIntRange
		}
		u *= 10
		d := uint64(c - '0')
		if u > math.MaxUint64-d {
			return 0, reasonIntRange
		}
		u += d
	}
	return u, ""
}

// appendValue appends the JSON encoding of the value of kind k at ptr. It
// returns "" or the reason it cannot be encoded. It never lets ptr escape.
func appendValue(dst []byte, k vkind, ptr unsafe.Pointer) ([]byte, string) {
	switch k {
	case kBool:
		if *(*bool)(ptr) {
			return append(dst, "true"...), ""
		}
		return append(dst, "false"...), ""
	case kInt:
		return strconv.AppendInt(dst, int64(*(*int)(ptr)), 10), ""
	case kInt8:
		return strconv.AppendInt(dst, int64(*(*int8)(ptr)), 10), ""
	case kInt16:
		return strconv.AppendInt(dst, int64(*(*int16)(ptr)), 10), ""
	case kInt32:
		return strconv.AppendInt(dst, int64(*(*int32)(ptr)), 10), ""
	case kInt64:
		return strconv.AppendInt(dst, *(*int64)(ptr), 10), ""
	case kUint:
		return strconv.AppendUint(dst, uint64(*(*uint)(ptr)), 10), ""
	case kUint8:
		return strconv.AppendUint(dst, uint64(*(*uint8)(ptr)), 10), ""
	case kUint16:
		return strconv.AppendUint(dst, uint64(*(*uint16)(ptr)), 10), ""
	case kUint32:
		return strconv.AppendUint(dst, uint64(*(*uint32)(ptr)), 10), ""
	case kUint64:
		return strconv.AppendUint(dst, *(*uint64)(ptr), 10), ""
	case kFloat32:
		return appendFloat(dst, float64(*(*float32)(ptr)), 32)
	case kFloat64:
		return appendFloat(dst, *(*float64)(ptr), 64)
	case kString:
		return parser.AppendQuote(dst, *(*string)(ptr)), ""
	case kRaw, kRawCopy:
		return appendRaw(dst, *(*[]byte)(ptr))
	}
	return dst, reasonBadValue
}

// appendFloat formats f the way encoding/json does.
func appendFloat(dst []byte, f float64, bits int) ([]byte, string) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, reasonNotFinite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, ""
}
