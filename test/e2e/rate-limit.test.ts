// Per-principal rate limits through real HTTP: the 429 with Retry-After and a JSON-RPC error body, buckets
// per principal, a policy's own limit in place of the default, two gateways sharing one bucket through the
// Redis on this machine, and the audit lines refusals leave.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { RunningGateway } from '../../src/gateway.js';
import { sharedRedis } from '../services.js';
import { eventually, fixture, headersFor, post, request, schemaProblems, type Answer } from './harness.js';
import { scaled } from '../timing.js';
import { startReadyGateway } from './ready-gateway.js';
import { tempDir } from '../temp.js';

const KEYS = {
  alice: 'alice-key-0123456789',
  bob: 'bob-key-0123456789ab',
  carol: 'carol-key-0123456789', // group strict: a policy limit below the default
  dave: 'dave-key-0123456789a', // group generous: a policy limit above the default
  'probe-one': 'probe-one-key-0123456', // asks until gateway one's limiter counts in Redis
  'probe-two': 'probe-two-key-0123456',
} as const;
type Who = keyof typeof KEYS;

const apiKeys = [
  { key: KEYS.alice, principal: 'alice' },
  { key: KEYS.bob, principal: 'bob' },
  { key: KEYS.carol, principal: 'carol', groups: ['strict'] },
  { key: KEYS.dave, principal: 'dave', groups: ['generous'] },
  { key: KEYS['probe-one'], principal: 'probe-one' },
  { key: KEYS['probe-two'], principal: 'probe-two' },
];

const tmp = tempDir('mcp-gw-rate-');
after(() => rmSync(tmp, { recursive: true, force: true }));

function echo(url: string, who: Who | string, text = 'hi'): Promise<Answer> {
  const body = request('tools/call', { name: 'a__echo', arguments: { text } });
  const key = who in KEYS ? KEYS[who as Who] : who;
  return post(url, body, { ...headersFor(body), authorization: `Bearer ${key}` });
}

function list(url: string, who: Who): Promise<Answer> {
  const body = request('tools/list');
  return post(url, body, { ...headersFor(body), authorization: `Bearer ${KEYS[who]}` });
}

/** A 429 as the edge must send it: Retry-After in whole seconds (1..maxSeconds), a JSON-RPC error naming the limit. */
function assertLimited(answer: Answer, principal: string, perMinute: number): void {
  assert.equal(answer.status, 429, JSON.stringify(answer.body));
  const retryAfter = answer.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^\d+$/, `Retry-After is whole seconds: ${retryAfter}`);
  // An empty bucket refills one token in 60 / perMinute s: never more to wait than that, never 0.
  assert.ok(
    Number(retryAfter) >= 1 && Number(retryAfter) <= Math.ceil(60 / perMinute),
    `Retry-After ${retryAfter} for ${perMinute}/min`,
  );
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(schemaProblems('tools/call', answer.body), []);
  assert.equal(answer.body.error.code, -32600);
  assert.match(
    answer.body.error.message,
    new RegExp(`Rate limit exceeded for ${principal}: ${perMinute} requests per minute`),
  );
  assert.match(answer.body.error.message, new RegExp(`retry after ${retryAfter} s`));
}

function assertEchoed(answer: Answer, text = 'hi'): void {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.deepEqual(answer.body.result?.content, [{ type: 'text', text }], JSON.stringify(answer.body));
}

// ---- 1. one gateway, buckets in memory ------------------------------------------------------------

describe('rate limits per principal (in memory)', () => {
  const auditFile = path.join(tmp, 'audit.jsonl');
  let gateway: RunningGateway;
  let mcp: string;

  before(async () => {
    gateway = await startReadyGateway(
      { a: fixture('modern-server') },
      {},
      {
        auth: { apiKeys },
        rateLimit: { requestsPerMinute: 3 },
        policies: [
          { name: 'everyone', principals: { ids: ['*'] }, allow: { tools: ['a__echo'] } },
          {
            name: 'strict',
            principals: { groups: ['strict'] },
            allow: { tools: ['a__echo'] },
            rateLimit: { requestsPerMinute: 1 },
          },
          {
            name: 'generous',
            principals: { groups: ['generous'] },
            allow: { tools: ['a__echo'] },
            rateLimit: { requestsPerMinute: 5 },
          },
        ],
        audit: { destination: auditFile },
      },
    );
    mcp = `${gateway.url}/mcp`;
  });
  after(async () => {
    await gateway?.close();
  });

  test('the N+1st request of one principal gets 429 with Retry-After; the first N work', async () => {
    for (let i = 0; i < 3; i++) assertEchoed(await echo(mcp, 'alice', `call ${i}`), `call ${i}`);
    assertLimited(await echo(mcp, 'alice'), 'alice', 3);
    // Every kind of request takes from the same bucket, on every endpoint.
    const listed = await list(mcp, 'alice');
    assertLimited(listed, 'alice', 3);
    assertLimited(await echo(`${gateway.url}/servers/a/mcp`, 'alice'), 'alice', 3);
  });

  test('another principal is unaffected', async () => {
    for (let i = 0; i < 3; i++) assertEchoed(await echo(mcp, 'bob'));
    assertLimited(await echo(mcp, 'bob'), 'bob', 3);
  });

  test("a policy's rateLimit replaces the default for its principals (lower)", async () => {
    assertEchoed(await echo(mcp, 'carol'));
    assertLimited(await echo(mcp, 'carol'), 'carol', 1);
  });

  test("a policy's rateLimit replaces the default for its principals (higher)", async () => {
    for (let i = 0; i < 5; i++) assertEchoed(await echo(mcp, 'dave'));
    assertLimited(await echo(mcp, 'dave'), 'dave', 5);
  });

  test('a 429 and a 401 each leave a deny line in the audit log', async () => {
    const refused = await echo(mcp, 'not-a-key-at-all-0123456789');
    assert.equal(refused.status, 401);
    await gateway.security.current.audit!.flush();
    const text = readFileSync(auditFile, 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const limited = lines.filter((l) => l.decision === 'deny' && l.rule === 'rate limit');
    // alice 3, bob 1, carol 1, dave 1
    assert.deepEqual(limited.map((l) => l.principal).sort(), ['alice', 'alice', 'alice', 'bob', 'carol', 'dave']);
    for (const line of limited) assert.equal(line.via, 'api-key');
    const unauthenticated = lines.filter((l) => l.decision === 'deny' && String(l.rule).startsWith('authentication: '));
    assert.equal(unauthenticated.length, 1, JSON.stringify(unauthenticated));
    assert.equal(unauthenticated[0].principal, 'anonymous');
    assert.match(unauthenticated[0].rule, /unknown API key/);
    // What was allowed is there too, and no key is.
    assert.equal(lines.filter((l) => l.decision === 'allow' && l.principal === 'alice').length, 3);
    for (const key of [...Object.values(KEYS), 'not-a-key-at-all-0123456789'])
      assert.ok(!text.includes(key), 'an API key in the audit log');
  });
});

// ---- 2. two gateways, one bucket in Redis ---------------------------------------------------------

const SHARED_REDIS = 'redis://127.0.0.1:6379';
const redis = await sharedRedis('two gateways sharing rate-limit buckets in Redis');

describe("two gateways on one Redis share each principal's bucket", { skip: redis.skip }, () => {
  before(redis.check);
  const keyPrefix = `mcp-gateway-rate-test:${randomUUID()}:`;
  let one: RunningGateway;
  let two: RunningGateway;

  before(async () => {
    const config = {
      auth: { apiKeys },
      rateLimit: { requestsPerMinute: 4 },
      // A few seconds per command: a take that timed out on a loaded machine would be counted in process, and
      // the shared bucket is what is under test (the 150 ms default has its own test, redis-command-timeout).
      cache: { store: 'redis', url: SHARED_REDIS, keyPrefix, commandTimeoutMs: scaled(5_000) },
    };
    const start = (name: string) =>
      startReadyGateway(
        { a: fixture('modern-server') },
        {},
        { ...config, audit: { destination: path.join(tmp, `audit-${name}.jsonl`) } },
      );
    [one, two] = await Promise.all([start('one'), start('two')]);
    // A gateway answers while its limiter still connects (counting in process meanwhile): wait until each
    // one's takes reach Redis, seen as its probe principal's bucket there.
    const bucketOf = (principal: string) =>
      `${keyPrefix}rl:${createHash('sha256').update(principal).digest('base64url')}`;
    for (const [gateway, probe] of [
      [one, 'probe-one'],
      [two, 'probe-two'],
    ] as const) {
      await eventually(async () => {
        await echo(`${gateway.url}/mcp`, probe);
        return (await withRedis((redis) => redis.exists(bucketOf(probe)))) === 1;
      }, 30_000);
    }
  });
  after(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await withRedis(async (redis) => {
      const keys = await keysMatching(redis, `${keyPrefix}*`);
      if (keys.length) await redis.del(...keys);
      assert.deepEqual(await keysMatching(redis, `${keyPrefix}*`), []);
    });
  });

  test('2 via one, 2 via the other, then the next on either is 429', async () => {
    assertEchoed(await echo(`${one.url}/mcp`, 'alice'));
    assertEchoed(await echo(`${two.url}/mcp`, 'alice'));
    assertEchoed(await echo(`${one.url}/mcp`, 'alice'));
    assertEchoed(await echo(`${two.url}/mcp`, 'alice'));
    // Each gateway has seen only 2 of alice's 4: only a shared bucket refuses now.
    assertLimited(await echo(`${one.url}/mcp`, 'alice'), 'alice', 4);
    assertLimited(await echo(`${two.url}/mcp`, 'alice'), 'alice', 4);
    // bob's bucket is his own
    assertEchoed(await echo(`${two.url}/mcp`, 'bob'));

    // The buckets live in Redis under the configured prefix.
    const buckets = await withRedis((redis) => keysMatching(redis, `${keyPrefix}rl:*`));
    assert.equal(buckets.length, 4, `alice's, bob's and the two probes' buckets: ${buckets}`);
  });
});

async function withRedis<T>(use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(SHARED_REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}
