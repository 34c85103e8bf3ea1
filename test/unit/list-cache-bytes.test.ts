// A cache hit carries its result's bytes (SERIALIZED_RESULT), made once per stored entry, so the edge writes
// a page from cache without serialising it again: the bytes must say exactly what the result says, with the
// hit's own id and ttlMs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ListCache, type CacheKey } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import { silentLog } from '../../infra/log.js';
import {
  responseBytes,
  SERIALIZED_RESULT,
  serializeResponse,
  type JsonRpcResponse,
  type PreSerialized,
} from '../../protocol/jsonrpc.js';

const key: CacheKey = { upstream: 's', method: 'tools/list', variant: '', context: 'anonymous' };
const tools = Array.from({ length: 50 }, (_, i) => ({
  name: `t-${i}`,
  description: `tool "${i}" ünïcode`,
  inputSchema: { type: 'object' },
}));

function setup() {
  let now = 1_000_000;
  const cache = new ListCache(new MemoryStore({ maxEntries: 100, maxBytes: 1 << 22 }), {
    minTtlMs: 0,
    maxTtlMs: 3_600_000,
    log: silentLog,
    now: () => now,
  });
  const fetch = async (): Promise<JsonRpcResponse> => ({
    jsonrpc: '2.0',
    id: 99,
    result: { resultType: 'complete', tools, ttlMs: 60_000, cacheScope: 'public', nextCursor: 'c1' },
  });
  return { cache, fetch, advance: (ms: number) => (now += ms) };
}

const written = (response: JsonRpcResponse) => JSON.parse(Buffer.concat(responseBytes(response)).toString('utf8'));

test('a hit is written as the stored bytes with its own id and ttlMs, saying what its result says', async () => {
  const { cache, fetch, advance } = setup();
  await cache.get(key, 1, fetch); // the miss stores it
  advance(1_500);
  const { response, hit } = await cache.get(key, 'abc', fetch);
  assert.equal(hit, true);
  assert.ok((response as PreSerialized)[SERIALIZED_RESULT], 'a hit carries its bytes');
  const expected = {
    jsonrpc: '2.0',
    id: 'abc',
    result: { resultType: 'complete', tools, ttlMs: 58_500, cacheScope: 'public', nextCursor: 'c1' },
  };
  assert.deepEqual(written(response), expected);
  assert.deepEqual(JSON.parse(serializeResponse(response)), expected);
  const { [SERIALIZED_RESULT]: _bytes, ...plain } = response as PreSerialized;
  assert.deepEqual(plain, expected); // the object says the same as the bytes
});

test('later hits reuse the bytes made for the entry, each with the ttlMs it has left', async () => {
  const { cache, fetch, advance } = setup();
  await cache.get(key, 1, fetch);
  const first = (await cache.get(key, 2, fetch)).response as PreSerialized;
  advance(10_000);
  const second = (await cache.get(key, 3, fetch)).response as PreSerialized;
  assert.equal(first[SERIALIZED_RESULT]![0], second[SERIALIZED_RESULT]![0], 'the head is made once per entry');
  assert.equal(written(second).result.ttlMs, 50_000);
  assert.equal(written(second).id, 3);
});

test('an entry stored again (after an invalidation) gets bytes of its own', async () => {
  const { cache, advance } = setup();
  let version = 'one';
  const fetch = async (): Promise<JsonRpcResponse> => ({
    jsonrpc: '2.0',
    id: 9,
    result: { resultType: 'complete', tools: [{ name: version }], ttlMs: 60_000, cacheScope: 'public' },
  });
  await cache.get(key, 1, fetch);
  assert.equal(written((await cache.get(key, 2, fetch)).response).result.tools[0].name, 'one');
  version = 'two';
  await cache.invalidate('s', ['tools/list']);
  advance(1);
  await cache.get(key, 3, fetch);
  assert.equal(written((await cache.get(key, 4, fetch)).response).result.tools[0].name, 'two');
});
