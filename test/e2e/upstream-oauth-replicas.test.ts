// type: oauth with credentials.store: redis: a caller connects through one replica's link and callback,
// and another replica, sharing only Redis and credentials.key, goes out with that stored token at once.
// A revocation on one replica reaches the other. Real parts: oidc-provider, headless Chromium, Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { chromium as playwright, type Browser } from 'playwright-core';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { startOidc, type Oidc } from '../fixtures/oidc.js';
import { chromium, sharedRedis } from '../services.js';
import { unusedPort } from '../ports.js';
import { request, ROOT, until, send } from './harness.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const redisNeed = await sharedRedis('credentials shared by replicas');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const KEY = 'dana-api-key-0123456789abcdef';

describe('oauth on two replicas sharing Redis', { skip: browserNeed.skip || redisNeed.skip }, () => {
  let oidc: Oidc;
  let upstream: IdentityServer;
  let browser: Browser;
  const replicas: RunningGateway[] = [];
  const keyPrefix = `test-oauth-replicas-${randomUUID()}:`;
  const client = { client_id: 'gw-oauth', client_secret: 'gw-oauth-secret-0123456789' };

  before(async () => {
    browserNeed.check();
    redisNeed.check();
    const ports = [await unusedPort(), await unusedPort()];
    // Both replicas stand behind one public URL in production; here the link and callback go to the first.
    const publicUrl = `http://127.0.0.1:${ports[0]}`;
    oidc = await startOidc({ clients: [{ ...client, redirect_uris: [`${publicUrl}/connect/callback`] }], callerAudience: 'unused' });
    upstream = await startIdentityServer(oidc.issuer, oidc.jwksUrl);
    for (const port of ports) {
      const config = parseConfig(
        {
          listen: { port, publicUrl },
          auth: { apiKeys: [{ key: KEY, principal: 'dana' }] },
          cache: { keyPrefix },
          credentials: { key: 'a-shared-credentials-key-of-32-bytes-or-more', store: 'redis' },
          servers: { crm: { url: upstream.url, credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret } } },
        },
        'test',
        ROOT,
      );
      replicas.push(await startGateway(config, silentLog));
    }
    browser = await playwright.launch({ executablePath: browserNeed.path!, args: ARGS });
  });

  after(async () => {
    await browser?.close();
    for (const replica of replicas) await replica.close();
    await upstream?.close();
    await oidc?.close();
    const { Redis } = await import('ioredis');
    const redis = new Redis('redis://127.0.0.1:6379');
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const whoami = (replica: RunningGateway) => {
    const body = request('tools/call', { name: 'whoami', arguments: {} });
    return send(`${replica.url}/servers/crm/mcp`, body, { authorization: `Bearer ${KEY}` });
  };

  test('connected through replica one, served by replica two; revoked on two, gone on one', async () => {
    const [one, two] = replicas as [RunningGateway, RunningGateway];
    assert.equal((await whoami(two)).body.error?.code, -32042, 'the control: replica two has nothing for dana yet');
    const link: string = (await whoami(one)).body.error.data.url;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole('button', { name: /Connect crm/ }).click();
    await page.locator('input[name="login"]').fill('dana-at-crm');
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(/\/connect\/callback/);
    assert.equal(await page.locator('h1').textContent(), 'Connected to crm');
    await context.close();

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
