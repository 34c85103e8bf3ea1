// Per-caller OAuth children (servers.<name>.credentials.env on a perCaller stdio server) on two replicas
// sharing Redis: a caller connected through one replica's link gets a child with the same stored token on
// the other; a revocation on one replica stops that caller's child there at once and, on the other, as soon
// as word of it arrives by Redis, without a call of theirs there. Real parts: oidc-provider, headless
// Chromium, Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { chromium, sharedRedis } from '../services.js';
import { ROOT, until } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const redisNeed = await sharedRedis('credentials shared by replicas');
const KEY = 'dana-api-key-0123456789abcdef';
const CLIENT = { client_id: 'gw-child', client_secret: 'gw-child-secret-0123456789' };

describe('per-caller OAuth children on two replicas sharing Redis', {
  skip: browserNeed.skip || redisNeed.skip,
}, () => {
  let rig: OAuthRig<undefined>;
  const keyPrefix = `test-per-caller-oauth-replicas-${randomUUID()}:`;

  before(async () => {
    browserNeed.check();
    redisNeed.check();
    // Both replicas stand behind one public URL in production; here the link and callback go to the first.
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client: CLIENT,
      replicas: 2,
      config: (at) => ({
        auth: { apiKeys: [{ key: KEY, principal: 'dana' }] },
        cache: { keyPrefix },
        credentials: { key: 'a-shared-credentials-key-of-32-bytes-or-more', store: 'redis' },
        servers: {
          github: {
            command: process.execPath,
            args: ['test/fixtures/token-env-server.mjs', 'GITHUB_TOKEN'],
            cwd: ROOT,
            era: 'modern',
            perCaller: true,
            credentials: {
              type: 'oauth',
              clientId: CLIENT.client_id,
              clientSecret: CLIENT.client_secret,
              scopes: ['read'],
              env: 'GITHUB_TOKEN',
              issuer: at.oidc.issuer,
            },
          },
        },
      }),
      log: silentLog,
      server: 'github',
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

  const token = (replica: RunningGateway) => callToolAs(`${replica.url}/servers/github/mcp`, KEY, 'token');
  const said = (answer: { body: any }): { pid: number; token: string | null } | undefined => {
    const text = answer.body.result?.content?.[0]?.text;
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test(
    'connected through replica one, a child with the same token on each; revoked on two: stopped there at once, ' +
      'on one on word from Redis',
    async () => {
      const [one, two] = rig.gateways as [RunningGateway, RunningGateway];
      assert.equal((await token(two)).body.error?.code, -32042, 'the control: replica two has nothing for dana yet');
      const link: string = (await token(one)).body.error.data.url;
      assert.equal(await rig.connectInBrowser(link, 'dana-at-gh'), 'Connected to github');

      const onOne = said(await token(one));
      assert.ok(onOne?.token, 'replica one started a child with the token');
      // Word of the change travels by Redis pub/sub, a moment behind the callback's answer.
      let onTwo: { pid: number; token: string | null } | undefined;
      assert.ok(
        await until(async () => {
          onTwo = said(await token(two));
          return onTwo !== undefined;
        }, 5_000),
        'replica two dropped its cached "none" on word from Redis',
      );
      assert.equal(onTwo!.token, onOne.token, 'the same stored token');
      assert.notEqual(onTwo!.pid, onOne.pid, 'in a child of each replica');

      const revoked = await fetch(`${two.url}/connections/github`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${KEY}` },
      });
      assert.equal(revoked.status, 200);
      assert.ok(await until(() => !alive(onTwo!.pid), 10_000), "replica two stopped dana's child without a call");
      // Replica one hears of it by Redis and stops hers too, before any call of hers reaches it (issue 46 item 3).
      assert.ok(await until(() => !alive(onOne.pid), 20_000), "replica one stopped dana's child without a call");
      assert.equal((await token(one)).body.error?.code, -32042, 'replica one has no token for her any more');
    },
  );
});
