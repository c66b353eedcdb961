package parser

import "math"

// Valid reports whether b is exactly one valid JSON value (RFC 8259, UTF-8
// only), surrounding whitespace allowed, with no limit on nesting.
func Valid(b []byte) bool {
	p := Parser{MaxDepth: math.MaxInt, deepAt: -1}
	end, f := p.skip(b, 0, 0)
	if f.Code == 0 {
		f = trailing(b, end)
	}
	return f.Code == 0
}

// Values iterates the elements of a JSON array that has been validated,
// such as Request.Params, without validating them again. On text that is
// not valid JSON it does not panic or loop, but what it yields is
// undefined.
type Values struct {
	b []byte
	i int
}

// NewValues returns an iterator over the elements of the array arr
// (arr[0] must be '[', after optional whitespace).
func NewValues(arr []byte) Values {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return Values{}
	}
	return Values{b: arr, i: i + 1}
}

// Next returns the next element and true, or nil and false at the end.
//
// The returned element is valid until the array is modified and must not
// be modified; copy it to keep it.
func (v *Values) Next() ([]byte, bool) {
	b := v.b
	i := skipSpace(b, v.i)
	if i >= len(b) || b[i] == ']' {
		v.b = nil
		return nil, false
	}
	end := skipValid(b, i)
	if end <= i {
		v.b = nil
		return nil, false
	}
	elem := b[i:end]
	end = skipSpace(b, end)
	if end < len(b) && b[end] == ',' {
		end++
	}
	v.i = end
	return elem, true
}

// Members iterates the members of a JSON object that has been validated,
// such as Request.Params, without validating them again. On text that is
// not valid JSON it does not panic or loop, but what it yields is
// undefined.
type Members struct {
	b []byte
	i int
}

// NewMembers returns an iterator over the members of the object obj
// (obj[0] must be '{', after optional whitespace).
func NewMembers(obj []byte) Members {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return Members{}
	}
	return Members{b: obj, i: i + 1}
}

// Next returns the next member: its key (the content between the quotes,
// escapes not decoded), whether the key holds escapes, and its value.
// ok is false at the end.
//
// The returned key and value are valid until the object is modified and
// must not be modified; copy them to keep them.
func (m *Members) Next() (key []byte, escaped bool, value []byte, ok bool) {
	b := m.b
	i := skipSpace(b, m.i)
	if i >= len(b) || b[i] != '"' {
		m.b = nil
		return nil, false, nil, false
	}
	ke := stringEnd(b, i)
	key = b[i+1 : max(ke-1, i+1)]
	for _, c := range key {
		if c == '\\' {
			escaped = true
			break
		}
	}
	i = skipSpace(b, ke)
	if i >= len(b) || b[i] != ':' {
		m.b = nil
		return nil, false, nil, false
	}
	i = skipSpace(b, i+1)
	end := skipValid(b, i)
	if end <= i {
		m.b = nil
		return nil, false, nil, false
	}
	value = b[i:end]
	end = skipSpace(b, end)
	if end < len(b) && b[end] == ',' {
		end++
	}
	m.i = end
	return key, escaped, value, true
}

// stringEnd returns the offset past the closing quote of the string whose
// opening quote is at b[i], or len(b).
func stringEnd(b []byte, i int) int {
	i++
	for i < len(b) {
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return len(b)
}

// skipValid returns the offset past the value that starts at b[i],
// assuming valid JSON.
func skipValid(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', ']', '}', ':':
			return i
		}
		i++
	}
	return i
}
