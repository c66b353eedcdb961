package http1

// MediaRanges iterates over the media ranges of an Accept field value
// (RFC 9110 12.5.1): `type/subtype` or `type/*` or `*/*`, each with
// parameters, one of which may be its weight (q). It allocates nothing;
// the slices it returns are views of the value.
type MediaRanges struct {
	rest []byte
	bad  bool
}

// NewMediaRanges returns the iterator over the Accept value v.
func NewMediaRanges(v []byte) MediaRanges { return MediaRanges{rest: v} }

// Next returns the next media range: its type and subtype as written
// (compare them with EqualFold) and its weight in thousandths (1000
// without a q parameter, 0 for q=0). ok is false at the end of the list,
// or where the list is malformed: Malformed then reports true. Empty
// elements (",,") are skipped, as RFC 9110 5.6.1 asks.
func (m *MediaRanges) Next() (typ, sub []byte, q int, ok bool) {
	b := m.rest
	i := skipSpaceAndCommas(b, 0)
	if i == len(b) || m.bad {
		m.rest = nil
		return nil, nil, 0, false
	}
	t := tokenEnd(b, i)
	if t == i || t == len(b) || b[t] != '/' {
		return m.fail()
	}
	s := tokenEnd(b, t+1)
	if s == t+1 {
		return m.fail()
	}
	typ, sub, q = b[i:t], b[t+1:s], 1000
	if typ[0] == '*' && (len(typ) != 1 || len(sub) != 1 || sub[0] != '*') || sub[0] == '*' && len(sub) != 1 {
		return m.fail() // "*/json", "text/*x"
	}
	i = skipOWS(b, s)
	for i < len(b) && b[i] == ';' {
		i = skipOWS(b, i+1)
		if i == len(b) || b[i] == ';' || b[i] == ',' {
			continue // an empty parameter
		}
		n := tokenEnd(b, i)
		if n == i || n == len(b) || b[n] != '=' {
			return m.fail()
		}
		name := b[i:n]
		v := n + 1
		var end int
		if v < len(b) && b[v] == '"' {
			if end = quotedEnd(b, v); end < 0 {
				return m.fail()
			}
		} else if end = tokenEnd(b, v); end == v {
			return m.fail()
		}
		if len(name) == 1 && name[0]|0x20 == 'q' {
			var good bool
			if q, good = ParseQ(b[v:end]); !good {
				return m.fail()
			}
		}
		i = skipOWS(b, end)
	}
	if i < len(b) && b[i] != ',' {
		return m.fail()
	}
	m.rest = b[i:]
	return typ, sub, q, true
}

// Malformed reports whether Next stopped at a malformed element.
func (m *MediaRanges) Malformed() bool { return m.bad }

func (m *MediaRanges) fail() (typ, sub []byte, q int, ok bool) {
	m.bad, m.rest = true, nil
	return nil, nil, 0, false
}

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
