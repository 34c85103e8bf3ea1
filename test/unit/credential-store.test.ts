// The encrypted per-user credential store (src/credentials/): sealed records that open only for their
// principal and server and only under their key, file and Redis backends, single-use pending links.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CredentialStore, openCredentialStore } from '../../src/credentials/store.js';
import { FileBackend } from '../../src/credentials/file-backend.js';
import type { OAuthRecord } from '../../src/credentials/record.js';
import { dropRedisKeys, sharedRedis } from '../services.js';
import { tempDir } from '../temp.js';

const KEY = 'a-credentials-key-of-at-least-32-bytes!';
const TOKEN = `at-${randomUUID()}`;
const REFRESH = `rt-${randomUUID()}`;
const record = (accessToken = TOKEN): OAuthRecord => ({
  kind: 'oauth',
  accessToken,
  refreshToken: REFRESH,
  expiresAt: Date.now() + 3_600_000,
  resource: 'https://crm.example.com/mcp',
  issuer: 'https://as.example.com',
  clientId: 'gw',
  connectedAt: Date.now(),
  scope: 'crm.read',
});

describe('file store', () => {
  const dir = tempDir('cred-store-');

  test('a record survives a restart, and the file holds no token text and no principal name', async () => {
    const file = path.join(dir, 'restart.json');
    const first = await openCredentialStore({ key: KEY, store: 'file', file }, { url: '', keyPrefix: '' });
    await first.put('alice@example.com', 'crm', record());
    await first.close();
    const text = readFileSync(file, 'utf8');
    assert.ok(!text.includes(TOKEN) && !text.includes(REFRESH), 'tokens are sealed');
    assert.ok(!text.includes('alice'), 'principals are filed by a keyed hash');
    const second = await openCredentialStore({ key: KEY, store: 'file', file }, { url: '', keyPrefix: '' });
    assert.equal((await second.get('alice@example.com', 'crm'))?.kind, 'oauth');
    assert.equal(((await second.get('alice@example.com', 'crm')) as OAuthRecord).accessToken, TOKEN);
    assert.equal(await second.get('bob@example.com', 'crm'), undefined, 'another principal has none');
  });

  test('an altered byte, a record moved to another principal, or another key: refused, never used', async () => {
    const file = path.join(dir, 'tamper.json');
    const store = await openCredentialStore({ key: KEY, store: 'file', file }, { url: '', keyPrefix: '' });
    await store.put('alice', 'crm', record());
    await store.put('bob', 'crm', record('bobs-token'));
    await store.close();
    const shape = JSON.parse(readFileSync(file, 'utf8')) as { records: Record<string, Record<string, string>> };
    const [aliceIndex, bobIndex] = Object.keys(shape.records);
    assert.ok(aliceIndex && bobIndex);
    // The control: the file as written opens.
    assert.ok(
      await (await openCredentialStore({ key: KEY, store: 'file', file }, { url: '', keyPrefix: '' })).get(
        'alice',
        'crm',
      ),
    );

    // Flip one byte of the ciphertext.
    const sealed = shape.records[aliceIndex]!.crm!;
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    writeFileSync(
      file,
      JSON.stringify({ ...shape, records: { ...shape.records, [aliceIndex]: { crm: bytes.toString('base64url') } } }),
    );
    const tampered = await openCredentialStore({ key: KEY, store: 'file', file }, { url: '', keyPrefix: '' });
    assert.equal(await tampered.get('alice', 'crm'), undefined);

    // Put bob's record in alice's place (and under another server's name): neither opens.
    writeFileSync(
      file,
      JSON.stringify({
        ...shape,
        records: { [aliceIndex]: { crm: shape.records[bobIndex]!.crm, docs: shape.records[aliceIndex]!.crm } },
      }),
    );
    const swapped = await openCredentialStore({ key: KEY, store: 'file', file }, { url: '', keyPrefix: '' });
    assert.equal(await swapped.get('alice', 'crm'), undefined);
    assert.equal(await swapped.get('alice', 'docs'), undefined);

    // Another key reads nothing.
    writeFileSync(file, JSON.stringify(shape));
    const otherKey = await openCredentialStore(
      { key: `${KEY}-rotated`, store: 'file', file },
      { url: '', keyPrefix: '' },
    );
    assert.equal(await otherKey.get('alice', 'crm'), undefined);
  });

  test('list shows a principal only their own connections, without the token; delete revokes', async () => {
    const store = await openCredentialStore(
      { key: KEY, store: 'file', file: path.join(dir, 'list.json') },
      { url: '', keyPrefix: '' },
    );
    await store.put('alice', 'crm', record());
    await store.put('alice', 'docs', record());
    await store.put('bob', 'crm', record('bobs-token'));
    const listed = await store.list('alice');
    assert.deepEqual(
      listed.map((c) => c.server),
      ['crm', 'docs'],
    );
    assert.ok(!JSON.stringify(listed).includes(TOKEN) && !JSON.stringify(listed).includes(REFRESH));
    assert.deepEqual([...(await store.counts())].sort(), [
      ['crm', 2],
      ['docs', 1],
    ]);
    assert.equal(await store.delete('alice', 'crm'), true);
    assert.equal(await store.get('alice', 'crm'), undefined);
    assert.equal(await store.delete('alice', 'crm'), false);
    assert.equal(((await store.get('bob', 'crm')) as OAuthRecord).accessToken, 'bobs-token');
  });

  test('the hot path answers from memory once read; a file that is not a store is refused naming it', async () => {
    const store = await openCredentialStore(
      { key: KEY, store: 'file', file: path.join(dir, 'hot.json') },
      { url: '', keyPrefix: '' },
    );
    assert.equal(store.cached('alice', 'crm'), undefined, 'not read yet');
    await store.get('alice', 'crm');
    assert.equal(store.cached('alice', 'crm'), null, 'known to have none');
    await store.put('alice', 'crm', record());
    assert.equal((store.cached('alice', 'crm') as OAuthRecord).accessToken, TOKEN);
    const junk = path.join(dir, 'junk.json');
    writeFileSync(junk, '{"hello":1}');
    await assert.rejects(
      FileBackend.open(junk),
      (error: Error) => error.message.includes(junk) && error.message.includes('credentials.file'),
    );
  });

  test('a pending link is taken once, and not after it expires', async () => {
    const store = new CredentialStore(KEY, await FileBackend.open(path.join(dir, 'links.json')));
    const id = await store.putPending({ principal: 'alice', server: 'crm' }, 60_000);
    assert.deepEqual(await store.takePending(id), { principal: 'alice', server: 'crm' });
    assert.equal(await store.takePending(id), undefined, 'replayed');
    const short = await store.putPending({ principal: 'alice', server: 'crm' }, 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(await store.takePending(short), undefined, 'expired');
    assert.equal(await store.takePending('made-up'), undefined);
  });

  test('one live link per purpose: calls while it is live get the same link; once taken, a new one', async () => {
    const store = new CredentialStore(KEY, await FileBackend.open(path.join(dir, 'live.json')));
    const state = { principal: 'alice', server: 'crm' };
    const purpose = 'connect\u0000alice\u0000crm';
    const [first, concurrent] = await Promise.all([
      store.putPending(state, 60_000, purpose),
      store.putPending(state, 60_000, purpose),
    ]);
    assert.equal(concurrent, first, 'two calls at once share one link');
    assert.equal(await store.putPending(state, 60_000, purpose), first, 'a later call while it is live: the same');
    assert.notEqual(await store.putPending(state, 60_000, 'connect\u0000bob\u0000crm'), first, "bob's is his own");
    assert.notEqual(await store.putPending(state, 60_000), first, 'without a purpose, always a new link');
    assert.deepEqual(await store.takePending(first), state);
    const next = await store.putPending(state, 60_000, purpose);
    assert.notEqual(next, first, 'the taken link is not handed out again');
    assert.deepEqual(await store.takePending(next), state);
    // A link past half its life is not handed out again (it could expire in the person's hands).
    const short = await store.putPending(state, 20, purpose);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.notEqual(await store.putPending(state, 20, purpose), short);
  });
});

describe('redis store', async () => {
  const redis = await sharedRedis('credential store');
  const keyPrefix = `test-cred-${randomUUID()}:`;
  const settings = { key: KEY, store: 'redis' as const, file: '' };
  const stores: CredentialStore[] = [];
  const open = async () => {
    const store = await openCredentialStore(settings, { url: 'redis://127.0.0.1:6379', keyPrefix });
    stores.push(store);
    return store;
  };
  after(async () => {
    await dropRedisKeys(keyPrefix);
    await Promise.all(stores.map((store) => store.close()));
  });

  test('a second replica reads what the first stored; a revocation reaches its cached copy', {
    skip: redis.skip,
  }, async () => {
    redis.check();
    const one = await open();
    const two = await open();
    assert.equal(await two.get('alice', 'crm'), undefined);
    await one.put('alice', 'crm', record());
    // two cached "none": the change is published, so its copy is dropped and it reads again.
    await waitFor(() => two.cached('alice', 'crm') === undefined);
    assert.equal(((await two.get('alice', 'crm')) as OAuthRecord).accessToken, TOKEN);
    assert.equal((two.cached('alice', 'crm') as OAuthRecord).accessToken, TOKEN);
    await one.delete('alice', 'crm');
    await waitFor(() => two.cached('alice', 'crm') === undefined);
    assert.equal(await two.get('alice', 'crm'), undefined);
  });

  test('Redis holds no token text; a pending link is single-use across replicas', { skip: redis.skip }, async () => {
    redis.check();
    const one = await open();
    const two = await open();
    await one.put('carol', 'crm', record());
    const { Redis } = await import('ioredis');
    const client = new Redis('redis://127.0.0.1:6379');
    const keys = await client.keys(`${keyPrefix}*`);
    const values = await Promise.all(
      keys.map(async (key) =>
        (await client.type(key)) === 'hash' ? JSON.stringify(await client.hgetall(key)) : await client.get(key),
      ),
    );
    client.disconnect();
    assert.ok(keys.length > 0);
    assert.ok(!values.join('\n').includes(TOKEN) && !keys.join('\n').includes('carol'));
    const id = await one.putPending({ principal: 'carol', server: 'crm' }, 60_000);
    assert.deepEqual(await two.takePending(id), { principal: 'carol', server: 'crm' });
    assert.equal(await one.takePending(id), undefined);
    assert.equal((await two.counts()).get('crm'), 1);
  });

  test('one live link per purpose across replicas, its id sealed in Redis', { skip: redis.skip }, async () => {
    redis.check();
    const one = await open();
    const two = await open();
    const purpose = 'connect\u0000dana\u0000crm';
    const id = await one.putPending({ principal: 'dana', server: 'crm' }, 60_000, purpose);
    assert.equal(await two.putPending({ principal: 'dana', server: 'crm' }, 60_000, purpose), id);
    const { Redis } = await import('ioredis');
    const client = new Redis('redis://127.0.0.1:6379');
    const keys = await client.keys(`${keyPrefix}cred-link:*`);
    const values = await Promise.all(keys.map((key) => client.get(key)));
    client.disconnect();
    assert.ok(!`${keys.join('\n')}\n${values.join('\n')}`.includes(id), 'the link itself is nowhere in Redis');
    assert.deepEqual(await two.takePending(id), { principal: 'dana', server: 'crm' });
    assert.notEqual(await one.putPending({ principal: 'dana', server: 'crm' }, 60_000, purpose), id);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
