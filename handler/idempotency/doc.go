// Package idempotency makes retries safe: an interceptor
// (handler.Table.Use) that runs a call carrying an idempotency key once,
// and answers every retry with the same key the outcome of that first
// call, without running the method again — the Idempotency-Key of
// Stripe's API, for JSON-RPC.
//
//	store := idempotency.New(idempotency.Options{})
//	t.Use(store.Intercept)
//
// # Overview
//
// A client that sends a call that must not happen twice — a payment, an
// order — gives it a key of its own choosing (a UUID), and sends the
// same call with the same key again when it does not know whether the
// first arrived: its connection dropped, its HTTP request timed out. The
// Store keeps the outcome of the first call of each key, and:
//
//   - a call with a new key runs, and its outcome is kept;
//   - a call with a known key and the same request (method, params, and
//     whether it is a notification) is answered the kept outcome — a
//     result, or an error CacheError chose to keep — without running:
//     interceptors outside it, the metrics and the access log see it as
//     a success like any other (handler.Call.Answer);
//   - a call with a known key and a different request is answered
//     ErrKeyReused (CodeKeyReused, -31001);
//   - a duplicate of a call still running waits for its outcome, up to
//     Options.Wait and within its own context, then answers with it — or,
//     with a negative Wait, and always for an inline method's call (which
//     runs on an event loop, where nothing may wait), is answered
//     ErrInProgress (CodeInProgress, -31002) at once: the client retries
//     later with the same key.
//
// A call without a key runs as if there were no Store. The key is taken
// from the Idempotency-Key header of the HTTP request by default
// (HeaderKey); over WebSocket and streams, where there is no header per
// call, from a param (ParamKey, HeaderOrParamKey), or from any func
// (Options.Key). Notifications take part too: a notification retried
// with its key does not run again (and gets no reply, as ever).
//
// Errors are not kept unless Options.CacheError says so: by default a
// retry after an error runs the method again, which is what a client
// retrying after a failure wants — and what a method must then be safe
// for (an error after the money moved must not be retried into a second
// payment: such a method either returns its errors only before any
// effect, or has CacheError keep them). Stripe keeps the outcome of every
// request that began to run, errors included; a payments service that
// wants that keeps every error its methods return — say
// func(code parser.Code, _ error) bool { return code > -32000 || code < -32768 }, the
// application range — and leaves the server's refusals (busy, rate
// limit, cancelled) to be retried.
//
// # Terminology
//
// A key is the client's name for one request; its scope is whose it is
// (Options.Scope): by default the caller's principal (handler.Meta.Principal,
// which the transport's Authorizer names), else, for an anonymous
// caller, its IP address, else (in process, Unix sockets) one shared
// scope. Keys of different scopes never meet, so one caller can neither
// read nor block another's outcomes by guessing keys. An entry is the
// record of one key: in flight while its first call runs, then complete,
// holding the outcome, until it expires.
//
// # Why a package
//
// The behaviour fits in a screen of an Example, but its parts that matter
// are the easy ones to get wrong in a copy: the wait for a call in
// flight that honours both a bound and the caller's context, the entry
// of a call whose inner interceptor panicked (dropped, not left in
// flight forever), eviction that never drops an entry in flight, keys
// scoped to the caller, and never waiting on an event loop. So it is a
// package, tested under the race detector and over sockets; package
// handler gives it only the general means (Call.Answer, Call.Inline).
//
// # Concurrency
//
// A Store is safe from any goroutine; its entries are guarded by one
// mutex, held only to look up, add and drop entries, never while a
// method runs or a duplicate waits. Inside a batch each element is its
// own call, with its own key; two elements of one batch with the same
// key are duplicates like any other (one may wait for the other, which
// runs in parallel, or be answered ErrInProgress).
//
// # Buffer lifetimes
//
// The Store copies what it keeps: the key and scope, and the result of
// the first call. The key a Key func returns may be a view of the
// call's buffers. Kept errors are kept as the values the methods
// returned, and must not be modified afterwards.
//
// # Limits
//
// Entries are bounded in count (Options.MaxEntries, DefaultMaxEntries)
// and in time (Options.TTL, DefaultTTL: a day from the first call):
// when full, the oldest complete entries make room; an entry in flight
// is never dropped, and a new key finding every entry in flight is
// answered ErrFull (parser.CodeServerBusy) rather than run unprotected.
// What is kept is bounded in bytes too (Options.MaxBytes,
// DefaultMaxBytes: 64 MiB of results, keys and scopes): the oldest
// complete entries make room, and an outcome larger than the whole
// budget is not kept, so its retries run again. Keys are at most MaxKeyLength (255) bytes; a longer one is answered
// ErrKeyTooLong. A duplicate waits at most Options.Wait (DefaultWait).
// The Store lives in one process: replicas behind a load balancer each
// have their own, so route a client's retries to the same replica
// (sticky sessions) or the guarantee holds per replica only. A
// subscribe method is no place for a key: its retry would get the first
// call's subscription id without a subscription of its own.
package idempotency
