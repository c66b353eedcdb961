package http1

// MediaRanges iterates over the media ranges of an Accept field value
// (RFC 9110 12.5.1): `type/subtype` or `type/*` or `*/*`, each with
// parameters, one of which may be its weight (q). It allocates nothing;
// the slices it returns are views of the value.
type MediaRanges struct {
	rest    []byte
	bad     bool
	lenient bool
}

// NewMediaRanges returns the iterator over the Accept value v, which
// stops at the first element that is not a media range.
func NewMediaRanges(v []byte) MediaRanges { return MediaRanges{rest: v} }

// NewLenientMediaRanges returns an iterator over the Accept value v that
// passes over the elements that are not media ranges (Malformed then
// reports true) and reads a weight written loosely but plainly, such as
// Java's HttpURLConnection sends ("q=.2", "q=0.2500"), as it is meant:
// what a server may do with an Accept it cannot use whole (RFC 9110
// 12.5.1 lets it disregard the field).
func NewLenientMediaRanges(v []byte) MediaRanges { return MediaRanges{rest: v, lenient: true} }

// Next returns the next media range: its type and subtype as written
// (compare them with EqualFold) and its weight in thousandths (1000
// without a q parameter, 0 for q=0). ok is false at the end of the list,
// or where the list is malformed (unless lenient): Malformed then
// reports true. Empty elements (",,") are skipped, as RFC 9110 5.6.1
// asks.
func (m *MediaRanges) Next() (typ, sub []byte, q int, ok bool) {
	for len(m.rest) > 0 {
		b := m.rest
		var end int
		typ, sub, q, end, ok = m.element(b)
		if ok {
			m.rest = b[end:]
			return typ, sub, q, true
		}
		if end < 0 {
			break // only empty elements were left
		}
		m.bad = true
		if !m.lenient {
			break
		}
		m.rest = b[elementEnd(b, end):]
	}
	m.rest = nil
	return nil, nil, 0, false
}

// element parses the first element of b: the range and the index of
// the comma (or end) after it, or ok false and the index where it is
// malformed; a list of empty elements gives ok false and -1.
func (m *MediaRanges) element(b []byte) (typ, sub []byte, q, end int, ok bool) {
	i := skipSpaceAndCommas(b, 0)
	if i == len(b) {
		return nil, nil, 0, -1, false
	}
	t := tokenEnd(b, i)
	if t == i || t == len(b) || b[t] != '/' {
		return nil, nil, 0, t, false
	}
	s := tokenEnd(b, t+1)
	if s == t+1 {
		return nil, nil, 0, s, false
	}
	typ, sub, q = b[i:t], b[t+1:s], 1000
	if typ[0] == '*' && (len(typ) != 1 || len(sub) != 1 || sub[0] != '*') || sub[0] == '*' && len(sub) != 1 {
		return nil, nil, 0, s, false // "*/json", "text/*x"
	}
	i = skipOWS(b, s)
	for i < len(b) && b[i] == ';' {
		i = skipOWS(b, i+1)
		if i == len(b) || b[i] == ';' || b[i] == ',' {
			continue // an empty parameter
		}
		n := tokenEnd(b, i)
		if n == i || n == len(b) || b[n] != '=' {
			return nil, nil, 0, n, false
		}
		name := b[i:n]
		v := n + 1
		var stop int
		if v < len(b) && b[v] == '"' {
			if stop = quotedEnd(b, v); stop < 0 {
				return nil, nil, 0, len(b), false
			}
		} else if stop = tokenEnd(b, v); stop == v {
			return nil, nil, 0, v, false
		}
		if len(name) == 1 && name[0]|0x20 == 'q' {
			var good bool
			if q, good = ParseQ(b[v:stop]); !good && m.lenient {
				q, good = looseQ(b[v:stop])
			}
			if !good {
				return nil, nil, 0, stop, false
			}
		}
		i = skipOWS(b, stop)
	}
	if i < len(b) && b[i] != ',' {
		return nil, nil, 0, i, false
	}
	return typ, sub, q, i, true
}

// elementEnd returns the index of the comma that ends the element in
// which b[i] stands (quoted strings passed over), or len(b).
func elementEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case ',':
			return i
		case '"':
			e := quotedEnd(b, i)
			if e < 0 {
				return len(b)
			}
			i = e - 1
		}
	}
	return len(b)
}

// looseQ reads a weight written loosely: digits with at most one point,
// "0" or "1" or nothing before it ("q=.2", "q=0.2500"), from 0 to 1.
func looseQ(v []byte) (q int, ok bool) {
	whole, frac, point := v, []byte(nil), false
	for k, c := range v {
		if c == '.' {
			whole, frac, point = v[:k], v[k+1:], true
			break
		}
	}
	if len(whole) > 1 || len(whole) == 1 && whole[0] != '0' && whole[0] != '1' || !point && len(whole) == 0 {
		return 0, false
	}
	if len(whole) == 1 {
		q = int(whole[0]-'0') * 1000
	}
	scale := 100
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, false
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	return q, q <= 1000
}

// Malformed reports whether Next met an element that is not a media
// range: it stopped there, or, lenient, passed over it.
func (m *MediaRanges) Malformed() bool { return m.bad }

// ParseQ parses a qvalue (RFC 9110 12.4.2: "0" to "1", with up to three
// decimals: "0.5", "1.000") into thousandths; ok is false when v is not
// one.
func ParseQ(v []byte) (q int, ok bool) {
	if len(v) == 0 || len(v) > 5 || v[0] != '0' && v[0] != '1' {
		return 0, false
	}
	n := int(v[0]-'0') * 1000
	if len(v) > 1 {
		if v[1] != '.' {
			return 0, false
		}
		scale := 100
		for _, c := range v[2:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			n += int(c-'0') * scale
			scale /= 10
		}
	}
	if n > 1000 {
		return 0, false // "1.5": past 1
	}
	return n, true
}

// tokenEnd returns the index of the first byte at or after i that is not
// a tchar.
func tokenEnd(b []byte, i int) int {
	for i < len(b) && tchar[b[i]] {
		i++
	}
	return i
}

// skipOWS returns the index of the first byte at or after i that is not
// a space or a tab.
func skipOWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// skipSpaceAndCommas skips whitespace and empty list elements.
func skipSpaceAndCommas(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == ',') {
		i++
	}
	return i
}

// quotedEnd returns the index just past the quoted-string (RFC 9110
// 5.6.4) that starts at b[i] (a DQUOTE), or -1 when it is not one.
func quotedEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i++; i == len(b) || b[i] < 0x20 && b[i] != '\t' || b[i] == 0x7f {
				return -1
			}
		case c < 0x20 && c != '\t' || c == 0x7f:
			return -1
		}
	}
	return -1
}
