package handler

// NOTE: a Prepared message is one payload sent to many connections
// (package handler/topics' fan-out, Subscription.NotifyPrepared): it
// holds a copy of the payload, whether it is valid UTF-8 (checked once,
// not per connection), and its DEFLATE form, compressed once — on the
// first call of Deflated, by whichever goroutine asks first — so that a
// WebSocket server with permessage-deflate sends every subscriber the
// same compressed bytes behind a small uncompressed prefix of its own
// (PreparedSender, implemented by the engine's connections). Prepared
// values are pooled and reference-counted: NewPrepared returns one
// reference, Retain adds one for each queue that keeps it, and the last
// Release gives it back to the pool. A publish in steady state allocates
// nothing: the payload and compressed buffers are kept with the pooled
// value (up to pool.DefaultMaxPooled), and so are the flate writers.

import (
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"

	"github.com/jetrpc/jetrpc/pool"
)

// preparedLevel is the level Deflated compresses at: the engine's for
// permessage-deflate (the fastest, measured there).
const preparedLevel = flate.BestSpeed

// Prepared is one message payload prepared to be sent to many
// connections: made once per published message with NewPrepared, and
// sent with Subscription.NotifyPrepared or PreparedSender.SendPrepared.
// Its methods are safe from any goroutine.
type Prepared struct {
	refs     atomic.Int32 // references: NewPrepared's and one per Retain, less the Releases
	payload  []byte       // immutable between NewPrepared and the last Release
	valid    bool         // payload is valid UTF-8; immutable like payload
	zdone    atomic.Bool  // deflated is made: it is immutable from then on
	zmu      sync.Mutex   // guards the making of deflated
	deflated []byte       // see Deflated; written once under zmu, then read only
}

var prepareds = sync.Pool{New: func() any { return new(Prepared) }}

// NewPrepared returns a Prepared holding a copy of payload, with one
// reference, which must be given back with Release. payload is one JSON
// value (not checked: as for Conn.Send) and is not kept. It allocates
// nothing in steady state.
func NewPrepared(payload []byte) *Prepared {
	p := prepareds.Get().(*Prepared)
	p.payload = append(p.payload[:0], payload...)
	p.valid = utf8.Valid(payload)
	p.refs.Store(1)
	return p
}

// Payload returns the payload. The returned Payload is valid until the
// last Release and must not be modified; copy it to keep it.
func (p *Prepared) Payload() []byte { return p.payload }

// ValidUTF8 reports whether the payload is valid UTF-8 (a WebSocket text
// message must be), as checked once by NewPrepared.
func (p *Prepared) ValidUTF8() bool { return p.valid }

// Deflated returns the payload compressed as a raw DEFLATE stream (RFC
// 1951) by a fresh compressor at the fastest level, ended by a sync
// flush whose last four bytes (0x00 0x00 0xff 0xff: the LEN and NLEN of
// an empty stored block) are removed — a permessage-deflate message of
// the payload alone (RFC 7692 7.2.1), whose bits end with the header of
// a stored block, so that the LEN, NLEN and data of a stored block may
// follow it. It refers to nothing before it: it may follow any stream
// that ends on a byte boundary between blocks. It is computed on the
// first call, once, whatever the number of goroutines asking. The
// returned Deflated is valid until the last Release and must not be
// modified; copy it to keep it.
func (p *Prepared) Deflated() []byte {
	if p.zdone.Load() {
		return p.deflated
	}
	p.zmu.Lock()
	if !p.zdone.Load() {
		p.deflated = deflateSync(p.deflated[:0], p.payload)
		p.zdone.Store(true)
	}
	p.zmu.Unlock()
	return p.deflated
}

// Retain adds a reference to p, to be given back with Release: a queue
// that keeps p past the call that handed it over retains it.
func (p *Prepared) Retain() {
	if p.refs.Add(1) <= 1 {
		panic("jetrpc: handler.Prepared retained after its last Release")
	}
}

// Release gives back one reference to p. After the last, p and all
// obtained from it (Payload, Deflated) must not be used: p returns to
// the pool. It panics when p has no reference left.
func (p *Prepared) Release() {
	switch n := p.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("jetrpc: handler.Prepared released more often than retained")
	}
	if cap(p.payload) > pool.DefaultMaxPooled {
		p.payload = nil
	}
	if cap(p.deflated) > pool.DefaultMaxPooled {
		p.deflated = nil
	}
	p.payload, p.deflated = p.payload[:0], p.deflated[:0]
	p.valid = false
	p.zdone.Store(false)
	prepareds.Put(p)
}

// deflateWriter is a pooled flate writer and the buffer it appends to.
type deflateWriter struct {
	fw  *flate.Writer
	out appendBuffer
}

// appendBuffer is an io.Writer that appends to b.
type appendBuffer struct{ b []byte }

func (w *appendBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

var deflateWriters = sync.Pool{New: func() any {
	w := new(deflateWriter)
	w.fw, _ = flate.NewWriter(&w.out, preparedLevel) // the level is valid
	return w
}}

// deflateTail is what a sync flush ends with: the LEN and NLEN of an
// empty stored block.
const deflateTail = "\x00\x00\xff\xff"

// deflateSync appends src compressed by a fresh flate writer, sync
// flushed, without the flush's last four bytes, to dst.
func deflateSync(dst, src []byte) []byte {
	w := deflateWriters.Get().(*deflateWriter)
	w.out.b = dst
	w.fw.Reset(&w.out)
	_, _ = w.fw.Write(src) // appendBuffer never fails
	_ = w.fw.Flush()
	dst = w.out.b
	if n := len(dst) - len(deflateTail); n >= 0 && string(dst[n:]) == deflateTail {
		dst = dst[:n]
	}
	w.out.b = nil
	deflateWriters.Put(w)
	return dst
}
