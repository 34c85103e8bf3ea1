// A 2025 client behind a load balancer that is not sticky (issue #20): two gateways on the real Redis at
// 127.0.0.1:6379, and an SDK 1.x client whose fetch plays the balancer, sending each POST to the other
// replica in turn (a few pinned, so each case is shown on the side that matters). The session's GET stream
// stays on replica A; what belongs to it arrives through B anyway:
//   (1) a list change caused through B reaches the GET stream on A;
//   (2) resources/subscribe sent to B makes A's stream carry resources/updated;
//   (3) elicitation asked on a call's stream from A is answered by a POST that lands on B, and the call completes;
//   (4) DELETE sent to B ends the GET stream on A, and A refuses the session afterwards.
// And with Redis unreachable, what cannot be relayed fails at once with an error naming Redis; without a
// shared legacyClients.sessionSecret there is no relay at all, and the start says so.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { eachSseMessage, fixture, ROOT, startTestGateway, until } from './harness.js';
import { unusedPort } from '../ports.js';
import { sharedRedis } from '../services.js';
import { recordingLog } from '../recording-log.js';
import { compiledFixture } from '../compiled-fixtures.js';

const SHARED_REDIS = 'redis://127.0.0.1:6379';
const redisNeed = await sharedRedis('the 2025 clients on two replicas tests');
const SKIP = redisNeed.skip;
const mrtr = { command: process.execPath, args: [compiledFixture('mrtr-server')], cwd: ROOT };
const ELICIT_OK = { action: 'accept' as const, content: { ok: true } };
const CONFIRMED = 'answer={"ok":true} stateIntact=true';
const servers = { modern: fixture('modern-server'), mrtr };

type Replica = 'A' | 'B';
interface Seen {
  verb: string;
  /** The JSON-RPC method, or 'response' for the client's answer to a request of the gateway's. */
  rpc: string | undefined;
  replica: Replica;
  status: number;
}

/**
 * A fetch that plays a load balancer in front of A and B: the GET stream always on A, every other request
 * to the other replica in turn, except methods pinned to one. It records where each went, and copies what
 * A's GET stream carries into `getStream` (so a test sees a notification came that way, not on a POST).
 */
function balancer(replicas: Record<Replica, string>) {
  const seen: Seen[] = [];
  const pins = new Map<string, Replica>();
  const getStream: any[] = [];
  let getEnded = false;
  let turn = 0;
  const fetcher = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const verb = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const rpc = body === undefined ? undefined : typeof body.method === 'string' ? body.method : 'response';
    const replica: Replica = verb === 'GET' ? 'A' : (pins.get(rpc ?? verb) ?? (turn++ % 2 === 0 ? 'A' : 'B'));
    const target = new URL(url.pathname + url.search, replicas[replica]);
    const response = await fetch(target, init);
    seen.push({ verb, rpc, replica, status: response.status });
    if (verb !== 'GET' || !response.ok || !response.body) return response;
    const [forClient, forTest] = response.body.tee();
    void readSse(forTest, (message) => getStream.push(message)).finally(() => (getEnded = true));
    return new Response(forClient, { status: response.status, headers: response.headers });
  };
  return {
    fetch: fetcher,
    seen,
    getStream,
    get getEnded() {
      return getEnded;
    },
    pin(rpc: string, replica: Replica) {
      pins.set(rpc, replica);
    },
    describe: () => seen.map((s) => `${s.verb} ${s.rpc ?? ''} → ${s.replica} ${s.status}`).join('\n'),
  };
}

async function readSse(body: ReadableStream<Uint8Array>, onMessage: (message: any) => void): Promise<void> {
  await eachSseMessage(body, onMessage).catch(() => {
    // the client closed it
  });
}

/** A promise and the function that settles it: the test waits on the client's own handlers. */
function signal<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)),
  );
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(SHARED_REDIS, { lazyConnect: true });
  await redis.connect();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}

describe('a 2025 client on two replicas without sticky sessions', { skip: SKIP }, () => {
  before(() => redisNeed.check());
  const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
  const rest = {
    cache: { store: 'redis', url: SHARED_REDIS, keyPrefix, contextSecret: randomBytes(24).toString('hex') },
    legacyClients: { sessionSecret: randomBytes(24).toString('hex') },
    mrtr: { secret: randomBytes(24).toString('hex') },
  };
  let a: RunningGateway;
  let b: RunningGateway;
  before(async () => {
    [a, b] = await Promise.all([startTestGateway(servers, {}, rest), startTestGateway(servers, {}, rest)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await deleteKeys(keyPrefix);
  });

  /** An SDK 1.x client (2025-11-25) on `path`, through the balancer; resolves once its GET stream is open on A. */
  async function connect(path: string) {
    const lb = balancer({ A: a.url, B: b.url });
    const client = new Client({ name: 'sdk1-replicas', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}${path}`), { fetch: lb.fetch });
    await client.connect(transport);
    assert.equal(transport.protocolVersion, '2025-11-25');
    // The SDK opens the GET stream by itself once initialized.
    assert.ok(
      await until(() => lb.seen.some((s) => s.verb === 'GET'), 5_000),
      `the SDK opened its GET stream:\n${lb.describe()}`,
    );
    assert.deepEqual(
      lb.seen.find((s) => s.verb === 'GET'),
      { verb: 'GET', rpc: undefined, replica: 'A', status: 200 },
    );
    return { client, transport, lb };
  }

  /** Both replicas served this client's POSTs, each with the one session id. */
  function assertBothServed(lb: ReturnType<typeof balancer>): void {
    const posts = lb.seen.filter((s) => s.verb === 'POST');
    for (const replica of ['A', 'B'] as const)
      assert.ok(
        posts.some((s) => s.replica === replica && s.status < 300),
        `POSTs reached ${replica}:\n${lb.describe()}`,
      );
    for (const s of posts) assert.ok(s.status === 200 || s.status === 202, lb.describe());
  }

  test('(1) a list change caused through B reaches the GET stream held by A', { timeout: 30_000 }, async () => {
    const { client, lb } = await connect('/servers/modern/mcp');
    try {
      const changed = signal<void>();
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => changed.resolve());
      lb.pin('tools/call', 'B');
      const added = await client.callTool({ name: 'add-tool', arguments: {} });
      assert.match(JSON.stringify(added.content), /added-\d+/);
      await within(changed.promise, 10_000, 'notifications/tools/list_changed on the client');
      assert.ok(
        lb.getStream.some((m) => m.method === 'notifications/tools/list_changed'),
        `it came on A's GET stream: ${JSON.stringify(lb.getStream)}`,
      );
      assert.deepEqual(
        lb.seen.filter((s) => s.rpc === 'tools/call').map((s) => s.replica),
        ['B'],
      );
      assertBothServed(lb);
    } finally {
      await client.close();
    }
  });

  test('(2) resources/subscribe sent to B makes the stream held by A carry resources/updated', {
    timeout: 30_000,
  }, async () => {
    const { client, lb } = await connect('/servers/modern/mcp');
    try {
      const updated = signal<string>();
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => updated.resolve(n.params.uri));
      lb.pin('resources/subscribe', 'B');
      await client.subscribeResource({ uri: 'fixture://hello' });
      // The update is announced by A's own upstream, which only A's stream makes subscribe (each replica
      // runs its own child here), so `touch` goes to A. A's upstream subscription is made a moment after the
      // subscribe is relayed: touch until the update arrives.
      lb.pin('tools/call', 'A');
      let uri: string | undefined;
      const deadline = Date.now() + 10_000;
      while (uri === undefined && Date.now() < deadline) {
        await client.callTool({ name: 'touch', arguments: { uri: 'fixture://hello' } });
        uri = await within(updated.promise, 250, 'resources/updated').catch(() => undefined);
      }
      assert.equal(uri, 'fixture://hello', `resources/updated reached the client:\n${lb.describe()}`);
      assert.ok(
        lb.getStream.some((m) => m.method === 'notifications/resources/updated' && m.params.uri === 'fixture://hello'),
        "it came on A's GET stream",
      );
      assert.deepEqual(
        lb.seen.filter((s) => s.rpc === 'resources/subscribe').map((s) => [s.replica, s.status]),
        [['B', 200]],
      );
      assertBothServed(lb);
    } finally {
      await client.close();
    }
  });

  for (const [path, name] of [
    ['/servers/mrtr/mcp', 'confirm'],
    ['/mcp', 'mrtr__confirm'],
  ] as const) {
    test(`(3) ${path}: elicitation asked from A on the call's stream, answered by a POST that lands on B`, {
      timeout: 30_000,
    }, async () => {
      const { client, lb } = await connect(path);
      try {
        const asked: string[] = [];
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(String(request.params.message));
          return ELICIT_OK;
        });
        lb.pin('tools/call', 'A');
        lb.pin('response', 'B');
        const result = await client.callTool({ name, arguments: { env: 'prod' } }, undefined, { timeout: 15_000 });
        assert.deepEqual(result.content, [{ type: 'text', text: CONFIRMED }]);
        assert.deepEqual(asked, ['Deploy to prod?']);
        assert.deepEqual(
          lb.seen
            .filter((s) => s.rpc === 'tools/call' || s.rpc === 'response')
            .map((s) => [s.rpc, s.replica, s.status]),
          [
            ['tools/call', 'A', 200],
            ['response', 'B', 202],
          ],
          lb.describe(),
        );
        assertBothServed(lb);
      } finally {
        await client.close();
      }
    });
  }

  test('(4) DELETE sent to B ends the GET stream on A, and A refuses the session from then on', {
    timeout: 30_000,
  }, async () => {
    const { client, transport, lb } = await connect('/servers/modern/mcp');
    const session = transport.sessionId!;
    try {
      lb.pin('DELETE', 'B');
      await transport.terminateSession();
      assert.deepEqual(
        lb.seen.filter((s) => s.verb === 'DELETE').map((s) => [s.replica, s.status]),
        [['B', 200]],
      );
      assert.ok(await until(() => lb.getEnded, 5_000), "A's GET stream ended");
    } finally {
      await client.close();
    }
    const onA = await fetch(`${a.url}/servers/modern/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(onA.status, 404, await onA.text());
  });
});

describe('a 2025 session on a replica whose Redis is unreachable', () => {
  let gateway: RunningGateway;
  let port: number;
  before(async () => {
    port = await unusedPort(); // nothing listens there
    gateway = await startTestGateway(
      { modern: fixture('modern-server') },
      {},
      {
        cache: { store: 'redis', url: `redis://127.0.0.1:${port}`, keyPrefix: 'unreachable:' },
        legacyClients: { sessionSecret: randomBytes(24).toString('hex') },
      },
    );
  });
  after(() => gateway?.close());

  const headers = (session?: string) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(session && { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
  });
  // A generous bound: "at once" means a failed Redis command (refused at once here), never a hang.
  const postJson = async (session: string | undefined, body: unknown, ms = 10_000) => {
    const response = await fetch(`${gateway.url}/servers/modern/mcp`, {
      method: 'POST',
      headers: headers(session),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ms),
    });
    const text = await response.text();
    return {
      status: response.status,
      session: response.headers.get('mcp-session-id'),
      body: text ? JSON.parse(text) : undefined,
    };
  };

  test('an answer and a subscription that cannot be relayed fail at once, naming Redis; with the stream here, ' +
    'subscribe still works', {
    timeout: 30_000,
  }, async () => {
    const init = await postJson(
      undefined,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      25_000,
    ); // waits for the child to start
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const session = init.session!;

    const answer = await postJson(session, { jsonrpc: '2.0', id: 'mcp-gateway-nobody-asked', result: {} });
    assert.equal(answer.status, 503);
    assert.match(
      answer.body.error.message,
      new RegExp(`Redis at 127\\.0\\.0\\.1:${port} is unreachable.*Send it again once Redis is back`),
    );

    const subscribe = await postJson(session, {
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/subscribe',
      params: { uri: 'fixture://hello' },
    });
    assert.equal(subscribe.status, 200);
    assert.match(
      subscribe.body.error?.message ?? '',
      /could not be shared with the replica holding this session's GET stream: Redis at .* is unreachable/,
    );

    // With the GET stream on this replica, the subscription is honoured here, as without Redis.
    const controller = new AbortController();
    const get = await fetch(`${gateway.url}/servers/modern/mcp`, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      signal: controller.signal,
    });
    try {
      assert.equal(get.status, 200);
      const local = await postJson(session, {
        jsonrpc: '2.0',
        id: 3,
        method: 'resources/subscribe',
        params: { uri: 'fixture://hello' },
      });
      assert.deepEqual(local.body, { jsonrpc: '2.0', id: 3, result: {} });
    } finally {
      controller.abort();
    }
  });
});

describe('a 2025 session with Redis but without legacyClients.sessionSecret', () => {
  let gateway: RunningGateway;
  const { log, messages } = recordingLog();
  before(async () => {
    // Redis unreachable: a relay would fail what it cannot carry (503), so a 202 shows there is none.
    const config = parseConfig(
      {
        listen: { port: 0 },
        servers: { modern: fixture('modern-server') },
        cache: { store: 'redis', url: `redis://127.0.0.1:${await unusedPort()}`, keyPrefix: 'no-secret:' },
      },
      'test',
      ROOT,
    );
    gateway = await startGateway(config, log);
  });
  after(() => gateway?.close());

  test('no relay (other replicas could not open the session anyway), and the start says why 2025 clients need one ' +
    'replica', {
    timeout: 30_000,
  }, async () => {
    const logged = messages('info', 'warn');
    assert.equal(logged.filter((line) => line.includes('legacyClients.sessionSecret')).length, 1, logged.join('\n'));
    assert.match(
      logged.find((line) => line.includes('legacyClients.sessionSecret'))!,
      /stay on the replica that opened them.*same legacyClients\.sessionSecret on every replica/,
    );
    const post = (body: unknown, session?: string) =>
      fetch(`${gateway.url}/servers/modern/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session && { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(25_000),
      });
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    assert.equal(init.status, 200, await init.text());
    const answer = await post(
      { jsonrpc: '2.0', id: 'mcp-gateway-nobody-asked', result: {} },
      init.headers.get('mcp-session-id')!,
    );
    assert.equal(answer.status, 202, await answer.text());
  });
});
