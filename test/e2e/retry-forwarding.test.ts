// Issue #16, item 3: retry forwarding must trust replicas, not Redis. The attacker can write to Redis and
// runs an HTTP server on loopback that records what reaches it. A retry whose requestState names another
// instance is forwarded only to a registry URL a replica signed, only where mrtr.peers allows, and never
// with the client's credentials; a request claiming to be a forward needs a replica's vouch for its body.
// (Real two-replica round trips are in mrtr-replicas.test.ts.)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { RunningGateway } from '../../src/gateway.js';
import { RequestStateCodec } from '../../src/mrtr/request-state.js';
import { request, startTestGateway, type Answer, send } from './harness.js';
import { sharedRedis } from '../services.js';

const REDIS = 'redis://127.0.0.1:6379';
const SECRET = 'the replicas shared mrtr secret, 32+ chars';
const KEY = 'alice-key-0123456789abcdef';
const HOLDER = 'evil-instance';
const keyPrefix = `retry-forwarding-${randomUUID()}:`;
const shared = await sharedRedis('the retry forwarding tests');

describe('retry forwarding trusts replicas, not Redis', { skip: shared.skip }, () => {
  before(() => shared.check());
  let redis: Redis;
  let gateway: RunningGateway;
  let fenced: RunningGateway; // the same, with mrtr.peers limited to 10.0.0.0/8
  let attacker: http.Server;
  let attackerUrl: string;
  /** What reached the attacker's server, in the order it arrived. */
  const reached: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  before(async () => {
    redis = new Redis(REDIS);
    attacker = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        reached.push({ url: req.url ?? '', headers: req.headers, body });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { stolen: true } }));
      });
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    const rest = {
      cache: { store: 'redis', url: REDIS, keyPrefix },
      mrtr: { secret: SECRET },
      auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
    };
    gateway = await startTestGateway({}, {}, rest);
    fenced = await startTestGateway({}, {}, { ...rest, mrtr: { secret: SECRET, peers: ['10.0.0.0/8'] } });
  });
  // Each test starts from nothing heard, and registers the entry it needs.
  beforeEach(() => {
    reached.length = 0;
  });

  after(async () => {
    await Promise.all([gateway?.close(), fenced?.close()]);
    attacker?.close();
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** A retry whose (validly signed) requestState says another instance holds the call; `marker` tells them apart. */
  function retry(marker: string) {
    const requestState = new RequestStateCodec(Buffer.from(SECRET), HOLDER).issue({
      instance: HOLDER,
      upstream: 'x',
      call: 'c1',
      round: 1,
      caller: 'anyone',
      request: 'r',
      expiresAt: Date.now() + 60_000,
    });
    return request('tools/call', { name: 'x__ask', arguments: { marker }, requestState, inputResponses: {} });
  }

  async function sendRetry(to: RunningGateway, marker = 'attack'): Promise<Answer> {
    const body = retry(marker);
    return send(`${to.url}/mcp`, body, { authorization: `Bearer ${KEY}` });
  }

  async function register(value: string): Promise<void> {
    await redis.set(`${keyPrefix}instance:${HOLDER}`, value, 'PX', 60_000);
  }

  /** The value a replica sharing `secret` would register (peer-trust.ts), made here without its code. */
  async function signedEntry(url: string, secret = SECRET): Promise<string> {
    const { PeerTrust } = await import('../../src/mrtr/peer-trust.js');
    return new PeerTrust(Buffer.from(secret)).registryEntry(HOLDER, url, Date.now() + 60_000);
  }

  /**
   * Instead of waiting to see that nothing came: a control retry the gateway does forward (a replica-signed
   * entry, no peer limit) down the same path to the attacker's server. Once it has arrived, a forward the
   * refused retry had started would have arrived before it; so the control must be all the attacker heard.
   */
  async function assertAttackerHeardOnlyControl(): Promise<void> {
    await register(await signedEntry(attackerUrl));
    const control = await sendRetry(gateway, 'control');
    assert.deepEqual(control.body.result, { stolen: true }, 'control: the signed entry is forwarded to');
    assert.deepEqual(
      reached.map((r) => JSON.parse(r.body).params?.arguments?.marker),
      ['control'],
      'the refused retry reached the attacker',
    );
  }

  test('an entry written straight into Redis (unsigned) is ignored: the attacker hears nothing', async () => {
    await register(attackerUrl);
    const answer = await sendRetry(gateway);
    assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
    await assertAttackerHeardOnlyControl();
  });

  test('an entry signed with another secret is ignored too', async () => {
    await register(await signedEntry(attackerUrl, 'a secret the attacker made up, 32+'));
    const answer = await sendRetry(gateway);
    assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
    await assertAttackerHeardOnlyControl();
  });

  test('a replica-signed entry outside mrtr.peers is not forwarded to', async () => {
    await register(await signedEntry(attackerUrl));
    const answer = await sendRetry(fenced);
    assert.ok(answer.body.error, JSON.stringify(answer.body));
    await assertAttackerHeardOnlyControl();
  });

  test('a forward to a replica-signed entry carries no Authorization, only a vouch for the caller', async () => {
    await register(await signedEntry(attackerUrl));
    const answer = await sendRetry(gateway);
    assert.deepEqual(answer.body.result, { stolen: true }, 'control: the signed entry is forwarded to');
    assert.equal(reached.length, 1);
    const headers = reached[0]!.headers;
    assert.equal(headers.authorization, undefined);
    assert.ok(!JSON.stringify(headers).includes(KEY), 'the API key travelled');
    assert.equal(typeof headers['x-mcp-gateway-caller'], 'string');
  });

  test("a client replaying a replica's vouch with another body, or with none, gets 403 and no call", async () => {
    // A genuine vouch of this test's own, taken from a forward the gateway made.
    await register(await signedEntry(attackerUrl));
    assert.deepEqual((await sendRetry(gateway)).body.result, { stolen: true });
    const vouch = reached[0]!.headers['x-mcp-gateway-caller'] as string;
    assert.equal(typeof vouch, 'string');
    const other = request('tools/call', { name: 'x__delete_everything', arguments: {} });
    const claims: Record<string, string>[] = [
      { 'x-mcp-gateway-forwarded': 'me', 'x-mcp-gateway-caller': vouch },
      { 'x-mcp-gateway-forwarded': 'me' },
    ];
    for (const headers of claims) {
      const answer = await send(`${gateway.url}/mcp`, other, headers);
      assert.equal(answer.status, 403, JSON.stringify(answer.body));
    }
  });
});
