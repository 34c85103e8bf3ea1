// Attack (#35 item 6): a `when:` condition must never decide on a rounded number while the server receives
// the exact digits. On Node 22 and later the gateway passes a number no double holds exactly through as
// written; a condition then compares an integer exactly (a CEL int) and refuses the call when it reads any
// other such number. On Node 20 the parse rounds and the server is sent the rounded number too, so the
// condition decides on what the server gets. Each case checks the decision against the text the server is
// sent (JSON.stringify of the arguments, as every upstream writes them), compared here with BigInt.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileCondition } from '../../policy/conditions.js';
import type { Principal } from '../../policy/principal.js';
import { KEEPS_EXACT_NUMBERS, parseJson } from '../../protocol/exact-json.js';

const principal: Principal = { id: 'p', groups: [], scopes: [], via: 'api-key' };
const judge = (expr: string, argsText: string) => {
  const args = parseJson(argsText);
  return { verdict: compileCondition(expr)({ args, principal, tool: 't', server: 's' }), sent: JSON.stringify(args) };
};
/** The integer the server is sent for `key`, read from the sent text exactly. */
const sentInteger = (sent: string, key: string) => BigInt(new RegExp(`"${key}":(-?\\d+)`).exec(sent)![1]!);

describe('CEL conditions read the number the server gets, or refuse', () => {
  test(`args.limit <= 100 does not pass 100.000000000000001 (exact numbers kept here: ${KEEPS_EXACT_NUMBERS})`, () => {
    assert.deepEqual(judge('args.limit <= 100', '{"limit":100}').verdict, { ok: true }, 'the control: 100');
    assert.deepEqual(
      judge('args.limit <= 100', '{"limit":101}').verdict,
      { ok: false, why: 'it is false' },
      'the control: 101',
    );
    const { verdict, sent } = judge('args.limit <= 100', '{"limit":100.000000000000001}');
    if (KEEPS_EXACT_NUMBERS) {
      assert.equal(sent, '{"limit":100.000000000000001}', 'the server gets the digits as written');
      assert.equal(verdict.ok, false, 'refused rather than compared as 100');
      assert.match(
        !verdict.ok ? verdict.why : '',
        /args\.limit is 100\.000000000000001, a number no double holds exactly/,
      );
    } else {
      assert.equal(sent, '{"limit":100}', 'Node 20: the server gets the rounded number');
      assert.deepEqual(verdict, { ok: true }, 'and the condition judged that same number');
    }
    for (const expr of [
      'args.limit != 100',
      'has(args.limit) && args.limit > 0',
      'args.limit == 100 || args.limit != 100',
    ]) {
      const { verdict: v, sent: s } = judge(expr, '{"limit":100.000000000000001}');
      if (KEEPS_EXACT_NUMBERS) assert.equal(v.ok, false, `${expr}: reading it refuses`);
      else assert.equal(s, '{"limit":100}');
    }
  });

  test('ids near 1.2e18 do not compare equal within ±128', () => {
    for (const offset of [-128n, -1n, 1n, 64n, 127n, 128n]) {
      const id = 1_200_000_000_000_000_000n + offset;
      const { verdict, sent } = judge('args.id == 1200000000000000000', `{"id":${id}}`);
      const received = sentInteger(sent, 'id');
      if (KEEPS_EXACT_NUMBERS) assert.equal(received, id, 'the server gets the id as written');
      assert.equal(
        verdict.ok,
        received === 1_200_000_000_000_000_000n,
        `id ${id}: decided on ${received}, what the server gets`,
      );
      const exact = judge(`args.id == ${id}`, `{"id":${id}}`);
      assert.equal(exact.verdict.ok, sentInteger(exact.sent, 'id') === id, `id ${id} against itself`);
      const inList = judge('args.ids.exists(i, i == 1200000000000000000)', `{"ids":[${id}]}`);
      assert.equal(
        inList.verdict.ok,
        BigInt(/\[(-?\d+)\]/.exec(inList.sent)![1]!) === 1_200_000_000_000_000_000n,
        `id ${id} in a list`,
      );
    }
  });

  test('an integer beyond int64 compares exactly too; a number the condition does not read refuses nothing', () => {
    const max = '18446744073709551615';
    const { verdict, sent } = judge(`args.n == ${max}u`, `{"n":${max}}`);
    assert.equal(verdict.ok, sentInteger(sent, 'n') === BigInt(max));
    if (KEEPS_EXACT_NUMBERS) assert.deepEqual(verdict, { ok: true });
    const below = judge('args.n < 18446744073709551615u', '{"n":18446744073709551614}');
    assert.equal(below.verdict.ok, sentInteger(below.sent, 'n') < BigInt(max));
    assert.deepEqual(judge('args.limit <= 100', '{"limit":5,"note":100.000000000000001,"big":[1e400]}').verdict, {
      ok: true,
    });
  });
});
