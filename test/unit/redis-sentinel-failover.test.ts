// cache.sentinel through failovers, not only at start: a primary, a replica and a sentinel of the test's
// own (redis-server, loopback, free ports). The gateway's store writes through the sentinel; then the
// sentinel promotes the replica while the old primary stays up (SENTINEL FAILOVER: the old primary is
// demoted to a read-only replica), and later the new primary is killed -9 and the sentinel promotes the
// other back. After each, the store's writes land on whichever server is primary now, and a drop made by
// one store reaches another's subscriber. The URL's host does not exist: only the sentinel names servers.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisStore } from '../../cache/redis-store.js';
import { silentLog } from '../../infra/log.js';
import { until } from '../e2e/harness.js';
import { reachable, stopRedis } from '../e2e/own-redis.js';
import { unusedPort } from '../ports.js';
import { redisServerBinary } from '../services.js';
import { tempDir } from '../temp.js';

const redisServer = redisServerBinary('the sentinel failover test');
const NAME = 'primary-f';
const PREFIX = 'sentinel-failover-test:';

/**
 * A redis-server whose files (a replica's full sync writes one) stay in `dir`; a replica of `primaryPort` if
 * given. Each full sync starts at once: Redis 7's diskless sync waits 5 s for more replicas by default, and
 * with the replica's reconnects on a loaded machine that once kept the first sync past 15 s.
 */
function startServer(dir: string, port: number, primaryPort?: number): ChildProcess {
  const replica = primaryPort === undefined ? [] : ['--replicaof', '127.0.0.1', String(primaryPort)];
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--repl-diskless-sync-delay',
    '0',
    ...replica,
  ];
  return spawn('redis-server', args, {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The role a server reports (master / slave), or 'down'. */
async function role(redis: Redis): Promise<string> {
  try {
    return String(((await redis.call('ROLE')) as unknown[])[0]);
  } catch {
    return 'down';
  }
}

test('the store follows the sentinel through a failover and a crash of the primary', {
  skip: redisServer.skip,
  timeout: 120_000,
}, async (t) => {
  redisServer.check();
  const [portA, portB, sentinelPort] = [await unusedPort(), await unusedPort(), await unusedPort()];
  const folder = tempDir('mcp-gw-sentinel-failover-');
  const a = startServer(folder, portA);
  t.after(() => stopRedis(a));
  assert.ok(await until(() => reachable(portA), 5_000, 25), 'primary up');
  const b = startServer(folder, portB, portA);
  t.after(() => stopRedis(b));
  const direct = {
    a: new Redis(portA, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 }),
    b: new Redis(portB, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 }),
  };
  direct.a.on('error', () => {});
  direct.b.on('error', () => {});
  t.after(() => (direct.a.disconnect(), direct.b.disconnect()));
  assert.ok(
    await until(
      async () =>
        (await reachable(portB)) && /master_link_status:up/.test(await direct.b.info('replication').catch(() => '')),
      30_000,
      50,
    ),
    'the replica is in sync',
  );

  // The sentinel starts after the replica is in sync, so its first look at the primary lists the replica.
  const file = path.join(folder, 'sentinel.conf');
  writeFileSync(
    file,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `sentinel monitor ${NAME} 127.0.0.1 ${portA} 1`,
      `sentinel down-after-milliseconds ${NAME} 1000`,
      `sentinel failover-timeout ${NAME} 3000`,
      '',
    ].join('\n'),
  );
  const sentinel = spawn('redis-server', [file, '--sentinel'], { stdio: ['ignore', 'ignore', 'inherit'] });
  t.after(() => stopRedis(sentinel));
  assert.ok(await until(() => reachable(sentinelPort), 5_000, 25), 'sentinel up');
  const asSentinel = new Redis(sentinelPort, '127.0.0.1', { maxRetriesPerRequest: 1 });
  t.after(() => asSentinel.disconnect());
  const primaryPort = async () =>
    Number(((await asSentinel.call('SENTINEL', 'get-master-addr-by-name', NAME)) as string[])[1]);
  const replicasKnown = async () => ((await asSentinel.call('SENTINEL', 'replicas', NAME)) as unknown[]).length;
  assert.ok(await until(async () => (await replicasKnown()) === 1, 15_000, 100), 'the sentinel knows the replica');

  const options = {
    url: 'redis://not-a-host.invalid/0',
    sentinel: { name: NAME, nodes: [`127.0.0.1:${sentinelPort}`] },
    keyPrefix: PREFIX,
    log: silentLog,
  };
  const store = new RedisStore(options);
  const other = new RedisStore(options);
  t.after(() => Promise.all([store.close(), other.close()]));
  const heard: string[] = [];
  other.onDropped((group) => heard.push(group));

  /** Writes through the store until the entry is on `server` (a write may fail while the store reconnects). */
  const landsOn = (server: Redis, field: string) =>
    until(
      async () => {
        await store.write(
          'g',
          field,
          { result: { resultType: 'complete', field }, expiresAt: Date.now() + 60_000 },
          60_000,
        );
        return (await server.hexists(`${PREFIX}g:g`, field).catch(() => 0)) === 1;
      },
      30_000,
      100,
    );
  const dropReaches = (group: string) =>
    until(
      async () => {
        await store.dropGroup(group);
        return heard.includes(group);
      },
      30_000,
      100,
    );

  assert.ok(await landsOn(direct.a, 'before'), 'the control: written on the first primary');
  assert.ok(await dropReaches('before'), 'the control: a drop reaches the other store');

  // Planned failover: B is promoted while A stays up and is demoted to a read-only replica.
  await asSentinel.call('SENTINEL', 'failover', NAME);
  assert.ok(
    await until(
      async () =>
        (await primaryPort()) === portB && (await role(direct.b)) === 'master' && (await role(direct.a)) === 'slave',
      30_000,
      100,
    ),
    'B promoted, A demoted',
  );
  assert.ok(
    await landsOn(direct.b, 'after-failover'),
    'written on the new primary after the failover (A would refuse it: READONLY)',
  );
  assert.equal(await role(direct.b), 'master');
  const read = await until(
    async () => (await store.read('g', 'after-failover'))?.result.field === 'after-failover',
    10_000,
    100,
  );
  assert.ok(read, 'read back through the sentinel');

  // Crash: the new primary is killed; the sentinel promotes A back once it sees B down.
  assert.ok(
    await until(
      async () =>
        (await replicasKnown()) >= 1 &&
        /master_link_status:up/.test(await direct.a.info('replication').catch(() => '')),
      15_000,
      100,
    ),
    'A in sync with B',
  );
  await stopRedis(b);
  assert.ok(
    await until(async () => (await primaryPort()) === portA && (await role(direct.a)) === 'master', 60_000, 200),
    'A promoted after B crashed',
  );
  assert.ok(await landsOn(direct.a, 'after-crash'), 'written on A once it is primary again');
  assert.ok(await dropReaches('after-crash'), 'a drop reaches the other store through the new primary');
});
