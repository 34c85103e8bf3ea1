// cache.commandTimeoutMs: how long a Redis command may take before it counts as failed. 150 ms unless set;
// an operator with a distant Redis raises it. A proxy in front of the shared Redis holds the test's commands
// back 400 ms (a Redis far away): with the default they fail and the store does without Redis; with the bound
// raised they are answered, by the cache store and by the rate limiter.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisStore } from '../../cache/redis-store.js';
import type { StoredEntry } from '../../cache/store.js';
import { COMMAND_TIMEOUT_MS, failFastRedisOptions } from '../../infra/redis-fail-fast.js';
import { silentLog } from '../../infra/log.js';
import { RedisRateLimiter } from '../../policy/redis-rate-limit.js';
import { parseConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';
import { eventually } from '../e2e/harness.js';
import { sharedRedis } from '../services.js';
import { scaled } from '../timing.js';
import { redisProxy, type RedisProxy } from './redis-proxy.js';
import { recordingLog, type LoggedLine } from '../recording-log.js';

const redis = await sharedRedis('the Redis command timeout tests');
const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
/** Longer than the default bound on any machine: a command held this long always times out at 150 ms. */
const DISTANCE_MS = 400;
/** The raised bound: a few seconds, which only a broken connection would need. */
const RAISED_MS = scaled(10_000);
const servers = { a: { command: 'node' } };

test('cache.commandTimeoutMs: 150 ms unless set, a number of ms also from ${VAR}', () => {
  assert.equal(COMMAND_TIMEOUT_MS, 150);
  assert.equal(parseConfig({ servers }, 'test.yaml', BASE, {}).cache.commandTimeoutMs, 150);
  const raised = parseConfig({ servers, cache: { commandTimeoutMs: '${REDIS_TIMEOUT}' } }, 'test.yaml', BASE, {
    REDIS_TIMEOUT: '2500',
  });
  assert.equal(raised.cache.commandTimeoutMs, 2_500);
  assert.equal(failFastRedisOptions('x', 2_500).commandTimeout, 2_500);
  assert.equal(failFastRedisOptions('x').commandTimeout, 150);
});

test('cache.commandTimeoutMs out of range is refused, naming the key and what to give', () => {
  for (const [value, hint] of [
    [0, 'at least 1 ms'],
    [600_000, 'at most 60000 ms'],
    [1.5, 'number'],
  ] as const) {
    const problems = configProblems({ servers, cache: { commandTimeoutMs: value } }).join('\n');
    assert.match(problems, /cache\.commandTimeoutMs/, problems);
    assert.ok(problems.includes(hint), problems);
  }
});

describe('a Redis 400 ms away', { skip: redis.skip, timeout: 60_000 }, () => {
  let proxy: RedisProxy;
  let direct: Redis;
  const open: { close(): Promise<void> }[] = [];

  before(async () => {
    redis.check();
    direct = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    // The store's command connection (not its subscriber) has its commands on this test's keys held back.
    proxy = await redisProxy({ name: 'mcp-gateway-cache', slow: { text: keyPrefix, ms: DISTANCE_MS } });
  });

  after(async () => {
    await Promise.all(open.map((it) => it.close()));
    await proxy?.close();
    if (!direct) return;
    const keys = await direct.keys(`${keyPrefix}*`);
    if (keys.length) await direct.del(...keys);
    direct.disconnect();
  });

  const entry: StoredEntry = { result: { resultType: 'complete', n: 1 }, expiresAt: Date.now() + 600_000 };
  const stored = async (group: string) => {
    await direct.hset(`${keyPrefix}g:${group}`, 'f', JSON.stringify(entry));
  };

  /** Whether `lines` hold a command that counted as failed for its slowness. */
  const timedOut = (lines: LoggedLine[]) => lines.some((line) => /timed out/i.test(String(line.obj.err)));

  test('with the default bound, reads time out and miss: the store does without Redis', async () => {
    await stored('default');
    const { log, lines } = recordingLog();
    const store = new RedisStore({ url: proxy.url, keyPrefix, log });
    open.push(store);
    // Reads are skipped until the store is connected, then time out; none may ever find the entry.
    await eventually(async () => {
      assert.equal(await store.read('default', 'f'), undefined, 'a read 400 ms away answered within 150 ms');
      return timedOut(lines);
    }, 30_000);
  });

  test('with cache.commandTimeoutMs raised, the same reads are answered', async () => {
    await stored('raised');
    const { log, lines } = recordingLog();
    const store = new RedisStore({ url: proxy.url, keyPrefix, commandTimeoutMs: RAISED_MS, log });
    open.push(store);
    await eventually(async () => (await store.read('raised', 'f')) !== undefined, 30_000);
    assert.ok(!timedOut(lines), JSON.stringify(lines));
  });

  test('the rate limiter takes the bound too: a bucket emptied in Redis refuses through the distant link', async () => {
    const limitProxy = await redisProxy({
      name: 'mcp-gateway-rate-limit',
      slow: { text: keyPrefix, ms: DISTANCE_MS },
    });
    open.push(limitProxy);
    const limit = { requestsPerMinute: 1, burst: 1 };
    const nearby = await RedisRateLimiter.create({
      url: 'redis://127.0.0.1:6379',
      keyPrefix,
      commandTimeoutMs: RAISED_MS,
      log: silentLog,
    });
    const distant = await RedisRateLimiter.create({
      url: limitProxy.url,
      keyPrefix,
      commandTimeoutMs: RAISED_MS,
      log: silentLog,
    });
    open.push(nearby, distant);
    // Each try empties a fresh principal's bucket in Redis first: only a take that reached Redis is refused
    // (one decided in process, while the connection is still coming up, starts from a full bucket).
    await eventually(async () => {
      const principal = `p-${randomUUID()}`;
      const bucket = `${keyPrefix}rl:${createHash('sha256').update(principal).digest('base64url')}`;
      assert.equal((await nearby.take(principal, limit)).allowed, true);
      if ((await direct.exists(bucket)) === 0) return false; // the nearby limiter was not connected yet
      return !(await distant.take(principal, limit)).allowed;
    }, 30_000);
  });
});
