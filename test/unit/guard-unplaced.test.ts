// The guard fails closed: a request about one tool, prompt or resource that reaches it without a placed
// target (an edge built without a router) is refused, never judged "open to every principal".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PolicySet } from '../../policy/allow-list.js';
import { Guard, isNeed } from '../../policy/guard.js';
import { PinStore } from '../../policy/pins.js';
import type { Principal } from '../../policy/principal.js';
import { PLAIN_TARGET } from '../../policy/target.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';

const sam: Principal = { id: 'sam', groups: [], scopes: [], via: 'api-key' };
const denyAll = PolicySet.compile(
  [{ name: 'none', principals: { ids: ['*'] }, allow: {}, deny: { servers: ['a'] }, when: [], pin: false }],
  new Set(['a']),
).grantFor(sam);
const guard = new Guard({
  prefixes: new Map([['a', 'a']]),
  separator: '__',
  ownerOf: () => undefined,
  pins: new PinStore(undefined, silentLog),
});
const request = (method: string, params: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 4,
  method,
  params,
});

test('a named request without a placed target is refused whatever the grant', () => {
  for (const message of [
    request('tools/call', { name: 'a__echo', arguments: {} }),
    request('prompts/get', { name: 'a__greet' }),
    request('resources/read', { uri: 'file:///x' }),
    request('completion/complete', {
      ref: { type: 'ref/prompt', name: 'a__greet' },
      argument: { name: 'n', value: '' },
    }),
  ]) {
    const verdict = guard.judge(PLAIN_TARGET, message, denyAll, sam);
    assert.equal(isNeed(verdict), false, message.method);
    assert.equal(!isNeed(verdict) && verdict.allowed, false, message.method);
    assert.equal(!isNeed(verdict) && verdict.refusal?.id, 4, message.method);
  }
});

test('lists and discovery still go ahead without a target (what they reveal is filtered)', () => {
  for (const method of ['tools/list', 'server/discover']) {
    const verdict = guard.judge(PLAIN_TARGET, request(method, {}), denyAll, sam);
    assert.equal(!isNeed(verdict) && verdict.allowed, true, method);
  }
});
