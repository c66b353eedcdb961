// A subscriber of a jetrpc topic over WebSocket, on the npm ws package,
// for the fan-out test (bench/peers/fanout_node_test.go).
//
//   node fanout.mjs ws://127.0.0.1:PORT/ COUNT [--deflate]
//
// It subscribes with topic_subscribe ["t"] and prints one JSON line
// {"subscription":ID,"extensions":…}; then it prints each of COUNT
// messages it receives, as it received it (ws inflates a compressed
// one), as a line {"data":TEXT}, then closes and exits 0. With --deflate it offers
// permessage-deflate (ws's default offer) and requires it negotiated.
// On any error or after 10 s it prints why on stderr and exits 1.

import WebSocket from "ws";

const [url, countArg, flag] = process.argv.slice(2);
const deflate = flag === "--deflate";
const count = Number(countArg);
if (!url || !(count > 0)) {
  fail("usage: node fanout.mjs ws://HOST:PORT/ COUNT [--deflate]");
}
const timer = setTimeout(() => fail("timeout after 10 s"), 10_000);

function fail(why) {
  console.error(`fanout.mjs: FAIL: ${why}`);
  process.exit(1);
}

const ws = new WebSocket(url, { perMessageDeflate: deflate });
let subscribed = false;
let seen = 0;
ws.on("error", (e) => fail(`socket error: ${e.message}`));
ws.on("open", () => {
  if (deflate !== ws.extensions.includes("permessage-deflate")) {
    fail(`extensions ${JSON.stringify(ws.extensions)} with --deflate ${deflate}`);
  }
  ws.send(JSON.stringify({ jsonrpc: "2.0", method: "topic_subscribe", params: ["t"], id: 1 }));
});
ws.on("message", (data, isBinary) => {
  if (isBinary) fail("a binary message");
  const text = data.toString("utf8");
  if (!subscribed) {
    const r = JSON.parse(text);
    if (typeof r.result !== "string") fail(`subscribe: ${text}`);
    subscribed = true;
    console.log(JSON.stringify({ subscription: r.result, extensions: ws.extensions }));
    return;
  }
  console.log(JSON.stringify({ data: text }));
  if (++seen === count) {
    // No process.exit: it would cut short what stdout, a pipe, has not
    // written yet. Node exits once the socket is closed and all is out.
    clearTimeout(timer);
    ws.close();
  }
});
