// How a cached list page leaves the gateway: the stored bytes with short pieces around them (the response's
// head, the ttlMs left, the closing brace) written as strings in one corked writev, under a Content-Length
// that counts bytes, not characters; and a hit in the memory store leaves no timer behind.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { ListCache, type CacheKey } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import { MergedPages } from '../../src/aggregate/merged-pages.js';
import { writeJsonBody } from '../../src/edge/node-io.js';
import { silentLog } from '../../infra/log.js';
import { responsePieces, serializeResponse, type JsonRpcResponse } from '../../protocol/jsonrpc.js';

const key: CacheKey = { upstream: 's', method: 'tools/list', variant: '', context: 'anonymous' };
const tools = Array.from({ length: 200 }, (_, i) => ({
  name: `t-${i}`,
  description: `outil « ${i} » 🚀`,
  inputSchema: { type: 'object' },
}));

/** Serves one answer written by writeJsonBody from `pieces`; resolves with the status, headers and body bytes. */
async function served(pieces: readonly (Buffer | string)[], headers?: Record<string, string>) {
  const server = http.createServer((_req, res) => writeJsonBody(res, 200, pieces, headers));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
        })
        .on('error', reject);
    });
  } finally {
    server.close();
  }
}

async function cachedHit(id: string | number): Promise<JsonRpcResponse> {
  const cache = new ListCache(new MemoryStore({ maxEntries: 10, maxBytes: 1 << 22 }), {
    minTtlMs: 0,
    maxTtlMs: 3_600_000,
    log: silentLog,
    now: () => 5_000,
  });
  const fetch = async (): Promise<JsonRpcResponse> => ({
    jsonrpc: '2.0',
    id: 0,
    result: { resultType: 'complete', tools, ttlMs: 60_000, cacheScope: 'public' },
  });
  await cache.get(key, 1, fetch);
  const { response, hit } = await cache.get(key, id, fetch);
  assert.equal(hit, true);
  return response;
}

test(
  'a cached page is written whole: ' + 'Content-Length counts the bytes of a non-ASCII id, the body parses to the hit',
  async () => {
    const response = await cachedHit('ïd-€-🚀');
    const pieces = responsePieces(response);
    assert.ok(
      pieces.some((piece) => typeof piece === 'string'),
      'the short pieces are strings',
    );
    const answer = await served(pieces);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.equal(Number(answer.headers['content-length']), answer.body.length);
    const text = answer.body.toString('utf8');
    assert.equal(text, serializeResponse(response));
    assert.deepEqual(JSON.parse(text), {
      jsonrpc: '2.0',
      id: 'ïd-€-🚀',
      result: { resultType: 'complete', tools, cacheScope: 'public', ttlMs: 60_000 },
    });
  },
);

test('the ttlMs left takes the closing brace with it; a merged /mcp page is written the same way', async () => {
  let now = 0;
  const pages = new MergedPages(() => now);
  pages.set('tools/list', '', undefined, {
    resultType: 'complete',
    tools,
    ttlMs: 1_000,
    cacheScope: 'public',
    nextCursor: 'n',
  });
  now = 400;
  const hit = pages.get(7, 'tools/list', '', undefined)!;
  const pieces = responsePieces(hit);
  assert.equal(pieces.at(-1), ',"ttlMs":600}}');
  const answer = await served(pieces, { 'x-extra': 'kept' });
  assert.equal(answer.headers['x-extra'], 'kept', 'headers of its own still go out');
  assert.equal(Number(answer.headers['content-length']), answer.body.length);
  assert.deepEqual(JSON.parse(answer.body.toString('utf8')), {
    jsonrpc: '2.0',
    id: 7,
    result: { resultType: 'complete', tools, cacheScope: 'public', nextCursor: 'n', ttlMs: 600 },
  });
});

test('an answer that is not pre-serialised is one piece, its JSON text (Node encodes it with the headers)', () => {
  const plain: JsonRpcResponse = { jsonrpc: '2.0', id: 'é', result: { resultType: 'complete' } };
  assert.deepEqual(responsePieces(plain), [JSON.stringify(plain)]);
});

test('hits in the memory store start no timers, and an entry still goes stale at its ttl', async () => {
  const store = new MemoryStore({ maxEntries: 10, maxBytes: 1 << 20 });
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  // A loaded machine can let more than a short ttl pass between the write and the read: such a round shows
  // nothing either way, and a longer ttl is tried.
  for (let ttlMs = 40; ; ttlMs *= 4) {
    const written = performance.now();
    await store.write('g', 'f', { result: { tools: [] }, expiresAt: Number.MAX_SAFE_INTEGER }, ttlMs);
    await new Promise((resolve) => setTimeout(resolve, 5)); // anything the write started has run
    const before = timers();
    const read = store.read('g', 'f'); // the lookup itself is synchronous; count before anything else runs
    assert.equal(timers(), before, 'a hit leaves no timer to wake the event loop');
    const hit = await read;
    if (hit === undefined && performance.now() - written >= ttlMs && ttlMs < 10_000) continue;
    assert.ok(hit, `a hit within its ttl of ${ttlMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, ttlMs + 20));
    assert.equal(await store.read('g', 'f'), undefined, 'stale after its ttl');
    return;
  }
});
