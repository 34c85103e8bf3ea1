// Token buckets: the in-process limiter on an injected clock, and the Redis one against the Redis at
// 127.0.0.1:6379, with two instances standing in for two gateway replicas.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { MemoryRateLimiter, type RateDecision } from '../../policy/rate-limit.js';
import { RedisRateLimiter } from '../../policy/redis-rate-limit.js';
import type { RateLimitSetting } from '../../policy/settings.js';
import { silentLog, type Log } from '../../infra/log.js';
import { unusedPort } from '../ports.js';
import { sharedRedis } from '../services.js';
import { recordingLog } from '../recording-log.js';
import { scaled } from '../timing.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const PREFIX = `mcp-gateway-test:${randomUUID()}:`;
// Asked before any test runs: the synchronous property test below would otherwise outlast the probe's timeout.
const redis = await sharedRedis('RedisRateLimiter against the shared Redis');

function clock(start = 1_000_000) {
  const time = { now: start, advance: (ms: number) => void (time.now += ms) };
  return time;
}

function takeMany(limiter: MemoryRateLimiter, key: string, limit: RateLimitSetting, count: number): RateDecision[] {
  return Array.from({ length: count }, () => limiter.take(key, limit));
}

const allowedCount = (decisions: RateDecision[]) => decisions.filter((decision) => decision.allowed).length;

describe('MemoryRateLimiter', () => {
  test('burst N: N allowed at once, the next refused until one token is back', () => {
    const time = clock();
    const limiter = new MemoryRateLimiter({ now: () => time.now });
    const limit = { requestsPerMinute: 60, burst: 3 }; // one token a second

    assert.equal(allowedCount(takeMany(limiter, 'alice', limit, 3)), 3);
    assert.deepEqual(limiter.take('alice', limit), { allowed: false, retryAfterMs: 1000 });
    time.advance(999);
    assert.deepEqual(limiter.take('alice', limit), { allowed: false, retryAfterMs: 1 });
    time.advance(1);
    assert.deepEqual(limiter.take('alice', limit), { allowed: true });
    assert.deepEqual(limiter.take('alice', limit), { allowed: false, retryAfterMs: 1000 });
  });

  test('tokens refill with time, never beyond the burst', () => {
    const time = clock();
    const limiter = new MemoryRateLimiter({ now: () => time.now });
    const limit = { requestsPerMinute: 120, burst: 4 }; // one token per 500 ms

    assert.equal(allowedCount(takeMany(limiter, 'alice', limit, 5)), 4);
    time.advance(1_250); // 2.5 tokens
    assert.equal(allowedCount(takeMany(limiter, 'alice', limit, 3)), 2);
    assert.deepEqual(limiter.take('alice', limit), { allowed: false, retryAfterMs: 250 });
    time.advance(3_600_000); // idle for an hour: full, not 7 200 tokens
    assert.equal(allowedCount(takeMany(limiter, 'alice', limit, 10)), 4);
  });

  test('keys have buckets of their own', () => {
    const time = clock();
    const limiter = new MemoryRateLimiter({ now: () => time.now });
    const limit = { requestsPerMinute: 60, burst: 2 };

    assert.equal(allowedCount(takeMany(limiter, 'alice', limit, 3)), 2);
    assert.equal(allowedCount(takeMany(limiter, 'bob', limit, 3)), 2, 'alice emptying hers leaves bob a full bucket');
    time.advance(1_000);
    assert.equal(limiter.take('alice', limit).allowed, true);
    assert.equal(limiter.take('bob', limit).allowed, true);
  });

  test('burst and rate are independent: a large burst over a slow rate, a small burst over a fast one', () => {
    const time = clock();
    const limiter = new MemoryRateLimiter({ now: () => time.now });

    const slow = { requestsPerMinute: 1, burst: 5 };
    assert.equal(allowedCount(takeMany(limiter, 'slow', slow, 5)), 5);
    assert.deepEqual(limiter.take('slow', slow), { allowed: false, retryAfterMs: 60_000 });

    const fast = { requestsPerMinute: 6_000, burst: 1 }; // one token per 10 ms
    assert.equal(limiter.take('fast', fast).allowed, true);
    assert.deepEqual(limiter.take('fast', fast), { allowed: false, retryAfterMs: 10 });
  });

  test('retryAfterMs rounds up a fractional wait, and waiting it is exactly enough', () => {
    const time = clock();
    const limiter = new MemoryRateLimiter({ now: () => time.now });
    const limit = { requestsPerMinute: 7, burst: 1 }; // a token every 8 571.43 ms

    assert.equal(limiter.take('alice', limit).allowed, true);
    assert.deepEqual(limiter.take('alice', limit), { allowed: false, retryAfterMs: 8_572 });
    time.advance(8_571);
    assert.deepEqual(limiter.take('alice', limit), { allowed: false, retryAfterMs: 1 });
    time.advance(1);
    assert.equal(limiter.take('alice', limit).allowed, true);
  });

  test('whatever the limit and timing, waiting the retryAfterMs given is enough', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(fc.double({ min: 0, max: 10_000, noNaN: true }), { maxLength: 40 }),
        (requestsPerMinute, burst, gaps) => {
          const time = clock(0);
          const limiter = new MemoryRateLimiter({ now: () => time.now });
          const limit = { requestsPerMinute, burst };
          for (const gap of gaps) {
            time.advance(gap);
            const decision = limiter.take('k', limit);
            if (decision.allowed) continue;
            assert.ok(decision.retryAfterMs >= 1);
            time.advance(decision.retryAfterMs);
            assert.equal(limiter.take('k', limit).allowed, true, `refused after waiting ${decision.retryAfterMs} ms`);
          }
        },
      ),
    );
  });

  test('bounded: beyond maxKeys the least recently used bucket is forgotten (and starts full again)', () => {
    const time = clock();
    const limiter = new MemoryRateLimiter({ now: () => time.now, maxKeys: 2 });
    const limit = { requestsPerMinute: 1, burst: 1 };

    for (const key of ['a', 'b']) assert.equal(limiter.take(key, limit).allowed, true);
    assert.equal(limiter.take('a', limit).allowed, false, 'a is empty and now the most recently used');
    assert.equal(limiter.take('c', limit).allowed, true); // evicts b
    assert.equal(limiter.take('a', limit).allowed, false, 'a was kept');
    assert.equal(limiter.take('b', limit).allowed, true, 'b was forgotten');
  });
});

// ---- Redis --------------------------------------------------------------------------------------------------

const open: RedisRateLimiter[] = [];
let admin: Redis | undefined;

after(async () => {
  await Promise.all(open.map((limiter) => limiter.close()));
  if (!admin) return;
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
    if (keys.length) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await admin.quit();
});

function adminClient(): Redis {
  admin ??= new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  return admin;
}

/**
 * A limiter standing in for one replica. Its commands may take a few seconds (cache.commandTimeoutMs): these tests
 * are about the count shared through Redis, and a command that timed out on a loaded machine would be decided in
 * process instead. The 150 ms default is tested where a Redis is away (test/unit/redis-command-timeout.test.ts).
 */
async function replica(url = REDIS_URL, log: Log = silentLog): Promise<RedisRateLimiter> {
  const limiter = await RedisRateLimiter.create({ url, keyPrefix: PREFIX, commandTimeoutMs: scaled(5_000), log });
  open.push(limiter);
  return limiter;
}

const bucketKey = (principal: string) => `${PREFIX}rl:${createHash('sha256').update(principal).digest('base64url')}`;

describe('RedisRateLimiter', { skip: redis.skip, timeout: 10_000 }, () => {
  before(redis.check);
  test('burst N: N allowed, the next refused, counted in Redis under a hashed key', async () => {
    const { log, warnings } = recordingLog();
    const limiter = await replica(REDIS_URL, log);
    const principal = `user:${randomUUID()} with spaces, colons: and ünïcode`;
    // A token a minute: no token comes back while the test runs, however slow the machine.
    const limit = { requestsPerMinute: 1, burst: 3 };

    const started = Date.now();
    for (let i = 0; i < 3; i++)
      assert.deepEqual(await limiter.take(principal, limit), { allowed: true }, `request ${i + 1}`);
    const refused = await limiter.take(principal, limit);
    const elapsed = Date.now() - started;
    // The wait is a minute less what has refilled since the first take, which Redis's clock measured within
    // what this one did (1 ms for rounding).
    assert.ok(
      !refused.allowed && refused.retryAfterMs <= 60_000 && refused.retryAfterMs >= 60_000 - elapsed - 1,
      `${JSON.stringify(refused)} after ${elapsed} ms`,
    );

    const stored = await adminClient().hgetall(bucketKey(principal));
    assert.ok(Number(stored.t) < 1, `the bucket lives in Redis: ${JSON.stringify(stored)}`);
    assert.deepEqual(warnings(), []);
  });

  test('two replicas share one bucket: 3 through one and 2 through the other empty a burst of 5', async () => {
    const [first, second] = [await replica(), await replica()];
    const principal = `shared-${randomUUID()}`;
    const limit = { requestsPerMinute: 1, burst: 5 }; // nothing refills while the test runs

    for (let i = 0; i < 3; i++) assert.equal((await first.take(principal, limit)).allowed, true);
    for (let i = 0; i < 2; i++) assert.equal((await second.take(principal, limit)).allowed, true);
    assert.equal((await first.take(principal, limit)).allowed, false, 'the 6th through the first replica');
    assert.equal((await second.take(principal, limit)).allowed, false, 'the 6th through the second replica');
  });

  test('a burst lowered by a config reload applies at once to a bucket holding more', async () => {
    const limiter = await replica();
    const principal = `reloaded-${randomUUID()}`;

    assert.equal((await limiter.take(principal, { requestsPerMinute: 1, burst: 10 })).allowed, true); // 9 left
    const lowered = { requestsPerMinute: 1, burst: 2 };
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push((await limiter.take(principal, lowered)).allowed);
    assert.deepEqual(decisions, [true, true, false]);
  });

  test('a bucket expires once it would be full again', async () => {
    const limiter = await replica();
    const principal = `expiring-${randomUUID()}`;
    const limit = { requestsPerMinute: 6, burst: 5 }; // a token every 10 s: a full refill takes 50 s

    await limiter.take(principal, limit); // one token short: full again in 10 s
    const oneShort = await adminClient().pttl(bucketKey(principal));
    assert.ok(oneShort > 0 && oneShort <= 10_000, `PTTL ${oneShort}`);

    // Empty: full again in 50 s less what refilled meanwhile (less than 10 s on any machine that runs tests).
    for (let i = 0; i < 4; i++) await limiter.take(principal, limit);
    const empty = await adminClient().pttl(bucketKey(principal));
    assert.ok(empty > 40_000 && empty <= 50_000, `PTTL ${empty}`);
  });

  test('a command Redis refuses is decided in process too, with one warning', async () => {
    const { log, warnings } = recordingLog();
    const limiter = await replica(REDIS_URL, log);
    const principal = `clashing-${randomUUID()}`;
    await adminClient().set(bucketKey(principal), 'not a hash'); // the script fails with WRONGTYPE
    const limit = { requestsPerMinute: 1, burst: 2 };

    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push((await limiter.take(principal, limit)).allowed);
    assert.deepEqual(decisions, [true, true, false]);
    assert.equal(warnings().length, 1, JSON.stringify(warnings()));
  });
});

// Needs no Redis: the point is that none answers.
describe('RedisRateLimiter without Redis', { timeout: 10_000 }, () => {
  test('with Redis unreachable, requests are still limited, in process, with one warning', async () => {
    const { log, warnings } = recordingLog();
    const limiter = await replica(`redis://127.0.0.1:${await unusedPort()}`, log);
    const limit = { requestsPerMinute: 1, burst: 2 }; // nothing refills while the test runs

    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.take('alice', limit));
    assert.deepEqual(
      decisions.map((decision) => decision.allowed),
      [true, true, false, false, false],
    );
    assert.ok(!decisions[2]!.allowed && decisions[2]!.retryAfterMs > 0 && decisions[2]!.retryAfterMs <= 60_000);
    await sleep(400); // across several reconnection attempts (50, 100, 200 ms apart)
    assert.equal((await limiter.take('alice', limit)).allowed, false);
    assert.equal(
      warnings().length,
      1,
      `warned once per outage, not per request or attempt: ${JSON.stringify(warnings())}`,
    );
  });
});
