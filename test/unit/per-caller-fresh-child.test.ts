// A caller's child admitted a moment ago is theirs until their call reaches it: a newcomer admitted in that
// moment (maxCallers full) must not retire it as "the least recently used idle child". Found by
// bench/identity-load.ts, where 5 of 8,000 calls answered "Upstream 'github' is stopped (the gateway is shutting
// down or reloading)" while the gateway ran on. And one let go while it waited for room (its caller's token
// refreshed) held that room for ever: its stop waited on its call, which waited for the room (a 300 s hang there).
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

const LET_GO = "a child let go while it waited for room frees that room; its caller's call goes to their next child";
test(LET_GO, async () => {
  let openGate: () => void = () => {};
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const versions = new Map<string, number>();
  let gone: (principal: string | undefined) => void = () => {};
  const spawn = (env: Readonly<Record<string, string>>): Upstream => {
    const child = stubChild(env);
    const close = child.close;
    child.close = async () => {
      await gate; // every child takes its time to exit, until the test lets them
      await close();
    };
    return child;
  };
  const upstream = new PerCallerUpstream('own', spawn, { idleMs: 60_000, maxCallers: 1 }, silentLog, {
    admit: async (caller) => {
      const version = versions.get(caller.principal) ?? 1;
      return { env: { WHO: `${caller.principal}-v${version}` }, version };
    },
    version: (principal) => versions.get(principal) ?? 1,
    onGone: (listener) => {
      gone = listener;
    },
  });
  await upstream.start();
  let id = 0;
  const call = (principal: string) =>
    upstream.request(
      { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'who', arguments: {} } },
      { caller: { principal } },
    );
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const text = (answer: JsonRpcResponse) => (answer as any).result?.content?.[0]?.text;

  assert.equal(text(await call('alice')), 'alice-v1');
  // Bob takes alice's place (maxCallers 1): his child waits for hers to exit.
  const bob = call('bob');
  await settle();
  assert.deepEqual(upstream.counts(), { running: 1, retired: 1 });
  // Bob's values change (a refreshed token) while his child still waits: it is let go.
  versions.set('bob', 2);
  gone('bob');
  await settle();
  // Carol arrives and waits for room too; then the children stopping exit.
  const carol = call('carol');
  await settle();
  openGate();
  const hung = new Promise<string>((resolve) => setTimeout(() => resolve('no answer within 10 s'), 10_000).unref());
  const [bobs, carols] = await Promise.all([Promise.race([bob, hung]), Promise.race([carol, hung])]);
  assert.equal(text(carols as JsonRpcResponse), 'carol-v1', JSON.stringify(carols));
  // Bob's call is answered: by a child with his new values, or told the one slot is busy (names maxCallers).
  const bobsAnswer = bobs as JsonRpcResponse;
  assert.ok(
    text(bobsAnswer) === 'bob-v2' || (bobsAnswer as any).error?.data?.reason === 'callers_full',
    JSON.stringify(bobs),
  );
  await upstream.close();
});
