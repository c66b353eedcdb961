package engine

// NOTE: the stream codec: JSON values one after another, as
// newline-delimited JSON (or any whitespace between values), over TCP or
// a Unix socket. parser.Framer finds each value's end, carrying its scan
// across reads; a value is run where it lies in gnet's buffer. Replies
// and pushes are each followed by a newline, and go out as they are
// ready (ids match them up). A large value still arriving is gathered in
// a buffer of the codec's own: gnet's Peek copies all it buffers at every
// read once its ring is in use, which would cost time quadratic in the
// value's size.

import (
	"sync"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/httprules"
	"github.com/jetrpc/jetrpc/parser"
	"github.com/jetrpc/jetrpc/pool"
)

// streamCodec is the state of a stream connection.
type streamCodec struct {
	framer parser.Framer
	acc    *pool.Buffer // a large value being gathered, and what follows it
}

var streamCodecs = sync.Pool{New: func() any { return new(streamCodec) }}

func newStreamCodec() *streamCodec { return streamCodecs.Get().(*streamCodec) }

// gatherAt is the size of a partial value from which it is gathered.
const gatherAt = 64 << 10

func (s *streamCodec) open(c *conn) {
	s.framer.MaxSize = c.e.opts.MaxMessageSize
	c.mail.pushable.Store(true)
}

func (s *streamCodec) serve(c *conn, in, out []byte) ([]byte, int, codec) {
	if s.acc != nil {
		s.acc.B = append(s.acc.B, in...)
		var used int
		out, used = s.frame(c, s.acc.B, out)
		if used > 0 {
			n := copy(s.acc.B, s.acc.B[used:])
			s.acc.B = s.acc.B[:n]
			if n == 0 {
				pool.Requests.Put(s.acc) // all consumed: back to gnet's buffer
				s.acc = nil
			}
		}
		return out, len(in), nil
	}
	out, used := s.frame(c, in, out)
	if len(in)-used >= gatherAt && s.framer.Partial() && c.closing == notClosing {
		s.acc = pool.Requests.Get()
		s.acc.B = append(s.acc.B, in[used:]...)
		used = len(in)
	}
	return out, used, nil
}

// frame finds the values in in and runs them; it returns how many bytes
// it consumed.
func (s *streamCodec) frame(c *conn, in, out []byte) ([]byte, int) {
	off := 0
	for off < len(in) && c.canRun() {
		start, end, st := s.framer.Next(in[off:])
		switch st {
		case parser.NeedMore:
			off += end // whitespace between values
			if s.framer.Partial() {
				c.markPartial()
			} else {
				c.clearPartial()
			}
			return out, off
		case parser.Malformed, parser.TooLarge:
			// The stream cannot be framed any more: one error reply, then
			// the connection closes.
			f := parser.FrameFault(st, end)
			if st == parser.TooLarge {
				c.e.stats.tooLarge.Add(1)
				c.refused(0, httprules.ReasonMessageTooLarge)
			} else {
				c.refused(0, httprules.ReasonMalformed)
			}
			out = handler.AppendFault(out, nil, &f)
			out = append(out, '\n')
			return c.closeAfterFlush(out, closeProtocol), len(in)
		}
		c.clearPartial()
		msg := in[off+start : off+end]
		off += end
		mark := len(out)
		var oc handler.Outcome
		out, _, oc = c.run(out, msg, 0)
		if len(out) > mark {
			out = append(out, '\n')
			out = c.directFirst(out, mark) // what an inline method sent goes first
			if c.strm != nil {
				out = c.holdBehind(out, mark) // a streamed reply is going
			}
		}
		if oc == handler.Malformed {
			return c.closeAfterFlush(out, closeProtocol), off // what follows cannot be framed reliably
		}
		if c.mail.queued.Load() > 0 {
			out = c.drainPushes(out)
		}
	}
	return out, off
}

func (s *streamCodec) ready(*conn) bool { return true }

func (s *streamCodec) blocked(*conn) bool { return false }

func (s *streamCodec) reply(_ *conn, out []byte, j *job) []byte {
	if len(j.out) > 0 {
		out = append(out, j.out...)
		out = append(out, '\n')
	}
	j.release()
	return out
}

func (s *streamCodec) swap(_, _ *job) {} // replies go as they come

func (s *streamCodec) push(_ *conn, out, msg []byte) []byte {
	out = append(out, msg...)
	return append(out, '\n')
}

func (s *streamCodec) ping(out []byte) []byte { return out }

func (s *streamCodec) goodbye(_ *conn, out []byte, _ closeReason) []byte { return out }

func (s *streamCodec) transport() transport { return transportStream }

func (s *streamCodec) release() {
	if s.acc != nil {
		pool.Requests.Put(s.acc)
	}
	s.framer.Reset()
	*s = streamCodec{framer: s.framer}
	streamCodecs.Put(s)
}
