// The pool in front of N children (bridge/pool/): which child a request goes to, what happens when children
// are down, list changes passed on once, input_required retries back to the child that asked, listen streams
// per child. The children here are scripted Upstreams, so every choice can be observed exactly.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { PooledUpstream } from '../../bridge/pool/pooled-upstream.js';
import type { RequestOptions, Upstream, UpstreamState, UpstreamStatus } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';

/** A child whose answers the test gives by hand; requests it got wait in `waiting`. */
class ScriptedChild implements Upstream {
  readonly events = new EventEmitter();
  readonly waiting: {
    message: JsonRpcRequest;
    options: RequestOptions;
    answer: (response: JsonRpcResponse) => void;
  }[] = [];
  readonly got: JsonRpcRequest[] = [];
  private state: UpstreamState = 'ready';

  constructor(
    readonly name: string,
    readonly index: number,
    private readonly refusal?: string,
  ) {}

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    this.got.push(structuredClone(message));
    if (this.refusal)
      return Promise.resolve({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: this.refusal } });
    return new Promise((answer) => this.waiting.push({ message, options, answer }));
  }

  /** Answers the oldest waiting request with `result` (default: which child answered). */
  answerNext(result: Record<string, unknown> = { child: this.index }): void {
    const next = this.waiting.shift();
    assert.ok(next, `child ${this.index} has a request to answer`);
    next.answer({ jsonrpc: '2.0', id: next.message.id, result });
  }

  setState(state: UpstreamState): void {
    this.state = state;
    this.events.emit('state', state);
  }

  status(): UpstreamStatus {
    return {
      state: this.state,
      era: 'modern',
      restarts: 0,
      lastError: this.state === 'ready' ? undefined : `child ${this.index} down`,
    };
  }

  async start(): Promise<void> {}
  async close(): Promise<void> {
    this.setState('stopped');
  }
}

function pool(
  count: number,
  refusal?: (index: number) => string | undefined,
): { pool: PooledUpstream; children: ScriptedChild[] } {
  const children = Array.from({ length: count }, (_, index) => new ScriptedChild('srv', index, refusal?.(index)));
  return { pool: new PooledUpstream('srv', children, silentLog), children };
}

let nextId = 1;
const call = (name = 'work', params: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name, ...params },
});
const sentTo = (children: ScriptedChild[]): number[] => children.map((child) => child.waiting.length);

test('a request goes to the child with the fewest requests outstanding', () => {
  const { pool: p, children } = pool(3);
  void p.request(call());
  void p.request(call());
  void p.request(call());
  assert.deepEqual(sentTo(children), [1, 1, 1], 'three idle children take one each');
  children[1]!.answerNext();
  return new Promise<void>((done) => setImmediate(done)).then(() => {
    void p.request(call());
    assert.deepEqual(sentTo(children), [1, 1, 1], 'the freed child (1) gets the next one, not the busy ones');
    assert.equal(children[1]!.got.length, 2);
  });
});

test('ties are taken in turn, not always by the first child', async () => {
  const { pool: p, children } = pool(3);
  const order: number[] = [];
  for (let round = 0; round < 6; round++) {
    const answered = p.request(call());
    const child = children.find((c) => c.waiting.length > 0)!;
    order.push(child.index);
    child.answerNext();
    await answered;
  }
  assert.deepEqual(order, [0, 1, 2, 0, 1, 2]);
});

test('a child that is down is skipped while the others serve, and used again once ready', async () => {
  const { pool: p, children } = pool(2);
  children[0]!.setState('backing-off');
  assert.equal(p.status().state, 'ready', 'one ready child keeps the pool ready');
  for (let i = 0; i < 4; i++) {
    const answered = p.request(call());
    assert.equal(children[0]!.waiting.length, 0, 'nothing reaches the child that is down');
    children[1]!.answerNext();
    assert.deepEqual(((await answered) as { result: unknown }).result, { child: 1 });
  }
  children[0]!.setState('ready');
  void p.request(call());
  void p.request(call());
  assert.deepEqual(sentTo(children), [1, 1]);
});

test('with every child down the caller gets the usual error of a child; the pool says why', async () => {
  const { pool: p, children } = pool(2, (index) => `Upstream 'srv' is unhealthy (child ${index})`);
  for (const child of children) child.setState('unhealthy');
  assert.equal(p.status().state, 'unhealthy');
  assert.match(p.status().lastError ?? '', /child 0 down/);
  const response = await p.request(call());
  assert.ok('error' in response);
  assert.match(response.error.message, /^Upstream 'srv' is unhealthy/);
});

test('with no child ready, a request waits on one that is starting rather than one that is unhealthy', () => {
  const { pool: p, children } = pool(3);
  children[0]!.setState('unhealthy');
  children[1]!.setState('starting');
  children[2]!.setState('unhealthy');
  assert.equal(p.status().state, 'starting');
  void p.request(call());
  void p.request(call());
  assert.deepEqual(sentTo(children), [0, 2, 0]);
});

test('the pool is ready while any child is; status shows each child and its requests in flight', () => {
  const { pool: p, children } = pool(2);
  const states: string[] = [];
  p.events.on('state', (state: string) => states.push(state));
  void p.request(call());
  children[0]!.setState('backing-off');
  children[1]!.setState('backing-off');
  children[1]!.setState('ready');
  assert.deepEqual(states, ['backing-off', 'ready']);
  const status = p.status();
  assert.deepEqual(
    status.children?.map((child) => [child.state, child.inFlight]),
    [
      ['backing-off', 1],
      ['ready', 0],
    ],
  );
});

test('a list change from several children is passed on once until the list is read again', async () => {
  const { pool: p, children } = pool(3);
  const heard: string[] = [];
  p.events.on('listChanged', (notification: { method: string }) => heard.push(notification.method));
  const tools = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
  for (const child of children) child.events.emit('listChanged', tools);
  assert.deepEqual(heard, ['notifications/tools/list_changed'], 'three announcements, one drop');
  children[0]!.events.emit('listChanged', { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' });
  assert.equal(heard.length, 2, 'another list is its own announcement');
  // Someone reads tools/list again (maybe from a child that had not changed yet): the next change counts.
  void p.request({ jsonrpc: '2.0', id: nextId++, method: 'tools/list', params: {} });
  children[2]!.events.emit('listChanged', tools);
  assert.equal(heard.length, 3);
  const updated = { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'x://a' } };
  children[0]!.events.emit('listChanged', updated);
  children[0]!.events.emit('listChanged', updated);
  assert.equal(heard.length, 5, 'resource updates are never merged');
});

test("a modern server's input_required retry goes back to the child that asked", async () => {
  const { pool: p, children } = pool(2);
  const first = p.request(call('ask'));
  const asker = children.find((c) => c.waiting.length > 0)!;
  asker.answerNext({ resultType: 'input_required', inputRequests: { q: {} }, requestState: 'opaque-state-1' });
  await first;
  // Make the asker the busier one: least-busy alone would pick its sibling.
  const sibling = children[1 - asker.index]!;
  const calls = [p.request(call()), p.request(call())];
  assert.deepEqual([asker.waiting.length, sibling.waiting.length], [1, 1]);
  sibling.answerNext();
  await Promise.race(calls);
  const before = asker.got.length;
  void p.request(call('ask', { requestState: 'opaque-state-1', inputResponses: { q: {} } }));
  assert.equal(asker.got.length, before + 1, 'the retry went to the child holding its state');
  assert.equal(asker.got.at(-1)!.params!.requestState, 'opaque-state-1', 'passed on byte for byte');
  // A retry whose child is down goes wherever there is room.
  asker.setState('backing-off');
  const siblingBefore = sibling.got.length;
  void p.request(call('ask', { requestState: 'opaque-state-1', inputResponses: { q: {} } }));
  assert.equal(sibling.got.length, siblingBefore + 1);
});

test(
  'listen opens a stream on every ready child; ' + 'resource subscriptions go to one child, and move when it goes down',
  async () => {
    const { pool: p, children } = pool(3);
    const controller = new AbortController();
    const acks: string[] = [];
    const listen = p.request(
      {
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['x://a'] } },
      },
      { signal: controller.signal, onNotification: (n) => acks.push(n.method) },
    );
    const opened = (child: ScriptedChild) => child.waiting.filter((w) => w.message.method === 'subscriptions/listen');
    const subscribes = (child: ScriptedChild) =>
      opened(child).map(
        (w) => (w.message.params!.notifications as Record<string, unknown>).resourceSubscriptions !== undefined,
      );
    assert.deepEqual(
      children.map(subscribes),
      [[true], [false], [false]],
      'every child listens; only the first holds the subscriptions',
    );
    assert.equal(p.status().children?.[0]?.inFlight, 0, 'listen streams are not load');
    // Each child acknowledges; the listener hears it once.
    for (const child of children)
      opened(child)[0]!.options.onNotification?.({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
      });
    assert.deepEqual(acks, ['notifications/subscriptions/acknowledged']);
    // The holder goes down: its stream is cancelled, the next ready child takes the subscriptions.
    children[0]!.setState('backing-off');
    assert.ok(opened(children[0]!)[0]!.options.signal!.aborted);
    assert.deepEqual(subscribes(children[1]!).at(-1), true);
    controller.abort();
    const response = await listen;
    assert.ok('error' in response, 'a closed listen ends with the cancelled answer');
    for (const child of children)
      for (const stream of opened(child))
        assert.ok(stream.options.signal!.aborted, 'every child stream is closed with it');
  },
);
