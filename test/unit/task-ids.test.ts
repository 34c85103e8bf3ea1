// The gateway's own task ids (src/tasks/task-ids.ts): what one names opens again for the principal it was
// issued to, on any replica with the same secret, and for nobody else; any change to it is refused.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SignedTokenCodec } from '../../infra/signed-token.js';
import { TaskIdCodec } from '../../src/tasks/task-ids.js';

const SECRET = 'a shared mrtr secret, 32+ chars long';
const REF = { server: 'crm', taskId: 'task-7/ü', tool: 'export_all' };

describe('task ids', () => {
  test('open for the principal they were issued to, on another codec with the same secret', () => {
    const id = new TaskIdCodec(SECRET).issue(REF, 'alice');
    assert.deepEqual(new TaskIdCodec(SECRET).open(id, 'alice'), REF);
    assert.ok(!id.includes('alice'), 'the principal is not written into the id');
  });

  test('refused for another principal, another secret, or any altered character', () => {
    const codec = new TaskIdCodec(SECRET);
    const id = codec.issue(REF, 'alice');
    assert.equal(codec.open(id, 'bob'), undefined);
    assert.equal(new TaskIdCodec('another secret of enough length').open(id, 'alice'), undefined);
    assert.equal(new TaskIdCodec(undefined).open(id, 'alice'), undefined);
    for (let i = 0; i < id.length; i++) {
      const other = id[i] === 'A' ? 'B' : 'A';
      assert.equal(
        codec.open(`${id.slice(0, i)}${other}${id.slice(i + 1)}`, 'alice'),
        undefined,
        `character ${i} altered`,
      );
    }
    for (const given of [undefined, 42, '', 'gwtask1.', 'gwtask1..', `${id}=`, id.slice(0, -1), REF.taskId])
      assert.equal(codec.open(given, 'alice'), undefined);
  });

  test('a well-signed body that is not what the gateway writes is refused', () => {
    // Signed with the right key by the gateway's own method, but naming two parts instead of three.
    const codec = new TaskIdCodec(SECRET);
    const tokens = (codec as unknown as { tokens: SignedTokenCodec }).tokens;
    const twoParts = tokens.issue(JSON.stringify(['crm', 'x']), 'alice');
    assert.ok(twoParts.startsWith('gwtask1.'));
    assert.equal(codec.open(twoParts, 'alice'), undefined);
  });
});
