// What today's code reads of what an earlier main wrote: stored credentials (file or Redis hold these sealed
// strings), 2025 session ids held by clients, answers relayed between replicas during a rolling upgrade, and the
// signed requestState and task ids clients hold. The fixture was written by running main at 38b2fd0, before the
// sealers and the signed-token codecs became one each (infra/sealer.ts, infra/signed-token.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Sealer } from '../../infra/sealer.js';
import { SignedTokenCodec } from '../../infra/signed-token.js';
import { CredentialSealer } from '../../src/credentials/sealer.js';
import { SealedV1Reader, UpgradingSealer } from '../../src/legacy-client/sealer-v1.js';
import { SessionCodec } from '../../src/legacy-client/session-token.js';
import { RequestStateCodec } from '../../src/mrtr/request-state.js';
import { TaskIdCodec } from '../../src/tasks/task-ids.js';

const old = JSON.parse(readFileSync(new URL('../fixtures/upgrade/sealed-by-38b2fd0.json', import.meta.url), 'utf8'));

test('a credential record and its index written by the earlier main open as they were, and only in their place', () => {
  const sealer = new CredentialSealer(old.credentials.key);
  assert.equal(sealer.open(old.credentials.sealed, old.credentials.bound), old.credentials.plaintext);
  assert.equal(sealer.open(old.credentials.sealed, 'mallory\u0000crm'), undefined, 'bound to its principal');
  assert.equal(new CredentialSealer('another key').open(old.credentials.sealed, old.credentials.bound), undefined);
  assert.equal(sealer.index(old.credentials.indexOf.name), old.credentials.indexOf.index, 'the store finds it');
});

test("a 2025 client's session id minted by the earlier main still opens, and new ones are in the one form", () => {
  const secret = Buffer.from(old.legacySession.secret, 'utf8');
  const codec = new SessionCodec(secret);
  assert.deepEqual(codec.open(old.legacySession.token, 0), old.legacySession.session);
  const fresh = codec.mint(old.legacySession.session);
  assert.deepEqual(codec.open(fresh, 0), old.legacySession.session);
  const label = 'mcp-gateway legacy session';
  assert.equal(new Sealer(secret, label).open(fresh), JSON.stringify(old.legacySession.session), 'sealed by infra');
  assert.equal(new SealedV1Reader(secret, label).open(fresh), undefined, 'not in the old form');
  assert.equal(new SessionCodec(Buffer.from('other')).open(old.legacySession.token, 0), undefined);
});

test('an answer relayed by a replica still on the earlier main opens, for its session only', () => {
  const relay = new UpgradingSealer(Buffer.from(old.legacyRelay.secret, 'utf8'), 'mcp-gateway legacy relay sealed');
  assert.equal(relay.open(old.legacyRelay.sealed, old.legacyRelay.context), old.legacyRelay.plaintext);
  assert.equal(relay.open(old.legacyRelay.sealed, 'another session'), undefined);
  const tampered = `${old.legacyRelay.sealed.slice(0, -2)}${old.legacyRelay.sealed.endsWith('A') ? 'BB' : 'AA'}`;
  assert.equal(relay.open(tampered, old.legacyRelay.context), undefined);
});

test("a held call's requestState and a task id issued by the earlier main open the same", () => {
  const codec = new RequestStateCodec(Buffer.from(old.requestState.key, 'utf8'), old.requestState.instance);
  assert.deepEqual(codec.open(old.requestState.token), { ok: true, state: old.requestState.state });
  assert.equal(codec.issue(old.requestState.state), old.requestState.token, 'the same bytes as before');
  const tasks = new TaskIdCodec(old.taskId.secret);
  assert.deepEqual(tasks.open(old.taskId.id, old.taskId.principal), old.taskId.ref);
  assert.equal(tasks.open(old.taskId.id, 'mallory'), undefined, 'bound to its principal');
  assert.equal(tasks.issue(old.taskId.ref, old.taskId.principal), old.taskId.id, 'the same bytes as before');
});

test('signed tokens: one kind never opens as another, and a binding is checked but not written', () => {
  // Each kind has a key of its own (the prefix is not signed: the earlier main's tokens did not sign it).
  const a = new SignedTokenCodec(Buffer.alloc(32, 7), 'kinda1.');
  const b = new SignedTokenCodec(Buffer.alloc(32, 8), 'kindb1.');
  assert.equal(b.open(a.issue('{}')), undefined);
  const token = a.issue('{"x":1}', 'alice');
  assert.equal(a.open(token, 'alice'), '{"x":1}');
  assert.equal(a.open(token, 'bob'), undefined);
  assert.equal(a.open(token), undefined, 'a bound token does not open unbound');
  assert.equal(b.open(token.replace('kinda1.', 'kindb1.'), 'alice'), undefined);
  assert.ok(!token.includes('alice'));
  assert.equal(a.open(42), undefined);
});
