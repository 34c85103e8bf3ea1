// Replicas and outages with real processes: two gateway processes (the CLI, as a user runs it) sharing the
// real Redis on this machine; a Redis of the test's own killed under a running gateway; and an upstream whose
// cacheable answer needs input first, which must never be cached.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ownRedis, startRedis, stopRedis } from './own-redis.js';
import { redisServerBinary, sharedRedis } from '../services.js';
import type { RunningGateway } from '../../src/gateway.js';
import { headersFor, openListen, post, request, ROOT, schemaProblems, startTestGateway, until } from './harness.js';
import { percentile, scaled } from '../timing.js';
import { tempDir } from '../temp.js';
import { compiledFixture } from '../compiled-fixtures.js';
import { gatewayCli } from '../built.js';

const SHARED_REDIS = 'redis://127.0.0.1:6379';
const SYNTHETIC = path.join(ROOT, 'test/fixtures/synthetic-server.mjs');
const LEGACY = compiledFixture('legacy-server');
const LEGACY_TTL_MS = 60_000;

const shared = await sharedRedis('two gateway processes sharing Redis');
const own = redisServerBinary('a gateway through a Redis outage');

const tmp = tempDir('mcp-gw-replicas-');
after(() => rmSync(tmp, { recursive: true, force: true }));

const synthetic = (id: string, env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [SYNTHETIC],
  cwd: ROOT,
  env: { SERVER_ID: id, ...env },
});
const legacy = { command: process.execPath, args: [LEGACY], cwd: ROOT, legacyTtlMs: LEGACY_TTL_MS };

/**
 * How many tools/list the synthetic server behind this endpoint has served (its unlisted `__count` tool; calls are
 * never cached).
 */
async function listsServed(url: string): Promise<number> {
  const answer = await post(url, request('tools/call', { name: '__count', arguments: {} }));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return Number(answer.body.result.content[0].text);
}

const toolNames = (answer: { body: any }): string[] => answer.body.result.tools.map((t: { name: string }) => t.name);

// ---- 1. two gateway processes sharing the real Redis ---------------------------------------------------

describe('two gateway processes sharing the real Redis', { skip: shared.skip }, () => {
  before(shared.check);
  const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    cache: {
      store: 'redis',
      url: SHARED_REDIS,
      keyPrefix,
      contextSecret: randomBytes(24).toString('hex'),
      // A few seconds per command: on a loaded machine a read or write past the 150 ms default is dropped (as
      // it should be in production), and B would then miss A's entry for no fault of the sharing under test.
      // The outage test below keeps the default.
      commandTimeoutMs: scaled(5_000),
    },
    servers: { syn: synthetic('syn'), legacy },
  };
  // The legacy server's answers are private: a caller with credentials gets entries under a keyed hash of
  // them, so a hit on the other replica also shows that both hash with the same contextSecret.
  const asCaller = { ...headersFor({ method: 'tools/list' }), authorization: 'Bearer replica-test' };
  let a: GatewayProcess;
  let b: GatewayProcess;
  /** Waits until the entry one replica filled for (server, tools/list) is in Redis, where the other reads it. */
  const storedInRedis = async (server: string): Promise<void> => {
    const redis = await connect(SHARED_REDIS);
    try {
      assert.ok(
        await until(async () => (await redis.exists(`${keyPrefix}g:${server}:tools/list`)) === 1, 5_000),
        `${server}'s list never reached Redis`,
      );
    } finally {
      await redis.quit();
    }
    await sleep(2); // a hit answers with the remaining freshness, below the full ttlMs once a millisecond has passed
  };

  before(async () => {
    const file = path.join(tmp, 'replicas.yaml');
    writeFileSync(file, JSON.stringify(config, null, 2)); // JSON is YAML
    const connectedBefore = await cacheConnections(SHARED_REDIS);
    [a, b] = await Promise.all([spawnGateway(file), spawnGateway(file)]);
    // Each gateway opens two named connections (commands, subscriber). Wait for both processes' to be up, so
    // that a read on B cannot miss only because B had not reached Redis yet. (Best effort: counts new ids.)
    assert.ok(
      await until(
        async () => {
          const now = await cacheConnections(SHARED_REDIS);
          return (
            [...now.client].filter((id) => !connectedBefore.client.has(id)).length >= 2 &&
            [...now.subscriber].filter((id) => !connectedBefore.subscriber.has(id)).length >= 2
          );
        },
        10_000,
        50,
      ),
      'both gateway processes connect to Redis',
    );
  });

  after(async () => {
    for (const gateway of [a, b])
      if (gateway && gateway.child.exitCode === null && gateway.child.signalCode === null)
        gateway.child.kill('SIGKILL');
    await Promise.all([a?.exited, b?.exited]);
    await deleteKeys(SHARED_REDIS, keyPrefix);
  });

  test("(a) a list fetched through process A is served by process B without asking B's upstream", async () => {
    const fromA = await post(`${a.url}/servers/syn/mcp`, request('tools/list'));
    assert.equal(fromA.status, 200, JSON.stringify(fromA.body));
    assert.equal(fromA.body.result.ttlMs, 60_000, "a fresh answer carries the upstream's ttlMs");
    await storedInRedis('syn');
    const fromB = await post(`${b.url}/servers/syn/mcp`, request('tools/list'));
    assert.equal(fromB.status, 200, JSON.stringify(fromB.body));
    assert.deepEqual(schemaProblems('tools/list', fromB.body), []);
    assert.deepEqual(toolNames(fromB), toolNames(fromA));
    assert.ok(fromB.body.result.ttlMs < 60_000, `B answers with the remaining freshness (${fromB.body.result.ttlMs})`);
    assert.equal(await listsServed(`${a.url}/servers/syn/mcp`), 1);
    assert.equal(await listsServed(`${b.url}/servers/syn/mcp`), 0, "B's own synthetic upstream served no list");
  });

  test("(b) add-tool through A reaches a subscriptions/listen client on B's /mcp", async () => {
    // Fill the shared entry for the legacy list through A, and see B serve it (a hit: less than the full ttlMs).
    const fromA = await post(`${a.url}/servers/legacy/mcp`, request('tools/list'), asCaller);
    assert.equal(fromA.body.result.ttlMs, LEGACY_TTL_MS);
    assert.equal(fromA.body.result.cacheScope, 'private');
    await storedInRedis('legacy');
    const cachedOnB = await post(`${b.url}/servers/legacy/mcp`, request('tools/list'), asCaller);
    assert.ok(cachedOnB.body.result.ttlMs < LEGACY_TTL_MS, `B served A's entry (ttlMs ${cachedOnB.body.result.ttlMs})`);
    assert.deepEqual(toolNames(cachedOnB), toolNames(fromA));
    assert.ok(!toolNames(cachedOnB).includes('added-1'));

    const listen = await openListen(`${b.url}/mcp`, { toolsListChanged: true });
    try {
      assert.ok(await until(() => listen.messages.length >= 1, 3_000), 'acknowledged');
      assert.deepEqual(listen.messages[0], {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          notifications: { toolsListChanged: true },
          _meta: { 'io.modelcontextprotocol/subscriptionId': listen.id },
        },
      });
      const added = await post(
        `${a.url}/servers/legacy/mcp`,
        request('tools/call', { name: 'add-tool', arguments: {} }),
      );
      assert.equal(added.body.result.content[0].text, 'added-1');
      assert.ok(
        await until(() => listen.messages.length >= 2, 5_000),
        `B's listen client heard A's change: ${JSON.stringify(listen.messages)}`,
      );
      assert.equal(listen.messages[1].method, 'notifications/tools/list_changed');
      assert.equal(listen.messages[1].params._meta['io.modelcontextprotocol/subscriptionId'], listen.id);
      assert.deepEqual(schemaProblems('', listen.messages[1]), []);
    } finally {
      listen.close();
    }
  });

  test("(c) after the change, B's next list is a fresh fetch from its own child", async () => {
    // B's legacy child is a separate process that never added a tool, so B cannot be expected to list
    // added-1. What the invalidation must guarantee is that B does not serve the dropped entry again. A hit
    // answers with the remaining freshness, ceil(expiresAt - now), which is below the configured 60000 once
    // a millisecond has passed since the entry was filled (A filled it well over 30 ms ago, in (b)); a
    // fetch answers with the legacy adapter's ttlMs, exactly legacyTtlMs. Nobody fills the entry in the
    // meantime: this list is the first one after the change on either replica. (Listing through A first
    // would let A refill the shared entry from A's child, and B would then rightly hit it.)
    const fresh = await post(`${b.url}/servers/legacy/mcp`, request('tools/list'), asCaller);
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
    assert.equal(fresh.body.result.ttlMs, LEGACY_TTL_MS, 'a fresh answer, not the invalidated entry');
    assert.ok(!toolNames(fresh).includes('added-1'), "it came from B's own child, which has no added-1");
    assert.ok(toolNames(fresh).includes('add-tool'));
    // And B cached it again: the next one is a hit.
    await storedInRedis('legacy');
    const again = await post(`${b.url}/servers/legacy/mcp`, request('tools/list'), asCaller);
    assert.ok(again.body.result.ttlMs < LEGACY_TTL_MS, `cached again (ttlMs ${again.body.result.ttlMs})`);
  });

  test('both processes stop on SIGTERM with exit code 0, and every log line is JSON', async () => {
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    const [codeA, codeB] = await Promise.all([
      withTimeout(a.exited, 15_000, 'A to exit'),
      withTimeout(b.exited, 15_000, 'B to exit'),
    ]);
    assert.equal(codeA, 0, a.stderr());
    assert.equal(codeB, 0, b.stderr());
    for (const gateway of [a, b]) for (const line of gateway.stderr().trim().split('\n')) JSON.parse(line);
  });
});

// ---- 2. Redis killed under a running gateway -----------------------------------------------------------

test('Redis killed mid-test: every request still succeeds quickly from memory and upstreams; the cache writes to ' +
  'Redis again after a restart', {
  skip: own.skip,
  timeout: 60_000,
}, async () => {
  own.check();
  let { port, child: redis } = await ownRedis();
  const url = `redis://127.0.0.1:${port}`;
  const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
  const listKey = `${keyPrefix}g:syn:tools/list`;
  const discoverKey = `${keyPrefix}g:syn:server/discover`;
  let gateway: RunningGateway | undefined;
  let admin: Redis | undefined;
  try {
    // Redis is killed here, not hung: with no offline queue every command fails at once while it is down, so
    // the command bound does not shape what this test measures. At 150 ms a loaded machine dropped the first
    // list's write (a slow write counts as failed), and "the list was written to Redis" waited for nothing.
    const cache = { store: 'redis', url, keyPrefix, commandTimeoutMs: scaled(5_000) };
    gateway = await startTestGateway({ syn: synthetic('syn') }, {}, { cache });
    // Only this gateway uses this Redis: wait for both of its connections.
    assert.ok(
      await until(async () => bothConnected(await cacheConnections(url)), 5_000, 25),
      'the gateway connects to its Redis',
    );
    admin = await connect(url);

    const mcp = `${gateway.url}/mcp`;
    const syn = `${gateway.url}/servers/syn/mcp`;
    const first = await post(mcp, request('tools/list'));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(toolNames(first), ['syn__tool-0', 'syn__tool-1', 'syn__tool-2', 'syn__tool-3', 'syn__tool-4']);
    assert.ok(await until(async () => (await admin!.exists(listKey)) === 1, 2_000), 'the list was written to Redis');
    assert.equal(await listsServed(syn), 1);
    await admin.quit();
    admin = undefined;

    await stopRedis(redis);
    const took: number[] = [];
    for (let i = 0; i < 50; i++) {
      for (const [method, params] of [
        ['tools/list', {}],
        ['tools/call', { name: 'syn__tool-1', arguments: { text: `n${i}` } }],
      ] as const) {
        const started = performance.now();
        const answer = await post(mcp, request(method, params));
        took.push(performance.now() - started);
        assert.equal(answer.status, 200, `${method} #${i}: ${JSON.stringify(answer.body)}`);
        assert.ok('result' in answer.body, `${method} #${i} failed: ${JSON.stringify(answer.body)}`);
        if (method === 'tools/list') assert.equal(answer.body.result.tools.length, 5);
        else assert.equal(answer.body.result.content[0].text, `syn/tool-1: n${i}`);
      }
    }
    assert.ok(
      percentile(took, 0.9) < scaled(500),
      `with Redis down, the 90th percentile request took ${percentile(took, 0.9).toFixed(1)} ms`,
    );
    assert.ok((await listsServed(syn)) <= 2, 'memory in front kept serving the list: at most one more upstream list');

    redis = await startRedis(port);
    // ioredis reconnects with backoff (at most 2 s apart); requests keep succeeding meanwhile.
    assert.ok(
      await until(
        async () => {
          const answer = await post(mcp, request('tools/list'));
          assert.equal(answer.status, 200);
          assert.ok('result' in answer.body, JSON.stringify(answer.body));
          return bothConnected(await cacheConnections(url));
        },
        10_000,
        100,
      ),
      'the gateway reconnects to the restarted Redis',
    );
    admin = await connect(url);
    // Connected is not yet ready (the handshake follows): wait until a write through the gateway's cache lands.
    let probe = 0;
    const probeFetch = async () => ({
      jsonrpc: '2.0' as const,
      id: 0,
      result: { tools: [], ttlMs: 60_000, cacheScope: 'public' },
    });
    assert.ok(
      await until(
        async () => {
          await gateway!.cache.get(
            { upstream: 'probe', method: 'tools/list', variant: String(probe++), context: '' },
            0,
            probeFetch,
          );
          return (await admin!.exists(`${keyPrefix}g:probe:tools/list`)) === 1;
        },
        10_000,
        50,
      ),
      'no cache write reached the restarted Redis',
    );
    // The restarted Redis is empty (no persistence). A miss now — server/discover was never asked on this
    // endpoint (the era probe goes to the child directly) — must be written to Redis again.
    // This test keeps the store's 150 ms bound (it tests the outage), so a write slower than that is dropped by
    // design; on a loaded machine one can be. The miss is asked again, memory's copy dropped first, until one lands.
    assert.ok(
      await until(
        async () => {
          await gateway!.cache.invalidate('syn', ['server/discover']);
          const discover = await post(syn, request('server/discover'));
          assert.equal(discover.status, 200, JSON.stringify(discover.body));
          assert.equal(discover.body.result.ttlMs, 60_000);
          return until(async () => (await admin!.exists(discoverKey)) === 1, 1_000);
        },
        20_000,
        50,
      ),
      'the cache writes to Redis again',
    );
    const call = await post(mcp, request('tools/call', { name: 'syn__tool-2', arguments: { text: 'back' } }));
    assert.equal(call.body.result.content[0].text, 'syn/tool-2: back');
  } finally {
    await admin?.quit().catch(() => {});
    await gateway?.close();
    await stopRedis(redis);
  }
});

// ---- 3. input_required answers are never cached --------------------------------------------------------

// A tiny modern stdio server: a DiscoverResult for the era probe; resources/read answers input_required
// the first time a uri is read and a complete, cacheable (ttlMs 60000, public) result every time after;
// each read is appended to READ_LOG, the side channel the test counts with.
const INPUT_REQUIRED_SERVER = String.raw`
const fs = require('node:fs');
const meta = { 'io.modelcontextprotocol/serverInfo': { name: 'inline-input-required', version: '1.0.0' } };
const reads = new Map();
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  const p = m.params || {};
  const reply = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'server/discover') {
    return reply({ resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { resources: {} },
      ttlMs: 60000, cacheScope: 'public', _meta: meta });
  }
  if (m.method === 'resources/read') {
    const n = (reads.get(p.uri) || 0) + 1;
    reads.set(p.uri, n);
    fs.appendFileSync(process.env.READ_LOG, JSON.stringify({ uri: p.uri, n, state: p.requestState }) + '\n');
    return setTimeout(() => reply(n === 1
      ? {
          resultType: 'input_required',
          inputRequests: {
            confirm: {
              method: 'elicitation/create',
              params: { mode: 'form', message: 'Read ' + p.uri + '?',
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
            },
          },
          requestState: 'x',
          _meta: meta,
        }
      : { resultType: 'complete', contents: [{ uri: p.uri, mimeType: 'text/plain', text: 'read ' + n }],
          ttlMs: 60000, cacheScope: 'public', _meta: meta }),
    Number(process.env.READ_DELAY_MS || 0));
  }
  send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: ' + m.method } });
});
`;

describe('input_required answers are never cached', () => {
  const readLog = path.join(tmp, 'reads.jsonl');
  let gateway: RunningGateway;
  const reads = (uri: string): number =>
    readFileSync(readLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((r) => r.uri === uri).length;
  const read = (uri: string) => post(`${gateway.url}/servers/asks/mcp`, request('resources/read', { uri }));

  before(async () => {
    writeFileSync(readLog, '');
    gateway = await startTestGateway({
      asks: {
        command: process.execPath,
        args: ['-e', INPUT_REQUIRED_SERVER],
        cwd: ROOT,
        era: 'auto',
        env: { READ_LOG: readLog, READ_DELAY_MS: '150' },
      },
    });
  });
  after(() => gateway.close());

  test(
    'an input_required answer is not stored: the same read goes to the upstream again; its complete answer is ' +
      'then cached',
    async () => {
      const uri = 'inline://doc';
      const first = await read(uri);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.result.resultType, 'input_required', JSON.stringify(first.body));
      assert.deepEqual(schemaProblems('resources/read', first.body), []);
      assert.equal(reads(uri), 1);

      const second = await read(uri);
      assert.equal(second.body.result.resultType, 'complete', 'not the input_required answer again');
      assert.equal(second.body.result.contents[0].text, 'read 2');
      assert.equal(second.body.result.ttlMs, 60_000);
      assert.deepEqual(schemaProblems('resources/read', second.body), []);
      assert.equal(reads(uri), 2, 'both reads reached the upstream');

      await sleep(20);
      const third = await read(uri);
      assert.equal(third.body.result.contents[0].text, 'read 2', 'the complete answer, from the cache');
      assert.ok(third.body.result.ttlMs < 60_000, `remaining freshness ${third.body.result.ttlMs}`);
      assert.equal(reads(uri), 2, 'the third read did not reach the upstream');
    },
  );

  test('a caller that joined a fetch which came back input_required is not handed that answer', async () => {
    // Two concurrent misses share one fetch (the upstream takes 150 ms). Whichever came first gets the
    // input_required answer; the other must ask the upstream itself and gets the complete one.
    const uri = 'inline://joined';
    const answers = await Promise.all([read(uri), read(uri)]);
    assert.deepEqual(
      answers.map((a) => a.body.result.resultType).sort(),
      ['complete', 'input_required'],
      JSON.stringify(answers.map((a) => a.body)),
    );
    assert.equal(reads(uri), 2);
  });

  test('the complete answer fetched for such a joined caller is cached like any other', async () => {
    const uri = 'inline://joined-then-cached';
    await Promise.all([read(uri), read(uri)]);
    assert.equal(reads(uri), 2);
    const later = await read(uri);
    assert.equal(later.body.result.contents[0].text, 'read 2', 'served from the cache, not read 3 from the upstream');
    assert.equal(reads(uri), 2, 'the complete answer was cached');
  });
});

// ---- helpers ---------------------------------------------------------------------------------------------

interface GatewayProcess {
  child: ChildProcess;
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  exited: Promise<number | null>;
  stderr(): string;
}

/** The CLI as a user runs it; resolves with the base URL read from its "serving every server" log line. */
async function spawnGateway(configFile: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [...gatewayCli(), '--config', configFile], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => (child.kill('SIGKILL'), reject(new Error(`no endpoint logged within 20 s:\n${stderr}`))),
      20_000,
    );
    child.once(
      'exit',
      (code) => (clearTimeout(timer), reject(new Error(`gateway exited with ${code} before serving:\n${stderr}`))),
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const lines = stderr.split('\n').slice(0, -1); // complete lines only
      const line = lines.find((l) => l.includes('serving every server'));
      if (!line) return;
      clearTimeout(timer);
      const endpoint = String(JSON.parse(line).endpoint);
      assert.match(endpoint, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      resolve(endpoint.slice(0, -'/mcp'.length));
    });
  });
  return { child, url, exited, stderr: () => stderr };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)),
  );
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function connect(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  await redis.connect();
  return redis;
}

/**
 * Ids of the gateway cache's connections (named by RedisStore) on this Redis; the subscriber's only once subscribed.
 */
async function cacheConnections(url: string): Promise<{ client: Set<string>; subscriber: Set<string> }> {
  const found = { client: new Set<string>(), subscriber: new Set<string>() };
  let redis: Redis | undefined;
  try {
    redis = await connect(url);
    const list = String(await redis.client('LIST'));
    for (const line of list.split('\n')) {
      const fields = Object.fromEntries(
        line
          .trim()
          .split(' ')
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      if (fields.name === 'mcp-gateway-cache') found.client.add(fields.id!);
      if (fields.name === 'mcp-gateway-cache-sub' && Number(fields.sub) >= 1) found.subscriber.add(fields.id!);
    }
  } catch {
    // not reachable (yet): nothing connected
  } finally {
    redis?.disconnect();
  }
  return found;
}

const bothConnected = (c: { client: Set<string>; subscriber: Set<string> }): boolean =>
  c.client.size >= 1 && c.subscriber.size >= 1;

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = await connect(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
