// A WebSocket client on the npm ws package with permessage-deflate
// offered (perMessageDeflate, compressing every message it sends), for
// jetrpc's interoperability tests (bench/peers/node_deflate_test.go).
//
//   node deflate.mjs ws://127.0.0.1:PORT/ < messages
//
// It sends each line of stdin as one text message and waits for one
// message in reply before it sends the next. It prints one JSON line on
// the handshake ({"ws":…, "node":…, "extensions": ws.extensions,
// "header": the server's Sec-WebSocket-Extensions or null}), then one
// per reply: {"wire": bytes read from the socket for it, headers and all,
// "raw": the reply's text as ws delivered it, inflated}. On an error, a
// close or after 30 s it prints why on stderr and exits 1.

import { createRequire } from "node:module";
import WebSocket from "ws";

const wsVersion = createRequire(import.meta.url)("ws/package.json").version;
const url = process.argv[2];
if (!url) fail("usage: node deflate.mjs ws://HOST:PORT/ < messages");

let step = "reading stdin";
const timer = setTimeout(() => fail(`timeout after 30 s while ${step}`), 30_000);

function fail(why) {
  console.error(`deflate.mjs (ws ${wsVersion}): FAIL: ${why}`);
  process.exit(1);
}

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
const messages = input.split("\n").filter((l) => l !== "");

step = "connecting";
const ws = new WebSocket(url, { perMessageDeflate: { threshold: 0 } });
let header = null;
let socket = null;
ws.on("upgrade", (res) => {
  header = res.headers["sec-websocket-extensions"] ?? null;
  socket = res.socket;
});
let pending = null; // the resolver of the reply awaited
ws.on("message", (data, isBinary) => {
  if (isBinary) fail(`a binary message (${data.length} bytes) while ${step}`);
  if (!pending) fail(`an unexpected message while ${step}: ${String(data).slice(0, 200)}`);
  const r = pending;
  pending = null;
  r(data.toString("utf8"));
});
ws.on("error", (err) => fail(`WebSocket error while ${step}: ${err.message}`));
ws.on("close", (code, reason) => fail(`closed (${code} ${reason}) while ${step}`));
await new Promise((resolve) => ws.once("open", resolve));

const out = [JSON.stringify({ ws: wsVersion, node: process.version, extensions: ws.extensions, header })];
for (const [i, m] of messages.entries()) {
  step = `awaiting the reply to message ${i + 1}`;
  const before = socket.bytesRead;
  const reply = new Promise((r) => (pending = r));
  ws.send(m);
  const raw = await reply;
  out.push(JSON.stringify({ wire: socket.bytesRead - before, raw }));
}
clearTimeout(timer);
ws.removeAllListeners("close");
ws.close(1000, "done");
process.stdout.write(out.join("\n") + "\n", () => process.exit(0));
