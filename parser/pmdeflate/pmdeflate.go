// Package pmdeflate holds what both ends of a WebSocket permessage-deflate
// connection (RFC 7692) need to inflate a message without a copy: the
// engine's server side and jetrpc bench's client side.
//
// A sender removes the tail 0x00 0x00 0xff 0xff (an empty stored block)
// from the end of every compressed message (RFC 7692 7.2.1); a receiver
// puts it back before inflating. TailReader reads a message and then the
// tail, followed by an empty final stored block so that the inflater
// ends with io.EOF rather than io.ErrUnexpectedEOF.
package pmdeflate

import "io"

// Tail is what a sender removes from the end of a compressed message.
const Tail = "\x00\x00\xff\xff"

// tail is Tail and an empty final stored block.
const tail = Tail + "\x01\x00\x00\xff\xff"

// TailReader reads a compressed message, then its tail: the message as
// flate wants it, without a copy. It is an io.ByteReader too, so that
// flate reads it without a bufio.Reader of its own. The zero value reads
// the tail alone; Reset starts a message. Not safe for concurrent use.
type TailReader struct {
	b []byte // what is left of the message
	t int    // how much of the tail was read
}

// Reset makes r read msg, then the tail. msg is read in place, until r
// is read to its end or reset.
func (r *TailReader) Reset(msg []byte) { r.b, r.t = msg, 0 }

// Read implements io.Reader.
func (r *TailReader) Read(p []byte) (int, error) {
	if len(r.b) > 0 {
		n := copy(p, r.b)
		r.b = r.b[n:]
		return n, nil
	}
	if r.t == len(tail) {
		return 0, io.EOF
	}
	n := copy(p, tail[r.t:])
	r.t += n
	return n, nil
}

// ReadByte implements io.ByteReader.
func (r *TailReader) ReadByte() (byte, error) {
	if len(r.b) > 0 {
		c := r.b[0]
		r.b = r.b[1:]
		return c, nil
	}
	if r.t == len(tail) {
		return 0, io.EOF
	}
	c := tail[r.t]
	r.t++
	return c, nil
}
