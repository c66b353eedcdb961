package handler

// NOTE: a paramsPlan is built once per method, at registration, from the
// params type P by reflection. At call time it walks the params with the
// parser's iterators and writes each value straight into the field at its
// offset: hand-coded kinds (kinds.go) inline, others queued in
// state.pending and decoded by sonic afterwards. decode itself never lets
// the destination pointer escape, so that a P made only of hand-coded
// kinds lives on the caller's stack and costs no allocation.

import (
	"reflect"
	"strconv"
	"unsafe"

	"github.com/bytedance/sonic/decoder"
	"github.com/jetrpc/jetrpc/handler/internal/jsonfields"
	"github.com/jetrpc/jetrpc/parser"
)

// shape is how params map onto P.
type shape uint8

const (
	shapeNone   shape = iota // the method takes no params
	shapeStruct              // by position (in field order) or by name (json tags)
	shapeArray               // a Go array of hand-coded kinds, by position
	shapeRaw                 // Raw or json.RawMessage: the value verbatim
	shapeSonic               // slices, maps, interfaces, ...: sonic decodes all
)

// field is one params field of a struct P.
type field struct {
	name     string         // JSON name (exact case)
	label    string         // name for error messages
	offset   uintptr        // offset in P
	kind     vkind          // hand-coded kind, or kSlow
	ptrType  unsafe.Pointer // type word of *T for sonic (kSlow only)
	required bool           // by jsonfields' rule: not a pointer, slice (Raw is not one), map or interface, and not omitempty/omitzero
	quoted   bool           // the ",string" option: the value comes inside a JSON string
}

// paramsPlan says how to decode params into a P. Immutable after build.
type paramsPlan struct {
	shape     shape
	fields    []field        // shapeStruct
	index     map[string]int // shapeStruct with many fields: name → field
	fast      bool           // nothing goes through sonic
	elem      vkind          // shapeArray, shapeRaw
	elemSize  uintptr        // shapeArray
	n         int            // shapeArray: length
	ptrType   unsafe.Pointer // shapeSonic: type word of *P
	wantArray bool           // shapeSonic: params must be an array
	wantObj   bool           // shapeSonic: params must be an object
	tooMany   string         // reason for extra positional params
	labels    []string       // shapeArray: element labels
}

// paramErr says why params do not fit: a label (a field name, an element
// position, or "") and a reason. The zero value means they fit.
type paramErr struct {
	label  string
	reason string
}

func (e paramErr) bad() bool { return e.reason != "" }

// pend is a value left for sonic: a field index (-1 for the whole P) and
// its JSON text.
type pend struct {
	field int
	raw   []byte
}

// efaceWords is the layout of an interface{} value.
type efaceWords struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// typeWord returns the type word of interfaces holding a *t.
func typeWord(t reflect.Type) unsafe.Pointer {
	v := reflect.New(t).Interface()
	return (*efaceWords)(unsafe.Pointer(&v)).typ
}

// packEface builds an interface{} holding the pointer data of the type
// whose type word is typ, without allocating.
func packEface(typ, data unsafe.Pointer) any {
	var v any
	e := (*efaceWords)(unsafe.Pointer(&v))
	e.typ, e.data = typ, data
	return v
}

// buildParams builds the plan for P, or explains why P cannot be params.
func buildParams(t reflect.Type) (*paramsPlan, error) {
	pl := &paramsPlan{}
	switch k := kindOf(t, true); {
	case k == kRaw || k == kRawCopy:
		pl.shape, pl.elem, pl.fast = shapeRaw, k, true
		return pl, nil
	case t.Kind() == reflect.Struct && (reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalType)):
		// The type decodes itself (UnmarshalJSON or UnmarshalText).
		pl.shape, pl.ptrType = shapeSonic, typeWord(t)
		return pl, nil
	case t.Kind() == reflect.Array && t.Len() == 0:
		pl.shape, pl.fast = shapeNone, true
		return pl, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if err := pl.addFields(t); err != nil {
			return nil, err
		}
		if len(pl.fields) == 0 {
			pl.shape, pl.fast = shapeNone, true
			return pl, nil
		}
		pl.shape, pl.fast = shapeStruct, true
		for _, f := range pl.fields {
			if f.kind == kSlow {
				pl.fast = false
			}
		}
		if len(pl.fields) > 8 {
			pl.index = make(map[string]int, len(pl.fields))
			for i, f := range pl.fields {
				pl.index[f.name] = i
			}
		}
		pl.tooMany = "too many params: the method takes " + strconv.Itoa(len(pl.fields))
		return pl, nil
	case reflect.Array:
		if k := kindOf(t.Elem(), true); k != kSlow && k != kRaw && k != kRawCopy {
			pl.shape, pl.fast, pl.elem, pl.n, pl.elemSize = shapeArray, true, k, t.Len(), t.Elem().Size()
			pl.tooMany = "too many params: the method takes " + strconv.Itoa(t.Len())
			for i := range t.Len() {
				pl.labels = append(pl.labels, "param "+strconv.Itoa(i+1))
			}
			return pl, nil
		}
		pl.wantArray = true
	case reflect.Slice:
		pl.wantArray = true
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, typeError(t, "a map params type needs string keys")
		}
		pl.wantObj = true
	case reflect.Interface:
	case reflect.Pointer:
		return nil, typeError(t, "take params by value, not by pointer")
	default:
		return nil, typeError(t, "params must be a struct, an array, a slice, a map, Raw or an interface")
	}
	pl.shape, pl.ptrType = shapeSonic, typeWord(t)
	return pl, nil
}

func typeError(t reflect.Type, why string) error {
	return &typeErr{t: t, why: why}
}

type typeErr struct {
	t   reflect.Type
	why string
}

func (e *typeErr) Error() string { return "jetrpc: unsupported type " + e.t.String() + ": " + e.why }
func (e *typeErr) Unwrap() error { return ErrBadType }

// addFields adds the params fields of struct t: those encoding/json
// fills, by the rule of package jsonfields (handler/internal/jsonfields),
// which handler/openrpc's schemas follow too. An embedded pointer to a
// struct is refused: its fields have no offset in P.
func (pl *paramsPlan) addFields(t reflect.Type) error {
	st := jsonfields.Of(t, rawType, jsonRawType)
	if len(st.Pointers) > 0 {
		p := st.Pointers[0]
		return typeError(p.In, "embedded pointer "+p.Type.String()+" in params: embed the struct by value")
	}
	for _, jf := range st.Fields {
		f := field{
			name:     jf.Name,
			label:    jf.Name,
			offset:   jf.Offset,
			kind:     kindOf(jf.Type, true),
			required: jf.Required,
		}
		if jf.String && f.kind >= kBool && f.kind <= kString {
			f.quoted = true // as encoding/json: only for scalar kinds
		}
		if f.kind == kSlow {
			f.ptrType = typeWord(jf.Type)
		}
		pl.fields = append(pl.fields, f)
	}
	return nil
}

// names returns the field names in order (for discovery).
func (pl *paramsPlan) names() []string {
	var out []string
	for _, f := range pl.fields {
		out = append(out, f.name)
	}
	return out
}

// lookup returns the index of the field named key (exact case), or -1.
func (pl *paramsPlan) lookup(key []byte) int {
	if pl.index != nil {
		if i, ok := pl.index[string(key)]; ok {
			return i
		}
		return -1
	}
	for i := range pl.fields {
		if pl.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

// decode decodes the params raw (nil when absent) into the P at ptr.
// Values for sonic are queued in st.pending. It never lets ptr escape.
func (pl *paramsPlan) decode(st *state, ptr unsafe.Pointer, raw []byte) paramErr {
	switch pl.shape {
	case shapeNone:
		if raw == nil || isEmpty(raw) {
			return paramErr{}
		}
		return paramErr{reason: reasonNoParams}
	case shapeRaw:
		if raw == nil {
			return paramErr{}
		}
		return paramErr{reason: decodeValue(st, pl.elem, ptr, raw)}
	case shapeArray:
		if raw == nil {
			return paramErr{label: pl.labels[0], reason: reasonMissing}
		}
		if raw[0] != '[' {
			return paramErr{reason: reasonWantArray}
		}
		vals := parser.NewValues(raw)
		i := 0
		for v, ok := vals.Next(); ok; v, ok = vals.Next() {
			if i >= pl.n {
				return paramErr{reason: pl.tooMany}
			}
			if r := decodeValue(st, pl.elem, unsafe.Add(ptr, uintptr(i)*pl.elemSize), v); r != "" {
				return paramErr{label: pl.labels[i], reason: r}
			}
			i++
		}
		if i < pl.n {
			return paramErr{label: pl.labels[i], reason: reasonMissing}
		}
		return paramErr{}
	case shapeSonic:
		if raw == nil {
			return paramErr{}
		}
		if pl.wantArray && raw[0] != '[' {
			return paramErr{reason: reasonWantArray}
		}
		if pl.wantObj && raw[0] != '{' {
			return paramErr{reason: reasonWantObject}
		}
		st.pending = append(st.pending, pend{field: -1, raw: raw})
		return paramErr{}
	}
	return pl.decodeStruct(st, ptr, raw)
}

// decodeStruct decodes params by position or by name into the struct at
// ptr and checks that every required field was given.
func (pl *paramsPlan) decodeStruct(st *state, ptr unsafe.Pointer, raw []byte) paramErr {
	nf := len(pl.fields)
	words := (nf + 63) / 64
	if cap(st.seen) < words {
		st.seen = make([]uint64, words)
	}
	seen := st.seen[:words]
	clear(seen)
	switch {
	case raw == nil:
	case raw[0] == '[':
		vals := parser.NewValues(raw)
		i := 0
		for v, ok := vals.Next(); ok; v, ok = vals.Next() {
			if i >= nf {
				return paramErr{reason: pl.tooMany}
			}
			if e := pl.decodeField(st, ptr, i, v); e.bad() {
				return e
			}
			seen[i>>6] |= 1 << (i & 63)
			i++
		}
	default:
		mems := parser.NewMembers(raw)
		for key, esc, v, ok := mems.Next(); ok; key, esc, v, ok = mems.Next() {
			if esc {
				st.keybuf = parser.AppendUnquote(st.keybuf[:0], key)
				key = st.keybuf
			}
			i := pl.lookup(key)
			if i < 0 {
				continue // unknown members are ignored
			}
			if e := pl.decodeField(st, ptr, i, v); e.bad() {
				return e
			}
			seen[i>>6] |= 1 << (i & 63)
		}
	}
	for i := range pl.fields {
		if pl.fields[i].required && seen[i>>6]&(1<<(i&63)) == 0 {
			return paramErr{label: pl.fields[i].label, reason: reasonMissing}
		}
	}
	return paramErr{}
}

func (pl *paramsPlan) decodeField(st *state, ptr unsafe.Pointer, i int, v []byte) paramErr {
	f := &pl.fields[i]
	if f.kind == kSlow {
		st.pending = append(st.pending, pend{field: i, raw: v})
		return paramErr{}
	}
	if f.quoted && v[0] != 'n' {
		if v[0] != '"' {
			return paramErr{label: f.label, reason: reasonWantQuoted}
		}
		st.quoted = parser.AppendUnquote(st.quoted[:0], v[1:len(v)-1])
		v = st.quoted
		if len(v) == 0 || (f.kind == kString && !parser.Valid(v)) {
			return paramErr{label: f.label, reason: reasonWantQuoted}
		}
	}
	if r := decodeValue(st, f.kind, unsafe.Add(ptr, f.offset), v); r != "" {
		return paramErr{label: f.label, reason: r}
	}
	return paramErr{}
}

// decodePending decodes the values queued by decode with sonic. ptr must
// point to heap memory: sonic keeps it in its own state.
func (pl *paramsPlan) decodePending(st *state, ptr unsafe.Pointer) paramErr {
	defer func() { clear(st.pending); st.pending = st.pending[:0] }()
	for _, pd := range st.pending {
		var target any
		label := ""
		if pd.field < 0 {
			target = packEface(pl.ptrType, ptr)
		} else {
			f := &pl.fields[pd.field]
			target = packEface(f.ptrType, unsafe.Add(ptr, f.offset))
			label = f.label
		}
		st.dec.Reset(unsafe.String(unsafe.SliceData(pd.raw), len(pd.raw)))
		st.decoded = true
		if err := st.dec.Decode(target); err != nil {
			return paramErr{label: label, reason: sonicReason(err)}
		}
	}
	return paramErr{}
}

// sonicReason shortens a sonic decode error to a reason.
func sonicReason(err error) string {
	if e, ok := err.(decoder.MismatchTypeError); ok {
		return "expected " + e.Type.String()
	}
	if e, ok := err.(*decoder.MismatchTypeError); ok {
		return "expected " + e.Type.String()
	}
	return reasonBadValue
}

// isEmpty reports whether raw is an empty array or object.
func isEmpty(raw []byte) bool {
	if len(raw) < 2 {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
