package parser

// NOTE: the envelope of one request object. parseObject validates the
// object in the same pass that records its members jsonrpc, method,
// params and id in a Request: it returns a syntax fault (-32700), and
// puts an envelope fault (-32600: a member twice, of the wrong type,
// missing, or nesting past the depth limit) in Request.Err, the first
// one only. Member names as they usually come, unescaped, are known by
// their bytes without a full string scan; others are unquoted first
// (memberOf). Scalar values are scanned here, containers by skip
// (scan.go). A request without jsonrpc is JSON-RPC 1.0 when it has an
// id and positional params, unless Parser.RejectV1.

// Envelope members, as bits of a seen mask.
const (
	memJSONRPC = 1 << iota
	memMethod
	memParams
	memID
)

// memberOf names the envelope member a key denotes, or 0.
func memberOf(key []byte, escaped bool) int {
	if escaped {
		var buf [64]byte
		if len(key) > 6*8 { // no envelope name needs more escaped bytes
			return 0
		}
		key = AppendUnquote(buf[:0], key)
	}
	switch string(key) {
	case "jsonrpc":
		return memJSONRPC
	case "method":
		return memMethod
	case "params":
		return memParams
	case "id":
		return memID
	}
	return 0
}

// parseObject validates the object at b[i] (depth containers enclose it)
// and records its envelope in r. It returns the offset past the object and
// a syntax fault; envelope faults go into r.Err.
func (p *Parser) parseObject(b []byte, i, depth int, r *Request) (int, Error) {
	r.Offset = i
	saved := p.deepAt
	p.deepAt = -1
	depth++
	if depth > p.maxDepth() {
		p.deepAt = i
	}
	n := len(b)
	var (
		seen    int
		version bool
		idBad   bool
		inv     Error // first envelope fault
		f       Error
	)
	i = skipSpace(b, i+1)
	if i < n && b[i] == '}' {
		i++
		goto done
	}
	for {
		if i >= n {
			return i, fault(CodeParseError, n, reasonEOF)
		}
		if b[i] != '"' {
			return i, fault(CodeParseError, i, reasonObjectKey)
		}
		ks := i
		mem := 0
		// The envelope names as they usually come, without escapes:
		// recognized without a full string scan.
		switch rest := b[i+1:]; {
		case len(rest) >= 8 && string(rest[:8]) == `jsonrpc"`:
			mem, i = memJSONRPC, i+9
		case len(rest) >= 7 && string(rest[:7]) == `method"`:
			mem, i = memMethod, i+8
		case len(rest) >= 7 && string(rest[:7]) == `params"`:
			mem, i = memParams, i+8
		case len(rest) >= 3 && string(rest[:3]) == `id"`:
			mem, i = memID, i+4
		default:
			var kesc bool
			if i, kesc, f = scanString(b, i); f.Code != 0 {
				return i, f
			}
			mem = memberOf(b[ks+1:i-1], kesc)
		}
		if i < n && b[i] == ':' {
			i++
		} else {
			i = skipSpace(b, i)
			if i >= n {
				return i, fault(CodeParseError, n, reasonEOF)
			}
			if b[i] != ':' {
				return i, fault(CodeParseError, i, reasonColon)
			}
			i++
		}
		vs := skipSpace(b, i)
		esc := false
		if vs >= n {
			return vs, fault(CodeParseError, n, reasonEOF)
		}
		// Scalars are scanned here; containers by the generic walk.
		switch c := b[vs]; {
		case c == '"':
			if mem == memJSONRPC && n-vs >= 5 && string(b[vs:vs+5]) == `"2.0"` {
				i = vs + 5
			} else if i, esc, f = scanString(b, vs); f.Code != 0 {
				return i, f
			}
		case c == '-' || isDigit(c):
			if i, f = scanNumber(b, vs); f.Code != 0 {
				return i, f
			}
		default:
			if i, f = p.skip(b, vs, depth); f.Code != 0 {
				return i, f
			}
		}
		if mem != 0 {
			v := b[vs:i]
			if seen&mem != 0 {
				reason := reasonDupID
				switch mem {
				case memJSONRPC:
					reason = reasonDupJSONRPC
				case memMethod:
					reason = reasonDupMethod
				case memParams:
					reason = reasonDupParams
				default:
					idBad = true
				}
				if inv.Code == 0 {
					inv = fault(CodeInvalidRequest, ks, reason)
				}
			}
			seen |= mem
			reason := ""
			switch mem {
			case memJSONRPC:
				if version = isVersion2(v); !version {
					reason = reasonVersion
				}
			case memMethod:
				if v[0] == '"' {
					r.Method = v[1 : len(v)-1]
					r.MethodEscaped = esc
				} else {
					r.Method = nil
					reason = reasonMethodType
				}
			case memParams:
				if v[0] == '[' || v[0] == '{' {
					r.Params = v
				} else {
					r.Params = nil
					reason = reasonParamsType
				}
			case memID:
				switch c := v[0]; {
				case c == '"' || c == 'n' || c == '-' || isDigit(c):
					r.ID = v
				default:
					r.ID = nil
					idBad = true
					reason = reasonIDType
				}
			}
			if reason != "" && inv.Code == 0 {
				inv = fault(CodeInvalidRequest, vs, reason)
			}
		}
		i = skipSpace(b, i)
		if i >= n {
			return i, fault(CodeParseError, n, reasonEOF)
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if b[i] == '}' {
			i++
			break
		}
		return i, fault(CodeParseError, i, reasonObjectNext)
	}

done:
	if p.deepAt >= 0 && inv.Code == 0 {
		inv = fault(CodeInvalidRequest, p.deepAt, reasonDepth)
	}
	p.deepAt = saved
	if seen&memJSONRPC == 0 {
		v1 := !p.RejectV1 && seen&memID != 0 && !idBad && len(r.Params) > 0 && r.Params[0] == '['
		if v1 {
			r.Version = Version1
		} else {
			if inv.Code == 0 {
				inv = fault(CodeInvalidRequest, r.Offset, reasonNoVersion)
			}
		}
	}
	if seen&memMethod == 0 && inv.Code == 0 {
		inv = fault(CodeInvalidRequest, r.Offset, reasonNoMethod)
	}
	if idBad {
		r.ID = nil
	}
	if inv.Code != 0 {
		r.Err = inv
		return i, Error{}
	}
	switch r.Version {
	case Version1:
		r.Notification = r.ID[0] == 'n'
	default:
		r.Notification = r.ID == nil
	}
	return i, Error{}
}

// isVersion2 reports whether the JSON value v is the string "2.0".
func isVersion2(v []byte) bool {
	if string(v) == `"2.0"` {
		return true
	}
	if len(v) < 2 || v[0] != '"' || len(v) > 32 {
		return false
	}
	var buf [32]byte
	return string(AppendUnquote(buf[:0], v[1:len(v)-1])) == "2.0"
}
