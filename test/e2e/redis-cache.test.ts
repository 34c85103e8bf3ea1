// ListCache over RedisStore against real Redis: two instances with their own connections stand in for two
// gateway replicas sharing 127.0.0.1:6379; a redis-server of the test's own, on a free port, is killed and
// restarted to show that a Redis outage never fails or slows a request.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ownRedis, startRedis, stopRedis } from './own-redis.js';
import { redisServerBinary, sharedRedis } from '../services.js';
import { ListCache, type CacheKey } from '../../cache/list-cache.js';
import { RedisStore } from '../../cache/redis-store.js';
import type { JsonObject, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog, type Log } from '../../infra/log.js';
import { until } from './harness.js';
import { percentile, scaled } from '../timing.js';
import { COMMAND_TIMEOUT_MS, PAUSE_MS } from '../../infra/redis-fail-fast.js';
import { recordingLog } from '../recording-log.js';

const SHARED_URL = 'redis://127.0.0.1:6379';
const PREFIX = `mcp-gateway-test:${randomUUID()}:`;

const shared = await sharedRedis('ListCache replicas on the shared Redis');
const own = redisServerBinary('ListCache through a Redis outage');

const open: { close(): Promise<void> }[] = [];
after(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  if (!shared.present) return;
  // Remove everything this run wrote.
  const admin = new Redis(SHARED_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
    if (keys.length) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await admin.quit();
});

/**
 * A replica's cache over Redis. Its commands may take a few seconds (cache.commandTimeoutMs) where state shared
 * between replicas is under test: a command dropped for taking 150 ms on a loaded machine would fail those tests
 * for nothing. The outage tests keep the default, which is what they test.
 */
const SHARED_STATE_TIMEOUT_MS = scaled(5_000);
function replica(
  url = SHARED_URL,
  log: Log = silentLog,
  keyPrefix = PREFIX,
  commandTimeoutMs = SHARED_STATE_TIMEOUT_MS,
) {
  const store = new RedisStore({ url, keyPrefix, log, commandTimeoutMs });
  const cache = new ListCache(store, { minTtlMs: 0, maxTtlMs: 3_600_000, log });
  open.push(cache);
  return { cache, store };
}

const key = (overrides: Partial<CacheKey> = {}): CacheKey => ({
  upstream: 'srv',
  method: 'tools/list',
  variant: '',
  context: 'alice',
  ...overrides,
});

function ok(result: JsonObject): JsonRpcResponse {
  return { jsonrpc: '2.0', id: 0, result };
}

function counted(result: () => JsonObject) {
  const counter = { calls: 0, fetch: async () => (counter.calls++, ok(result())) };
  return counter;
}

const tools = (ttlMs: number, cacheScope = 'public') => ({
  resultType: 'complete',
  tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
  ttlMs,
  cacheScope,
});

/** How many connections are subscribed to this run's invalidation channel. */
async function subscribers(): Promise<number> {
  const admin = new Redis(SHARED_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await admin.connect();
    const [, count] = (await admin.pubsub('NUMSUB', `${PREFIX}invalidate`)) as [string, number];
    return Number(count);
  } finally {
    admin.disconnect();
  }
}

async function ready(store: RedisStore): Promise<void> {
  // A read that reaches Redis does not count as an error; one made before the connection is up does.
  assert.ok(
    await until(async () => {
      const before = store.errors;
      await store.read('probe', 'probe');
      return store.errors === before;
    }, 5_000),
    'RedisStore did not connect',
  );
}

test('an entry stored by one replica is a hit on the other; private entries stay with their context', {
  skip: shared.skip,
}, async () => {
  shared.check();
  const a = replica();
  const b = replica();
  await Promise.all([ready(a.store), ready(b.store)]);
  const errorsBefore = a.cache.stats.storeErrors + b.cache.stats.storeErrors; // probes made while connecting
  const up = counted(() => tools(60_000));

  const fetchedAt = Date.now();
  assert.equal((await a.cache.get(key(), 1, up.fetch)).hit, false);
  assert.equal((await a.cache.get(key(), 2, up.fetch)).hit, true); // same connection: after the write
  const onB = await b.cache.get(key({ context: 'bob' }), 'b-1', up.fetch);
  assert.equal(onB.hit, true);
  assert.equal(onB.response.id, 'b-1');
  assert.ok('result' in onB.response);
  assert.deepEqual(onB.response.result.tools, [{ name: 'echo', inputSchema: { type: 'object' } }]);
  // What is left of the 60 s: less only by the time taken since the fetch (however long a loaded machine took).
  const left = onB.response.result.ttlMs as number;
  assert.ok(
    left <= 60_000 && left >= 60_000 - (Date.now() - fetchedAt) - 1,
    `ttlMs ${left} after ${Date.now() - fetchedAt} ms`,
  );
  assert.equal(up.calls, 1);

  const priv = counted(() => tools(60_000, 'private'));
  await a.cache.get(key({ method: 'prompts/list' }), 1, priv.fetch);
  await a.cache.get(key({ method: 'prompts/list' }), 1, priv.fetch);
  assert.equal((await b.cache.get(key({ method: 'prompts/list', context: 'alice' }), 1, priv.fetch)).hit, true);
  assert.equal((await b.cache.get(key({ method: 'prompts/list', context: 'bob' }), 1, priv.fetch)).hit, false);
  assert.equal(priv.calls, 2);
  assert.equal(a.cache.stats.storeErrors + b.cache.stats.storeErrors, errorsBefore);
});

test('an invalidation on one replica fires onInvalidate on the other and the entry is gone for both', {
  skip: shared.skip,
}, async () => {
  shared.check();
  const listening = await subscribers();
  const a = replica();
  const b = replica();
  await Promise.all([ready(a.store), ready(b.store)]);
  // Both subscribe on 'ready'; Redis counts them once they have.
  assert.ok(await until(async () => (await subscribers()) >= listening + 2, 5_000), 'the replicas never subscribed');
  const heardOnA: [string, readonly string[]][] = [];
  const heardOnB: [string, readonly string[]][] = [];
  a.cache.onInvalidate((upstream, methods) => heardOnA.push([upstream, methods]));
  b.cache.onInvalidate((upstream, methods) => heardOnB.push([upstream, methods]));
  // B must be listening before the counts start. NUMSUB alone is not enough: on a loaded machine a SUBSCRIBE
  // whose reply outlives the command timeout is counted by Redis, then dropped and made again, and B's
  // store then reports a gap (missed drops), which ListCache counts as one more invalidation (CI once saw
  // 3 for 2). A notice B hears through the channel proves the subscription it will use; counts start after.
  await a.cache.invalidate('warm-up', ['tools/list']);
  assert.ok(await until(() => heardOnB.some(([upstream]) => upstream === 'warm-up'), 5_000), 'B heard no invalidation');
  heardOnA.length = 0;
  heardOnB.length = 0;
  const invalidationsOnB = b.cache.stats.invalidations;

  const up = counted(() => tools(60_000));
  const lists = ['resources/list', 'resources/templates/list'];
  for (const method of [...lists, 'tools/list']) {
    await a.cache.get(key({ method, upstream: 'inv' }), 1, up.fetch);
    await a.cache.get(key({ method, upstream: 'inv' }), 1, up.fetch);
  }
  assert.equal((await b.cache.get(key({ method: 'resources/list', upstream: 'inv' }), 1, up.fetch)).hit, true);
  assert.equal(up.calls, 3);

  await a.cache.invalidate('inv', lists);
  // Messages from one publisher arrive in order: once both have heard a later one, a duplicate would be in.
  await a.cache.invalidate('fence', ['tools/list']);
  const fenced = (heard: [string, readonly string[]][]) => heard.some(([upstream]) => upstream === 'fence');
  assert.ok(await until(() => fenced(heardOnB), 5_000), 'B heard no invalidation');
  for (const heard of [heardOnA, heardOnB])
    heard.splice(
      heard.findIndex(([upstream]) => upstream === 'fence'),
      1,
    );
  assert.deepEqual(heardOnB, [['inv', lists]]); // both methods in one notice
  assert.deepEqual(heardOnA, [['inv', lists]]); // A heard its own once, not again through Redis
  assert.equal(b.cache.stats.invalidations - invalidationsOnB, 2, 'B counts each notice it heard once');

  const uncacheable = async () => ok(tools(0)); // so that one replica's miss does not refill the other's
  for (const cache of [a.cache, b.cache]) {
    for (const method of lists)
      assert.equal((await cache.get(key({ method, upstream: 'inv' }), 1, uncacheable)).hit, false);
  }
  assert.equal((await b.cache.get(key({ method: 'tools/list', upstream: 'inv' }), 1, up.fetch)).hit, true);
});

test('entries expire, and a hash lives as long as its longest-lived field', { skip: shared.skip }, async () => {
  shared.check();
  const a = replica();
  const b = replica();
  await Promise.all([ready(a.store), ready(b.store)]);
  // Lifetimes long enough that a test process starved of CPU (six files on two cores in CI) still reads a
  // fresh entry as fresh; expiry is then awaited past the latest the entry's deadline can be (its write
  // ended by then), not a fixed sleep that a slow write outlasts.
  const SHORT_MS = 2_000;
  const errors = () => `store errors: ${a.cache.stats.storeErrors + b.cache.stats.storeErrors}`;
  const short = counted(() => tools(SHORT_MS));
  await a.cache.get(key({ upstream: 'exp' }), 1, short.fetch);
  const written = Date.now(); // the entry's expiresAt is at most this + SHORT_MS
  assert.equal((await a.cache.get(key({ upstream: 'exp' }), 1, short.fetch)).hit, true, errors());
  assert.equal((await b.cache.get(key({ upstream: 'exp' }), 1, short.fetch)).hit, true, errors());
  await sleep(Math.max(0, written + SHORT_MS + 5 - Date.now()));
  assert.equal((await b.cache.get(key({ upstream: 'exp' }), 1, short.fetch)).hit, false);
  assert.equal((await a.cache.get(key({ upstream: 'exp' }), 1, short.fetch)).hit, true, `B refilled it; ${errors()}`);
  assert.equal(short.calls, 2);

  const admin = new Redis(SHARED_URL);
  open.push({ close: async () => void (await admin.quit()) });
  const hash = `${PREFIX}g:exp2:tools/list`;
  const longWritten = Date.now();
  await a.cache.get(key({ upstream: 'exp2', variant: 'long' }), 1, async () => ok(tools(60_000)));
  await a.cache.get(key({ upstream: 'exp2', variant: 'short' }), 1, async () => ok(tools(SHORT_MS)));
  const shortWritten = Date.now();
  await a.cache.get(key({ upstream: 'exp2', variant: 'short' }), 1, async () => assert.fail(`cached; ${errors()}`));
  const pttl = await admin.pttl(hash);
  assert.ok(
    pttl <= 60_000 && pttl >= 60_000 - (Date.now() - longWritten) - 1,
    `hash PTTL ${pttl} after ${Date.now() - longWritten} ms`,
  );
  await sleep(Math.max(0, shortWritten + SHORT_MS + 5 - Date.now()));
  // The short field is stale (ignored) although the hash still holds it.
  let fetched = 0;
  await b.cache.get(key({ upstream: 'exp2', variant: 'short' }), 1, async () => (fetched++, ok(tools(0))));
  assert.equal(fetched, 1);
  assert.equal(
    (await b.cache.get(key({ upstream: 'exp2', variant: 'long' }), 1, async () => assert.fail('cached'))).hit,
    true,
  );
});

test('Redis stopped mid-test: answers keep coming, fast, without throwing; the cache works again after a restart', {
  skip: own.skip,
  timeout: 30_000,
}, async () => {
  own.check();
  let { port, child: server } = await ownRedis();
  const url = `redis://127.0.0.1:${port}`;
  const owned = { close: async () => stopRedis(server) };
  open.push(owned);

  const { log, lines } = recordingLog();
  const { cache, store } = replica(url, log, PREFIX, COMMAND_TIMEOUT_MS);
  await ready(store);
  // Before the outage the cache works: a write, then a hit. Each command has the outage's 150 ms bound, which a
  // CI machine starved of CPU can miss before any outage (a CI run saw the first hit missed): tried until it
  // lands. What a timeout there logs is not the outage's warning, so warnings are counted from the stop.
  const up = counted(() => tools(60_000));
  const hitBefore = async () => {
    await cache.get(key(), 1, up.fetch);
    return (await cache.get(key(), 1, up.fetch)).hit;
  };
  assert.ok(await until(hitBefore, 10_000, 100), 'the cache did not work before the outage');
  const logged = lines.length;
  const sinceStop = () => lines.slice(logged);
  const warnings = () => sinceStop().filter((l) => l.level === 'warn').length;

  await stopRedis(server);
  const errorsBefore = cache.stats.storeErrors;
  const took: number[] = [];
  for (let i = 0; i < 30; i++) {
    const started = performance.now();
    const { response, hit } = await cache.get(key({ variant: String(i % 3), context: `c${i}` }), i, async () =>
      ok(tools(60_000, 'private')),
    );
    took.push(performance.now() - started);
    assert.equal(hit, false);
    assert.ok('result' in response, 'the fetched answer comes back');
    if (i === 10) {
      const t0 = performance.now();
      await cache.invalidate('srv', ['tools/list']); // does not throw either; kept for later
      took.push(performance.now() - t0);
    }
    await sleep(10); // spread over the client's reconnection attempts
  }
  assert.ok(
    percentile(took, 0.9) < scaled(200),
    `with Redis down, the 90th percentile get took ${percentile(took, 0.9).toFixed(1)} ms`,
  );
  assert.ok(cache.stats.storeErrors > errorsBefore, 'store errors are counted');
  assert.equal(warnings(), 1, `one warning per outage: ${JSON.stringify(sinceStop())}`);

  server = await startRedis(port);
  const back = counted(() => tools(60_000));
  assert.ok(
    await until(
      async () => {
        await cache.get(key({ upstream: 'after' }), 1, back.fetch);
        return (await cache.get(key({ upstream: 'after' }), 1, back.fetch)).hit;
      },
      10_000,
      100,
    ),
    'the cache did not work again after Redis came back',
  );
  assert.ok(
    await until(() => sinceStop().some((l) => l.level === 'info' && /again/.test(l.msg)), 2_000),
    'recovery is logged',
  );
  assert.equal(warnings(), 1);
});

test('Redis hanging (SIGSTOP): gets still answer, and cost one command timeout per pause, not one each', {
  skip: own.skip,
  timeout: 60_000,
}, async () => {
  own.check();
  const { port, child: server } = await ownRedis();
  open.push({ close: async () => stopRedis(server) });
  const { cache, store } = replica(`redis://127.0.0.1:${port}`, silentLog, PREFIX, COMMAND_TIMEOUT_MS);
  await ready(store);
  const up = counted(() => tools(60_000));
  await cache.get(key(), 1, up.fetch);

  // Every command the store sends, counted at its client (what a get costs is whether it waits on Redis).
  const client = (store as unknown as { client: { sendCommand(...args: unknown[]): unknown } }).client;
  let sent = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = (...args: unknown[]) => (sent++, send(...args));

  server.kill('SIGSTOP');
  const started = Date.now();
  try {
    for (let i = 0; i < 20; i++) {
      const { response } = await cache.get(key({ variant: String(i), context: `c${i}` }), i, async () =>
        ok(tools(60_000, 'private')),
      );
      assert.ok('result' in response);
      await sleep(50); // spread over the store's pauses
    }
  } finally {
    server.kill('SIGCONT');
  }
  // A command that timed out pauses the store for PAUSE_MS, so however long the gets took (a loaded machine
  // only makes them take longer, which allows more), at most one command went out per pause begun.
  const elapsed = Date.now() - started;
  assert.ok(sent >= 1, 'the store tried Redis while it hung');
  assert.ok(sent <= Math.floor(elapsed / PAUSE_MS) + 1, `${sent} commands sent in ${elapsed} ms of 20 gets`);
  assert.ok(cache.stats.storeErrors > 0);
  assert.ok(
    await until(async () => (await cache.get(key(), 1, up.fetch)).hit, 5_000, 100),
    'the cache works again once Redis answers',
  );
});

// ---- helpers ---------------------------------------------------------------------------------------------

test('a fetch that began before another replica dropped the group does not put its answer back', {
  skip: shared.skip,
}, async () => {
  shared.check();
  const a = replica();
  const b = replica();
  const group = 'race:tools/list';
  await until(() => a.store.version(group).then((v) => v !== undefined), 2_000);
  // What ListCache does around a fetch: take the version, fetch, write with it. The replicas' commands may take
  // seconds (replica() above), and each step is checked to have reached Redis (no store error): a write that
  // timed out or was skipped would leave nothing to read either, and pass without testing the race.
  const version = await a.store.version(group);
  assert.notEqual(version, undefined, 'A read the version from Redis');
  // Another replica's invalidation lands while A's fetch runs.
  assert.ok(
    await until(async () => (await b.store.dropGroup(group), (await a.store.version(group)) !== version), 10_000, 50),
    'the drop reached Redis',
  );
  const errorsBefore = a.store.errors + b.store.errors;
  await a.store.write(
    group,
    'f',
    { result: { resultType: 'complete', n: 1 }, expiresAt: Date.now() + 60_000 },
    60_000,
    version,
  );
  assert.equal(await b.store.read(group, 'f'), undefined, 'the stale answer was not stored');
  assert.equal(a.store.errors + b.store.errors, errorsBefore, 'the stale write and the read reached Redis');
  // A fetch that began after the drop stores as usual.
  const stored = async () => {
    const fresh = await a.store.version(group);
    await a.store.write(
      group,
      'f',
      { result: { resultType: 'complete', n: 2 }, expiresAt: Date.now() + 60_000 },
      60_000,
      fresh,
    );
    return (await b.store.read(group, 'f'))?.result.n === 2;
  };
  assert.ok(await until(stored, 10_000, 50), 'a fetch that began after the drop stores its answer');
});
