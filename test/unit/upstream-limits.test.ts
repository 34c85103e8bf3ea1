// The limiter in front of each upstream: slots, the queue and its refusals, cancellation of a waiting
// request, round robin across callers, the fair queue's bookkeeping on its own, and the limits' config
// keys, metrics and readiness report.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, describe, test } from 'node:test';
import type { RequestOptions, Upstream, UpstreamStatus } from '../../bridge/upstream.js';
import { FairQueue, QueueNode } from '../../src/layers/limits/fair-queue.js';
import { LimitedUpstream, type Limits } from '../../src/layers/limits/limited-upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { retryAfterOf } from '../../protocol/overload.js';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import { readiness } from '../../src/ops/health.js';
import { GatewayMetrics } from '../../src/ops/metrics.js';

/** An upstream whose answers the test releases one by one; it records what reached it. */
class HeldUpstream implements Upstream {
  readonly name = 'slow';
  state: UpstreamStatus['state'] = 'ready';
  readonly events = new EventEmitter();
  readonly reached: { message: JsonRpcRequest; options: RequestOptions; answer: () => void }[] = [];

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    return new Promise((resolve) => {
      this.reached.push({
        message,
        options,
        answer: () => resolve({ jsonrpc: '2.0', id: message.id, result: { from: message.id } }),
      });
    });
  }
  status(): UpstreamStatus {
    return {
      state: this.state,
      era: 'modern',
      restarts: 0,
      lastError: this.state === 'ready' ? undefined : 'exited with code 1',
    };
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

/** A cancellation signal the test fires, as the edge's ClientGone would. */
class Gone {
  aborted = false;
  private listeners: (() => void)[] = [];
  addEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.push(listener);
  }
  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }
  fire(): void {
    this.aborted = true;
    for (const listener of this.listeners.splice(0)) listener();
  }
  get listening(): number {
    return this.listeners.length;
  }
}

const call = (id: string | number): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'x' },
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

const made: LimitedUpstream[] = [];
function limited(limits: Partial<Limits> = {}, waits: number[] = []) {
  const inner = new HeldUpstream();
  const upstream = new LimitedUpstream(
    inner,
    { maxInFlight: 2, maxQueued: 3, queueTimeoutMs: 60_000, ...limits },
    (s) => waits.push(s),
  );
  made.push(upstream);
  return { inner, upstream };
}
// Whatever a test left waiting is refused, so no queue timer outlives it.
afterEach(async () => {
  for (const upstream of made.splice(0)) await upstream.close();
});

describe('LimitedUpstream', () => {
  test(
    'takes up to maxInFlight at once; ' + 'the rest wait and go in as slots free, each answer to its own caller',
    async () => {
      const waits: number[] = [];
      const { inner, upstream } = limited({}, waits);
      const answers = [1, 2, 3, 4].map((i) => upstream.request(call(i)));
      await tick();
      assert.deepEqual(
        inner.reached.map((r) => r.message.id),
        [1, 2],
      );
      assert.deepEqual(
        { ...upstream.load(), refused: undefined },
        { inFlight: 2, queued: 2, saturated: true, refused: undefined, abandoned: 0 },
      );
      inner.reached[0]!.answer();
      await tick();
      assert.deepEqual(
        inner.reached.map((r) => r.message.id),
        [1, 2, 3],
      );
      for (const r of inner.reached.slice(1)) r.answer();
      await tick();
      inner.reached[3]!.answer();
      const results = await Promise.all(answers);
      assert.deepEqual(
        results.map((r) => ('result' in r ? r.result.from : r.error.message)),
        [1, 2, 3, 4],
      );
      assert.deepEqual(
        { inFlight: upstream.load().inFlight, queued: upstream.load().queued },
        { inFlight: 0, queued: 0 },
      );
      assert.equal(waits.length, 2, 'only the two that queued are observed');
    },
  );

  test(
    'a full queue refuses at once with -32603 naming the server and setting, ' + 'marked for a 503 with Retry-After',
    async () => {
      const { inner, upstream } = limited({ maxInFlight: 1, maxQueued: 1, queueTimeoutMs: 4_500 });
      void upstream.request(call(1));
      void upstream.request(call(2));
      const refused = await upstream.request(call(3));
      assert.ok('error' in refused);
      assert.equal(refused.id, 3);
      assert.equal(refused.error.code, -32603);
      assert.match(refused.error.message, /slow is at capacity.*servers\.slow\.maxQueued/);
      assert.deepEqual(refused.error.data, {
        server: 'slow',
        reason: 'queue_full',
        setting: 'servers.slow.maxQueued',
        retryAfterSeconds: 5,
      });
      assert.equal(retryAfterOf(refused), 5);
      assert.equal(JSON.stringify(refused).includes('Symbol'), false);
      assert.equal(upstream.load().refused.queue_full, 1);
      assert.equal(inner.reached.length, 1);
    },
  );

  test('maxQueued 0 never queues', async () => {
    const { upstream } = limited({ maxInFlight: 1, maxQueued: 0 });
    void upstream.request(call(1));
    const refused = await upstream.request(call(2));
    assert.ok('error' in refused && retryAfterOf(refused) !== undefined);
  });

  test('a wait past queueTimeoutMs is refused, names the setting, and never reaches the upstream', async () => {
    const { inner, upstream } = limited({ maxInFlight: 1, queueTimeoutMs: 30 });
    void upstream.request(call(1));
    const started = performance.now();
    const refused = await upstream.request(call(2));
    assert.ok(performance.now() - started >= 25, 'not before the timeout');
    assert.ok('error' in refused);
    assert.match(refused.error.message, /no free slot for 30 ms \(servers\.slow\.queueTimeoutMs/);
    assert.equal(retryAfterOf(refused), 1);
    assert.equal(upstream.load().refused.queue_timeout, 1);
    inner.reached[0]!.answer();
    await tick();
    assert.deepEqual(
      inner.reached.map((r) => r.message.id),
      [1],
    );
    assert.equal(upstream.load().inFlight, 0);
  });

  test(
    'while the server restarts, ' + 'a refusal says so (state and last error) instead of asking for more slots',
    async () => {
      const { inner, upstream } = limited({ maxInFlight: 1, maxQueued: 1, queueTimeoutMs: 30 });
      inner.state = 'backing-off';
      void upstream.request(call(1)); // holds the slot, waiting for the restart
      const waiting = upstream.request(call(2));
      const full = await upstream.request(call(3));
      const timedOut = await waiting;
      for (const [refused, reason] of [
        [full, 'queue_full'],
        [timedOut, 'queue_timeout'],
      ] as const) {
        assert.ok('error' in refused);
        assert.match(refused.error.message, /^slow is not ready \(state backing-off; last error: exited with code 1\)/);
        assert.doesNotMatch(refused.error.message, /raise servers\.slow\.max/);
        assert.deepEqual(refused.error.data, { server: 'slow', reason, state: 'backing-off', retryAfterSeconds: 1 });
        assert.equal(retryAfterOf(refused), 1, 'still a 503: the server cannot take it now');
      }
      assert.deepEqual(upstream.load().refused, { queue_full: 1, queue_timeout: 1 });
      inner.reached[0]!.answer();
    },
  );

  test('a waiting client that goes away frees its place at once and never reaches the upstream', async () => {
    const { inner, upstream } = limited({ maxInFlight: 1, maxQueued: 1 });
    void upstream.request(call(1));
    const gone = new Gone();
    const waiting = upstream.request(call(2), { signal: gone });
    assert.equal(gone.listening, 1);
    gone.fire();
    const answer = await waiting;
    assert.ok('error' in answer && /cancelled by the client/.test(answer.error.message));
    assert.equal(retryAfterOf(answer), undefined);
    assert.equal(upstream.load().queued, 0);
    assert.equal(upstream.load().abandoned, 1);
    // Its place is free: another request queues instead of being refused.
    const next = upstream.request(call(3));
    inner.reached[0]!.answer();
    await tick();
    assert.deepEqual(
      inner.reached.map((r) => r.message.id),
      [1, 3],
    );
    inner.reached[1]!.answer();
    assert.ok('result' in (await next));
  });

  test("a request handed over stops listening to the queue's abort (the upstream has its own)", async () => {
    const { inner, upstream } = limited({ maxInFlight: 1 });
    void upstream.request(call(1));
    const gone = new Gone();
    void upstream.request(call(2), { signal: gone });
    inner.reached[0]!.answer();
    await tick();
    assert.equal(inner.reached[1]!.options.signal, gone, "the caller's signal is handed on");
    assert.equal(gone.listening, 0);
  });

  test('queued requests are served round robin across callers: a flood from one does not starve another', async () => {
    const { inner, upstream } = limited({ maxInFlight: 1, maxQueued: 100 });
    void upstream.request(call('first'), { authContext: 'flooder' });
    for (let i = 0; i < 20; i++) void upstream.request(call(`f${i}`), { authContext: 'flooder' });
    void upstream.request(call('q0'), { authContext: 'quiet' });
    void upstream.request(call('q1'), { authContext: 'quiet' });
    void upstream.request(call('a0'));
    for (let served = 0; served < 7; served++) {
      inner.reached[served]!.answer();
      await tick();
    }
    assert.deepEqual(
      inner.reached.map((r) => r.message.id),
      ['first', 'f0', 'q0', 'a0', 'f1', 'q1', 'f2', 'f3'],
    );
  });

  test(
    "a full queue makes room for a caller holding fewer places: the flooder's newest waiting request is refused " +
      'instead',
    async () => {
      const { inner, upstream } = limited({ maxInFlight: 1, maxQueued: 4 });
      void upstream.request(call('first'), { authContext: 'flooder' });
      const flood = [0, 1, 2, 3].map((i) => upstream.request(call(`f${i}`), { authContext: 'flooder' }));
      const ownRefusal = await upstream.request(call('f4'), { authContext: 'flooder' });
      assert.ok(
        'error' in ownRefusal && /at capacity/.test(ownRefusal.error.message),
        'the flooder itself is refused, not let in',
      );
      const quiet = [
        upstream.request(call('q0'), { authContext: 'quiet' }),
        upstream.request(call('q1'), { authContext: 'quiet' }),
      ];
      const evicted = await Promise.all([flood[3]!, flood[2]!]);
      assert.ok(
        evicted.every((r) => 'error' in r && retryAfterOf(r) !== undefined),
        "the flooder's newest two gave their places",
      );
      // Two each now: a third quiet request would leave the flooder fewer than it; refused instead.
      const third = await upstream.request(call('q2'), { authContext: 'quiet' });
      assert.ok('error' in third && retryAfterOf(third) !== undefined);
      for (let served = 0; served < 4; served++) {
        inner.reached[served]!.answer();
        await tick();
      }
      assert.deepEqual(
        inner.reached.map((r) => r.message.id),
        ['first', 'f0', 'q0', 'f1', 'q1'],
      );
      inner.reached[4]!.answer();
      assert.ok((await Promise.all(quiet)).every((r) => 'result' in r));
      assert.equal(upstream.load().refused.queue_full, 4);
    },
  );

  test('close refuses whoever still waits', async () => {
    const { upstream } = limited({ maxInFlight: 1 });
    void upstream.request(call(1));
    const waiting = upstream.request(call(2));
    await upstream.close();
    const answer = await waiting;
    assert.ok('error' in answer && /stopped or replaced/.test(answer.error.message));
    assert.equal(upstream.load().queued, 0);
  });
});

describe('FairQueue', () => {
  const node = (label: string) => Object.assign(new QueueNode(), { label });
  type Labelled = QueueNode & { label: string };

  test('round robin across lanes, FIFO within one; a new lane waits for its turn after those already waiting', () => {
    const queue = new FairQueue<Labelled>();
    for (const [key, label] of [
      ['a', 'a1'],
      ['a', 'a2'],
      ['a', 'a3'],
      ['b', 'b1'],
      ['b', 'b2'],
    ] as const)
      queue.push(key, node(label));
    const out: string[] = [queue.shift()!.label];
    queue.push('c', node('c1'));
    while (queue.size) out.push(queue.shift()!.label);
    assert.deepEqual(out, ['a1', 'b1', 'a2', 'c1', 'b2', 'a3']);
    assert.equal(queue.shift(), undefined);
    assert.equal(queue.callers, 0);
  });

  test('remove takes a node from the middle, and a lane that empties leaves the ring without skipping a turn', () => {
    const queue = new FairQueue<Labelled>();
    const b1 = node('b1');
    queue.push('a', node('a1'));
    queue.push('b', b1);
    queue.push('c', node('c1'));
    queue.push('a', node('a2'));
    assert.equal(queue.shift()!.label, 'a1');
    assert.equal(queue.remove(b1), true);
    assert.equal(queue.remove(b1), false, 'only once');
    assert.deepEqual([queue.shift()!.label, queue.shift()!.label], ['c1', 'a2']);
    assert.equal(queue.size, 0);
    assert.equal(queue.callers, 0);
  });

  test('clear hands back everything and leaves an empty queue', () => {
    const queue = new FairQueue<Labelled>();
    queue.push('a', node('a1'));
    queue.push('b', node('b1'));
    assert.deepEqual(
      queue
        .clear()
        .map((n) => n.label)
        .sort(),
      ['a1', 'b1'],
    );
    assert.equal(queue.size, 0);
    assert.equal(queue.shift(), undefined);
  });
});

describe('limits in the config, the metrics and /readyz', () => {
  const parse = (server: Record<string, unknown>) =>
    parseConfig({ servers: { s: { command: 'x', ...server } } }, 't.yaml', '/', {});

  test('defaults 16 in flight, 64 queued, 10 s; 0 slots is refused with a reason, 0 queued is allowed', () => {
    const s = parse({}).servers.s!;
    assert.deepEqual([s.maxInFlight, s.maxQueued, s.queueTimeoutMs], [16, 64, 10_000]);
    assert.equal(parse({ maxQueued: 0 }).servers.s!.maxQueued, 0);
    assert.throws(
      () => parse({ maxInFlight: 0 }),
      (error: Error) => error instanceof ConfigError && /servers\.s\.maxInFlight: at least 1/.test(error.message),
    );
    assert.throws(() => parse({ queueTimeoutMs: 0 }), ConfigError);
  });

  test('per-upstream in flight, queued, refusals by reason and the queue wait histogram', async () => {
    const load = { inFlight: 8, queued: 3, refused: { queue_full: 5, queue_timeout: 2 } };
    const metrics = new GatewayMetrics({
      upstreams: () => [
        { name: 'slow', state: 'ready', era: 'modern', restarts: 0, load },
        { name: 'plain', state: 'ready', era: 'modern', restarts: 0 },
      ],
      cache: () => ({ hits: 0, misses: 0, invalidations: 0, fetches: 0, storeErrors: 0 }),
      processMetrics: false,
    });
    metrics.queueWaited('slow', 0.3);
    const text = await metrics.render();
    for (const line of [
      'mcp_gateway_upstream_in_flight{server="slow"} 8',
      'mcp_gateway_upstream_queued{server="slow"} 3',
      'mcp_gateway_upstream_refused_total{server="slow",reason="queue_full"} 5',
      'mcp_gateway_upstream_refused_total{server="slow",reason="queue_timeout"} 2',
      'mcp_gateway_upstream_queue_wait_seconds_bucket{le="0.25",server="slow"} 0',
      'mcp_gateway_upstream_queue_wait_seconds_bucket{le="0.5",server="slow"} 1',
      'mcp_gateway_upstream_queue_wait_seconds_count{server="slow"} 1',
    ])
      assert.ok(text.includes(`${line}\n`), `missing ${line}`);
    assert.doesNotMatch(
      text,
      /upstream_(in_flight|queued|refused_total)\{server="plain"/,
      'an upstream without limits reports none',
    );
  });

  test('/readyz names saturated upstreams and stays ready', () => {
    const status: UpstreamStatus = { state: 'ready', era: 'modern', restarts: 0, lastError: undefined };
    const { ready, body } = readiness(
      [
        { name: 'slow', required: true, status, saturated: true },
        { name: 'fast', required: true, status, saturated: false },
      ],
      false,
    );
    assert.equal(ready, true);
    assert.deepEqual(body, { status: 'ready', upstreams: { slow: 'ready', fast: 'ready' }, saturated: ['slow'] });
    assert.deepEqual(readiness([{ name: 'fast', required: true, status }], false).body, {
      status: 'ready',
      upstreams: { fast: 'ready' },
    });
  });
});
