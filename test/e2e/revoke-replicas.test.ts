// A revocation reaches every replica (issue 46 item 3): two gateways share Redis (credentials.store: redis);
// alice pastes her secret once and has a perCaller child on each; she revokes on replica one, and replica
// two stops her child there without any call of hers reaching it (before, it waited for her next call
// there). The product promises 2 s; the test only polls for it, with a generous limit, and reports the time.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { alive } from '../processes.js';
import { unusedPort } from '../ports.js';
import { dropRedisKeys, sharedRedis } from '../services.js';
import { request, ROOT, send, until } from './harness.js';

const redisNeed = await sharedRedis('a revocation shared by replicas');
const KEY = 'revoke-replicas-key-0123456789';

describe('a revocation on one replica', { skip: redisNeed.skip }, () => {
  const keyPrefix = `test-revoke-replicas-${randomUUID()}:`;
  const replicas: { gateway: RunningGateway; publicUrl: string }[] = [];

  before(async () => {
    redisNeed.check();
    for (let i = 0; i < 2; i++) {
      const port = await unusedPort();
      const publicUrl = `http://127.0.0.1:${port}`;
      const raw = {
        listen: { port, publicUrl },
        auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
        cache: { keyPrefix },
        credentials: { key: 'a-shared-credentials-key-of-32-bytes-or-more', store: 'redis' },
        servers: {
          vault: {
            command: process.execPath,
            args: ['test/fixtures/faulty-server.mjs'],
            cwd: ROOT,
            era: 'modern',
            perCaller: true,
            secrets: { VAULT_TOKEN: { prompt: 'Your vault token' } },
          },
        },
      };
      replicas.push({ gateway: await startGateway(parseConfig(raw, 'test', ROOT), silentLog), publicUrl });
    }
  });

  after(async () => {
    for (const { gateway } of replicas) await gateway.close();
    await dropRedisKeys(keyPrefix);
  });

  const call = (replica: number, name: string) =>
    send(`${replicas[replica]!.gateway.url}/servers/vault/mcp`, request('tools/call', { name, arguments: {} }), {
      authorization: `Bearer ${KEY}`,
    });

  /** The pid of alice's child on a replica, once her call there reaches one. */
  async function childOn(replica: number): Promise<number> {
    let pid: number | undefined;
    const reached = await until(async () => {
      const text = (await call(replica, 'pid')).body.result?.content?.[0]?.text;
      pid = text === undefined ? undefined : Number(text);
      return pid !== undefined;
    }, 15_000);
    assert.ok(reached, `alice's call on replica ${replica + 1} reached a child`);
    return pid!;
  }

  test("stops the caller's child on the other replica without a call there", async (t) => {
    const first = await call(0, 'pid');
    const link: string = first.body.error?.data?.url;
    assert.match(link ?? '', /\/secrets\//, JSON.stringify(first.body));
    const { publicUrl } = replicas[0]!;
    const saved = await fetch(`${publicUrl}/secrets/save`, {
      method: 'POST',
      body: new URLSearchParams({ link: link.slice(link.lastIndexOf('/') + 1), 'value:VAULT_TOKEN': 'vault-0123' }),
      headers: { origin: publicUrl },
    });
    assert.equal(saved.status, 200, await saved.text());
    const onOne = await childOn(0);
    const onTwo = await childOn(1);
    assert.notEqual(onOne, onTwo);

    const revokedAt = performance.now();
    const revoked = await fetch(`${replicas[0]!.gateway.url}/connections/vault`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(revoked.status, 200, await revoked.text());
    // No call of alice's reaches replica two until her child there has stopped.
    assert.ok(await until(() => !alive(onTwo), 20_000), "replica two stopped alice's child on word from Redis");
    t.diagnostic(`replica two stopped the child ${Math.round(performance.now() - revokedAt)} ms after the DELETE`);
    assert.ok(await until(() => !alive(onOne), 20_000), 'replica one stopped hers too');
    assert.equal((await call(1, 'pid')).body.error?.code, -32042, 'replica two asks her to paste again');
  });
});
