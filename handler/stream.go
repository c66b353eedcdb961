package handler

// NOTE: streamed results. A method registered with RegisterStream
// returns an iterator of elements; its result is the JSON array of them,
// encoded one by one into the reply buffer as the iterator yields them.
// A transport that can send a reply in pieces gives the message's
// Pending a ReplySink (Pending.StreamTo): whenever the reply buffer holds
// streamPart bytes or more, they are handed to the sink and the buffer
// starts over, so the engine never holds more of the reply than a part
// plus the sink's window, and a sink that blocks (a client that reads
// slowly) pauses the producer on its worker. The last part — the end of
// the array and the id — is what the call returns, as any reply. Without
// a sink (a batch element, a transport that cannot stream, Dispatch) the
// result is built whole, bounded by Options.MaxResponseSize as any reply.
//
// Once a part has gone, the reply cannot become an error object: a
// failure after that closes the array and the envelope with what was
// sent, flagged as Nethermind's streamed replies are ("_streamStatus":
// "failed", and the error object as "_streamError"); a failure before
// any part went is an ordinary error reply. A client that has gone (the
// sink refuses a part) ends the iteration: nothing more is written.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"runtime/debug"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/bytedance/sonic/encoder"
	"github.com/jetrpc/jetrpc/handler/internal/compact"
	"github.com/jetrpc/jetrpc/parser"
)

// DefaultMaxStreamedResponseSize is the default of
// Options.MaxStreamedResponseSize: 1 GiB.
const DefaultMaxStreamedResponseSize = 1 << 30

// streamPart is the size from which the bytes of a streamed reply are
// handed to its sink: large enough that a part's framing and hand-over
// cost little against its encoding, small enough that a reply holds
// little memory.
const streamPart = 32 << 10

// ReplySink is where a transport takes the reply of a streamed method
// (RegisterStream) piece by piece while the method produces it
// (Pending.StreamTo). The engine implements it for HTTP (chunked
// transfer), WebSocket (fragments) and streams.
type ReplySink interface {
	// SendPart hands part, the next bytes of the reply, to the transport;
	// the first part begins the reply. It may block while the transport
	// holds as much of the reply as it allows (a client that reads
	// slowly): the method is paused meanwhile. It returns an error when
	// the reply cannot go on (the client has gone, the connection
	// closes): the method's iteration then ends and nothing more is
	// sent. part is only read, and only until SendPart returns. Called on
	// the goroutine running the method, one part at a time.
	SendPart(part []byte) error
}

// RegisterStream adds a method whose result is a JSON array produced
// element by element: fn returns an iterator, and each element it yields
// is encoded (E as a result type R of Register) and sent as it comes —
// over HTTP as a chunked body, over WebSocket as fragments of one
// message, over a stream as it is written — so that a result of any size
// leaves in bounded memory and its first bytes leave before its last are
// made. A streamed method is of the blocking class: it runs on a worker
// (the Inline option is refused), paused while the client reads slowly.
//
// fn returns a nil iterator for an empty array. An error yielded before
// any part of the reply has gone (the first 32 KiB) is answered as a
// method's error would be; yielded later — or a panic, a context done, or
// the reply passing Options.MaxStreamedResponseSize — it ends the array
// and the reply carries, beside the result sent so far, the members
// "_streamStatus":"failed" and "_streamError" with the error object:
// a result that has begun cannot become an error reply (JSON-RPC 2.0
// allows no both), and a client that checks for "_streamStatus" knows the
// result is cut short. A client that goes away ends the iteration (its
// yield returns false) and the method's context is done. The method
// should watch ctx; it is checked between parts as well.
//
// The engine streams such a result over every transport, and so does
// NewHTTPHandler (net/http, flushing each part). A streamed method
// called in a batch or through Dispatch gets its result built whole,
// bounded by Options.MaxResponseSize as any reply. Interceptors see a streamed
// call's outcome (Code, Err) but not its Result, and cannot replace a
// reply that has begun (Answer or an error after Next do nothing then);
// a notification runs the iterator to its end and sends nothing.
//
// RegisterStream panics as Register does, and when given Inline.
func RegisterStream[P, E any](t *Table, name string, fn func(ctx context.Context, params P) iter.Seq2[E, error], opts ...MethodOption) {
	mustNotNil(name, fn == nil)
	must(registerStream(t, name, fn, opts))
}

// ErrStreamInline is the error RegisterStream panics with when given
// Inline: a streamed method may block.
var ErrStreamInline = errors.New("jetrpc: a streamed method cannot be Inline")

// RegisterTextStream adds a method whose result is one JSON string made
// piece by piece: fn returns an iterator of pieces of text (of any size:
// a line, a block of a file), escaped and sent as they come, as
// RegisterStream sends an array — a large text (a file, a log, a
// resource's contents) leaves in bounded memory. Pieces are joined as
// they are: a UTF-8 sequence split between two pieces is joined whole,
// and invalid UTF-8 becomes U+FFFD, as in every string jetrpc writes.
// Everything else is RegisterStream's: the blocking class, errors and
// failures after the first part ("_streamStatus"), batches and Dispatch
// built whole, StreamEnvelope. It panics as RegisterStream does.
func RegisterTextStream[P any](t *Table, name string, fn func(ctx context.Context, params P) iter.Seq2[string, error], opts ...MethodOption) {
	mustNotNil(name, fn == nil)
	must(registerStreamOf(t, name, fn, opts, true))
}

// StreamEnvelope puts the result of a streamed method (RegisterStream's
// array, RegisterTextStream's string) inside a JSON value: the result is
// prefix, the streamed value, then suffix — with prefix
// `{"contents":[{"uri":"file:///log","text":` and suffix `}]}` a text
// streams as a member of an object. prefix, a value, and suffix must
// make one JSON value, the streamed value standing where a value may;
// registration fails otherwise (ErrBadType), and for a method that is
// not streamed. A failure after the first part closes the streamed
// value and the envelope before "_streamStatus". The OpenRPC document
// gives such a result the schema of any JSON value.
func StreamEnvelope(prefix, suffix string) MethodOption {
	return func(c *methodConfig) { c.envelope = &[2]string{prefix, suffix} }
}

// envelopeProbe stands for the streamed value when StreamEnvelope's
// prefix and suffix are checked: valid in a value's place only (not
// inside a string, nor as a key).
const envelopeProbe = `{"":[null]}`

func registerStream[P, E any](t *Table, name string, fn func(context.Context, P) iter.Seq2[E, error], opts []MethodOption) error {
	return registerStreamOf(t, name, fn, opts, false)
}

// registerStreamOf registers a streamed method whose elements are E:
// the items of an array, or with text (E is string) the pieces of one
// string.
func registerStreamOf[P, E any](t *Table, name string, fn func(context.Context, P) iter.Seq2[E, error], opts []MethodOption, text bool) error {
	// The method as Register would compile it, for its params and what
	// MethodInfo says of its result: a string, or an array of E.
	compile := compileStreamed[P, []E]
	if text {
		compile = compileStreamed[P, string]
	}
	mt, pp, err := compile(t, name, opts)
	if err != nil {
		return err
	}
	if mt.inline {
		return errors.Join(ErrStreamInline, errors.New("jetrpc: method "+name))
	}
	et := reflect.TypeFor[E]()
	ep, err := buildResult(et)
	if err != nil {
		return errors.Join(ErrBadType, err)
	}
	if !ep.fast() && !ep.appender {
		if err := encoder.Pretouch(et); err != nil {
			return errors.Join(ErrBadType, err)
		}
	}
	s := &streamed[P, E]{fn: fn, pp: pp, name: name, table: t, head: "[", tail: "]"}
	if text {
		s.head, s.tail = `"`, `"`
	}
	if env := mt.envelope; env != nil {
		if _, ok := compact.AppendValid(nil, []byte(env[0]+envelopeProbe+env[1])); !ok {
			return fmt.Errorf("jetrpc: method %q: StreamEnvelope(%q, %q) does not make one JSON value around the result: %w", name, env[0], env[1], ErrBadType)
		}
		s.head, s.tail = env[0]+s.head, s.tail+env[1]
		mt.info.ResultType = rawType // what the envelope holds is the program's: any value
	}
	s.enc.ep, s.enc.t, s.enc.text = ep, t, text
	s.ppool.New = func() any { return new(P) }
	s.enc.epool.New = func() any { return new(E) }
	s.prods.New = func() any {
		pr := new(producer[E])
		pr.yield = pr.next
		return pr
	}
	mt.impl, mt.streamed, mt.info.Streamed = s, true, true
	return t.add(mt)
}

// compileStreamed compiles a streamed method whose result MethodInfo
// reports as R, and returns it and its params plan.
func compileStreamed[P, R any](t *Table, name string, opts []MethodOption) (*method, *paramsPlan, error) {
	mt, tm, err := compileMethod[P, R](t, name, nil, opts, false)
	if err != nil {
		return nil, nil, err
	}
	return mt, tm.pp, nil
}

// streamed is a streamed method compiled for its params type P and
// element type E.
type streamed[P, E any] struct {
	head  string // what the result begins with: "[", or `"` for a text, after StreamEnvelope's prefix
	tail  string // what it ends with: "]", or `"`, before the envelope's suffix
	fn    func(context.Context, P) iter.Seq2[E, error]
	pp    *paramsPlan
	ppool sync.Pool // *P, for params that sonic decodes
	enc   elemEncoder
	prods sync.Pool // *producer[E]
	name  string
	table *Table
}

// Errors a streamed reply fails with.
var (
	errStreamTooLarge = &Error{Code: parser.CodeResponseTooLarge, Message: "Response too large: the streamed result passed the server's limit"}
	errWholeTooLarge  = errors.New("jetrpc: streamed result built whole passed MaxResponseSize")
	errStreamPanicked = &Error{Code: parser.CodeInternalError, Message: "Internal error: the method panicked"}
)

// replyGone wraps the error of a sink that refused a part: the client
// cannot be answered.
type replyGone struct{ err error }

func (g *replyGone) Error() string { return "jetrpc: streamed reply abandoned: " + g.err.Error() }
func (g *replyGone) Unwrap() error { return g.err }

func (m *streamed[P, E]) invoke(ctx context.Context, st *state, dst []byte) []byte {
	req := st.req
	st.code, st.streamed, st.sent = 0, false, 0
	ctx = st.enter(ctx, m.name)
	var p P // on the stack: decodeParams does not let it escape
	if e := decodeParams(st, m.pp, &m.ppool, req.Params, &p); e.bad() {
		return paramsError(st, dst, e)
	}
	start := len(dst)
	dst = appendResultHead(dst, req.Version)
	from := len(dst)
	dst = append(dst, m.head...)
	dst, err, crash := m.produce(ctx, st, dst, start, p)
	if crash != nil {
		m.table.opts.Logger.Error("jetrpc: method panicked", "method", m.name, "panic", crash, "stack", string(debug.Stack()))
		err = errStreamPanicked
	}
	gone, _ := err.(*replyGone) // as flushPart returned it
	switch {
	case err == nil && !req.Notification:
		dst = append(dst, m.tail...)
		if !st.streamed {
			st.res = [2]int{from, len(dst)}
		}
		return appendReplyTail(dst, req.ID, req.Version)
	case err == nil:
		return dst[:start]
	case gone != nil:
		st.code, st.err = ErrorCode(gone.err), gone.err
		if st.code == parser.CodeInternalError {
			st.code, st.err = parser.CodeCancelled, context.Canceled // the client went
		}
		return dst[:start]
	case err == errWholeTooLarge:
		return m.table.replaceTooLarge(st, dst, start, req)
	case !st.streamed:
		return m.table.appendMethodError(m.name, st, dst[:start], err)
	}
	return m.table.appendStreamFailure(st, append(dst, m.tail...), err)
}

// produce runs fn and appends the elements its iterator yields to dst,
// handing the reply from start on to the sink whenever it holds a part.
// It returns the reply so far, the error that ended the iteration, or
// the value of a panic. The iterator is given a producer's yield, bound
// once per pooled producer: a range-over-func loop would move its state
// to the heap on every call.
func (m *streamed[P, E]) produce(ctx context.Context, st *state, out []byte, start int, p P) (dst []byte, err error, crash any) {
	pr := m.prods.Get().(*producer[E])
	pr.ctx, pr.st, pr.m, pr.dst, pr.start, pr.first, pr.err = ctx, st, &m.enc, out, start, true, nil
	defer func() {
		if v := recover(); v != nil {
			crash = v
		}
		dst, err = pr.dst, pr.err
		*pr = producer[E]{yield: pr.yield}
		m.prods.Put(pr)
	}()
	if seq := m.fn(ctx, p); seq != nil {
		seq(pr.yield)
	}
	if pr.ncarry > 0 { // a text's last piece ended inside a UTF-8 sequence: U+FFFD
		pr.dst = parser.AppendEscaped(pr.dst, string(pr.carry[:pr.ncarry]))
		pr.ncarry = 0
	}
	return
}

// elemEncoder is what a producer needs of its streamed method.
type elemEncoder struct {
	text  bool // the elements are pieces of one string (RegisterTextStream)
	ep    *resultPlan
	epool sync.Pool // *E, for elements that sonic or AppendJSON encode
	t     *Table
}

// producer is the state of one streamed call's iteration. Pooled by its
// method.
type producer[E any] struct {
	yield  func(E, error) bool // next, bound once when the producer is made
	ctx    context.Context
	st     *state
	m      *elemEncoder
	dst    []byte                // the reply so far (its part not yet sent)
	start  int                   // where the reply starts in dst
	first  bool                  // no element yet
	err    error                 // what ended the iteration
	carry  [utf8.UTFMax - 1]byte // text: the start of a UTF-8 sequence the last piece ended in
	ncarry int
}

// next is the iterator's yield: it encodes e, and hands a part to the
// sink when the reply holds one; false ends the iteration.
func (pr *producer[E]) next(e E, err error) bool {
	switch {
	case pr.err != nil:
		return false // an iterator that went on after false
	case err != nil:
		pr.err = err
		return false
	case pr.st.req.Notification:
		return true // run for its effect: nothing is sent
	}
	if pr.m.text {
		pr.appendText(*(*string)(unsafe.Pointer(&e))) // E is string
	} else {
		if !pr.first {
			pr.dst = append(pr.dst, ',')
		}
		pr.first = false
		var reason string
		if pr.dst, reason = appendResult(pr.st, pr.m.ep, &pr.m.epool, pr.dst, &e); reason != "" {
			pr.err = &Error{Code: parser.CodeInternalError, Message: "Internal error: " + reason}
			return false
		}
	}
	if len(pr.dst)-pr.start >= streamPart {
		pr.dst, pr.err = pr.m.t.flushPart(pr.ctx, pr.st, pr.dst, pr.start)
	}
	return pr.err == nil
}

// appendText appends piece, escaped, to a text's reply: a UTF-8
// sequence that the last piece ended in is completed from piece's first
// bytes, and one that piece ends in is kept for the next piece.
func (pr *producer[E]) appendText(piece string) {
	if c := pr.ncarry; c > 0 {
		// The carried bytes and the piece's first ones, decoded as the
		// whole text would be, up to the end of the rune that holds the
		// last carried byte.
		var b [2 * utf8.UTFMax]byte
		n := copy(b[:], pr.carry[:c])
		n += copy(b[n:], piece[:min(len(piece), utf8.UTFMax-1)])
		pos := 0
		for pos < c {
			if !utf8.FullRune(b[pos:n]) { // the piece was too short to end it
				pr.dst = parser.AppendEscaped(pr.dst, unsafe.String(&b[0], pos))
				pr.ncarry = copy(pr.carry[:], b[pos:n])
				return
			}
			_, size := utf8.DecodeRune(b[pos:n])
			pos += size
		}
		pr.dst = parser.AppendEscaped(pr.dst, unsafe.String(&b[0], pos))
		piece, pr.ncarry = piece[pos-c:], 0
	}
	// A sequence begun in the last three bytes and not complete waits for
	// the next piece.
	for i := len(piece) - 1; i >= 0 && i >= len(piece)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(piece[i]) {
			if !utf8.FullRuneInString(piece[i:]) {
				pr.ncarry = copy(pr.carry[:], piece[i:])
				piece = piece[:i]
			}
			break
		}
	}
	pr.dst = parser.AppendEscaped(pr.dst, piece)
}

// flushPart hands dst[start:], a part of a streamed reply, to the sink,
// and returns dst cut back to start; without a sink the reply is being
// built whole, and only its size is checked.
func (t *Table) flushPart(ctx context.Context, st *state, dst []byte, start int) ([]byte, error) {
	n := len(dst) - start
	if st.sink == nil || st.msg.Kind != parser.KindSingle {
		if n > t.opts.MaxResponseSize {
			return dst, errWholeTooLarge
		}
		return dst, nil
	}
	if st.sent+int64(n) > int64(t.opts.MaxStreamedResponseSize) {
		return dst, errStreamTooLarge
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	if err := st.sink.SendPart(dst[start:]); err != nil {
		return dst, &replyGone{err}
	}
	st.sent += int64(n)
	st.streamed = true
	return dst[:start], nil
}

// appendStreamFailure ends a streamed reply whose parts have begun to
// go, after its failure err, its result closed in dst: the reply
// carries "_streamStatus":"failed" and "_streamError", err's error
// object as an error reply would carry it, before its id.
func (t *Table) appendStreamFailure(st *state, dst []byte, err error) []byte {
	req := st.req
	st.code, st.err = ErrorCode(err), err
	if e := asError(err); e != nil {
		st.code = e.Code
	}
	dst = append(dst, `,"_streamStatus":"failed","_streamError":`...)
	// The error object as an error reply holds it, cut out of one.
	mark := len(dst)
	dst = t.appendHandlerError(st, dst, &parser.Request{Version: parser.Version2, Method: req.Method}, err)
	obj := dst[mark+len(errorReplyHead) : len(dst)-len(errorReplyTail)]
	dst = dst[:mark+copy(dst[mark:], obj)]
	return appendReplyTail(dst, req.ID, req.Version)
}

// The parts of a version 2 error reply without id around its error
// object.
const (
	errorReplyHead = `{"jsonrpc":"2.0","error":`
	errorReplyTail = `,"id":null}`
)

// StreamTo makes the single request d holds, when it calls a streamed
// method (RegisterStream), send its reply through s in parts as the
// method produces them: Run returns the last part only. A batch, and a
// request of another method, ignore it. Call it before Run; s is used
// on the goroutine that runs the call, until Run returns.
func (d *Pending) StreamTo(s ReplySink) {
	if d.st != nil && d.st.msg.Kind == parser.KindSingle {
		d.st.sink = s
	}
}

// Streamed reports whether d holds a single request of a streamed method
// (RegisterStream), which a transport that can send a reply in parts
// gives a ReplySink (StreamTo). Such a call has no Deadline of its own to
// watch: its method's context carries its timeout, and a reply that has
// begun cannot be replaced by a timeout's.
func (d *Pending) Streamed() bool {
	st := d.st
	return st != nil && st.msg.Kind == parser.KindSingle && st.single != nil && st.single.streamed
}
