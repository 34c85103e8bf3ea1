// Issue #35, item 2, attacked as the red team did: one principal opening listen streams without end (all
// 200 before: the process reached its descriptor limit and /healthz stopped answering), or holding many
// requests at once, and connections past listen.maxConnections. The defaults protect with no
// configuration: the stream test runs on them.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { CALLER_LIMIT_DEFAULTS } from '../../src/edge/caller-load.js';
import { fixture, headersFor, request, startTestGateway, until, send } from './harness.js';

const FLOOD = 'flood-caps-key-0123456789abcdef';
const QUIET = 'quiet-caps-key-0123456789abcdef';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const auth = {
  apiKeys: [
    { key: FLOOD, principal: 'flood' },
    { key: QUIET, principal: 'quiet' },
  ],
};

interface Opened {
  status: number;
  retryAfter: string | undefined;
  close(): void;
}

/** A subscriptions/listen stream on a connection of its own, kept open until closed. */
export function openStream(base: string, key: string): Promise<Opened> {
  const body = request('subscriptions/listen', { notifications: { toolsListChanged: true } });
  const url = new URL(`${base}/mcp`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { ...headersFor(body), ...bearer(key) },
      },
      (res) => {
        res.resume();
        resolve({
          status: res.statusCode!,
          retryAfter: res.headers['retry-after'] as string | undefined,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** One request on a new connection of its own (no pooled connection accepted earlier). */
function fresh(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; retryAfter?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, text }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('per-principal caps on open streams, with the defaults', () => {
  let gateway: RunningGateway;
  const opened: Opened[] = [];
  before(async () => {
    gateway = await startTestGateway({ modern: fixture('modern-server') }, {}, { auth });
    assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000));
  });
  after(async () => {
    for (const stream of opened) stream.close();
    await gateway?.close();
  });

  test(
    `one principal gets ${CALLER_LIMIT_DEFAULTS.maxStreams} streams, then 429 with Retry-After; another ` +
      `principal and /healthz are still served`,
    async () => {
      const max = CALLER_LIMIT_DEFAULTS.maxStreams;
      assert.ok(max <= 300, 'the default is a few hundred at most');
      for (let i = 0; i < max + 10; i += 10) {
        const batch = await Promise.all(Array.from({ length: 10 }, () => openStream(gateway.url, FLOOD)));
        opened.push(...batch);
      }
      const statuses = opened.map((s) => s.status);
      assert.equal(statuses.filter((s) => s === 200).length, max, `statuses: ${[...new Set(statuses)]}`);
      const refused = opened.filter((s) => s.status === 429);
      assert.equal(refused.length, opened.length - max);
      for (const stream of refused) assert.ok(Number(stream.retryAfter) >= 1, 'Retry-After is set');
      const quiet = await openStream(gateway.url, QUIET);
      opened.push(quiet);
      assert.equal(quiet.status, 200, 'the other principal opens a stream');
      assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200);
      const call = request('tools/call', { name: 'modern__echo', arguments: { text: 'still here' } });
      const answer = await send(`${gateway.url}/mcp`, call, bearer(QUIET));
      assert.equal(answer.status, 200);
      // Closing streams frees places.
      for (const stream of opened.filter((s) => s.status === 200).slice(0, 5)) stream.close();
      const reopened = async () => {
        const stream = await openStream(gateway.url, FLOOD);
        opened.push(stream);
        return stream.status === 200;
      };
      assert.ok(await until(reopened, 5_000), 'a closed stream frees its place');
    },
  );
});

describe('per-principal cap on requests in flight, and the connection cap', () => {
  let gateway: RunningGateway;
  const sockets: net.Socket[] = [];
  before(async () => {
    gateway = await startTestGateway(
      { modern: fixture('modern-server', { maxInFlight: 32 }) },
      { maxRequestsPerPrincipal: 4, maxConnections: 24 },
      { auth },
    );
    assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000));
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await gateway?.close();
  });

  const slow = (key: string, ms: number) => {
    const body = request('tools/call', { name: 'modern__slow', arguments: { ms } });
    return send(`${gateway.url}/mcp`, body, bearer(key));
  };

  test(
    'the fifth request at once of one principal is 429 with Retry-After; ' + 'the other principal is served',
    async () => {
      const held = Array.from({ length: 4 }, () => slow(FLOOD, 1500));
      // Once the four are in flight (the server is slow), a fifth is refused before its body is read.
      let fifth = await slow(FLOOD, 0);
      for (let i = 0; i < 20 && fifth.status !== 429; i++) fifth = await slow(FLOOD, 0);
      assert.equal(fifth.status, 429, JSON.stringify(fifth.body));
      assert.match(fifth.body.error.message, /listen\.maxRequestsPerPrincipal/);
      assert.ok(Number(fifth.headers.get('retry-after')) >= 1);
      assert.equal((await slow(QUIET, 0)).status, 200, 'the quiet principal is served');
      for (const answer of await Promise.all(held)) assert.equal(answer.status, 200);
      assert.equal((await slow(FLOOD, 0)).status, 200, 'once answered, the flood principal is served again');
    },
  );

  test(
    'past listen.maxConnections, /healthz and /readyz still answer on new connections; MCP gets 503 with ' +
      'Retry-After',
    async () => {
      const port = Number(new URL(gateway.url).port);
      for (let i = 0; i < 24; i++) {
        const socket = net.connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        sockets.push(socket);
      }
      const body = request('tools/list');
      const headers = { ...headersFor(body), ...bearer(QUIET) };
      const mcp = await fresh(port, 'POST', '/mcp', headers, JSON.stringify(body));
      assert.equal(mcp.status, 503, mcp.text);
      assert.match(JSON.parse(mcp.text).error.message, /listen\.maxConnections/);
      assert.ok(Number(mcp.retryAfter) >= 1);
      for (const probe of ['/healthz', '/readyz'])
        assert.equal((await fresh(port, 'GET', probe, {})).status, 200, probe);
      for (const socket of sockets.splice(0)) socket.destroy();
      const served = async () => (await fresh(port, 'POST', '/mcp', headers, JSON.stringify(body))).status === 200;
      assert.ok(await until(served, 5_000), 'served again once connections close');
    },
  );
});
