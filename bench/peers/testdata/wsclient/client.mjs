// A browser-style JSON-RPC 2.0 client over WebSocket, on the npm ws
// package through its browser API (addEventListener, MessageEvent.data),
// for jetrpc's interoperability tests (bench/peers/node_test.go).
//
//   node client.mjs ws://127.0.0.1:PORT/ [--deflate]
//
// One call (add [1,2] → 3), one batch, then clock_subscribe [5]: three
// notifications with the subscription's id counting 1, 2, 3, and
// clock_unsubscribe → true. On success it prints one JSON summary line
// ({"ok":true,…}) and exits 0; on any mismatch, error or after 10 s it
// prints why on stderr and exits 1. With --deflate (a server with
// --ws-compression): the connection must have negotiated
// permessage-deflate (ws offers it by default; here it compresses every
// message it sends), and a 200 KB echo must come back byte for byte.

import { createRequire } from "node:module";
import WebSocket from "ws";

const wsVersion = createRequire(import.meta.url)("ws/package.json").version;
const url = process.argv[2];
const deflate = process.argv[3] === "--deflate";
if (!url) {
  fail("usage: node client.mjs ws://HOST:PORT/");
}

let step = "connecting";
const timer = setTimeout(() => fail(`timeout after 10 s while ${step}`), 10_000);

function fail(why) {
  console.error(`wsclient (ws ${wsVersion}): FAIL: ${why}`);
  process.exit(1);
}

const show = (v) => JSON.stringify(v);

// Messages arrive through a queue read by next(), so the exchanges below
// read in order.
const queue = [];
const waiters = [];
function deliver(item) {
  const w = waiters.shift();
  if (w) w(item);
  else queue.push(item);
}
async function next() {
  const item = queue.length ? queue.shift() : await new Promise((r) => waiters.push(r));
  if (item.error) fail(`${item.error} while ${step}`);
  return item.msg;
}

const ws = new WebSocket(url, deflate ? { perMessageDeflate: { threshold: 0 } } : {});
ws.addEventListener("message", (ev) => {
  if (typeof ev.data !== "string") {
    deliver({ error: `a binary message (${ev.data.length} bytes) in reply to text` });
    return;
  }
  let msg;
  try {
    msg = JSON.parse(ev.data);
  } catch (e) {
    deliver({ error: `not JSON: ${ev.data}: ${e.message}` });
    return;
  }
  deliver({ msg, raw: ev.data });
});
ws.addEventListener("error", (ev) => deliver({ error: `WebSocket error: ${ev.message}` }));
ws.addEventListener("close", (ev) => deliver({ error: `closed (${ev.code} ${ev.reason})` }));
await new Promise((resolve) => {
  ws.addEventListener("open", resolve, { once: true });
  waiters.push((item) => fail(`${item.error} while connecting`)); // an error or close before open
});
waiters.length = 0;
if (deflate && !ws.extensions.startsWith("permessage-deflate")) fail(`permessage-deflate not negotiated: extensions ${show(ws.extensions)}`);

function send(v) {
  ws.send(JSON.stringify(v));
}

// isReply checks the envelope of a reply to id.
function isReply(m, id) {
  return m && !Array.isArray(m) && m.jsonrpc === "2.0" && m.id === id && !("method" in m);
}

// 1. One call.
step = "calling add";
send({ jsonrpc: "2.0", method: "add", params: [1, 2], id: 1 });
let m = await next();
if (!isReply(m, 1) || m.result !== 3 || "error" in m) fail(`add [1,2]: ${show(m)}`);
const add = m.result;

// 2. One batch: two calls, a notification (no reply) and an unknown
// method; replies may come in any order.
step = "sending a batch";
send([
  { jsonrpc: "2.0", method: "add", params: [10, 20], id: 2 },
  { jsonrpc: "2.0", method: "echo", params: ["x", "y"], id: "three" },
  { jsonrpc: "2.0", method: "echo", params: ["ignored"] },
  { jsonrpc: "2.0", method: "nope", id: 4 },
]);
m = await next();
if (!Array.isArray(m) || m.length !== 3) fail(`batch: want 3 replies, got ${show(m)}`);
const byId = new Map(m.map((r) => [r.id, r]));
const r2 = byId.get(2);
const r3 = byId.get("three");
const r4 = byId.get(4);
if (!isReply(r2, 2) || r2.result !== 30) fail(`batch add: ${show(m)}`);
if (!isReply(r3, "three") || show(r3.result) !== show(["x", "y"])) fail(`batch echo: ${show(m)}`);
if (!isReply(r4, 4) || !r4.error || r4.error.code !== -32601 || "result" in r4) fail(`batch unknown method: ${show(m)}`);
const batch = m.length;

// 3. A subscription in geth's wire format.
step = "subscribing";
send({ jsonrpc: "2.0", method: "clock_subscribe", params: [5], id: 5 });
m = await next();
if (!isReply(m, 5) || typeof m.result !== "string" || !/^0x[0-9a-f]{32}$/.test(m.result)) {
  fail(`clock_subscribe: ${show(m)}`);
}
const subscription = m.result;

function checkNote(n, want) {
  if (
    !n ||
    n.jsonrpc !== "2.0" ||
    n.method !== "clock_subscription" ||
    "id" in n ||
    !n.params ||
    n.params.subscription !== subscription ||
    n.params.result !== want
  ) {
    fail(`notification ${want} of ${subscription}: ${show(n)}`);
  }
}

const notifications = [];
for (let want = 1; want <= 3; want++) {
  step = `waiting for notification ${want}`;
  checkNote(await next(), want);
  notifications.push(want);
}

// 4. Unsubscribe; notifications sent before it arrived may come first,
// still counting on.
step = "unsubscribing";
send({ jsonrpc: "2.0", method: "clock_unsubscribe", params: [subscription], id: 6 });
let late = 0;
for (;;) {
  m = await next();
  if (m && m.method === "clock_subscription") {
    checkNote(m, 4 + late);
    late++;
    continue;
  }
  if (!isReply(m, 6) || m.result !== true) fail(`clock_unsubscribe: ${show(m)}`);
  break;
}

// 5. Silence after the unsubscribe: a notification queued while the
// unsubscribe ran may still follow its reply (at most one here, still
// counting on), but none follows the reply to a later call.
step = "calling after unsubscribing";
send({ jsonrpc: "2.0", method: "echo", params: ["after"], id: 7 });
m = await next();
if (m && m.method === "clock_subscription") {
  checkNote(m, 4 + late);
  late++;
  m = await next();
}
if (!isReply(m, 7) || show(m.result) !== show(["after"])) fail(`a message after the unsubscribe reply: ${show(m)}`);

// 6. With --deflate: a 200 KB reply, compressed, back byte for byte.
let large = 0;
if (deflate) {
  step = "echoing 200 KB";
  const big = "jetrpc ".repeat(200_000 / 7);
  send({ jsonrpc: "2.0", method: "echo", params: [big], id: 8 });
  const raw = await new Promise((r) => {
    const item = queue.shift();
    if (item) r(item);
    else waiters.push(r);
  });
  if (raw.error) fail(`${raw.error} while ${step}`);
  const want = JSON.stringify({ jsonrpc: "2.0", result: [big], id: 8 });
  if (raw.raw !== want) fail(`200 KB echo: ${raw.raw.length} bytes, want ${want.length}`);
  large = raw.raw.length;
}

clearTimeout(timer);
console.log(
  JSON.stringify({
    ok: true,
    ws: wsVersion,
    node: process.version,
    add,
    batch,
    subscription,
    notifications,
    late,
    unsubscribed: true,
    extensions: ws.extensions,
    large,
  }),
);
ws.close(1000, "done");
process.exit(0);
