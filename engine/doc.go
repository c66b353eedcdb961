// Package engine serves a handler.Table over TCP and Unix sockets from
// gnet event loops: HTTP/1.1, WebSocket and raw JSON streams on every
// listener, with no goroutine per connection and no allocation per
// request.
//
// # Overview
//
//	t := handler.NewTable()
//	handler.Register(t, "add", add, handler.Inline())
//	e := engine.New(t, engine.WithAddrs("tcp://127.0.0.1:8080", "unix:///run/rpc.sock"))
//	if err := e.Run(ctx); err != nil { ... } // serves until ctx is done, then stops gracefully
//
// Each connection's protocol is sniffed from its first byte: an
// upper-case letter (an HTTP method) starts an HTTP/1.1 request, anything
// else a stream of JSON values (newline-delimited JSON, or values
// separated by any whitespace), so that every stream input — even a bare
// true or null — gets a JSON-RPC answer. Over HTTP a request is a POST
// whose body is one message (Content-Type as httprules.AcceptableContentType
// says, 415 otherwise); the reply is 200 application/json, or 204 when
// there is nothing to reply; keep-alive, pipelining, chunked bodies and
// Expect: 100-continue work; GET of the health path answers 200
// (httprules.IsHealthCheck), and GET of a page's path (WithPage: the
// Prometheus exposition of engine/metrics, say) answers the page, made
// on a worker; an HTTP/1.1 request needs exactly one Host
// header (400 otherwise). Chunk extensions and trailers count against
// MaxHeaderSize in all (413, 431). With Options.Compression (off by
// default) a reply body of at least CompressionMinSize bytes is sent gzip
// or zstd as the request's Accept-Encoding allows, and a request body
// sent with Content-Encoding gzip or zstd is inflated within
// MaxMessageSize (413 past it; 415 for another coding). With
// Options.WSCompression (off by default) a WebSocket client's
// permessage-deflate offer is answered without context takeover either
// way: replies and server messages of at least CompressionMinSize bytes
// go out compressed, and compressed messages are inflated within
// MaxMessageSize (close 1009 past it). A message sent to many
// connections as a handler.Prepared (the connections are
// handler.PreparedSenders: package handler/topics' fan-out) is
// compressed once for all of them: each connection's message is its own
// prefix and suffix in DEFLATE stored blocks around the shared
// compressed payload, assembled by its loop (prepared.go).
// Over a stream each reply is followed by
// "\n" and replies may come in any order.
//
// The result of a streamed method (handler.RegisterStream) goes out as
// the method makes it, in parts of about 32 KiB: a chunked body over
// HTTP/1.1 (delimited by the connection's close over HTTP/1.0), fragments
// of one text message over WebSocket, the bytes themselves over a stream;
// compressed part by part when negotiated. The engine holds at most
// Options.StreamWindow bytes of it: a client that reads slowly pauses
// the method on its worker, and one that goes ends it. While a streamed
// reply goes on a WebSocket or a stream, the connection's other replies
// and its server messages wait for it to end.
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
// origin checked against Options.CORS.Origins). Each text or binary message
// is one JSON-RPC message or batch; every reply and every server message
// is a text message (JSON is UTF-8, and a browser hands a binary message
// to onmessage as a Blob); replies may come in any order. Fragmented messages, ping/pong and
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
// client whose unsent output and queued server messages together would
// pass MaxPushQueue bytes is disconnected (Send returns
// handler.ErrSlowConsumer), so that what one client that stops reading
// costs is bounded by that one figure. The
// connection's context is done when it closes, or when a WebSocket's close
// frame has gone out, ending its subscriptions; Send then returns
// handler.ErrConnClosed. A server message queued while a request runs is
// written before the replies to the requests after it. Over a WebSocket,
// Send refuses a message that is not valid UTF-8 (handler.ErrNotUTF8).
//
// # Who is calling
//
// Every method and interceptor finds the call's metadata in its context
// (handler.MetaFrom): the transport, the remote and local addresses, and
// over HTTP the request's method, target and headers — over a WebSocket
// those of its upgrade request, kept for the connection's life. The
// engine fills it in a handler.CallContext of the connection, and copies
// an HTTP request's head once into the job of a message that runs on a
// worker: asking costs nothing, and the strings are views valid until the
// call returns. Access is decided in three places, each before the next:
//
//   - the connection: Options.AcceptConn sees its address as it is
//     accepted, before any byte is read (IP lists: handler/auth.IPFilter);
//   - the head: Options.Hosts refuses other Host names (403, DNS
//     rebinding), Options.CORS answers preflights and marks replies to
//     allowed origins (and bounds WebSocket origins), and
//     Options.Authorize decides from the head of each HTTP call, each
//     WebSocket upgrade and each stream connection (401, 403, or for a
//     stream one -32003 error and close) and gives the caller's grants
//     — or, under Options.AuthOptional, lets a caller that presents no
//     credentials in anonymous, with none;
//   - the call: the table's interceptors (handler.Table.Use) and the
//     permissions a method requires (handler.Require). With
//     Options.MethodHeader, a POST that names its method in that header
//     has its method's existence, grants and rate limits checked from
//     its head, before its body is parsed (handler.Table.Admit;
//     methodheader.go).
//
// # Calls by GET
//
// A method registered with handler.HTTPGet may also be called by
// GET <path>?method=NAME&id=ID&params=JSON (URL-encoded): the engine
// builds the JSON-RPC request from the query in a pooled buffer and runs
// it as a POST's, the same checks applied, and its successful reply says
// Cache-Control as the method set it (an error: no-store). A GET of a
// method not marked is answered 405 with Allow: POST, a malformed query
// 400. Only a GET with a method parameter, off the health path and the
// pages, is a call (httpget.go has the rules; cmd/jetrpc/README.md the
// examples).
//
// Behind a proxy a connection's address is the proxy's: Options.TrustedProxies
// names the proxies whose X-Forwarded-For or X-Real-IP is believed, and
// handler.Meta.ClientIP — the address the rate limits and the access
// log use — is then the client's.
//
// # Cancellation
//
// A call's context is done when its connection closes: an HTTP client's
// EOF counts as its going (as for net/http), with requests buffered
// behind the call or replies held for order, and the reply to whatever
// the method then answers still goes to a client that only half-closed;
// a stream client's EOF is a half-close, whose calls finish. While a
// connection is held back (Back-pressure) its socket is not read: a
// client's reset is seen at once, its FIN once the socket is read again. With the
// table's handler.Options.Cancel, each single call of a blocking method
// runs with a pooled context of its own, which a cancel notification
// naming its id on the same connection cancels (the connection is a
// handler.Canceller); no allocation per call either way, even for a
// method that waits on Done. A cancelled call answers per
// handler.Options.CancelReply; a batch's elements and inline calls are
// not reached.
//
// # Terminology
//
// A message is one JSON-RPC request or batch. A method is inline or
// blocking (see handler.Inline). The event loops are gnet's; the workers
// are a pool.Workers of the engine, never the table's own (New panics).
// Inside, a connection is a core (buffers, back-pressure, timers, work on
// workers, push queue, closing) and a codec, the protocol: HTTP/1.1, a
// stream, or WebSocket, which an HTTP upgrade switches to. The HTTP/1.1
// wire format is package parser/http1's, shared with handler and jetrpc
// bench.
//
// # Concurrency
//
// Inline methods run on the event loop that read the message: the fastest
// path, with no allocation. A message that needs a blocking method, or a
// batch that runs in parallel, is handed to a worker with the parse the
// loop made (handler.DispatchInline and handler.Pending: it is parsed
// once), so that it never holds up the loop's other connections; its
// reply comes back to the loop, one Wake per burst of replies. Every
// connection goes on reading while its messages run on workers, up to
// MaxInFlight at once: over a stream or a WebSocket replies go out as
// they are ready; over HTTP they go out in request order, each held until
// those before it are out (MaxInFlight also bounds the replies held).
// When the worker queue is full a message is answered -32000 "Server busy"
// at once. When the event loops take every P (Options.Loops of
// GOMAXPROCS or more, the default), a worker runs only when a loop lets
// it: a read that hands one message to a worker yields the loop once
// (runtime.Gosched), so that a method that does not block answers with
// the read's own output rather than a loop pass later — the latency of
// every client that sends one request at a time.
//
// A blocking call with a timeout (handler.WithCallTimeout,
// handler.Timeout) runs on the engine's worker like any other, with no
// second goroutine beside it (handler.Pending.RunHere); its loop watches
// the deadline — one timer per loop, re-armed only when an earlier
// deadline comes — and answers -32002 when it passes, in the call's
// place in the order of replies. The method's context ends then; its
// late result is dropped when it comes. A batch's timed elements are
// answered by the table, beside their siblings.
//
// # Buffer lifetimes
//
// A message is served from gnet's input buffer in place and released when
// served; a message run on a worker is first copied (into the pooled state
// of its handler.Pending). Replies are appended to a per-loop buffer and
// written with one Write per read; an inline reply is written in place
// behind a head (HTTP) or frame header (WebSocket) reserved for it, and
// moves only when its length needs another number of digits or another
// header size than the loop's last reply. gnet copies what the socket does
// not take at once.
//
// # Limits
//
// Every limit is a field of Options with an exported default constant
// beside it (DefaultMaxConns, DefaultIdleTimeout and the rest; the
// message size's is parser.DefaultMaxSize, the one 5 MiB default of
// engine and handler), whose docs state its scope and what passing it does —
// 413 or 431 over HTTP, an error and close on a stream, close 1009 on a
// WebSocket, a connection not read or closed; a zero field means the
// default. Passing MaxPendingOutput, MaxPushQueue and MaxOutputBudget is
// told in Back-pressure, Server push and Memory budget. The batch length
// and nesting depth limits are the table's (handler.Options). The list
// of limits, with their jetrpc serve flags, is the limits table of
// cmd/jetrpc/README.md.
//
// # Back-pressure
//
// A connection is held back — its input is not read — while its unsent
// replies are over MaxPendingOutput, while it holds more than its share
// of the memory budget under pressure (below), and, while input is left
// unread, while its messages in flight are at MaxInFlight (over HTTP,
// also the replies it holds for order). On Linux a connection held back
// is not read from its socket either: its descriptor's epoll
// registration loses EPOLLIN until it may be read again, so the kernel
// keeps what the client sends and TCP's receive window stops the client;
// its output still flows, and a client that resets is still closed. A
// client that stops reading and goes on sending finds its writes
// blocking, and is closed by WriteTimeout. gnet may read once more after
// it has flushed a connection's output (one read, at most 64 KiB); a
// client that gets more than MaxMessageSize+MaxHeaderSize and two such
// reads into the server while held back is closed. A WebSocket client
// that leaves while held back is closed at once (its FIN is still
// polled: a WebSocket cannot half-close); a stream or HTTP client's FIN
// is read once its connection may be read again, so that a client that
// half-closes still gets its replies. On other systems, and with gnet's
// poll_opt build tag, gnet goes on buffering a held-back connection's
// input, and a client that sends more than MaxMessageSize+MaxHeaderSize
// meanwhile is closed. A connection whose output has stopped moving is looked at by
// the ticker every 10 ms at first, every 100 ms after 100 ms, and once a
// second after a second (at once when its client reads all of it), so
// that thousands of clients that never read cost little CPU.
//
// # Memory budget
//
// Options.MaxOutputBudget (default: a quarter of the memory available to
// the process, physical or cgroup, at most DefaultMaxOutputBudget, 64 MiB)
// bounds what the server holds for all its connections together: the
// bytes of their unsent replies (gnet's output buffers) and of their
// queued server messages, counted exactly at every read and wake of each
// connection and summed in one atomic counter (a connection holding bytes
// is looked at at least once a second; a push queue is counted as it
// grows too, by 16 KiB steps). Past 3/4 of it (pressure), a
// connection holding more than its share — 3/4 of the budget divided
// among the connections holding any — is held back until it is under its
// share or the pressure is over; clients that read their replies hold
// little and are served as before. Over the budget for half a second, or
// 1/8 over it at once, the connections holding the most are closed,
// largest first, until what the rest hold is under 3/4 of the budget,
// each with a warning log ("server output budget exceeded"): server
// messages cannot be held back, so subscribers that do not read end
// there (a server message for one of them is refused at once, and it is
// closed then). Once an eighth of the budget (at least 4 MiB) has been given
// back, by those closes or by clients that leave, the ticker returns the
// freed memory to the OS (two collections, then debug.FreeOSMemory; at
// most once a second), so that the RSS falls back within about a second
// (measured: 0.8 s after 500 attackers left, instead of not at all in
// 10 s without it).
//
// The budget counts payload; the process's RSS grows by more: gnet keeps
// each write it could not send in a buffer rounded up to a power of two,
// and the garbage collector lets the heap grow past what is live
// (GOGC), more so while many connections are closed at once. With a
// 64 MiB budget, on 2 cores, 500 connections that pipeline 4 KiB
// requests and never read grew the RSS by about 100 MiB, 300 WebSocket
// clients of a 1 ms clock (100-byte messages) by about 150 MiB, and
// subscribers of a topic that never read (bench/scripts/slowsubs) by
// 132-144 MiB for 300 of them, 272-385 MiB for 1,000 and 338-392 MiB for
// 2,000: count on about twice the budget, and up to about 0.25 MiB more
// for each connection that holds bytes. GOMEMLIMIT narrows it (2,000
// such subscribers under a 128 MiB budget: 262-288 MiB with
// GOMEMLIMIT=300MiB, 455-703 MiB without). The kernel's socket buffers
// come on top and are not the process's: a connection that never reads
// ties up what TCP's autotuning gives it (about 2 MiB on loopback),
// bounded by the system's net.ipv4.tcp_mem.
//
// # Lifecycle
//
// Start listens and serves in the background; Addrs tells the bound
// addresses (port 0 works); a unix:// socket file is replaced only when
// nobody listens on it. Run is Start, then Stop once its context is done,
// waiting at most Options.StopTimeout (DefaultStopTimeout); it returns
// nil after a clean stop:
//
//	if err := e.Run(ctx); err != nil {
//		log.Fatal(err)
//	}
//
// Stop stops accepting, lets the requests already
// received finish and their replies reach the wire (an HTTP reply then
// says Connection: close), then closes; when its context ends first it
// returns without waiting for handlers that ignore their cancelled
// context.
//
// For a rolling deploy, Options.DrainGrace (or Drain and DrainFor before
// Stop) first takes the node out of its load balancer's pool: the health
// check answers 503 and each HTTP connection's next response says
// Connection: close, while calls are still served for the grace. With
// Options.CloseNotice, WebSocket and stream clients get a notification
// before their connection closes, to reconnect elsewhere and subscribe
// again.
//
// Readiness is apart from draining: Options.Ready (a check the health
// check consults, fast and never blocking) and SetNotReady/SetReady (the
// application's own switch, with its reason) make the health check
// answer 503 {"status":"not_ready","reason":...} while calls go on and
// connections persist; they can be undone, a drain cannot.
//
// Accepting uses Go's net package, so running out of file descriptors
// (EMFILE) pauses accepting instead of stopping the engine.
package engine
