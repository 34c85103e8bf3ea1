// The edge's reads of Node's own request: the body (whole, over its cap, or cut short by a client that went
// away) and the Mcp-Param-* headers an HTTP upstream is sent, each through a real node:http server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardedParamHeaders, readBody } from '../../src/edge/node-io.js';

/** A server handing each request to `seen` (which answers it), and a way to send it raw bytes. */
async function server(seen: (incoming: IncomingMessage) => Promise<string>) {
  const srv = createServer((incoming, outgoing) => {
    void seen(incoming).then((text) => outgoing.end(text));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}

test('readBody: the whole body, sent in several pieces, as one text', async () => {
  let got: string | undefined | null;
  const s = await server(async (incoming) => String((got = await readBody(incoming, 1024))));
  const req = request({ port: s.port, method: 'POST', headers: { 'transfer-encoding': 'chunked' } });
  req.write('{"a":');
  await new Promise((r) => setTimeout(r, 20));
  req.write('"é"}');
  req.end();
  await new Promise<void>((resolve) => req.on('response', (res) => res.resume().on('end', resolve)));
  assert.equal(got, '{"a":"é"}');
  await s.close();
});

test('readBody: over maxBytes (declared or as it arrives) is undefined', async () => {
  const got: (string | undefined | null)[] = [];
  const s = await server(async (incoming) => String(got.push(await readBody(incoming, 8))));
  for (const headers of [{ 'content-length': '9' }, { 'transfer-encoding': 'chunked' }]) {
    const req = request({ port: s.port, method: 'POST', headers });
    req.end('123456789');
    await new Promise<void>((resolve) => req.on('response', (res) => res.resume().on('end', resolve)));
  }
  assert.deepEqual(got, [undefined, undefined]);
  await s.close();
});

test('readBody: a client that goes away mid-body gives null, and nothing is left waiting', async () => {
  let settled: (value: string | undefined | null) => void;
  const outcome = new Promise<string | undefined | null>((resolve) => (settled = resolve));
  let reading: () => void;
  const begun = new Promise<void>((resolve) => (reading = resolve));
  const s = await server(async (incoming) => {
    const body = readBody(incoming, 1024);
    reading();
    const text = await body;
    settled(text);
    return String(text);
  });
  const req = request({ port: s.port, method: 'POST', headers: { 'content-length': '100' } });
  req.on('error', () => {}); // the client's own side of the cut
  req.write('{"half":');
  // Cut only once the server has the request and reads its body (a loaded machine may take its time).
  await begun;
  req.destroy();
  const got = await Promise.race([outcome, new Promise((r) => setTimeout(() => r('still waiting'), 10_000))]);
  assert.equal(got, null);
  await s.close();
});

test(
  'forwardedParamHeaders: Mcp-Param-* in any case, lower-cased, repeats joined as Node joins them; ' + 'nothing else',
  () => {
    const raw = [
      'Host',
      'x',
      'Mcp-Param-Region',
      'eu',
      'mcp-method',
      'tools/call',
      'mcp-param-tenant',
      'a',
      'MCP-PARAM-TENANT',
      'b',
      'Accept',
      '*/*',
    ];
    assert.deepEqual(forwardedParamHeaders(raw), { 'mcp-param-region': 'eu', 'mcp-param-tenant': 'a, b' });
    assert.equal(
      forwardedParamHeaders(['host', 'x', 'mcp-name', 'echo', 'content-type', 'application/json']),
      undefined,
    );
  },
);
