// type: oauth with credentials.store: redis: a caller connects through one replica's link and callback,
// and another replica, sharing only Redis and credentials.key, goes out with that stored token at once.
// A revocation on one replica reaches the other. On /mcp, a replica that never read a caller's list places
// that caller's call of a namespaced tool by reading the lists as the caller. Real parts: oidc-provider,
// headless Chromium, Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { chromium, sharedRedis } from '../services.js';
import { request, send, until } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const redisNeed = await sharedRedis('credentials shared by replicas');
const KEY = 'dana-api-key-0123456789abcdef';
/** A caller of the /mcp test alone, so what the other test does to dana's connection is no part of it. */
const ERIN_KEY = 'erin-api-key-0123456789abcdef';

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
        auth: {
          apiKeys: [
            { key: KEY, principal: 'dana' },
            { key: ERIN_KEY, principal: 'erin' },
          ],
        },
        cache: { keyPrefix },
        credentials: { key: 'a-shared-credentials-key-of-32-bytes-or-more', store: 'redis' },
        servers: {
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
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
    const revoked = await fetch(`${two.url}/connections/crm`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(revoked.status, 200);
    assert.ok(
      await until(async () => (await whoami(one)).body.error?.code === -32042, 5_000),
      'replica one heard of the revocation',
    );
  });

  /** A request as erin through `replica`'s /mcp. */
  const mcp = (replica: RunningGateway, method: string, params: Record<string, unknown> = {}) =>
    send(`${replica.url}/mcp`, request(method, params), { authorization: `Bearer ${ERIN_KEY}` });
  const toolNames = async (replica: RunningGateway): Promise<string[]> => {
    const answer = await mcp(replica, 'tools/list');
    assert.ok(answer.body.result, JSON.stringify(answer.body));
    return (answer.body.result.tools as { name: string }[]).map((tool) => tool.name);
  };
  /** The `sub` an access token (a JWT the provider signed) names. */
  const subjectOf = (token: string): unknown =>
    JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).sub;

  test(
    "on /mcp, replica two, which never read erin's list, places her call of crm__whoami by reading the lists " +
      'as her',
    async () => {
      const [one, two] = rig.gateways as [RunningGateway, RunningGateway];
      const upstream = rig.upstream;
      // Connected and listed through replica one only.
      const before = await toolNames(one);
      assert.ok(before.includes('crm__connect') && !before.includes('crm__whoami'), before.join());
      const placeholder = await mcp(one, 'tools/call', { name: 'crm__connect', arguments: {} });
      assert.equal(placeholder.body.error?.code, -32042, JSON.stringify(placeholder.body));
      assert.equal(await rig.connectInBrowser(placeholder.body.error.data.url, 'erin-at-crm'), 'Connected to crm');
      const after = await toolNames(one);
      assert.ok(after.includes('crm__whoami') && !after.includes('crm__connect'), after.join());
      const erinsToken = upstream.tokens.at(-1)!;
      assert.equal(subjectOf(erinsToken), 'erin-at-crm', "replica one's list was read with erin's token");

      // On replica two, no tools/list first: the name's prefix names crm, which lists only to each caller.
      const mark = { tokens: upstream.tokens.length, callers: upstream.callers.length, refused: upstream.refused };
      const called = await mcp(two, 'tools/call', { name: 'crm__whoami', arguments: {} });
      assert.equal(called.body.result?.content?.[0]?.text, 'you are erin-at-crm', JSON.stringify(called.body));
      const sent = upstream.tokens.slice(mark.tokens);
      assert.ok(sent.length > 0, 'replica two reached crm');
      assert.ok(
        sent.every((token) => token === erinsToken),
        'every request replica two sent crm carried the token erin connected (none went as the gateway or anyone else)',
      );
      assert.ok(
        upstream.callers.slice(mark.callers).every((caller) => caller === 'erin-at-crm'),
        upstream.callers.slice(mark.callers).join(),
      );
      assert.equal(upstream.refused, mark.refused, 'crm refused nothing replica two sent');

      // The server's own endpoint on replica two is unaffected: no lists, the same answer with the same token.
      const direct = await callToolAs(`${two.url}/servers/crm/mcp`, ERIN_KEY, 'whoami');
      assert.equal(direct.body.result?.content?.[0]?.text, 'you are erin-at-crm', JSON.stringify(direct.body));
      assert.equal(upstream.tokens.at(-1), erinsToken);
    },
  );
});
