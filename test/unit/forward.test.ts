// Forwarding a retry to the replica that holds its call: only ever to that replica's origin, whatever the
// client's request line says, and a holder that breaks off mid-answer ends that answer only.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { forwardRequest } from '../../src/edge/forward.js';

const seen: { server: string; url: string }[] = [];
const servers: http.Server[] = [];

function listen(name: string, handler?: http.RequestListener): Promise<string> {
  const server = http.createServer((req, res) => {
    seen.push({ server: name, url: req.url ?? '' });
    if (handler) return handler(req, res);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ from: name }));
  });
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

let holder: string;
let elsewhere: string;
let breaking: string;
/** A front that forwards every request it gets to `target`, pretending its request line was `requestLine`. */
let front: string;
let target = '';
let requestLine = '';
before(async () => {
  holder = await listen('holder');
  elsewhere = await listen('elsewhere');
  breaking = await listen('breaking', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: message\ndata: {"partial":true}\n\n');
    setTimeout(() => res.destroy(), 20);
  });
  front = await listen('front', (req, res) => {
    req.url = requestLine;
    void forwardRequest(target, req, '{}', res, 'test', 'vouch').then((sent) => {
      if (!sent && !res.headersSent) res.writeHead(502).end('not forwarded');
    });
  });
});
after(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

test('the holder gets the request at its own origin, with the path and query of the request line', async () => {
  target = holder;
  requestLine = '/servers/a/mcp?x=1';
  const answer = await fetch(`${front}/anything`, { method: 'POST', body: '{}' });
  assert.deepEqual(await answer.json(), { from: 'holder' });
  assert.deepEqual(seen.filter((s) => s.server === 'holder').at(-1), { server: 'holder', url: '/servers/a/mcp?x=1' });
});

test('an absolute URL in the request line cannot send the forward to another host', async () => {
  target = holder;
  requestLine = `${elsewhere}/steal?y=2`;
  const before = seen.filter((s) => s.server === 'elsewhere').length;
  const answer = await fetch(`${front}/mcp`, { method: 'POST', body: '{}' });
  assert.deepEqual(await answer.json(), { from: 'holder' });
  assert.equal(seen.filter((s) => s.server === 'elsewhere').length, before, 'nothing reached the other host');
  assert.equal(seen.filter((s) => s.server === 'holder').at(-1)?.url, '/steal?y=2');
});

test('a holder that breaks off mid-stream ends that answer, and the forwarding process lives on', async () => {
  target = breaking;
  requestLine = '/mcp';
  const answer = await fetch(`${front}/mcp`, { method: 'POST', body: '{}' });
  await assert.rejects(answer.text(), 'the cut reaches the client');
  target = holder;
  const next = await fetch(`${front}/mcp`, { method: 'POST', body: '{}' });
  assert.deepEqual(await next.json(), { from: 'holder' });
});
