// The guard (policy/guard.ts) over placed targets: it never looks anything up, says when it needs the lists
// read again (only for what policy lets through, so a refusal costs no lookup), and checks a pinned tool
// against the definition its server gave when last asked (test/unit/pin-freshness.test.ts: how recently).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PolicySet } from '../../policy/allow-list.js';
import { Guard, isNeed } from '../../policy/guard.js';
import { PinStore, toolDigest } from '../../policy/pins.js';
import type { Principal } from '../../policy/principal.js';
import type { PolicySetting } from '../../policy/settings.js';
import type { NamedTarget, UriTarget } from '../../policy/target.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';

const sam: Principal = { id: 'sam', groups: [], scopes: [], via: 'api-key' };
const policy = (name: string, rest: Partial<PolicySetting>): PolicySetting => ({
  name,
  principals: { ids: ['*'] },
  allow: {},
  deny: {},
  when: [],
  pin: false,
  ...rest,
});
const grantOf = (...policies: PolicySetting[]) => PolicySet.compile(policies, new Set(['a', 'b'])).grantFor(sam);
const guardWith = (pins = new PinStore(undefined, silentLog)) =>
  new Guard({
    prefixes: new Map([
      ['a', 'a'],
      ['b', 'b'],
    ]),
    separator: '__',
    ownerOf: () => undefined,
    pins,
  });
const call = (name: string): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 9,
  method: 'tools/call',
  params: { name, arguments: {} },
});

function tool(name: string, listed?: NamedTarget['listed'], confirmed = false): NamedTarget {
  return {
    kind: 'tools',
    given: name,
    endpoint: undefined,
    server: name.split('__')[0],
    publicName: name,
    listed,
    confirmed,
  };
}

describe('Guard.judge', () => {
  const grant = grantOf(policy('p', { allow: { servers: ['a'] }, deny: { tools: ['a__crash'] } }));

  test('an allowed name nobody listed needs the routes; a denied one is refused without', () => {
    const guard = guardWith();
    assert.deepEqual(guard.judge(tool('a__late'), call('a__late'), grant, sam), { need: 'routes' });
    const denied = guard.judge(tool('a__crash'), call('a__crash'), grant, sam);
    assert.equal(isNeed(denied), false);
    assert.deepEqual(!isNeed(denied) && denied.refusal, {
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32602, message: 'Unknown tool: a__crash' },
    });
    const gone = guard.judge(tool('a__late', undefined, true), call('a__late'), grant, sam);
    assert.deepEqual(!isNeed(gone) && gone.refusal, {
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32602, message: 'Unknown tool: a__late' },
    });
  });

  test('a listed, allowed tool goes ahead', () => {
    assert.deepEqual(guardWith().judge(tool('a__echo', { server: 'a', name: 'echo' }), call('a__echo'), grant, sam), {
      allowed: true,
      rule: 'policy p',
      target: 'a__echo',
    });
  });

  test(
    'a pinned tool is checked against the definition its server gives when asked, ' + 'not the one the router kept',
    () => {
      const pins = new PinStore(undefined, silentLog);
      const guard = guardWith(pins);
      const pinned = grantOf(policy('pinned', { allow: { servers: ['a'] }, pin: true }));
      const v1 = { name: 'echo', description: 'v1' };
      const target = tool('a__echo', { server: 'a', name: 'echo', definition: { ...v1, name: 'a__echo' } });
      assert.deepEqual(guard.judge(target, call('a__echo'), pinned, sam), { need: 'definition' });
      guard.definitionsRead('a', [v1], pinned, Date.now());
      assert.equal((guard.judge(target, call('a__echo'), pinned, sam, true) as { allowed: boolean }).allowed, true);
      assert.deepEqual(pins.snapshot(), { a__echo: toolDigest(v1) });
      // Not in what the server gave: refused as unknown.
      const other = guard.judge(tool('a__other', { server: 'a', name: 'other' }), call('a__other'), pinned, sam, true);
      assert.deepEqual(!isNeed(other) && other.refusal, {
        jsonrpc: '2.0',
        id: 9,
        error: { code: -32602, message: 'Unknown tool: a__other' },
      });
      // A changed definition (a fresh guard: nothing remembered from lists) is refused as unknown.
      const fresh = guardWith(pins);
      fresh.definitionsRead('a', [{ ...v1, description: 'v2' }], pinned, Date.now());
      const changed = fresh.judge(target, call('a__echo'), pinned, sam);
      assert.equal(!isNeed(changed) && changed.rule, 'pinned tool changed upstream');
    },
  );

  test('on /mcp a URI no server lets this caller read is refused before any lookup', () => {
    const docs = grantOf(policy('d', { allow: { servers: ['a'] }, deny: { resources: ['secret://**'] } }));
    const read: JsonRpcRequest = { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'secret://x' } };
    const target: UriTarget = {
      kind: 'resources',
      uri: 'secret://x',
      endpoint: undefined,
      owner: undefined,
      ambiguous: undefined,
      confirmed: false,
    };
    const verdict = guardWith().judge(target, read, docs, sam);
    assert.deepEqual(!isNeed(verdict) && verdict.refusal, {
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'Resource not found: secret://x', data: { uri: 'secret://x' } },
    });
    // One some server may serve: the owner is looked for first, whether or not it exists.
    const open: UriTarget = { ...target, uri: 'file:///x' };
    assert.deepEqual(guardWith().judge(open, { ...read, params: { uri: 'file:///x' } }, docs, sam), { need: 'routes' });
  });
});
