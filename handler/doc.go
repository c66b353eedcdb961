// Package handler is the JSON-RPC 2.0 method table of jetrpc: typed
// registration, params decoding, dispatch of one message (a request or a
// batch) to its reply, and a net/http adapter. It needs no network: bytes
// of a message in, bytes of the reply out.
//
// # Overview
//
// Methods are plain Go functions registered with their params and result
// types:
//
//	t := handler.NewTable()
//	handler.Register(t, "add", func(ctx context.Context, p [2]int) (int, error) {
//		return p[0] + p[1], nil
//	}, handler.Inline())
//	reply := t.Dispatch(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`))
//
// All reflection, and sonic's codec compilation, happens at registration;
// a call does no reflection. Params of booleans, numbers, strings and raw
// JSON, and results of those kinds and of slices of them, are decoded and
// encoded by hand with no allocation: a Dispatch of such an inline method
// allocates nothing. Other types go through github.com/bytedance/sonic.
//
// Params may be any Go type: a struct takes them by position (an Array,
// into its fields in order) and by name (an Object, by json tag, exact
// case); a field is required unless it is a pointer, slice, map or
// interface or is tagged omitempty, and params that do not fit are
// answered -32602 naming the param. A result that implements
// JSONAppender writes itself, and a Raw is written verbatim wherever it
// appears. Register lists every accepted type. Besides Dispatch, the
// table is served by package engine (event loops) or mounted in net/http
// with NewHTTPHandler.
//
// # Terminology
//
// A message is the text of one request or one batch. The execution class
// of a method is inline (Inline option: it runs on the caller, for methods
// that never block) or blocking (the default: it may block, and runs on a
// worker when the caller must not block). A notification is a request
// without id: it never gets a reply, not even an error.
//
// # Errors
//
// A method returns an error to fail a call. An *Error is sent with its
// code, message and data; a context error is sent as
// parser.CodeCancelled or parser.CodeDeadline; any other error as -32603
// "Internal error" (its text only with Options.ExposeErrors). The codes
// are defined once, in package parser (parser.Code and its constants);
// ErrInvalidParams and the other Err values here carry them, for returning
// and for errors.Is. A panic is recovered, logged, and answered
// with -32603 for that request alone. Faults of the message itself are
// answered as the JSON-RPC 2.0 specification says: -32700 for invalid
// JSON, -32600 for an invalid request (with its id when the id itself was
// valid), -32601 for an unknown method, -32602 for params that do not fit
// the method, naming the param. JSON-RPC 1.0 requests are served in 1.0
// form unless Options.RejectV1 is set.
//
// # Concurrency
//
// Register every method before the first Dispatch; after it the table is
// immutable and Dispatch is safe from any number of goroutines. Dispatch
// runs a single request on the calling goroutine. The elements of a batch
// run on the caller when all are inline and the batch is at most
// Options.ParallelBatch long; otherwise blocking elements, and chunks of
// long runs of inline ones, run in parallel on the worker pool, and the
// replies are gathered into one array in request order. Within a batch,
// notifications are not ordered with respect to other elements. When the
// worker queue is full, a blocking element is answered at once with
// parser.CodeServerBusy rather than queued.
//
// DispatchInline is the entry for event loops: it never blocks. It runs
// what needs no worker and returns Replied (or Malformed, for text that is
// not JSON: a stream cannot be framed after it); what needs a worker it
// returns as Deferred, filling a Pending with a copy of the message and
// its parse, which the transport runs on a goroutine of its own
// (Pending.Run) or answers busy (Pending.Busy) — the message is parsed
// once. That goroutine must not be one of the table's workers (Workers,
// UsesPool): a batch waits on them for its elements.
//
// # Server push and subscriptions
//
// A server that can send messages of its own (the engine, over WebSocket
// and streams) puts the request's connection in its context as a Conn;
// ConnFrom takes it out, and Conn.Send or Notify send that client a
// message later, from any goroutine. RegisterSubscription builds the
// subscribe pattern of geth on it:
//
//	handler.RegisterSubscription(t, "clock", func(ctx context.Context, p [1]int, sub *handler.Subscription) error {
//		go func() {
//			for n := 1; sub.Context().Err() == nil; n++ {
//				time.Sleep(time.Duration(p[0]) * time.Millisecond)
//				_ = sub.Notify(n) // {"jsonrpc":"2.0","method":"clock_subscription","params":{"subscription":ID,"result":n}}
//			}
//		}()
//		return nil
//	})
//
// clock_subscribe answers the subscription's id; clock_unsubscribe [id]
// answers true; the subscription also ends when its connection closes.
// Notifications never precede the subscribe reply. Subscription.NotifyRaw
// sends a result already encoded, checked and compacted, so that one
// message can go to many subscriptions without being encoded again;
// Subscription.NotifyPrepared sends a Prepared (NewPrepared, made once
// per message), so that a connection that compresses (a PreparedSender,
// as the engine's are) shares one compressed copy of it with the others.
//
// A method that sends messages of its own while it runs (progress,
// partial results, logs: Notify(ConnFrom(ctx), …)) has them reach the
// client before its reply: the engine's Conn of a call is a DirectConn,
// whose messages wait for no reply, over WebSocket and streams, and an
// HTTP call answered as an event stream has one of its own. Code that
// sends after its method has returned, or from a goroutine it started,
// and must not overtake the reply (a subscription made by hand) sends
// through Connection(ConnFrom(ctx)), the connection's Conn, whose
// messages wait for the replies of the requests received before them,
// as a Subscription does.
//
// SubscriptionMethods renames the three methods, to speak another
// protocol's names (Solana's accountSubscribe, accountUnsubscribe and
// accountNotification). RegisterSubscriptionKinds serves geth's whole
// shape, several kinds of subscription under one subscribe method whose
// first param names the kind, each kind typed with its own params (see
// NewSubscriptionKind), sharing one unsubscribe and one notification
// method:
//
//	handler.RegisterSubscriptionKinds(t, "eth", []handler.SubscriptionKind{
//		handler.NewSubscriptionKind("newHeads", func(ctx context.Context, _ struct{}, sub *handler.Subscription) error { … }),
//		handler.NewSubscriptionKind("logs", func(ctx context.Context, p struct{ Filter LogFilter }, sub *handler.Subscription) error { … }),
//	})
//
// eth_subscribe ["logs", {…}] decodes {…} into the logs kind's params
// (-32602 naming the param when it does not fit); an unknown kind is
// answered -32601 `no "K" subscription in eth namespace`, as geth
// answers. Renamed or not, of one kind or several, the subscriptions
// of a table count together against its limits, and all are
// Subscriptions: NotifyRaw, and topics, work on every one alike.
//
// Topics, the fan-out of one message to every subscription bound to a
// name, on one node or across nodes through a broker, are package
// handler/topics, built on these subscriptions; package
// handler/natsbroker carries them between nodes over NATS.
//
// # Streamed results
//
// RegisterStream registers a method whose result is an array it
// produces element by element (an iter.Seq2): a transport that can
// (the engine, NewHTTPHandler) sends it as it is made, in bounded
// memory, pausing the method while the client reads slowly; Dispatch and
// batches build it whole. A failure once the result has begun to go
// ends it flagged ("_streamStatus":"failed", "_streamError"): see
// RegisterStream. RegisterTextStream does the same for one JSON string
// made of pieces of text, and StreamEnvelope puts either inside a JSON
// value (an object around the streamed text, as MCP's resources/read
// answers). A transport takes the parts through a ReplySink
// (Pending.StreamTo).
//
// # Cancellation
//
// A method's context is done when its call is cancelled: its client went
// (a transport cancels the context it passes), or, with Options.Cancel,
// the client sent a cancel notification naming the call's id (LSPCancel:
// $/cancelRequest {"id":…}; MCPCancel: notifications/cancelled
// {"requestId":…}) on the same connection. The table serves those
// notifications as inline methods that hand the id, as the JSON the
// client sent, to the connection's CancelCall (Canceller): ids match
// byte for byte, so 1 and "1" differ, and an unknown or finished id, or
// one of another connection, does nothing. A call so cancelled answers
// per Options.CancelReply — CodeRequestCancelled (-32800), the default,
// or nothing — whatever its method returns (AppendCancelled); a batch's
// elements are not reached. A method that returns its context's error
// is counted and logged as parser.CodeCancelled (-32001). Options.Cancel
// off, the default, costs a call nothing.
//
// # Call metadata and interceptors
//
// A transport describes who is calling in a Meta — the transport, the
// addresses, the HTTP head (a WebSocket's upgrade head), the caller's
// Grants — carried by a CallContext it reuses call after call; methods
// and interceptors read it with MetaFrom, without allocating. Interceptors
// (Use) run around every call, in the order added (the first sees the
// call first and its outcome last): single requests, each element of a
// batch, notifications, and the calls that fail before any method runs
// (invalid request, unknown method, invalid params, a message that is not
// JSON). An interceptor may refuse a call with an error, answer it
// itself with a result (Call.Answer: the method does not run, and the
// interceptors outside see that success as any other; a notification
// gets no reply, and in a batch only that element is answered), replace
// its context (a deadline, values, WithGrants), and read its outcome
// after Call.Next (Code, Err, Result, Duration). It runs where its call
// runs: on the engine's event loop for inline methods and faults
// (Call.Inline), where it must not block. Package handler/idempotency
// is such an interceptor: it answers a retried call (same key, same
// request) with the stored outcome of the first. An interceptor added
// with UseWhen has a Filter that decides, before the chain runs, whether
// it wants a call; a call no interceptor wants runs as without
// interceptors (a tracer that samples 1 % costs the rest its filter
// alone). Batch hooks (UseBatch) run around each batch, leaving values
// its elements' interceptors read (Call.Batch); a tracer names a call's
// span (Call.SetSpan) for the access log's trace_id and span_id and for
// the metrics' exemplars — package handler/otel does all three. A method reads the call it runs for — its id, its name,
// whether it is a notification — from its context with CallFrom, on
// every transport and for each batch element alone, without allocating. A method registered with Require runs only for callers that
// hold the permissions (GrantsFrom); others get parser.CodeForbidden (-32003).
// An Authorizer (package handler/auth builds them) gives the grants from
// a request's head.
//
// # Buffer lifetimes
//
// Dispatch reads the message only until it returns and appends the reply
// to the caller's buffer. A method whose params are Raw receives a slice
// of the message: it is valid until the method returns and must not be
// modified; copy it to keep it. Strings decoded from params are copies.
// The strings of a Meta, a Call's ID, Params and Result, and a
// CallInfo's ID are views of the transport's buffers, valid until the
// call (or the interceptor) returns; the Raw given to Call.Answer is
// copied. The context a method gets is reused by its transport for later
// calls once the method returns: a goroutine that outlives the call must
// take what it needs first (ConnFrom(ctx).Context() is the connection's
// own, for the connection's life).
//
// # Limits
//
// Every limit has a default and an option: batch length (DefaultMaxBatch,
// WithMaxBatch), nesting depth (parser.DefaultMaxDepth, WithMaxDepth),
// the batch length above which inline elements run in parallel
// (DefaultParallelBatch, WithParallelBatch), the worker pool
// (pool.DefaultWorkers goroutines, pool.DefaultQueue queued tasks,
// WithWorkers), and for HTTP the body size (parser.DefaultMaxSize).
//
// # Fair use
//
// A public endpoint also needs limits on what each call may take. Each
// is checked per call — every request, notification and batch element
// alone — before its method runs, and refused calls pass through the
// interceptors like others (Call.Code):
//
//   - Deadlines (WithCallTimeout, Timeout per method): the method's
//     context carries the deadline and is done when it passes; a blocking
//     call still running then is answered parser.CodeDeadline at once — inside a
//     batch, beside its siblings' results — and its late result is
//     dropped. Under the engine such a call runs on the engine's worker
//     and the event loop answers it at its deadline (Pending.Deadline,
//     RunHere: no goroutine hop); from Dispatch, Pending.Run and a batch
//     it runs on a worker of the table's pool while its caller waits for
//     it or its deadline. An inline method is never cut short: it must
//     not block anyway.
//   - Rate limits (WithRateLimit with ratelimit.Limits, Cost per method):
//     token buckets in cost units (package handler/ratelimit), one per
//     client identity (the principal an Authorizer named, else the remote
//     IP address) and one per connection (Meta.Quota, from
//     Table.NewQuota); a call past them is answered
//     parser.CodeLimitExceeded at once, never queued, and a notification
//     is dropped; both are counted (Table.LimitRefusals). A batch of n
//     elements spends n calls' costs.
//   - Concurrency per method (MaxConcurrent): calls beyond the bound are
//     answered parser.CodeServerBusy at once.
//   - Subscriptions (WithMaxSubscriptions): per connection and per table,
//     answered parser.CodeTooManySubscriptions; unsubscribing and disconnecting
//     give the slot back.
//   - Reply sizes (WithMaxResponseSize): a reply past MaxResponseSize is
//     replaced by parser.CodeResponseTooLarge; once a batch's replies (error
//     replies counted) pass MaxBatchResponseSize, its remaining elements
//     are answered parser.CodeResponseTooLarge without running.
//
// None of them allocates per call, and a table without them runs its
// methods as directly as before.
//
// # Seeing inside
//
// WithMetrics counts every call per method — started, handled by code,
// its duration in a histogram — in counters made at registration and
// striped per CPU; Table.Metrics and Table.LimitRefusals read them, as
// the types of package handler/stats, and package engine/metrics exports
// them to Prometheus. WithAccessLog logs one record per message through
// log/slog, sampled, slow messages always. Neither allocates for a call it does not log. MethodInfo keeps
// the Go types of each method's params and result (and Summary, Errors,
// Notifies) for discovery: package handler/openrpc answers rpc.discover,
// registered with RegisterExtension, the way to serve an "rpc." name.
//
// # For transports
//
// A service registers methods and calls nothing below; a transport —
// package engine, HTTPHandler, or one of your own — drives the table
// with these: Dispatch, or DispatchInline on an event loop, which runs
// what needs no blocking and hands the rest back planned in a Pending
// (Outcome says which) for a goroutine of the transport's to Run, RunHere
// under its Deadline, or answer Busy; a CallContext reused call after
// call, its Meta set from the request (SetHTTPHeadParsed, SetHTTPHead,
// SetHTTPRequest) and the connection given with ContextWithConn for
// server push; AppendFault for the faults met before a message reaches
// the table; AuthStatus and AuthText to answer an Authorizer's refusal;
// Refused and RefusedConn for the access log; Workers and UsesPool to
// keep a pool of its own. They stay in this package because they are the
// table's dispatch itself, on every request's path. The rules of a
// request's head that every HTTP transport applies alike — content type,
// health check, CORS, Host names, trusted proxies, the refusal texts and
// the access log's reasons — are package handler/httprules.
//
// # Packages around it
//
// Built on this package: handler/topics (topics and their fan-out),
// handler/auth (API keys, JWT, IP lists), handler/openrpc (rpc.discover),
// handler/natsbroker (topics between nodes over NATS),
// handler/idempotency (retries answered with the first call's outcome),
// handler/demo (the
// bundled server's methods), handler/textlog (an allocation-free slog
// text handler). Beneath it, imported by it: handler/httprules,
// handler/ratelimit (the token buckets behind Options.RateLimit),
// handler/stats (the counters' snapshot types an exporter reads).
package handler
