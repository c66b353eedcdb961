package parser

// NOTE: Parse validates a whole message in one pass. For a single request
// the pass over the top-level object also records the spans of its
// envelope members (parseObject). For a batch the pass validates and counts
// the elements; Iter then walks the elements again, parsing each one's
// envelope with the same parseObject, so that no slice of requests is ever
// built.

import "bytes"

// DefaultMaxDepth is the default limit on the nesting of arrays and objects
// in a message, the top-level value included.
const DefaultMaxDepth = 256

// Kind says what a message is.
type Kind uint8

const (
	// KindInvalid is a message that gets one error reply: Message.Err holds
	// a -32700 fault (not JSON) or a -32600 fault (JSON, but neither an
	// object nor a non-empty array).
	KindInvalid Kind = iota
	// KindSingle is one request object; Message.Request describes it.
	KindSingle
	// KindBatch is a non-empty array; Message.Iter walks its elements.
	KindBatch
)

// String returns the name of the kind.
func (k Kind) String() string {
	switch k {
	case KindSingle:
		return "single"
	case KindBatch:
		return "batch"
	}
	return "invalid"
}

// Version is the protocol version of a request.
type Version uint8

const (
	// Version2 is a JSON-RPC 2.0 request ("jsonrpc": "2.0").
	Version2 Version = iota
	// Version1 is a JSON-RPC 1.0 request: no jsonrpc member, params an
	// Array, and an id (null for a notification).
	Version1
)

// Parser parses JSON-RPC messages. The zero value is ready to use with the
// defaults. A Parser keeps scratch memory between calls, so that parsing
// allocates nothing in steady state; it must not be used by two goroutines
// at once, and a Message it returned must not be iterated after the next
// call of Parse.
type Parser struct {
	// MaxDepth limits the nesting of arrays and objects; 0 means
	// DefaultMaxDepth. A message nested deeper is a -32600 fault (or a
	// -32700 fault when it is also malformed).
	MaxDepth int
	// RejectV1 turns JSON-RPC 1.0 requests into -32600 faults. By default
	// they are accepted as Version1 requests.
	RejectV1 bool

	stack  []uint64 // spill of the container bit stack beyond 256 levels
	deepAt int      // offset where MaxDepth was first exceeded, or -1
}

func (p *Parser) maxDepth() int {
	if p.MaxDepth > 0 {
		return p.MaxDepth
	}
	return DefaultMaxDepth
}

// Request is a view of one request object. Its spans point into the
// message given to Parse.
type Request struct {
	// Method is the content of the method string, between its quotes,
	// escapes not decoded (see MethodEscaped and AppendMethod); nil when
	// the member is absent or not a string.
	Method []byte
	// ID is the id value exactly as it appears in the message (quotes of a
	// string included), nil when absent. In a faulty request it is nil
	// unless the id member itself was read as valid.
	ID []byte
	// Params is the params value (an Array or an Object), nil when absent.
	Params []byte
	// Offset is the offset of the request object in the message.
	Offset int
	// Version is the protocol version.
	Version Version
	// Notification is true for a request that must get no reply: a valid
	// 2.0 request without id, or a 1.0 request whose id is null.
	Notification bool
	// MethodEscaped is true when Method holds escape sequences.
	MethodEscaped bool
	// Err is the -32600 fault of an invalid request; Err.Code is 0 when
	// the request is valid. An invalid request always gets a reply, with
	// ID or null.
	Err Error
}

// AppendMethod appends the decoded method name to dst.
func (r *Request) AppendMethod(dst []byte) []byte {
	if !r.MethodEscaped {
		return append(dst, r.Method...)
	}
	return AppendUnquote(dst, r.Method)
}

// Rebase makes r's spans point into to, a copy of from, the message r
// was parsed from (to[i] == from[i] for every i): a transport that parsed
// a message in its read buffer keeps the parse when it copies the message
// for a goroutine. It costs no allocation and no parse. Spans must be as
// Parse made them (sub-slices of from); to must be at least as long as
// from.
func (r *Request) Rebase(from, to []byte) {
	r.Method = rebase(r.Method, from, to)
	r.ID = rebase(r.ID, from, to)
	r.Params = rebase(r.Params, from, to)
}

// rebase moves one span of from to the same place in to. A span's offset
// in from is cap(from) - cap(span): every span is from[i:j].
func rebase(span, from, to []byte) []byte {
	if span == nil {
		return nil
	}
	i := cap(from) - cap(span)
	return to[i : i+len(span) : i+len(span)]
}

// Message is the result of Parse: one request, a batch, or a fault. Its
// spans point into the message given to Parse.
//
// The returned Message is valid until the message is modified or the
// Parser is used again and must not be modified; copy it to keep it.
type Message struct {
	// Kind says which of the other fields apply.
	Kind Kind
	// Err is the fault of a KindInvalid message.
	Err Error
	// Request is the request of a KindSingle message.
	Request Request
	// Len is the number of elements of a KindBatch message (at least 1).
	Len int

	p     *Parser
	text  []byte
	first int // offset of the first batch element
}

// Rebase makes m's spans — its Request's, and those Iter walks — point
// into to, a copy of from, the message m was parsed from (see
// Request.Rebase). The Requests ParseElems gave must be rebased each on
// its own.
func (m *Message) Rebase(from, to []byte) {
	m.Request.Rebase(from, to)
	if m.text != nil {
		m.text = rebase(m.text, from, to)
	}
}

// Parse validates msg as one JSON text (RFC 8259, UTF-8 only; a leading
// byte order mark and surrounding whitespace are ignored) and classifies
// it as a single request, a batch, or a fault. Parse allocates nothing in
// steady state.
//
// The returned Message is valid until msg is modified or p is used again
// and must not be modified; copy it to keep it.
func (p *Parser) Parse(msg []byte) Message {
	var m Message
	p.ParseInto(&m, msg)
	return m
}

// ParseInto is Parse writing into *m, which it overwrites: it saves the
// copy of the Message that Parse returns, for callers that keep one.
//
// What it writes into m is valid until msg is modified or p is used again
// and must not be modified; copy it to keep it.
func (p *Parser) ParseInto(m *Message, msg []byte) {
	p.parseInto(m, msg, nil)
}

// ParseElems is ParseInto that, for a batch, also appends the Requests of
// its first limit elements to elems, in order, exactly as Iter would
// yield them — from the pass that validates the batch, so that no element
// is parsed twice. (m.Len still counts all elements; a limit bounds the
// memory a huge batch of tiny elements could take.) It returns elems
// extended; when msg is not a valid batch, elems is returned as it was
// given.
//
// What it writes into m and elems is valid until msg is modified or p is
// used again and must not be modified; copy it to keep it.
func (p *Parser) ParseElems(m *Message, msg []byte, elems []Request, limit int) []Request {
	n := len(elems)
	sink := elemSink{elems: elems, room: limit}
	p.parseInto(m, msg, &sink)
	if m.Kind != KindBatch {
		return sink.elems[:n]
	}
	return sink.elems
}

// elemSink receives the elements of a batch, up to room of them.
type elemSink struct {
	elems []Request
	room  int
}

// next returns the Request to fill for the next element, or a scratch one
// past the limit.
func (s *elemSink) next(scratch *Request) *Request {
	if s == nil || s.room <= 0 {
		return scratch
	}
	s.room--
	s.elems = append(s.elems, Request{})
	return &s.elems[len(s.elems)-1]
}

func (p *Parser) parseInto(m *Message, msg []byte, elems *elemSink) {
	p.deepAt = -1
	i := 0
	if bytes.HasPrefix(msg, bom) {
		i = len(bom)
	}
	i = skipSpace(msg, i)
	if i >= len(msg) {
		*m = Message{Err: fault(CodeParseError, i, reasonEmpty)}
		return
	}
	switch msg[i] {
	case '{':
		m.Kind, m.Err, m.Len, m.p, m.text, m.first = KindSingle, Error{}, 0, nil, nil, 0
		m.Request = Request{}
		end, f := p.parseObject(msg, i, 0, &m.Request)
		if f.Code == 0 {
			f = trailing(msg, end)
		}
		if f.Code != 0 {
			*m = Message{Err: f}
		}
		return
	case '[':
		*m = p.parseBatch(msg, i, elems)
		return
	}
	end, f := p.skip(msg, i, 0)
	if f.Code == 0 {
		f = trailing(msg, end)
	}
	if f.Code != 0 {
		*m = Message{Err: f}
		return
	}
	*m = Message{Err: fault(CodeInvalidRequest, i, reasonNotRequest)}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// trailing reports a fault when anything but whitespace follows offset i.
func trailing(b []byte, i int) Error {
	if i = skipSpace(b, i); i < len(b) {
		return fault(CodeParseError, i, reasonAfterValue)
	}
	return Error{}
}

// parseBatch validates the array at b[i] and counts its elements; when
// elems is not nil, it gives them the elements.
func (p *Parser) parseBatch(b []byte, i int, elems *elemSink) Message {
	start := i
	i = skipSpace(b, i+1)
	first := i
	count := 0
	if i < len(b) && b[i] == ']' {
		if f := trailing(b, i+1); f.Code != 0 {
			return Message{Err: f}
		}
		return Message{Err: fault(CodeInvalidRequest, start, reasonEmptyBatch)}
	}
	for {
		var f Error
		i = skipSpace(b, i)
		var scratch Request // an envelope no one keeps: Iter parses it again
		if i < len(b) && b[i] == '{' {
			i, f = p.parseObject(b, i, 1, elems.next(&scratch))
		} else {
			at := i
			i, f = p.skip(b, i, 1)
			*elems.next(&scratch) = Request{Offset: at, Err: fault(CodeInvalidRequest, at, reasonNotRequest)}
		}
		if f.Code != 0 {
			return Message{Err: f}
		}
		count++
		i = skipSpace(b, i)
		if i >= len(b) {
			return Message{Err: fault(CodeParseError, i, reasonEOF)}
		}
		if b[i] == ']' {
			break
		}
		if b[i] != ',' {
			return Message{Err: fault(CodeParseError, i, reasonArrayNext)}
		}
		i++
	}
	if f := trailing(b, i+1); f.Code != 0 {
		return Message{Err: f}
	}
	return Message{Kind: KindBatch, Len: count, p: p, text: b, first: first}
}

// Iter returns an iterator over the elements of a KindBatch message. For
// other kinds the iterator is empty.
func (m *Message) Iter() Iter {
	if m.Kind != KindBatch {
		return Iter{}
	}
	return Iter{p: m.p, b: m.text, i: m.first}
}

// Iter walks the elements of a batch. Use it as
//
//	for it := m.Iter(); it.Next(); {
//		r := it.Request()
//		...
//	}
type Iter struct {
	p   *Parser
	b   []byte
	i   int
	req Request
}

// Next advances to the next element and reports whether there is one.
func (it *Iter) Next() bool {
	if it.p == nil {
		return false
	}
	b := it.b
	i := skipSpace(b, it.i)
	if i >= len(b) || b[i] == ']' {
		it.p = nil
		return false
	}
	it.req = Request{}
	var end int
	if b[i] == '{' {
		end, _ = it.p.parseObject(b, i, 1, &it.req)
	} else {
		end, _ = it.p.skip(b, i, 1)
		it.req.Offset = i
		it.req.Err = fault(CodeInvalidRequest, i, reasonNotRequest)
	}
	end = skipSpace(b, end)
	if end < len(b) && b[end] == ',' {
		end++
	}
	it.i = end
	return true
}

// Request returns the current element.
//
// The returned Request is valid until the message is modified and must not
// be modified; copy it to keep it.
func (it *Iter) Request() Request { return it.req }
