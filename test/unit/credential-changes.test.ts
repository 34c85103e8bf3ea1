// What the credential store tells its change listeners (issue 33's connect placeholder and list_changed):
// whose record changed, asked by principal and answered by the keyed index (never the name itself), and
// whether it was only a renewal (a refresh keeps connectedAt) — in the process that wrote it, and on another
// replica through Redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { OAuthRecord } from '../../src/credentials/record.js';
import { type CredentialChange, type CredentialStore, openCredentialStore } from '../../src/credentials/store.js';
import { dropRedisKeys, sharedRedis } from '../services.js';
import { tempDir } from '../temp.js';

const KEY = 'a-credentials-key-of-at-least-32-bytes!';
const record = (connectedAt: number, accessToken = 'at'): OAuthRecord => ({
  kind: 'oauth',
  accessToken,
  resource: 'https://crm.example.com/mcp',
  issuer: 'https://as.example.com',
  clientId: 'gw',
  connectedAt,
});

interface Heard {
  server: string;
  change: CredentialChange;
}

function listen(store: CredentialStore): Heard[] {
  const heard: Heard[] = [];
  store.onChange((server, change) => heard.push({ server, change }));
  return heard;
}

describe('credential change listeners', () => {
  test('a connection made, renewed and revoked: whose, and whether only renewed', async () => {
    const store = await openCredentialStore(
      { key: KEY, store: 'file', file: path.join(tempDir('cred-changes-'), 'c.json') },
      { url: '', keyPrefix: '' },
    );
    const heard = listen(store);
    await store.put('alice', 'crm', record(1));
    await store.get('alice', 'crm');
    await store.put('alice', 'crm', record(1, 'refreshed')); // a refresh keeps connectedAt
    await store.put('alice', 'crm', record(2)); // connected again
    await store.delete('alice', 'crm');
    assert.deepEqual(
      heard.map((h) => [h.server, h.change.renewal]),
      [
        ['crm', false],
        ['crm', true],
        ['crm', false],
        ['crm', false],
      ],
    );
    for (const { change } of heard) {
      assert.equal(change.isFor('alice'), true);
      assert.equal(change.isFor('bob'), false);
    }
    await store.close();
  });
});

describe('credential change listeners across replicas', async () => {
  const redis = await sharedRedis('credential changes across replicas');
  const keyPrefix = `test-cred-changes-${randomUUID()}:`;
  const stores: CredentialStore[] = [];
  after(async () => {
    await dropRedisKeys(keyPrefix);
    await Promise.all(stores.map((store) => store.close()));
  });

  test('another replica hears whose record changed and whether it was a renewal', { skip: redis.skip }, async () => {
    redis.check();
    const open = async () => {
      const store = await openCredentialStore(
        { key: KEY, store: 'redis', file: '' },
        { url: 'redis://127.0.0.1:6379', keyPrefix },
      );
      stores.push(store);
      return store;
    };
    const one = await open();
    const two = await open();
    const heard = listen(two);
    await one.put('alice', 'crm', record(1));
    await one.put('alice', 'crm', record(1, 'refreshed'));
    await one.delete('alice', 'crm');
    // Published in order on one channel: the third arriving means the first two did.
    const deadline = Date.now() + 10_000;
    while (heard.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(
      heard.map((h) => h.change.renewal),
      [false, true, false],
    );
    assert.ok(heard.every((h) => h.server === 'crm' && h.change.isFor('alice') && !h.change.isFor('bob')));
  });
});
