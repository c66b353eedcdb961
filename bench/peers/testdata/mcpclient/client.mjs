// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// pinned in package.json) over Streamable HTTP against `jetrpc serve
// --mcp`: node client.mjs http://HOST:PORT/mcp
//
// It connects (initialize, notifications/initialized), lists the tools,
// calls add, calls countdown with a progress callback, cancels a long
// countdown with an AbortSignal, reads the large resource, and prints one
// JSON line of what it saw for the Go test (mcp_node_test.go) to check.
// It exits non-zero only when it could not run at all; the checks are
// the Go test's.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.argv[2];
if (!url) {
  console.error('usage: node client.mjs http://HOST:PORT/mcp');
  process.exit(2);
}
const sdk = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url))).version;

const out = { ok: false, node: process.version, sdk };
const client = new Client({ name: 'jetrpc-peers-node', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
  await client.connect(transport);
  out.server = client.getServerVersion()?.name;
  out.protocolVersion = transport.protocolVersion;
  out.sessionId = transport.sessionId ?? null;

  out.tools = (await client.listTools()).tools.map((t) => t.name);

  const text = (r) => (r.content?.length === 1 && r.content[0].type === 'text' ? r.content[0].text : null);
  out.add = text(await client.callTool({ name: 'add', arguments: { a: 19, b: 23.5 } }));
  const bad = await client.callTool({ name: 'add', arguments: { a: 1 } });
  out.addIsError = bad.isError === true;
  try {
    await client.callTool({ name: 'nope', arguments: {} });
    out.unknownTool = 'answered';
  } catch (e) {
    out.unknownTool = e.code ?? String(e);
  }

  out.progress = [];
  out.countdown = text(await client.callTool({ name: 'countdown', arguments: { from: 5, interval_ms: 20 } }, undefined, {
    onprogress: (p) => out.progress.push(p.progress),
  }));

  const abort = new AbortController();
  const started = Date.now();
  const long = client.callTool({ name: 'countdown', arguments: { from: 1000, interval_ms: 50 } }, undefined, {
    signal: abort.signal,
    onprogress: () => {},
  });
  setTimeout(() => abort.abort('the test cancels'), 300);
  try {
    await long;
    out.cancelled = 'answered';
  } catch (e) {
    out.cancelled = e.name === 'AbortError' || /abort|cancel/i.test(String(e)) ? 'aborted' : String(e);
  }
  out.cancelMs = Date.now() - started;
  out.addAfterCancel = text(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }));

  const res = await client.readResource({ uri: 'jetrpc://example/large.txt' });
  out.resourceBytes = res.contents?.[0]?.text?.length ?? 0;
  await client.ping();
  out.ok = true;
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(out));
