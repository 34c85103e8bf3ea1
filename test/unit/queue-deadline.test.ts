// queueTimeoutMs is a bound on the wait, not a timer that may lose a race: on a busy event loop a slot can
// free up (an answer read in the poll phase) after a waiting request's deadline but before the timers phase
// runs its overdue timer. The overload e2e test saw that as a queue wait past queueTimeoutMs + 1 s in
// mcp_gateway_upstream_queue_wait_seconds (one observation outside its le="5" bucket, under load).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Upstream, UpstreamStatus } from '../../bridge/upstream.js';
import { LimitedUpstream } from '../../src/layers/limits/limited-upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';

/** An upstream that answers each request when the test says so; it records which ids reached it. */
class HeldUpstream implements Upstream {
  readonly name = 'slow';
  readonly events = new EventEmitter();
  readonly reached: (string | number)[] = [];
  private readonly answers: (() => void)[] = [];

  request(message: JsonRpcRequest): Promise<JsonRpcResponse> {
    this.reached.push(message.id as string | number);
    return new Promise((resolve) => this.answers.push(() => resolve({ jsonrpc: '2.0', id: message.id, result: {} })));
  }
  answer(): void {
    this.answers.shift()!();
  }
  status(): UpstreamStatus {
    return { state: 'ready', era: 'modern', restarts: 0, lastError: undefined };
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

const call = (id: string): JsonRpcRequest => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x' } });

/** Keeps the event loop busy for `ms` without yielding, as a burst of parsing or a long GC would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test(
  'a slot that frees after a waiting request passed queueTimeoutMs refuses it, ' + 'though its timer has not run yet',
  async () => {
    const inner = new HeldUpstream();
    const waits: number[] = [];
    const upstream = new LimitedUpstream(inner, { maxInFlight: 1, maxQueued: 2, queueTimeoutMs: 50 }, (seconds) =>
      waits.push(seconds),
    );
    const first = upstream.request(call('first'));
    const late = upstream.request(call('late'));
    block(80);
    // The slot frees in a microtask of this same turn: the late request's timer cannot have run.
    inner.answer();
    await first;
    assert.deepEqual(
      inner.reached,
      ['first'],
      'the late request was handed to the server after waiting past queueTimeoutMs',
    );
    const refused = await late;
    assert.ok('error' in refused);
    assert.deepEqual(refused.error.data, {
      server: 'slow',
      reason: 'queue_timeout',
      setting: 'servers.slow.queueTimeoutMs',
      retryAfterSeconds: 1,
    });
    assert.deepEqual(waits, [], 'no wait is observed for a refused request');
    assert.deepEqual(
      { ...upstream.load(), refused: upstream.load().refused.queue_timeout },
      { inFlight: 0, queued: 0, saturated: false, refused: 1, abandoned: 0 },
    );
    await upstream.close();
  },
);

test('overdue requests are refused until one still within its wait is found, and that one is served', async () => {
  const inner = new HeldUpstream();
  const waits: number[] = [];
  const upstream = new LimitedUpstream(inner, { maxInFlight: 1, maxQueued: 3, queueTimeoutMs: 50 }, (seconds) =>
    waits.push(seconds),
  );
  const first = upstream.request(call('first'));
  const overdue = [upstream.request(call('a')), upstream.request(call('b'))];
  block(80);
  const fresh = upstream.request(call('fresh'));
  inner.answer();
  await first;
  assert.deepEqual(inner.reached, ['first', 'fresh'], 'the overdue requests were handed to the server');
  for (const answer of await Promise.all(overdue))
    assert.ok('error' in answer && (answer.error.data as { reason?: string }).reason === 'queue_timeout');
  assert.equal(waits.length, 1);
  assert.ok(waits[0]! < 0.05, `the served request waited ${waits[0]} s`);
  inner.answer();
  assert.ok('result' in (await fresh));
  assert.equal(upstream.load().refused.queue_timeout, 2);
  await upstream.close();
});
