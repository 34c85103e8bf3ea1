// The cache's Redis keys are printable (issue 36): `redis-cli --scan` lists them as they are and `DEL` takes
// them as listed, with no NUL between a server's name and a method.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { ListCache } from '../../cache/list-cache.js';
import { RedisStore } from '../../cache/redis-store.js';
import { silentLog } from '../../infra/log.js';
import { IN_CI, sharedRedis } from '../services.js';
import { until } from './harness.js';

const URL = 'redis://127.0.0.1:6379';
const PREFIX = `mcp-gateway-test:${randomUUID()}:`;
const redis = await sharedRedis('readable Redis keys');
const closing: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const close of closing) await close().catch(() => {});
});

async function keysOf(admin: Redis): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

test('a cached list lives under printable keys that redis-cli lists and deletes', { skip: redis.skip }, async (t) => {
  redis.check();
  const store = new RedisStore({ url: URL, keyPrefix: PREFIX, log: silentLog });
  const cache = new ListCache(store, { minTtlMs: 0, maxTtlMs: 3_600_000, log: silentLog });
  const admin = new Redis(URL, { maxRetriesPerRequest: 1 });
  closing.push(
    () => cache.close(),
    async () => {
      const left = await keysOf(admin);
      if (left.length) await admin.del(...left);
      admin.disconnect();
    },
  );
  const result = {
    resultType: 'complete',
    tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
    ttlMs: 60_000,
    cacheScope: 'public',
  };
  const key = { upstream: 'everything', method: 'tools/list', variant: '', context: 'alice' };
  assert.ok(
    await until(async () => {
      await cache.get(key, 1, async () => ({ jsonrpc: '2.0', id: 1, result }));
      return (await keysOf(admin)).includes(`${PREFIX}g:everything:tools/list`);
    }, 5_000),
    `the list was not stored under ${PREFIX}g:everything:tools/list; keys: ${JSON.stringify(await keysOf(admin))}`,
  );
  const keys = await keysOf(admin);
  for (const name of keys)
    assert.ok(
      ![...name].some((c) => c < ' ' || c === '\x7f'),
      `a key with a control character: ${JSON.stringify(name)}`,
    );
  const cli = spawnSync('redis-cli', ['-h', '127.0.0.1', '--scan', '--pattern', `${PREFIX}*`], { encoding: 'utf8' });
  if (cli.error) {
    // The point of the test is what redis-cli prints: CI (which installs it) fails without it, a laptop skips.
    const missing = `redis-cli is missing (${cli.error.message}): install it (apt-get install -y redis-tools)`;
    if (IN_CI) assert.fail(`${missing}; CI=true: the test fails instead of being skipped`);
    t.skip(missing);
    return;
  }
  assert.deepEqual(cli.stdout.trim().split('\n').sort(), keys, 'redis-cli prints each key as it is');
  const del = spawnSync('redis-cli', ['-h', '127.0.0.1', 'DEL', ...keys], { encoding: 'utf8' });
  assert.equal(del.stdout.trim(), String(keys.length), 'DEL with the keys as printed removes every one');
});
