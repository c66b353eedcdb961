package handler

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/bytedance/sonic/encoder"
	"github.com/jetrpc/jetrpc/parser"
)

// Replies are written by appending to a caller's buffer, member order
// jsonrpc, result|error, id, compact. The id is copied byte for byte from
// the request; an absent id is written as null.

func appendID(dst, id []byte) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// appendResultHead starts a success reply, up to the result value.
func appendResultHead(dst []byte, v parser.Version) []byte {
	if v == parser.Version1 {
		return append(dst, `{"result":`...)
	}
	return append(dst, `{"jsonrpc":"2.0","result":`...)
}

// appendReplyTail ends a success reply after the result value.
func appendReplyTail(dst, id []byte, v parser.Version) []byte {
	if v == parser.Version1 {
		dst = append(dst, `,"error":null,"id":`...)
	} else {
		dst = append(dst, `,"id":`...)
	}
	dst = appendID(dst, id)
	return append(dst, '}')
}

// appendErrorStart starts an error reply, up to the content of the
// message string.
func appendErrorStart(dst []byte, v parser.Version, code parser.Code) []byte {
	if v == parser.Version1 {
		dst = append(dst, `{"result":null,"error":{"code":`...)
	} else {
		dst = append(dst, `{"jsonrpc":"2.0","error":{"code":`...)
	}
	dst = strconv.AppendInt(dst, int64(code), 10)
	return append(dst, `,"message":"`...)
}

// appendErrorEnd ends an error reply after the message content: data (a
// JSON value, or nil for none) and id.
func appendErrorEnd(dst, data, id []byte) []byte {
	dst = append(dst, '"')
	if data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	dst = append(dst, `},"id":`...)
	dst = appendID(dst, id)
	return append(dst, '}')
}

// appendErrorReply appends a whole error reply whose message is msg, or
// "msg: detail" when detail is not empty.
func appendErrorReply(dst, id []byte, v parser.Version, code parser.Code, msg, detail string, data []byte) []byte {
	dst = appendErrorStart(dst, v, code)
	dst = parser.AppendEscaped(dst, msg)
	if detail != "" {
		dst = append(dst, ": "...)
		dst = parser.AppendEscaped(dst, detail)
	}
	return appendErrorEnd(dst, data, id)
}

// AppendFault appends the reply to a parser fault f: -32700 or -32600,
// the reason and the byte offset in the message ("Parse error: invalid
// number (offset 12)"), with id (nil: null). The offset goes in the
// message, not in data, because the spec's replies to these faults have
// no data member. Transports use it for the faults they meet before a
// message reaches the table (parser.FrameFault: a stream that cannot be
// framed); it is the one writer of these replies.
func AppendFault(dst, id []byte, f *parser.Error) []byte {
	code := parser.Code(f.Code)
	dst = appendErrorStart(dst, parser.Version2, code)
	dst = append(dst, code.String()...)
	dst = append(dst, ": "...)
	dst = parser.AppendEscaped(dst, f.Reason)
	dst = append(dst, " (offset "...)
	dst = strconv.AppendInt(dst, int64(f.Offset), 10)
	dst = append(dst, ')')
	return appendErrorEnd(dst, nil, id)
}

// appendParamsError answers params that do not fit: -32602 naming the
// param and the reason.
func appendParamsError(dst, id []byte, v parser.Version, e paramErr) []byte {
	dst = appendErrorStart(dst, v, parser.CodeInvalidParams)
	dst = append(dst, "Invalid params: "...)
	if e.label != "" {
		dst = parser.AppendEscaped(dst, e.label)
		dst = append(dst, ": "...)
	}
	dst = parser.AppendEscaped(dst, e.reason)
	return appendErrorEnd(dst, nil, id)
}

// asError finds an *Error in err's chain.
func asError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// appendHandlerError answers an error returned by a method.
func (t *Table) appendHandlerError(st *state, dst []byte, req *parser.Request, err error) []byte {
	e := asError(err)
	if e == nil {
		code := ErrorCode(err)
		detail := ""
		if t.opts.ExposeErrors && code == parser.CodeInternalError {
			detail = err.Error()
		}
		return appendErrorReply(dst, req.ID, req.Version, code, code.String(), detail, nil)
	}
	var data []byte
	if e.Data != nil {
		var reason string
		if data, reason = appendData(st, e.Data); reason != "" {
			t.opts.Logger.Error("jetrpc: error data not encodable", "method", string(req.Method), "reason", reason)
			data = nil
		}
	}
	return appendErrorReply(dst, req.ID, req.Version, e.Code, e.message(), "", data)
}

// appendData encodes the data of an *Error into st.enc.
func appendData(st *state, v any) ([]byte, string) {
	reason := ""
	switch d := v.(type) {
	case Raw:
		st.enc, reason = appendRaw(st.enc[:0], d)
	case json.RawMessage:
		st.enc, reason = appendRaw(st.enc[:0], d)
	case string:
		st.enc = parser.AppendQuote(st.enc[:0], d)
	default:
		st.enc = st.enc[:0]
		if err := encoder.EncodeInto(&st.enc, v, sonicOptions); err != nil {
			return nil, reasonBadValue
		}
	}
	return st.enc, reason
}

// appendTooLarge answers r, whose reply of n bytes passed limit (or, n
// 0, came after the batch's replies passed it); nothing for a
// notification.
func appendTooLarge(dst []byte, r *parser.Request, n, limit int) []byte {
	if r.Notification && r.Err.OK() {
		return dst
	}
	dst = appendErrorStart(dst, r.Version, parser.CodeResponseTooLarge)
	if n > 0 {
		dst = append(dst, "Response too large: "...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, " bytes exceed the limit of "...)
	} else {
		dst = append(dst, "Response too large: the batch's replies exceed the limit of "...)
	}
	dst = strconv.AppendInt(dst, int64(limit), 10)
	dst = append(dst, " bytes"...)
	return appendErrorEnd(dst, nil, r.ID)
}
