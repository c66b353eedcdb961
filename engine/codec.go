package engine

// NOTE: a codec is one protocol on a connection: HTTP/1.1 (http.go), a
// JSON stream (stream.go) or WebSocket (ws.go). It owns its own state and
// does the framing both ways; everything the protocols share — buffers,
// back-pressure, timers, work on workers, the push queue, closing — is
// the connection core's (conn.go), which the codec calls: run for each
// complete message, markPartial/clearPartial for the read timeout,
// closeAfterFlush to close. A codec's methods run on the connection's
// event loop (or the goroutine of a connection finishing off its loop)
// and must not block.

import "github.com/jetrpc/jetrpc/handler"

// codec is the protocol of a connection.
type codec interface {
	// open is called once when the codec becomes the connection's.
	open(c *conn)
	// serve frames and runs the messages at the start of in, appending
	// the replies to out while c.canRun() and it is not blocked, and
	// returns the extended out
	// and how many bytes of in it consumed (a partial message is left
	// unconsumed, or gathered by the codec and consumed). After an
	// upgrade it returns the codec that serves the rest, and the core
	// calls it with what follows; otherwise next is nil.
	serve(c *conn, in, out []byte) (o []byte, used int, next codec)
	// ready reports whether serve can make progress with the input
	// buffered: not while the codec is blocked, nor while a message of
	// known size is still arriving (then gnet's buffer is not even
	// peeked). The core asks it once per read.
	ready(c *conn) bool
	// blocked reports whether the codec can start no message now, beyond
	// the core's limits (HTTP: replies held for order at the limit).
	blocked(c *conn) bool
	// reply appends the framed reply of a job that ran on a worker, or
	// holds it until the replies before it are out; it takes j.
	reply(c *conn, out []byte, j *job) []byte
	// swap gives r the place of j, a job still on its worker, in the
	// order of replies: r holds the reply j gets at its deadline, and
	// reply is called with r next (HTTP keeps the order; the others have
	// none to keep).
	swap(j, r *job)
	// push appends a framed server message (streams and WebSocket).
	push(c *conn, out, msg []byte) []byte
	// ping appends a keep-alive probe (a WebSocket ping).
	ping(out []byte) []byte
	// goodbye appends what the protocol says before the server closes
	// the connection for why (a WebSocket close frame), if anything.
	goodbye(c *conn, out []byte, why closeReason) []byte
	// transport names the protocol.
	transport() transport
	// release returns the codec's buffers to their pools.
	release()
}

// transport is a connection's protocol.
type transport uint8

const (
	transportHTTP transport = iota + 1
	transportStream
	transportWebSocket
)

// meta returns the transport as call metadata names it.
func (t transport) meta() handler.Transport {
	switch t {
	case transportHTTP:
		return handler.TransportHTTP
	case transportWebSocket:
		return handler.TransportWebSocket
	}
	return handler.TransportStream
}

// replyGuess is the length of the last inline reply body of a loop. A
// reply's head depends on its body's length (HTTP Content-Length, a
// WebSocket frame's length field), and the body is written in place
// behind a head reserved from this guess; it moves only when the guess
// was wrong, which a steady workload makes rare.
type replyGuess struct{ n int }

// note records the length of a body.
func (g *replyGuess) note(n int) { g.n = n }

// moveBody moves the body out[from:] to start at to, inside out, and
// returns out resized to its new end.
func moveBody(out []byte, from, to int) []byte {
	n := len(out) - from
	if to > from {
		out = append(out, make([]byte, to-from)...)
	}
	copy(out[to:to+n], out[from:from+n])
	return out[:to+n]
}
