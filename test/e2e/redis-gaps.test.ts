// Two in-process gateways sharing a Redis of the test's own: what travels between replicas besides list
// changes, and what a replica does after it was cut off from Redis's invalidation channel.
// Replica B reaches Redis through a TCP relay the test can cut, so B alone loses Redis (both its
// connections) while A keeps it, and A's drops made meanwhile never reach B's subscriber.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog, type Log } from '../../infra/log.js';
import { fixture, openListen, post, request, ROOT, until } from './harness.js';
import { ownRedis, stopRedis } from './own-redis.js';
import { recordingLog } from '../recording-log.js';
import { redisServerBinary } from '../services.js';

const redisServer = redisServerBinary('the Redis catch-up tests (a Redis of their own)');
const SYNTHETIC = path.join(ROOT, 'test/fixtures/synthetic-server.mjs');

/** Forwards loopback connections to Redis until cut; while cut, new connections are closed at once. */
class Relay {
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private constructor(private readonly server: Server) {}

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  static async start(target: number): Promise<Relay> {
    let relay: Relay | undefined;
    const server = createServer((inbound) => relay!.accept(inbound, target));
    relay = new Relay(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  private accept(inbound: Socket, target: number): void {
    if (this.cut) return void inbound.destroy();
    const outbound = new Socket();
    for (const socket of [inbound, outbound]) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    outbound.connect(target, '127.0.0.1');
    inbound.pipe(outbound).pipe(inbound);
  }

  sever(): void {
    this.cut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  close(): Promise<void> {
    this.sever();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('replicas on one Redis: catching up, and resources/updated', {
  skip: redisServer.skip,
  timeout: 60_000,
}, () => {
  before(() => redisServer.check());
  const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
  const contextSecret = randomBytes(24).toString('hex');
  let redis: ChildProcess;
  let redisPort: number;
  let relay: Relay;
  let a: RunningGateway;
  let b: RunningGateway;
  const { log: bLog, lines: bLines } = recordingLog();

  const servers = {
    syn: { command: process.execPath, args: [SYNTHETIC], cwd: ROOT, env: { SERVER_ID: 'syn' } },
    mod: fixture('modern-server'),
  };
  const gateway = (port: number, log: Log) =>
    startGateway(
      parseConfig(
        {
          listen: { port: 0 },
          servers,
          cache: { store: 'redis', url: `redis://127.0.0.1:${port}`, keyPrefix, contextSecret },
        },
        'test',
        ROOT,
      ),
      log,
    );

  before(async () => {
    ({ port: redisPort, child: redis } = await ownRedis());
    relay = await Relay.start(redisPort);
    a = await gateway(redisPort, silentLog);
    b = await gateway(relay.port, bLog);
    // Both caches connected (B through the relay), commands and subscriber (subscribed): this Redis is ours alone.
    const direct = new Redis(`redis://127.0.0.1:${redisPort}`);
    try {
      const names = async () =>
        ((await direct.call('CLIENT', 'LIST')) as string)
          .split('\n')
          .map((line) => `${/name=(\S*)/.exec(line)?.[1]} ${/ sub=(\d+)/.exec(line)?.[1]}`);
      assert.ok(
        await until(
          async () => {
            const connected = await names();
            return (
              connected.filter((n) => n.startsWith('mcp-gateway-cache ')).length === 2 &&
              connected.filter((n) => n === 'mcp-gateway-cache-sub 1').length === 2
            );
          },
          10_000,
          50,
        ),
        'both gateways connect to Redis',
      );
    } finally {
      direct.disconnect();
    }
  });

  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await relay?.close();
    if (redis) await stopRedis(redis);
  });

  test(
    "a drop made while B was cut off from Redis is not served stale by B afterwards, and B's listen clients " +
      'are told',
    async () => {
      const url = `${b.url}/servers/syn/mcp`;
      // B holds the list (asked until a hit: a command timing out on a busy machine pauses the store briefly).
      assert.ok(
        await until(
          async () => {
            const hitsBefore = b.cache.stats.hits;
            await post(url, request('tools/list'));
            return b.cache.stats.hits === hitsBefore + 1;
          },
          5_000,
          100,
        ),
        'B holds the list',
      );
      const listen = await openListen(url, { toolsListChanged: true });
      try {
        assert.ok(await until(() => listen.messages.length === 1, 3_000), 'acknowledged');

        // From here nothing A publishes can reach B's subscriber, whenever B notices.
        relay.sever();
        // A hears of a change (as from its upstream's list_changed) and drops the list for every replica.
        await a.cache.invalidate('syn', ['tools/list']);
        const direct = new Redis(`redis://127.0.0.1:${redisPort}`);
        try {
          assert.equal(
            await direct.get(`${keyPrefix}v:syn:tools/list`),
            '1',
            'the drop reached Redis (its count of drops)',
          );
          assert.equal(await direct.exists(`${keyPrefix}g:syn:tools/list`), 0, 'and the entries are gone there');
        } finally {
          direct.disconnect();
        }
        // Cut off, B still answers from what it holds (Redis down never fails a request), and heard nothing.
        assert.equal((await post(url, request('tools/list'))).status, 200);
        assert.equal(listen.messages.length, 1, 'B could not have heard the drop');

        const fetchesBefore = b.cache.stats.fetches;
        relay.restore();
        assert.ok(
          await until(() => listen.messages.some((m) => m.method === 'notifications/tools/list_changed'), 10_000),
          `B's listen client is told once B is back: ${JSON.stringify(listen.messages)}\nB's log: ` +
            `${bLines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l.obj)}`).join('\n')}`,
        );
        assert.equal((await post(url, request('tools/list'))).status, 200);
        assert.equal(
          b.cache.stats.fetches,
          fetchesBefore + 1,
          'B asks its upstream again instead of serving the list it held',
        );
      } finally {
        listen.close();
      }
    },
  );

  test('a resources/updated an upstream sends on replica A reaches a client subscribed on replica B', async () => {
    const uri = 'fixture://hello';
    // A's gateway subscribes upstream only for its own clients, so one listens on A too; B's upstream is
    // never touched, so whatever B's client hears came from A through Redis.
    const onA = await openListen(`${a.url}/servers/mod/mcp`, { resourceSubscriptions: [uri] });
    const onB = await openListen(`${b.url}/servers/mod/mcp`, { resourceSubscriptions: [uri] });
    const other = await openListen(`${b.url}/servers/mod/mcp`, { resourceSubscriptions: ['fixture://other'] });
    try {
      assert.ok(
        await until(() => onA.messages.length === 1 && onB.messages.length === 1 && other.messages.length === 1, 5_000),
        'all acknowledged',
      );
      assert.deepEqual(onB.messages[0].params.notifications, { resourceSubscriptions: [uri] });
      // The gateway's stream to A's upstream is opened again with the new subscription; touch until it is.
      assert.ok(
        await until(
          async () => {
            await post(`${a.url}/servers/mod/mcp`, request('tools/call', { name: 'touch', arguments: { uri } }));
            return onA.messages.some((m) => m.method === 'notifications/resources/updated');
          },
          10_000,
          200,
        ),
        'A relays the update to its own client',
      );
      assert.ok(
        await until(() => onB.messages.some((m) => m.method === 'notifications/resources/updated'), 5_000),
        JSON.stringify(onB.messages),
      );
      const update = onB.messages.find((m) => m.method === 'notifications/resources/updated');
      assert.equal(update.params.uri, uri);
      assert.equal(update.params._meta['io.modelcontextprotocol/subscriptionId'], onB.id);
      assert.equal(
        other.messages.filter((m) => m.method === 'notifications/resources/updated').length,
        0,
        'a client subscribed to another URI hears nothing',
      );
    } finally {
      for (const stream of [onA, onB, other]) stream.close();
    }
  });
});
