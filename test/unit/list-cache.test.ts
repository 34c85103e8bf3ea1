// ListCache over MemoryStore with a hand-driven clock: freshness, clamping, scopes, what is never stored,
// variants, single flight, invalidation, and the LRU's bounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ListCache, type CacheKey, type ListCacheOptions } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import type { JsonObject, JsonRpcId, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';
import { httpStatusOf, UPSTREAM_STATUS, type MarkedResponse } from '../../protocol/error-status.js';
import { overloadedResponse } from '../../protocol/overload.js';

class Clock {
  constructor(public ms = 1_000_000) {}
  readonly now = (): number => this.ms;
}

function setup(
  options: Partial<ListCacheOptions> = {},
  store = new MemoryStore({ maxEntries: 1_000, maxBytes: 1 << 20 }),
) {
  const clock = new Clock();
  const cache = new ListCache(store, { minTtlMs: 0, maxTtlMs: 3_600_000, log: silentLog, now: clock.now, ...options });
  return { cache, clock, store };
}

const key = (overrides: Partial<CacheKey> = {}): CacheKey => ({
  upstream: 'a',
  method: 'tools/list',
  variant: '',
  context: 'alice',
  ...overrides,
});

function ok(result: JsonObject, id: JsonRpcId = 1): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

function tools(ttlMs: unknown, cacheScope: unknown = 'public', extra: JsonObject = {}): JsonObject {
  return {
    resultType: 'complete',
    tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
    ttlMs,
    cacheScope,
    ...extra,
  };
}

/** A fetch that counts its calls and answers with what `make` builds for the n-th call. */
function upstream(make: (n: number) => JsonRpcResponse | Promise<JsonRpcResponse>) {
  const counter = {
    calls: 0,
    fetch: () => {
      counter.calls++;
      return Promise.resolve(make(counter.calls));
    },
  };
  return counter;
}

test('within the TTL N gets reach the upstream once; hits carry the caller id and a copy', async () => {
  const { cache } = setup();
  const up = upstream(() => ok(tools(60_000)));
  const first = await cache.get(key(), 1, up.fetch);
  assert.equal(first.hit, false);
  for (let i = 2; i <= 10; i++) {
    const { response, hit } = await cache.get(key(), `req-${i}`, up.fetch);
    assert.equal(hit, true);
    assert.equal(response.id, `req-${i}`);
    assert.ok('result' in response);
    assert.notEqual(response.result, 'result' in first.response ? first.response.result : undefined);
    assert.deepEqual(response.result.tools, [{ name: 'echo', inputSchema: { type: 'object' } }]);
  }
  assert.equal(up.calls, 1);
  assert.deepEqual(cache.stats, { hits: 9, misses: 1, fetches: 1, invalidations: 0, storeErrors: 0 });
});

test('a miss returns the fetched response object itself', async () => {
  const { cache } = setup();
  const fetched = ok(tools(60_000), 7);
  const { response, hit } = await cache.get(key(), 7, async () => fetched);
  assert.equal(hit, false);
  assert.equal(response, fetched);
});

test('the stored entry is independent of the object the first caller received, and frozen below the top', async () => {
  const { cache } = setup();
  const { response: first } = await cache.get(key(), 1, async () => ok(tools(60_000)));
  assert.ok('result' in first);
  (first.result.tools as JsonObject[])[0]!.name = 'changed by the first caller';
  const { response } = await cache.get(key(), 2, async () => assert.fail('no fetch'));
  assert.ok('result' in response);
  const hitTools = response.result.tools as JsonObject[];
  assert.equal(hitTools[0]!.name, 'echo');
  response.result.nextCursor = 'a hit may replace its top-level fields';
  assert.throws(() => {
    hitTools[0]!.name = 'x';
  }, TypeError);
});

test('after the TTL the next get fetches again', async () => {
  const { cache, clock } = setup();
  const up = upstream((n) => ok(tools(1_000, 'public', { n })));
  await cache.get(key(), 1, up.fetch);
  clock.ms += 999;
  assert.equal((await cache.get(key(), 2, up.fetch)).hit, true);
  clock.ms += 1;
  const after = await cache.get(key(), 3, up.fetch);
  assert.equal(after.hit, false);
  assert.equal(up.calls, 2);
  const again = await cache.get(key(), 4, up.fetch);
  assert.equal(again.hit, true);
  assert.ok('result' in again.response && again.response.result.n === 2);
});

test('hits carry the remaining freshness as an integer ttlMs', async () => {
  const { cache, clock } = setup();
  await cache.get(key(), 1, async () => ok(tools(10_000)));
  clock.ms += 2_500;
  const { response } = await cache.get(key(), 2, async () => assert.fail('no fetch'));
  assert.ok('result' in response);
  assert.equal(response.result.ttlMs, 7_500);
  clock.ms += 7_499;
  const late = await cache.get(key(), 3, async () => assert.fail('no fetch'));
  assert.ok('result' in late.response);
  assert.equal(late.response.result.ttlMs, 1);
});

test('ttlMs is clamped to [minTtlMs, maxTtlMs]; 0, absent, negative and non-numbers stay uncacheable', async () => {
  const { cache, clock } = setup({ minTtlMs: 5_000, maxTtlMs: 20_000 });
  // Raised to minTtlMs.
  await cache.get(key({ variant: 'low' }), 1, async () => ok(tools(100)));
  clock.ms += 4_999;
  assert.equal((await cache.get(key({ variant: 'low' }), 2, async () => assert.fail('no fetch'))).hit, true);
  // Lowered to maxTtlMs, and the hit says so.
  await cache.get(key({ variant: 'high' }), 1, async () => ok(tools(3_600_000)));
  const high = await cache.get(key({ variant: 'high' }), 2, async () => assert.fail('no fetch'));
  assert.ok('result' in high.response);
  assert.equal(high.response.result.ttlMs, 20_000);
  clock.ms += 20_000;
  let fetched = 0;
  await cache.get(key({ variant: 'high' }), 3, async () => (fetched++, ok(tools(1))));
  assert.equal(fetched, 1);

  for (const ttlMs of [0, -5, undefined, '60000', Number.NaN, 0.5]) {
    const variant = `uncacheable-${String(ttlMs)}`;
    let calls = 0;
    const fetch = async () => (calls++, ok(tools(ttlMs)));
    await cache.get(key({ variant }), 1, fetch);
    await cache.get(key({ variant }), 2, fetch);
    assert.equal(calls, 2, `ttlMs ${String(ttlMs)} must not be cached`);
  }
});

test('maxTtlMs 0 turns caching off', async () => {
  const { cache } = setup({ maxTtlMs: 0 });
  const up = upstream(() => ok(tools(60_000)));
  await cache.get(key(), 1, up.fetch);
  await cache.get(key(), 2, up.fetch);
  assert.equal(up.calls, 2);
});

test('private entries are never served to another context; public ones are served to all', async () => {
  const { cache } = setup();
  const priv = upstream((n) => ok(tools(60_000, 'private', { owner: n === 1 ? 'alice' : 'bob' })));
  await cache.get(key({ context: 'alice' }), 1, priv.fetch);
  const bob = await cache.get(key({ context: 'bob' }), 2, priv.fetch);
  assert.equal(bob.hit, false);
  assert.ok('result' in bob.response && bob.response.result.owner === 'bob');
  const alice = await cache.get(key({ context: 'alice' }), 3, priv.fetch);
  assert.equal(alice.hit, true);
  assert.ok('result' in alice.response && alice.response.result.owner === 'alice');
  assert.equal(priv.calls, 2);

  // Absent or unknown cacheScope is treated as private.
  const unscoped = upstream(() => ok({ tools: [], ttlMs: 60_000 }));
  await cache.get(key({ method: 'prompts/list', context: 'alice' }), 1, unscoped.fetch);
  await cache.get(key({ method: 'prompts/list', context: 'bob' }), 2, unscoped.fetch);
  assert.equal(unscoped.calls, 2);

  const pub = upstream(() => ok(tools(60_000, 'public')));
  await cache.get(key({ method: 'resources/list', context: 'alice' }), 1, pub.fetch);
  for (const context of ['bob', 'carol', '']) {
    assert.equal((await cache.get(key({ method: 'resources/list', context }), 2, pub.fetch)).hit, true);
  }
  assert.equal(pub.calls, 1);
});

test('contexts and variants cannot spell each other (length-prefixed fields)', async () => {
  const { cache } = setup();
  await cache.get(key({ context: 'a\u0000b', variant: 'c' }), 1, async () => ok(tools(60_000, 'private')));
  let calls = 0;
  await cache.get(key({ context: 'a', variant: 'b\u0000c' }), 2, async () => (calls++, ok(tools(60_000, 'private'))));
  assert.equal(calls, 1);
});

test('input_required results and errors are never stored', async () => {
  const { cache } = setup();
  const mrtr = upstream(() =>
    ok({
      resultType: 'input_required',
      inputRequests: { a: { method: 'roots/list', params: {} } },
      ttlMs: 60_000,
      cacheScope: 'public',
    }),
  );
  await cache.get(key({ method: 'resources/read', variant: 'file:///x' }), 1, mrtr.fetch);
  await cache.get(key({ method: 'resources/read', variant: 'file:///x' }), 2, mrtr.fetch);
  assert.equal(mrtr.calls, 2);

  const failing = upstream((n) => ({ jsonrpc: '2.0', id: n, error: { code: -32603, message: 'down' } }));
  await cache.get(key(), 1, failing.fetch);
  await cache.get(key(), 2, failing.fetch);
  assert.equal(failing.calls, 2);

  const odd = upstream(() => ok({ ...tools(60_000), resultType: 'something-else' }));
  await cache.get(key({ method: 'prompts/list' }), 1, odd.fetch);
  await cache.get(key({ method: 'prompts/list' }), 2, odd.fetch);
  assert.equal(odd.calls, 2);
});

test('a result without resultType is cacheable', async () => {
  const { cache } = setup();
  const up = upstream(() => ok({ tools: [], ttlMs: 60_000, cacheScope: 'public' }));
  await cache.get(key(), 1, up.fetch);
  assert.equal((await cache.get(key(), 2, up.fetch)).hit, true);
  assert.equal(up.calls, 1);
});

test('each cursor and each uri is its own entry', async () => {
  const { cache } = setup();
  const up = upstream((n) => ok(tools(60_000, 'public', { n })));
  const pages = ['', 'cursor-2', 'cursor-3'];
  for (const variant of pages) await cache.get(key({ variant }), 1, up.fetch);
  assert.equal(up.calls, 3);
  for (const [i, variant] of pages.entries()) {
    const { response, hit } = await cache.get(key({ variant }), 2, up.fetch);
    assert.equal(hit, true);
    assert.ok('result' in response && response.result.n === i + 1);
  }
  const reads = upstream((n) =>
    ok({ resultType: 'complete', contents: [{ uri: `u${n}`, text: String(n) }], ttlMs: 60_000, cacheScope: 'public' }),
  );
  await cache.get(key({ method: 'resources/read', variant: 'file:///one' }), 1, reads.fetch);
  await cache.get(key({ method: 'resources/read', variant: 'file:///two' }), 1, reads.fetch);
  await cache.get(key({ method: 'resources/read', variant: 'file:///one' }), 1, reads.fetch);
  assert.equal(reads.calls, 2);
  // Same variant, another upstream or method: separate too.
  await cache.get(key({ upstream: 'b' }), 1, up.fetch);
  await cache.get(key({ method: 'prompts/list' }), 1, up.fetch);
  assert.equal(up.calls, 5);
});

test('100 concurrent gets on a miss make one fetch; each answer carries its own id', async () => {
  const { cache } = setup();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const up = upstream(async () => {
    await gate;
    return ok(tools(60_000), 'leader');
  });
  const gets = Array.from({ length: 100 }, (_, i) => cache.get(key(), i, up.fetch));
  await new Promise((resolve) => setImmediate(resolve));
  release();
  const answers = await Promise.all(gets);
  assert.equal(up.calls, 1);
  answers.forEach(({ response }, i) => {
    assert.equal(i === 0 ? 'leader' : i, response.id);
    assert.ok('result' in response && Array.isArray(response.result.tools));
  });
  // Joined callers do not share the leader's result object.
  const results = new Set(answers.map(({ response }) => ('result' in response ? response.result : undefined)));
  assert.equal(results.size, 100);
  assert.equal(cache.stats.fetches, 1);
  assert.equal(cache.stats.misses, 100);
});

test(
  'concurrent misses share uncacheable answers too, but not across contexts; ' + 'input_required is fetched per caller',
  async () => {
    const { cache } = setup();
    const slow = (response: JsonRpcResponse) =>
      upstream(async () => (await new Promise((r) => setTimeout(r, 10)), response));
    const errors = slow({ jsonrpc: '2.0', id: 0, error: { code: -32603, message: 'busy' } });
    const answers = await Promise.all([1, 2, 3].map((id) => cache.get(key(), id, errors.fetch)));
    assert.equal(errors.calls, 1);
    assert.deepEqual(
      answers.map(({ response }) => response.id),
      [0, 2, 3],
    );

    const perContext = slow(ok(tools(60_000, 'private')));
    await Promise.all(
      ['x', 'y', 'x'].map((context, id) => cache.get(key({ method: 'prompts/list', context }), id, perContext.fetch)),
    );
    assert.equal(perContext.calls, 2);

    const mrtr = slow(ok({ resultType: 'input_required', requestState: 'opaque' }));
    await Promise.all(
      [1, 2, 3].map((id) => cache.get(key({ method: 'resources/read', variant: 'u' }), id, mrtr.fetch)),
    );
    assert.equal(mrtr.calls, 3);
  },
);

test('a fetch that throws rejects every caller waiting on it, and the next get fetches again', async () => {
  const { cache } = setup();
  let calls = 0;
  const fetch = async () => {
    calls++;
    await new Promise((r) => setTimeout(r, 5));
    if (calls === 1) throw new Error('boom');
    return ok(tools(60_000));
  };
  const results = await Promise.allSettled([cache.get(key(), 1, fetch), cache.get(key(), 2, fetch)]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.equal((await cache.get(key(), 3, fetch)).hit, false);
  assert.equal(calls, 2);
});

test('invalidate drops public and private entries of those methods only, and fires onInvalidate', async () => {
  const { cache } = setup();
  const heard: [string, readonly string[]][] = [];
  cache.onInvalidate((upstream, methods) => heard.push([upstream, methods]));
  const fill = async (k: CacheKey, scope: string) => cache.get(k, 1, async () => ok(tools(60_000, scope)));
  const entries: [CacheKey, string][] = [
    [key({ method: 'tools/list' }), 'public'],
    [key({ method: 'tools/list', variant: 'page-2' }), 'public'],
    [key({ method: 'tools/list', context: 'bob' }), 'private'],
    [key({ method: 'resources/list' }), 'private'],
    [key({ method: 'resources/templates/list' }), 'public'],
    [key({ method: 'prompts/list' }), 'public'],
    [key({ upstream: 'b', method: 'tools/list' }), 'public'],
  ];
  for (const [k, scope] of entries) await fill(k, scope);

  await cache.invalidate('a', ['tools/list', 'resources/list']);
  assert.deepEqual(heard, [['a', ['tools/list', 'resources/list']]]);
  assert.equal(cache.stats.invalidations, 1);

  const gone = [entries[0]!, entries[1]!, entries[3]!];
  for (const [k] of gone) assert.equal((await cache.get(k, 2, async () => ok(tools(0)))).hit, false, JSON.stringify(k));
  // bob's private tools/list went too (a private hit for bob would otherwise be served here).
  assert.equal((await cache.get(entries[2]![0], 2, async () => ok(tools(0)))).hit, false);
  for (const [k] of [entries[4]!, entries[5]!, entries[6]!]) {
    assert.equal(
      (await cache.get(k, 2, async () => assert.fail('kept entries need no fetch'))).hit,
      true,
      JSON.stringify(k),
    );
  }
});

test('a fetch under way when its list is invalidated is not stored, and later callers do not join it', async () => {
  const { cache } = setup();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const fetch = async () => {
    calls++;
    if (calls === 1) await gate;
    return ok(tools(60_000, 'public', { version: calls }));
  };
  const before = cache.get(key(), 1, fetch);
  await new Promise((resolve) => setImmediate(resolve));
  await cache.invalidate('a', ['tools/list']);
  const after = await cache.get(key(), 2, fetch);
  assert.ok('result' in after.response && after.response.result.version === 2);
  release();
  await before;
  const next = await cache.get(key(), 3, fetch);
  assert.equal(next.hit, true);
  assert.ok('result' in next.response && next.response.result.version === 2);
  assert.equal(calls, 2);
});

test('a listener that throws does not stop the others', async () => {
  const { cache } = setup();
  const heard: string[] = [];
  cache.onInvalidate(() => {
    throw new Error('bad listener');
  });
  cache.onInvalidate((upstream) => heard.push(upstream));
  await cache.invalidate('a', ['tools/list']);
  assert.deepEqual(heard, ['a']);
});

test('MemoryStore is bounded by entries (least recently used goes first)', async () => {
  const store = new MemoryStore({ maxEntries: 2, maxBytes: 1 << 20 });
  const { cache } = setup({}, store);
  const up = upstream(() => ok(tools(60_000)));
  await cache.get(key({ variant: '1' }), 1, up.fetch);
  await cache.get(key({ variant: '2' }), 1, up.fetch);
  await cache.get(key({ variant: '1' }), 1, up.fetch); // 1 is now the most recently used
  await cache.get(key({ variant: '3' }), 1, up.fetch); // evicts 2
  assert.equal(store.size, 2);
  assert.equal(up.calls, 3);
  assert.equal((await cache.get(key({ variant: '1' }), 1, up.fetch)).hit, true);
  assert.equal((await cache.get(key({ variant: '3' }), 1, up.fetch)).hit, true);
  assert.equal((await cache.get(key({ variant: '2' }), 1, up.fetch)).hit, false);
  assert.equal(up.calls, 4);
});

test('MemoryStore is bounded by bytes, and an entry larger than the bound is not kept', async () => {
  const big = 'x'.repeat(3_000);
  const store = new MemoryStore({ maxEntries: 1_000, maxBytes: 10_000 });
  const { cache } = setup({}, store);
  const up = upstream(() => ok(tools(60_000, 'public', { big })));
  for (let i = 0; i < 10; i++) await cache.get(key({ variant: String(i) }), 1, up.fetch);
  assert.ok(store.bytes <= 10_000, String(store.bytes));
  assert.equal(store.size, 3); // each entry is a little over 3 000 bytes
  assert.equal((await cache.get(key({ variant: '9' }), 1, up.fetch)).hit, true);
  assert.equal((await cache.get(key({ variant: '0' }), 1, up.fetch)).hit, false);

  const huge = upstream(() => ok(tools(60_000, 'public', { huge: 'y'.repeat(20_000) })));
  await cache.get(key({ method: 'resources/read', variant: 'huge' }), 1, huge.fetch);
  assert.equal((await cache.get(key({ method: 'resources/read', variant: 'huge' }), 1, huge.fetch)).hit, false);
  assert.equal(huge.calls, 2);
  assert.ok(store.bytes <= 10_000);
});

test('MemoryStore drops whole groups and keeps its group index in step with evictions', async () => {
  const store = new MemoryStore({ maxEntries: 3, maxBytes: 1 << 20 });
  const entry = { result: { ok: true }, expiresAt: Date.now() + 60_000 };
  await store.write('g1', 'f1', entry, 60_000);
  await store.write('g1', 'f2', entry, 60_000);
  await store.write('g2', 'f1', entry, 60_000);
  await store.write('g2', 'f2', entry, 60_000); // evicts g1/f1
  await store.write('g1', 'f2', entry, 60_000); // replaces: still indexed
  await store.dropGroup('g1');
  assert.equal(await store.read('g1', 'f2'), undefined);
  assert.deepEqual(await store.read('g2', 'f1'), entry);
  assert.equal(store.size, 2);
  await store.dropGroup('g1'); // nothing left: a no-op
  await store.close();
  assert.equal(store.size, 0);
});

test('MemoryStore honours the ttl it is given', async () => {
  const store = new MemoryStore({ maxEntries: 10, maxBytes: 1 << 20 });
  await store.write('g', 'f', { result: {}, expiresAt: Date.now() + 30 }, 30);
  assert.ok(await store.read('g', 'f'));
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(await store.read('g', 'f'), undefined);
});

test('a store that throws is counted and the cache answers from the upstream', async () => {
  const broken = {
    read: async () => {
      throw new Error('read');
    },
    write: async () => {
      throw new Error('write');
    },
    dropGroup: async () => {
      throw new Error('drop');
    },
    onDropped() {},
    close: async () => {},
  };
  const cache = new ListCache(broken, { minTtlMs: 0, maxTtlMs: 60_000, log: silentLog });
  const up = upstream(() => ok(tools(60_000)));
  const { response, hit } = await cache.get(key(), 1, up.fetch);
  assert.equal(hit, false);
  assert.ok('result' in response);
  await cache.invalidate('a', ['tools/list']);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(cache.stats.storeErrors, 4); // two reads, one write (not awaited by get), one drop
});

test(
  'callers joined to one fetch get copies that keep the status the error had: 400 from an HTTP upstream, 503 at ' +
    'capacity',
  async () => {
    const { cache } = setup();
    const invalidMeta: MarkedResponse = { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid _meta' } };
    invalidMeta[UPSTREAM_STATUS] = 400;
    for (const failure of [invalidMeta, overloadedResponse(1, 'a is at capacity', { reason: 'queue_full' }, 10)]) {
      let release!: (response: JsonRpcResponse) => void;
      const gate = new Promise<JsonRpcResponse>((resolve) => (release = resolve));
      const first = cache.get(key({ method: 'resources/read', variant: String(httpStatusOf(failure)) }), 1, () => gate);
      const joined = cache.get(
        key({ method: 'resources/read', variant: String(httpStatusOf(failure)) }),
        2,
        () => gate,
      );
      release(failure);
      const answers = await Promise.all([first, joined]);
      assert.deepEqual(
        answers.map(({ response }) => httpStatusOf(response)),
        [httpStatusOf(failure), httpStatusOf(failure)],
      );
      assert.equal(answers[1].response.id, 2);
    }
  },
);
