// Per-field expiry inside a group's Redis hash: writes delete fields that have expired, a bounded number
// at a time, so a group kept busy by a long-lived field does not keep its short-lived ones.
// Runs against the Redis on 127.0.0.1:6379, under a key prefix of its own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { PRUNE_PER_WRITE, RedisStore } from '../../cache/redis-store.js';
import type { StoredEntry } from '../../cache/store.js';
import { silentLog } from '../../infra/log.js';
import { sharedRedis } from '../services.js';
import { until } from '../e2e/harness.js';
import { scaled } from '../timing.js';

const redis = await sharedRedis('the Redis store expiry tests');
const SKIP = redis.skip;
const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
const GROUP = 'srv:tools/list';
let store: RedisStore;
let direct: Redis;

const entry = (ttlMs: number, n = 0): StoredEntry => ({
  result: { resultType: 'complete', n },
  expiresAt: Date.now() + ttlMs,
});
const fields = (): Promise<string[]> => direct.hkeys(`${keyPrefix}g:${GROUP}`).then((keys) => keys.sort());

before(async () => {
  if (SKIP) return;
  store = new RedisStore({ url: 'redis://127.0.0.1:6379', keyPrefix, log: silentLog });
  direct = new Redis('redis://127.0.0.1:6379');
  // A write that reaches Redis: the store is connected.
  assert.ok(
    await until(
      async () => {
        await store.write('probe', 'f', entry(60_000), 60_000);
        return (await direct.exists(`${keyPrefix}g:probe`)) === 1;
      },
      5_000,
      50,
    ),
    'store connected',
  );
});

after(async () => {
  if (SKIP) return;
  await store.close();
  const keys = await direct.keys(`${keyPrefix}*`);
  if (keys.length) await direct.del(...keys);
  direct.disconnect();
});

/** Writes until Redis has them all (a command may time out on a busy machine; the store then skips briefly). */
async function writeSurely(field: string, value: StoredEntry, ttlMs: number): Promise<void> {
  const stored = JSON.stringify(value);
  assert.ok(
    await until(
      async () => {
        await store.write(GROUP, field, value, ttlMs);
        return (await direct.hget(`${keyPrefix}g:${GROUP}`, field)) === stored;
      },
      5_000,
      50,
    ),
    `wrote ${field}`,
  );
}

test('a busy group loses its expired short-lived field on the next write; the long-lived one stays', {
  skip: SKIP,
}, async () => {
  redis.check();
  // Long enough to outlive the next write: with 40 ms, a loaded CI machine wrote 'long' after 'short' had
  // expired, and that write rightly pruned it before the test could see both.
  const SHORT_MS = scaled(2_000);
  const short = entry(SHORT_MS);
  await writeSurely('short', short, SHORT_MS);
  await writeSurely('long', entry(60_000, 1), 60_000);
  assert.ok(Date.now() < short.expiresAt, `writing two fields took over ${SHORT_MS} ms: the test could not run`);
  assert.deepEqual(await fields(), ['long', 'short']);
  assert.ok((await direct.pttl(`${keyPrefix}g:${GROUP}`)) > SHORT_MS, 'the hash lives as long as its longest field');
  // Until the short field's expiry passes (by this host's clock, as the store judges it).
  await until(() => Date.now() > short.expiresAt, SHORT_MS + 1_000, 5);
  assert.deepEqual(await fields(), ['long', 'short'], 'an expired field stays until a write comes by');
  await writeSurely('long', entry(60_000, 2), 60_000);
  assert.deepEqual(await fields(), ['long'], 'the write deleted the expired field');
  assert.equal((await store.read(GROUP, 'long'))?.result.n, 2);
  assert.deepEqual(await direct.zrange(`${keyPrefix}e:${GROUP}`, '0', '-1'), ['long'], 'and its expiry');
});

test('each write deletes at most PRUNE_PER_WRITE expired fields, so the work per write is bounded', {
  skip: SKIP,
}, async () => {
  redis.check();
  const many = 2 * PRUNE_PER_WRITE + 3;
  // Long enough that none expires while the others are written (a write prunes too): 35 writes, each read back,
  // on a loaded machine.
  const SHORT_MS = scaled(3_000);
  let earliest = 0;
  let latest = 0;
  for (let i = 0; i < many; i++) {
    const value = entry(SHORT_MS, i);
    earliest ||= value.expiresAt;
    latest = value.expiresAt;
    await writeSurely(`short-${String(i).padStart(3, '0')}`, value, SHORT_MS);
  }
  await writeSurely('long', entry(60_000), 60_000);
  assert.ok(Date.now() < earliest, 'all written before the first expired (machine too slow otherwise)');
  assert.equal((await fields()).length, many + 1);
  await until(() => Date.now() > latest, SHORT_MS + 2_000, 10);
  const counts: number[] = [];
  for (let round = 0; round < 3; round++) {
    await writeSurely('long', entry(60_000, round), 60_000);
    counts.push((await fields()).length);
  }
  // The hash held `many` expired fields and the long one; each rewrite of the long one adds nothing.
  assert.deepEqual(counts, [many + 1 - PRUNE_PER_WRITE, many + 1 - 2 * PRUNE_PER_WRITE, 1]);
});

test('a drop deletes the expiry index with the hash', { skip: SKIP }, async () => {
  redis.check();
  await writeSurely('kept', entry(60_000), 60_000);
  assert.equal(await direct.exists(`${keyPrefix}e:${GROUP}`), 1);
  await store.dropGroup(GROUP);
  assert.deepEqual(await direct.exists(`${keyPrefix}g:${GROUP}`, `${keyPrefix}e:${GROUP}`), 0);
});
