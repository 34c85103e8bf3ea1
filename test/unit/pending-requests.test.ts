import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { PendingRequests } from '../../bridge/pending-requests.js';
import type { JsonRpcFailure, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';

/** A fake connection that snapshots each message as it would be serialised at send time. */
function harness() {
  const sent: any[] = [];
  const answered: { method: string; id: unknown }[] = [];
  const pending = new PendingRequests(
    (message) => sent.push(JSON.parse(JSON.stringify(message))),
    (method, response) => answered.push({ method, id: response.id }),
    (method, ms) => `${method} took longer than ${ms} ms`,
  );
  return { pending, sent, answered };
}

const LONG = { timeoutMs: 10_000 };

function call(id: string | number, progressToken?: string | number): JsonRpcRequest {
  const _meta: Record<string, unknown> = { 'com.example/x': 1 };
  if (progressToken !== undefined) _meta.progressToken = progressToken;
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't', arguments: {}, _meta } };
}

const success = (id: number, result: Record<string, unknown> = {}): JsonRpcResponse => ({ jsonrpc: '2.0', id, result });

test('dispatch sends the gateway id and token, and gives the caller its object back as it came', async () => {
  const { pending, sent } = harness();
  const message = call('caller-1', 'tok-A');
  const before = structuredClone(message);
  const done = pending.dispatch(message, LONG);
  assert.equal(sent.length, 1);
  const gatewayId = sent[0].id;
  assert.equal(typeof gatewayId, 'number');
  assert.equal(sent[0].params._meta.progressToken, gatewayId);
  assert.equal(sent[0].params._meta['com.example/x'], 1);
  assert.equal(sent[0].method, 'tools/call');
  assert.deepEqual(message, before);
  assert.equal(pending.size, 1);
  pending.answer(success(gatewayId));
  await done;
});

test('dispatch without a progressToken does not invent one', async () => {
  const { pending, sent } = harness();
  const done = pending.dispatch(call(1), LONG);
  assert.equal('progressToken' in sent[0].params._meta, false);
  pending.answer(success(sent[0].id));
  await done;
});

test('prepare sees the message with the gateway id, and what it returns is what is sent', async () => {
  const { pending, sent } = harness();
  let seenId: unknown;
  const message = call('c');
  const done = pending.dispatch(message, {
    ...LONG,
    prepare: (m) => {
      seenId = m.id;
      return { ...m, params: { ...m.params, extra: true } };
    },
  });
  assert.equal(seenId, sent[0].id);
  assert.equal(sent[0].params.extra, true);
  assert.equal('extra' in message.params!, false, "the caller's message is untouched");
  pending.answer(success(sent[0].id));
  await done;
});

test('answer() restores the caller id, settles the promise, and hands the gateway id to onAnswer', async () => {
  const { pending, sent, answered } = harness();
  const done = pending.dispatch(call('caller-7'), LONG);
  const gatewayId = sent[0].id;
  assert.equal(pending.answer(success(gatewayId, { content: [{ type: 'text', text: 'hi' }] })), true);
  const response = await done;
  assert.equal(response.id, 'caller-7');
  assert.deepEqual((response as any).result, { content: [{ type: 'text', text: 'hi' }] });
  assert.deepEqual(answered, [{ method: 'tools/call', id: gatewayId }]);
  assert.equal(pending.size, 0);
});

test('progress() restores the caller token and calls onNotification', async () => {
  const { pending, sent } = harness();
  const notes: JsonRpcNotification[] = [];
  const done = pending.dispatch(call('c', 'tok-A'), { ...LONG, onNotification: (n) => notes.push(n) });
  const gatewayId = sent[0].id;
  const routed = pending.progress({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: gatewayId, progress: 1, total: 2 },
  });
  assert.equal(routed, true);
  assert.equal(notes.length, 1);
  assert.deepEqual(notes[0]!.params, { progressToken: 'tok-A', progress: 1, total: 2 });
  pending.answer(success(gatewayId));
  await done;
});

test('progress() for an unknown token, or a request that asked for none, is not routed', async () => {
  const { pending, sent } = harness();
  const notes: JsonRpcNotification[] = [];
  const done = pending.dispatch(call('c'), { ...LONG, onNotification: (n) => notes.push(n) });
  const gatewayId = sent[0].id;
  assert.equal(
    pending.progress({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: gatewayId, progress: 1 },
    }),
    false,
  );
  assert.equal(
    pending.progress({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 999, progress: 1 } }),
    false,
  );
  assert.equal(
    pending.progress({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 'tok-A', progress: 1 },
    }),
    false,
  );
  assert.deepEqual(notes, []);
  pending.answer(success(gatewayId));
  await done;
});

test('two concurrent dispatches with the same caller id get distinct gateway ids and their own answers', async () => {
  const { pending, sent } = harness();
  const notesA: JsonRpcNotification[] = [];
  const notesB: JsonRpcNotification[] = [];
  const a = pending.dispatch(call(1, 'same'), { ...LONG, onNotification: (n) => notesA.push(n) });
  const b = pending.dispatch(call(1, 'same'), { ...LONG, onNotification: (n) => notesB.push(n) });
  const [idA, idB] = [sent[0].id, sent[1].id];
  assert.notEqual(idA, idB);
  assert.equal(pending.size, 2);
  pending.progress({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: idB, progress: 5 } });
  assert.equal(notesA.length, 0);
  assert.equal(notesB.length, 1);
  // Answer in reverse order.
  pending.answer(success(idB, { who: 'B' }));
  pending.answer(success(idA, { who: 'A' }));
  const [ra, rb] = await Promise.all([a, b]);
  assert.deepEqual([ra.id, (ra as any).result.who], [1, 'A']);
  assert.deepEqual([rb.id, (rb as any).result.who], [1, 'B']);
  assert.equal(pending.size, 0);
});

test('timeout → error response with the given message and notifications/cancelled for the gateway id', async () => {
  const { pending, sent } = harness();
  const response = (await pending.dispatch(call('slow'), { timeoutMs: 20 })) as JsonRpcFailure;
  assert.equal(response.id, 'slow');
  assert.equal(response.error.message, 'tools/call took longer than 20 ms');
  assert.equal(typeof response.error.code, 'number');
  const gatewayId = sent[0].id;
  assert.equal(sent.length, 2);
  assert.equal(sent[1].method, 'notifications/cancelled');
  assert.equal(sent[1].params.requestId, gatewayId);
  assert.equal('id' in sent[1], false);
  assert.equal(pending.size, 0);
});

test('a late answer after the timeout → answer() returns false', async () => {
  const { pending, sent, answered } = harness();
  await pending.dispatch(call('slow'), { timeoutMs: 10 });
  assert.equal(pending.answer(success(sent[0].id)), false);
  assert.deepEqual(answered, []);
});

test('abort via AbortSignal → notifications/cancelled sent and an error response', async () => {
  const { pending, sent } = harness();
  const controller = new AbortController();
  const done = pending.dispatch(call('c-abort'), { ...LONG, signal: controller.signal });
  const gatewayId = sent[0].id;
  controller.abort();
  const response = (await done) as JsonRpcFailure;
  assert.equal(response.id, 'c-abort');
  assert.ok(response.error, 'an error response');
  assert.match(response.error.message, /cancel/i);
  assert.equal(sent.length, 2);
  assert.deepEqual([sent[1].method, sent[1].params.requestId], ['notifications/cancelled', gatewayId]);
  assert.equal(pending.size, 0);
  assert.equal(pending.answer(success(gatewayId)), false);
});

test('an already-aborted signal → error response, nothing sent, nothing pending', async () => {
  const { pending, sent } = harness();
  const response = (await pending.dispatch(call('c'), { ...LONG, signal: AbortSignal.abort() })) as JsonRpcFailure;
  assert.equal(response.id, 'c');
  assert.ok(response.error);
  assert.deepEqual(sent, []);
  assert.equal(pending.size, 0);
});

test('after an answer, neither the timer nor an abort sends a cancellation', async () => {
  const { pending, sent } = harness();
  const controller = new AbortController();
  const done = pending.dispatch(call('c'), { timeoutMs: 15, signal: controller.signal });
  pending.answer(success(sent[0].id));
  await done;
  controller.abort();
  await sleep(40);
  assert.equal(sent.length, 1);
});

test('failAll resolves every request with an error naming its method, and size returns to 0', async () => {
  const { pending } = harness();
  const a = pending.dispatch(call('a'), LONG);
  const b = pending.dispatch({ jsonrpc: '2.0', id: 'b', method: 'tools/list', params: {} }, LONG);
  assert.equal(pending.size, 2);
  pending.failAll((method) => `server died during ${method}`, { exitCode: 1 });
  assert.equal(pending.size, 0);
  const [ra, rb] = (await Promise.all([a, b])) as JsonRpcFailure[];
  assert.deepEqual(
    [ra!.id, ra!.error.message, ra!.error.data],
    ['a', 'server died during tools/call', { exitCode: 1 }],
  );
  assert.deepEqual([rb!.id, rb!.error.message], ['b', 'server died during tools/list']);
});

test('fail(id) fails one request only', async () => {
  const { pending, sent } = harness();
  const a = pending.dispatch(call('a'), LONG);
  const b = pending.dispatch(call('b'), LONG);
  assert.equal(pending.fail(sent[0].id, 'line too long', { bytes: 99 }), true);
  assert.equal(pending.fail(sent[0].id, 'again'), false);
  const ra = (await a) as JsonRpcFailure;
  assert.deepEqual([ra.id, ra.error.message, ra.error.data], ['a', 'line too long', { bytes: 99 }]);
  assert.equal(pending.size, 1);
  pending.answer(success(sent[1].id));
  assert.equal((await b).id, 'b');
});

test('answer() with an unknown, string, null or absent id returns false', () => {
  const { pending } = harness();
  assert.equal(pending.answer(success(12345)), false);
  assert.equal(pending.answer({ jsonrpc: '2.0', id: '1', result: {} }), false);
  assert.equal(
    pending.answer({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse' },
    } as unknown as JsonRpcResponse),
    false,
  );
  assert.equal(
    pending.answer({ jsonrpc: '2.0', error: { code: -32700, message: 'parse' } } as unknown as JsonRpcResponse),
    false,
  );
});

test('an onAnswer hook that throws still settles the caller', async () => {
  const pending = new PendingRequests(
    () => {},
    () => {
      throw new Error('adapter bug');
    },
  );
  const done = pending.dispatch(call('x'), LONG);
  assert.throws(() => pending.answer(success(1)), /adapter bug/);
  assert.equal((await done).id, 'x');
  assert.equal(pending.size, 0);
});

test(
  'waitingForAnswers counts requests awaiting an answer, ' + 'not listen streams, and falls back as they end',
  async () => {
    const { pending, sent } = harness();
    const listen: JsonRpcRequest = { jsonrpc: '2.0', id: 'l', method: 'subscriptions/listen', params: { _meta: {} } };
    void pending.dispatch(listen, { timeoutMs: 0 });
    assert.equal(pending.waitingForAnswers, 0, 'an open listen stream is not an answer due');
    const first = pending.dispatch(call('a'), LONG);
    assert.equal(pending.waitingForAnswers, 1, 'a lone request');
    const controller = new AbortController();
    const second = pending.dispatch(call('b'), { ...LONG, signal: controller.signal });
    const third = pending.dispatch(call('c'), { timeoutMs: 20 });
    assert.equal(pending.waitingForAnswers, 3);
    pending.answer(success(sent[1].id));
    await first;
    controller.abort();
    await second;
    await third; // timed out
    assert.equal(pending.waitingForAnswers, 0, 'answered, cancelled and timed-out requests are no longer due');
    assert.equal(pending.size, 1, 'the listen stream is still open');
    pending.answer(success(sent[1].id));
    assert.equal(pending.waitingForAnswers, 0, 'a late second answer does not count twice');
  },
);

// Deadlines: each request its own, whatever order they were sent in; a paused clock; no timer left behind.
test(
  'requests with different timeouts each expire at their own deadline, ' + 'an earlier one sent later included',
  async () => {
    const { pending } = harness();
    const started = performance.now();
    const ended: Record<string, number> = {};
    const settle = (id: string, timeoutMs: number) =>
      pending.dispatch(call(id), { timeoutMs }).then((response) => {
        ended[id] = performance.now() - started;
        return response as JsonRpcFailure;
      });
    const late = settle('late', 400);
    const early = settle('early', 40); // sent second, due first: the clock set for 'late' must not hold it
    assert.equal((await early).error.message, 'tools/call took longer than 40 ms');
    // Lower bounds and order only: a timer never fires early, but a loaded machine can fire it late.
    assert.ok(ended.early! >= 35, `early ended after ${ended.early} ms`);
    assert.equal(ended.late, undefined, 'early ended first, although late was set first');
    assert.equal(pending.size, 1, 'the later deadline is still pending');
    assert.equal((await late).error.message, 'tools/call took longer than 400 ms');
    assert.ok(ended.late! >= 395, `late ended after ${ended.late} ms`);
  },
);

test('a paused clock does not run out; resumed, it runs its new timeout in full', async () => {
  const { pending, sent } = harness();
  const started = performance.now();
  const answer = pending.dispatch(call('asks'), { timeoutMs: 30 });
  const id = sent[0].id;
  pending.pauseClock(id);
  await sleep(120);
  assert.equal(pending.size, 1, 'paused past its timeout, still pending');
  pending.resumeClock(id, 60);
  const response = (await answer) as JsonRpcFailure;
  assert.equal(response.error.message, 'tools/call took longer than 60 ms');
  assert.ok(performance.now() - started >= 175, 'the resumed clock ran its 60 ms from the resume');
});

test('no timer is left behind once nothing is pending', async () => {
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = timers();
  const { pending, sent } = harness();
  const first = pending.dispatch(call(1), { timeoutMs: 60_000 });
  const second = pending.dispatch(call(2), { timeoutMs: 30_000 });
  assert.ok(timers() > before, 'a deadline sets the clock');
  pending.answer(success(sent[0].id));
  pending.answer(success(sent[1].id));
  await Promise.all([first, second]);
  assert.equal(timers(), before, 'answered, nothing keeps the process awake');
});
