// Package payments is a small payments service built on jetrpc's public
// API the way an application developer would build one: open reads and
// keyed writes, transfers that are safe to retry, a subscription to the
// ledger, and a readiness check. It is the worked example behind the
// handler and engine docs, and its tests run it over real sockets.
//
// # Overview
//
// Register puts the service's methods on a table:
//
//   - balance_get {"account":A}: a balance, open to anonymous callers,
//     inline;
//   - transfer {"from":A,"to":B,"amount":N}: a transfer, for callers
//     holding the "write" grant, with a 2 s timeout. It is meant to be
//     run under an idempotency.Store (its retries with the same
//     Idempotency-Key, or "key" param over WebSocket, are answered the
//     first transfer's outcome instead of moving the money twice), and
//     its log line names the JSON-RPC request id (handler.CallFrom);
//   - history {"account":A}: every transfer of an account, newest first;
//   - ledger_subscribe ["transfers"] or ["account", A]: the transfers as
//     they happen, all of them or one account's, through topics
//     (handler.RegisterSubscriptionKinds over package handler/topics),
//     ledger_unsubscribe [id], notifications ledger_transfer.
//
// Ready is the readiness check for engine.WithReady: it fails while the
// service's store is marked down (SetStoreUp), so that the health check
// answers 503 and a load balancer stops sending calls.
//
// # Lifetimes
//
// A Service is safe for concurrent use; its Transfer values are copies.
package payments
