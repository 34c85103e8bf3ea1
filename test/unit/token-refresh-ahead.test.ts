// Short-lived upstream tokens (issue 45 item 8): a token is refreshed ahead of its expiry by a fraction of its
// lifetime, not a fixed 30 s, so a token living 20 s is not refreshed on every call; and once per token,
// across concurrent calls and, with Redis, across replicas (a rotating refresh token spent twice is refused).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { OAuthClient } from '../../src/credentials/oauth/oauth-client.js';
import type { OAuthRecord } from '../../src/credentials/record.js';
import { openCredentialStore, type CredentialStore } from '../../src/credentials/store.js';
import { dropRedisKeys, sharedRedis } from '../services.js';
import { tempDir } from '../temp.js';

const redis = await sharedRedis('token refresh once across replicas');
const keyPrefix = `test-refresh-ahead-${randomUUID()}:`;
const servers: Server[] = [];
const stores: CredentialStore[] = [];
after(async () => {
  for (const server of servers) server.close();
  for (const store of stores) await store.close();
  if (redis.present) await dropRedisKeys(keyPrefix);
});

/**
 * A token endpoint issuing tokens that live `lifetimeS` seconds, answering after `delayMs`; a refresh token is
 * good once (rotation): a second use is refused with invalid_grant.
 */
async function tokenEndpoint(lifetimeS: number, delayMs = 0) {
  const spent = new Set<string>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const presented = new URLSearchParams(body).get('refresh_token') ?? '';
      requests.push(presented);
      const answer = () => {
        res.setHeader('content-type', 'application/json');
        if (spent.has(presented)) return res.writeHead(400).end(JSON.stringify({ error: 'invalid_grant' }));
        spent.add(presented);
        const n = requests.length;
        res.end(
          JSON.stringify({
            access_token: `at-${n}`,
            token_type: 'Bearer',
            expires_in: lifetimeS,
            refresh_token: `rt-${n}`,
          }),
        );
      };
      setTimeout(answer, delayMs);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`, requests };
}

const RESOURCE = 'http://127.0.0.1:1/mcp';
const alice = { principal: 'alice' } as never;
const call = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'x' } };

function expired(tokenUrl: string): OAuthRecord {
  return {
    kind: 'oauth',
    accessToken: 'at-0',
    refreshToken: 'rt-0',
    expiresAt: Date.now() - 1,
    issuedAt: Date.now() - 20_000,
    resource: RESOURCE,
    issuer: 'http://127.0.0.1:1',
    clientId: 'gw',
    connectedAt: Date.now(),
    tokenEndpoint: tokenUrl,
    authMethod: 'none',
  };
}

async function clientOn(store: CredentialStore): Promise<OAuthClient> {
  stores.push(store);
  return new OAuthClient({
    server: 'crm',
    url: RESOURCE,
    settings: { type: 'oauth', scopes: [] },
    store,
    publicUrl: 'http://127.0.0.1:9',
    linkTtlMs: 60_000,
  });
}

const fileStore = () =>
  openCredentialStore(
    { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('refresh-ahead-'), 'c.json') },
    { url: '', keyPrefix: '' },
  );

test('a token living 20 s is refreshed once, then used for its next calls, not refreshed on each', async () => {
  const endpoint = await tokenEndpoint(20);
  const store = await fileStore();
  const client = await clientOn(store);
  await store.put('alice', 'crm', expired(endpoint.url));
  const answers: string[] = [];
  for (let i = 0; i < 10; i++) {
    const cached = client.cached(alice);
    const obtained = cached === undefined ? await client.obtain(alice, call) : { authorization: cached };
    assert.ok('authorization' in obtained, JSON.stringify(obtained));
    answers.push(obtained.authorization);
  }
  assert.deepEqual(endpoint.requests, ['rt-0'], 'one refresh for ten calls');
  assert.deepEqual(new Set(answers), new Set(['Bearer at-1']));
});

test('concurrent calls with an expired token share one refresh', async () => {
  const endpoint = await tokenEndpoint(20, 100);
  const store = await fileStore();
  const client = await clientOn(store);
  await store.put('alice', 'crm', expired(endpoint.url));
  const obtained = await Promise.all(Array.from({ length: 8 }, () => client.obtain(alice, call)));
  assert.deepEqual(endpoint.requests, ['rt-0']);
  for (const one of obtained) assert.deepEqual(one, { authorization: 'Bearer at-1' });
});

test('two replicas sharing Redis refresh a token once; the other uses its result', { skip: redis.skip }, async () => {
  redis.check();
  // Slow enough that both replicas ask while the first refresh is in flight.
  const endpoint = await tokenEndpoint(20, 300);
  const redisAt = { url: 'redis://127.0.0.1:6379', keyPrefix };
  const settings = { key: 'k'.repeat(32), store: 'redis' as const, file: '' };
  const one = await openCredentialStore(settings, redisAt);
  const two = await openCredentialStore(settings, redisAt);
  const [clientOne, clientTwo] = [await clientOn(one), await clientOn(two)];
  await one.put('alice', 'crm', expired(endpoint.url));
  await two.get('alice', 'crm');
  const [first, second] = await Promise.all([clientOne.obtain(alice, call), clientTwo.obtain(alice, call)]);
  assert.deepEqual(endpoint.requests, ['rt-0'], 'one refresh request, so the rotating refresh token was spent once');
  assert.deepEqual(first, { authorization: 'Bearer at-1' });
  assert.deepEqual(second, { authorization: 'Bearer at-1' });
  assert.equal(((await two.get('alice', 'crm')) as OAuthRecord).refreshToken, 'rt-1', 'the connection was kept');
});
