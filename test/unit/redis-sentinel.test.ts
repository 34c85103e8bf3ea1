// cache.sentinel: validated with messages that say what to write, and turned into the ioredis options that
// make every Redis connection of the gateway ask the sentinels for the primary. The options, and what
// ioredis makes of them with the URL, are checked without a Sentinel; the last test starts a primary and
// a sentinel of its own (redis-server --sentinel) and writes through it.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisStore } from '../../cache/redis-store.js';
import { parseConfig } from '../../src/config/config.js';
import { silentLog } from '../../infra/log.js';
import { failFastRedisOptions, sentinelOptions } from '../../infra/redis-fail-fast.js';
import { until } from '../e2e/harness.js';
import { ownRedis, startRedisServer, stopRedis } from '../e2e/own-redis.js';
import { onFreePort } from '../ports.js';
import { tempDir } from '../temp.js';
import { redisServerBinary } from '../services.js';
import { configError } from '../config-problems.js';

const redisServer = redisServerBinary('the sentinel test');

const servers = { s: { command: 'node', args: ['-e', ''] } };
const parse = (cache: Record<string, unknown>) => parseConfig({ servers, cache }, 't', '/', {});

function problems(cache: Record<string, unknown>): string {
  return configError(() => parse(cache)).problems.join('\n');
}

test('cache.sentinel is read with its defaults; without it nothing changes', () => {
  const config = parse({
    store: 'redis',
    url: 'rediss://app:pw@primary/2',
    sentinel: { name: 'mymaster', nodes: ['10.0.0.1:26379', '[fd00::2]:26380'] },
  });
  assert.deepEqual(config.cache.sentinel, {
    name: 'mymaster',
    nodes: ['10.0.0.1:26379', '[fd00::2]:26380'],
    tls: false,
  });
  assert.equal(parse({ store: 'redis' }).cache.sentinel, undefined);
  assert.deepEqual(sentinelOptions(undefined, 'redis://127.0.0.1:6379'), {});
});

test('sentinel settings become ioredis options; the URL still gives the primary credentials, database and TLS', () => {
  const url = 'rediss://app:secret@ignored-host:6390/3';
  const options = sentinelOptions(
    { name: 'mymaster', nodes: ['sentinel-0.redis:26379', '[fd00::2]:26380'], password: 'sp', tls: true },
    url,
  );
  assert.deepEqual(options.sentinels, [
    { host: 'sentinel-0.redis', port: 26379 },
    { host: 'fd00::2', port: 26380 },
  ]);
  assert.equal(options.name, 'mymaster');
  assert.equal(options.sentinelPassword, 'sp');
  assert.deepEqual(options.sentinelTLS, {});
  assert.equal(options.enableTLSForSentinelMode, true, 'rediss:// means TLS to the primary');
  assert.equal(sentinelOptions({ name: 'm', nodes: ['h:1'] }, 'redis://h').enableTLSForSentinelMode, false);

  // What ioredis makes of URL + options, as the gateway's stores build them (never connected).
  const redis = new Redis(url, { ...failFastRedisOptions('t'), ...options, lazyConnect: true });
  try {
    assert.equal(redis.options.name, 'mymaster');
    assert.deepEqual(redis.options.sentinels, options.sentinels);
    assert.equal(redis.options.username, 'app');
    assert.equal(redis.options.password, 'secret');
    assert.equal(redis.options.db, 3);
    assert.equal(redis.options.enableOfflineQueue, false, 'still fails fast');
    assert.equal(redis.options.connectionName, 't');
  } finally {
    redis.disconnect();
  }
});

test('mistakes in cache.sentinel, and cache.cluster, are refused with what to write instead', () => {
  assert.match(
    problems({ sentinel: { name: 'm', nodes: ['sentinel-0'] } }),
    /cache\.sentinel\.nodes\.0: give host:port, for example sentinel-0\.redis:26379/,
  );
  assert.match(
    problems({ sentinel: { name: 'm', nodes: [] } }),
    /cache\.sentinel\.nodes: list at least one sentinel as host:port/,
  );
  assert.match(
    problems({ sentinel: { name: '', nodes: ['h:1'] } }),
    /cache\.sentinel\.name: give the name the sentinels monitor/,
  );
  assert.match(
    problems({ cluster: { nodes: ['h:1'] } }),
    /cache\.cluster: Redis Cluster is not supported .*point cache\.url at one primary, or use cache\.sentinel/,
  );
});

test('through a real sentinel: the store finds the primary and writes there', {
  skip: redisServer.skip,
  timeout: 30_000,
}, async (t) => {
  redisServer.check();
  const { port: primaryPort, child: primary } = await ownRedis();
  t.after(() => stopRedis(primary));
  const folder = tempDir('mcp-gw-sentinel-');
  const file = path.join(folder, 'sentinel.conf');
  const { sentinelPort, sentinel } = await onFreePort(async (sentinelPort) => {
    writeFileSync(
      file,
      `port ${sentinelPort}\nbind 127.0.0.1\nsentinel monitor primary-a 127.0.0.1 ${primaryPort} 1\n`,
    );
    return { sentinelPort, sentinel: await startRedisServer(sentinelPort, [file, '--sentinel'], /\+monitor master/) };
  });
  t.after(() => stopRedis(sentinel));

  const config = parse({
    store: 'redis',
    url: 'redis://not-a-host.invalid/0',
    keyPrefix: 'sentinel-test:',
    sentinel: { name: 'primary-a', nodes: [`127.0.0.1:${sentinelPort}`] },
  });
  const store = new RedisStore({
    url: config.cache.url,
    sentinel: config.cache.sentinel,
    keyPrefix: config.cache.keyPrefix,
    log: silentLog,
  });
  t.after(() => store.close());
  const direct = new Redis(`redis://127.0.0.1:${primaryPort}`);
  t.after(() => direct.disconnect());
  const entry = { result: { resultType: 'complete', via: 'sentinel' }, expiresAt: Date.now() + 60_000 };
  assert.ok(
    await until(
      async () => {
        await store.write('g', 'f', entry, 60_000);
        return (await direct.hexists('sentinel-test:g:g', 'f')) === 1;
      },
      10_000,
      100,
    ),
    'the entry reached the primary the sentinel names (the URL host does not exist)',
  );
  assert.deepEqual((await store.read('g', 'f'))?.result, entry.result);
});
