// A caller's child admitted a moment ago is theirs until their call reaches it: a newcomer admitted in that
// moment (maxCallers full) must not retire it as "the least recently used idle child". Found by
// bench/identity-load.ts, where 5 of 8,000 calls answered "Upstream 'github' is stopped (the gateway is shutting
// down or reloading)" while the gateway ran on.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { type Admission, PerCallerUpstream } from '../../src/layers/per-caller/per-caller-upstream.js';

/** A child that answers with its caller's env, and refuses once closed (as a stopped stdio child does). */
function stubChild(env: Readonly<Record<string, string>>): Upstream {
  let closed = false;
  return {
    name: 'own',
    events: new EventEmitter(),
    status: () => ({ state: closed ? 'stopped' : 'ready', era: 'modern', restarts: 0, lastError: undefined }),
    start: async () => {},
    close: async () => {
      closed = true;
    },
    request: async (message: JsonRpcRequest): Promise<JsonRpcResponse> =>
      closed
        ? { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: "Upstream 'own' is stopped" } }
        : { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: env.WHO ?? '' }] } },
  };
}

test('a child admitted for a caller is not retired to make room before their call reaches it', async () => {
  const waiting = new Map<string, (admission: Admission) => void>();
  const upstream = new PerCallerUpstream('own', stubChild, { idleMs: 60_000, maxCallers: 1 }, silentLog, {
    admit: (caller) => new Promise((resolve) => waiting.set(caller.principal, resolve)),
  });
  await upstream.start();
  const call = (principal: string, id: number) =>
    upstream.request(
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'who', arguments: {} } },
      { caller: { principal } },
    );
  const bob = call('bob', 1);
  const carol = call('carol', 2);
  // Both admissions finish together: bob's takes the one slot; carol's, a microtask behind, finds it full.
  waiting.get('bob')!({ env: { WHO: 'bob' } });
  waiting.get('carol')!({ env: { WHO: 'carol' } });
  const answers = await Promise.all([bob, carol]);
  assert.deepEqual((answers[0] as any).result?.content, [{ type: 'text', text: 'bob' }], JSON.stringify(answers[0]));
  // Carol waits for room (a 503 that names maxCallers), she does not take bob's child from under his call.
  assert.equal((answers[1] as any).error?.data?.reason, 'callers_full', JSON.stringify(answers[1]));
  await upstream.close();
});
