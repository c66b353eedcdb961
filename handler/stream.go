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
	"iter"
	"reflect"
	"runtime/debug"
	"sync"

	"github.com/bytedance/sonic/encoder"
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

func registerStream[P, E any](t *Table, name string, fn func(context.Context, P) iter.Seq2[E, error], opts []MethodOption) error {
	mt, tm, err := compileMethod[P, []E](t, name, nil, opts, false)
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
	s := &streamed[P, E]{fn: fn, pp: tm.pp, name: name, table: t}
	s.enc.ep, s.enc.t = ep, t
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

// streamed is a streamed method compiled for its params type P and
// element type E.
type streamed[P, E any] struct {
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
	dst = append(dst, '[')
	dst, err, crash := m.produce(ctx, st, dst, start, p)
	if crash != nil {
		m.table.opts.Logger.Error("jetrpc: method panicked", "method", m.name, "panic", crash, "stack", string(debug.Stack()))
		err = errStreamPanicked
	}
	gone, _ := err.(*replyGone) // as flushPart returned it
	switch {
	case err == nil && !req.Notification:
		dst = append(dst, ']')
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
	return m.table.appendStreamFailure(st, dst, err)
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
	return
}

// elemEncoder is what a producer needs of its streamed method.
type elemEncoder struct {
	ep    *resultPlan
	epool sync.Pool // *E, for elements that sonic or AppendJSON encode
	t     *Table
}

// producer is the state of one streamed call's iteration. Pooled by its
// method.
type producer[E any] struct {
	yield func(E, error) bool // next, bound once when the producer is made
	ctx   context.Context
	st    *state
	m     *elemEncoder
	dst   []byte // the reply so far (its part not yet sent)
	start int    // where the reply starts in dst
	first bool   // no element yet
	err   error  // what ended the iteration
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
	if !pr.first {
		pr.dst = append(pr.dst, ',')
	}
	pr.first = false
	var reason string
	if pr.dst, reason = appendResult(pr.st, pr.m.ep, &pr.m.epool, pr.dst, &e); reason != "" {
		pr.err = &Error{Code: parser.CodeInternalError, Message: "Internal error: " + reason}
		return false
	}
	if len(pr.dst)-pr.start >= streamPart {
		pr.dst, pr.err = pr.m.t.flushPart(pr.ctx, pr.st, pr.dst, pr.start)
	}
	return pr.err == nil
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
// go, after its failure err: the array is closed, and the envelope
// carries "_streamStatus":"failed" and "_streamError", err's error
// object as an error reply would carry it, before its id.
func (t *Table) appendStreamFailure(st *state, dst []byte, err error) []byte {
	req := st.req
	st.code, st.err = ErrorCode(err), err
	if e := asError(err); e != nil {
		st.code = e.Code
	}
	dst = append(dst, `],"_streamStatus":"failed","_streamError":`...)
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
