// Package engine serves a handler.Table over TCP and Unix sockets from
// gnet event loops: HTTP/1.1 and raw JSON streams on every listener, with
// no goroutine per connection and no allocation per request.
//
// # Overview
//
//	t := handler.NewTable()
//	handler.Register(t, "add", add, handler.Inline())
//	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:8080", "unix:///run/rpc.sock"))
//	if err := e.Run(ctx); err != nil { ... } // serves until ctx is done, then stops gracefully
//
// Each connection's protocol is sniffed from its first byte: a letter
// starts an HTTP/1.1 request, anything else a stream of JSON values
// (newline-delimited JSON, or values separated by any whitespace). Over
// HTTP a request is a POST whose body is one message; the reply is 200
// application/json, or 204 when there is nothing to reply; keep-alive,
// pipelining (replies in request order), chunked bodies and Expect:
// 100-continue work; GET of the health path answers 200; an HTTP/1.1
// request needs exactly one Host header (400 otherwise). Over a stream
// each reply is followed by "\n" and replies may come in any order.
//
// A client may half-close its side after its last request (shutdown
// SHUT_WR, as nc -N and socat do) and still read every reply: gnet closes
// a connection at EOF, so when work is still running then, the connection
// is finished by a goroutine on a duplicate of its descriptor, which also
// serves the complete requests still buffered. TCP cannot tell a half-close
// from a client that closed and left, so the connection's context is then
// cancelled only when that work is done (or a write fails, or Stop gives up).
//
// # WebSocket
//
// A GET with "Upgrade: websocket" on Options.WSPath (default "/") becomes
// a WebSocket (RFC 6455; the handshake is github.com/gobwas/ws's, the
// origin checked against Options.WSOrigins). Each text or binary message
// is one JSON-RPC message or batch, answered with a message of the same
// type; replies may come in any order. Fragmented messages, ping/pong and
// the close handshake work; unmasked frames, RSV bits, bad control frames
// and continuation errors close with 1002, text that is not UTF-8 with
// 1007, a message over MaxMessageSize with 1009 as soon as its frame
// header is read (the payload is never buffered). A client silent for
// PingInterval is pinged; one silent for IdleTimeout is closed (1001).
// Stop sends 1001 after the replies in flight.
//
// # Server push
//
// Every request's context carries its connection as a handler.Conn
// (handler.ConnFrom): a method can keep it and send that client messages
// later, from any goroutine, over WebSocket and streams (not HTTP:
// handler.ErrPushUnsupported). handler.RegisterSubscription builds geth's
// subscribe pattern on it. A server message never overtakes the reply to
// a request received before it was sent. It is written while the client
// keeps up (unsent output under MaxPendingOutput) and queued otherwise; a
// client whose queue passes MaxPushQueue bytes is disconnected (Send
// returns handler.ErrSlowConsumer), so that memory stays bounded. The
// connection's context is done when it closes, or when a WebSocket's close
// frame has gone out, ending its subscriptions; Send then returns
// handler.ErrConnClosed. A server message queued while a request runs is
// written before the replies to the requests after it. A message that is
// not UTF-8 goes out over a WebSocket as a binary frame.
//
// # Terminology
//
// A message is one JSON-RPC request or batch. A method is inline or
// blocking (see handler.Inline). The event loops are gnet's; the workers
// are a pool.Workers of the engine.
//
// # Concurrency
//
// Inline methods run on the event loop that read the message: the fastest
// path, with no allocation. A message that needs a blocking method, or a
// batch that runs in parallel, is copied and run on a worker, so that it
// never holds up the loop's other connections; its reply comes back to the
// loop. A stream connection goes on reading while its messages run on
// workers (up to MaxInFlight); an HTTP connection waits, since HTTP/1.1
// replies go out in request order. When the worker queue is full a message
// is answered -32000 "Server busy" at once.
//
// # Buffer lifetimes
//
// A message is served from gnet's input buffer in place and released when
// served; a message run on a worker is first copied into a pooled buffer.
// Replies are appended to a per-loop buffer and written with one Write per
// read; gnet copies what the socket does not take at once.
//
// # Limits
//
// Every limit has a default and an option: message size
// (DefaultMaxMessageSize, 413 over HTTP, an error and close on streams,
// close 1009 on a WebSocket),
// HTTP head size (DefaultMaxHeaderSize, 431), connections
// (DefaultMaxConns, lowered to the file descriptor limit; excess
// connections are closed on accept), messages in flight per connection
// (DefaultMaxInFlight), unsent output per connection
// (DefaultMaxPendingOutput: past it the connection is not read; a client
// that keeps sending is closed — as when its messages in flight are at
// MaxInFlight: unread input is bounded by MaxMessageSize+MaxHeaderSize),
// queued server messages per connection
// (DefaultMaxPushQueue), the idle, read (incomplete message) and write
// (unsent output that does not shrink) timeouts, and the WebSocket ping
// interval (DefaultPingInterval). The batch length and nesting depth
// limits are the table's (handler.WithMaxBatch, handler.WithMaxDepth).
//
// # Lifecycle
//
// Start listens and serves in the background; Addrs tells the bound
// addresses (port 0 works); a unix:// socket file is replaced only when
// nobody listens on it. Stop stops accepting, lets the requests already
// received finish and their replies reach the wire (an HTTP reply then
// says Connection: close), then closes; when its context ends first it
// returns without waiting for handlers that ignore their cancelled
// context.
// Accepting uses Go's net package, so running out of file descriptors
// (EMFILE) pauses accepting instead of stopping the engine.
package engine
