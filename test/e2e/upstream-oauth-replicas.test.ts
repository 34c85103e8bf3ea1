// type: oauth with credentials.store: redis: a caller connects through one replica's link and callback,
// and another replica, sharing only Redis and credentials.key, goes out with that stored token at once.
// A revocation on one replica reaches the other. Real parts: oidc-provider, headless Chromium, Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { chromium, sharedRedis } from '../services.js';
import { until } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const redisNeed = await sharedRedis('credentials shared by replicas');
const KEY = 'dana-api-key-0123456789abcdef';

describe('oauth on two replicas sharing Redis', { skip: browserNeed.skip || redisNeed.skip }, () => {
  let rig: OAuthRig<IdentityServer>;
  const keyPrefix = `test-oauth-replicas-${randomUUID()}:`;
  const client = { client_id: 'gw-oauth', client_secret: 'gw-oauth-secret-0123456789' };

  before(async () => {
    browserNeed.check();
    redisNeed.check();
    // Both replicas stand behind one public URL in production; here the link and callback go to the first.
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startIdentityServer,
      replicas: 2,
      config: (at) => ({
        listen: { port: at.port, publicUrl: at.publicUrl },
        auth: { apiKeys: [{ key: KEY, principal: 'dana' }] },
        cache: { keyPrefix },
        credentials: { key: 'a-shared-credentials-key-of-32-bytes-or-more', store: 'redis' },
        servers: { crm: { url: at.upstream.url, credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret } } },
      }),
      log: silentLog,
      server: 'crm',
    });
  });

  after(async () => {
    await rig?.close();
    const { Redis } = await import('ioredis');
    const redis = new Redis('redis://127.0.0.1:6379');
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const whoami = (replica: RunningGateway) => callToolAs(`${replica.url}/servers/crm/mcp`, KEY, 'whoami');

  test('connected through replica one, served by replica two; revoked on two, gone on one', async () => {
    const [one, two] = rig.gateways as [RunningGateway, RunningGateway];
    assert.equal((await whoami(two)).body.error?.code, -32042, 'the control: replica two has nothing for dana yet');
    const link: string = (await whoami(one)).body.error.data.url;
    assert.equal(await rig.connectInBrowser(link, 'dana-at-crm'), 'Connected to crm');

    // Word of the change travels by Redis pub/sub, a moment behind the callback's answer.
    assert.ok(
      await until(async () => (await whoami(two)).body.result?.content[0].text === 'you are dana-at-crm', 5_000),
      'replica two dropped its cached "none" on word from Redis',
    );
    const revoked = await fetch(`${two.url}/connections/crm`, { method: 'DELETE', headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(revoked.status, 200);
    assert.ok(await until(async () => (await whoami(one)).body.error?.code === -32042, 5_000), 'replica one heard of the revocation');
  });
});
