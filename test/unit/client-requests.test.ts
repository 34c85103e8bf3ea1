// The gateway's questions to a 2025 client end as soon as the client goes away, whenever that happens:
// while the session's channel is being watched (a Redis round trip), while a question waits, or between
// two questions. None leaves its 300 s answer timer behind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientRequests } from '../../src/legacy-client/client-requests.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';

const ELICIT = { method: 'elicitation/create', params: { message: 'Deploy?' } };

function timers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}

/** The outcome if `promise` settled within the current turn of the event loop, else 'pending'. */
function settledNow<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

test(
  'a client that leaves while the session is being watched: ' + 'settled at once, nothing sent, no timer left',
  async () => {
    const controller = new AbortController();
    let released = 0;
    // The watch's Redis round trip, during which the client goes away.
    const relay = {
      watch: async () => (controller.abort(), () => void released++),
      publish: async () => 0,
    };
    const requests = new ClientRequests(relay, silentLog);
    const sent: unknown[] = [];
    const before = timers();
    const outcome = await settledNow(
      requests.ask('s', { confirm: ELICIT }, (message) => sent.push(message), controller.signal),
    );
    assert.deepEqual(outcome, { error: 'the client went away' });
    assert.deepEqual(sent, [], 'no question for a client that left');
    assert.equal(released, 1, 'the watch was released');
    assert.equal(timers(), before, 'no answer timer left running');
  },
);

test('a client that leaves while a question waits: settled at once, no timer left', async () => {
  const controller = new AbortController();
  const requests = new ClientRequests(undefined, silentLog);
  const before = timers();
  let asked!: () => void;
  const sentOne = new Promise<void>((resolve) => (asked = resolve));
  const pending = requests.ask('s', { confirm: ELICIT }, () => asked(), controller.signal);
  await sentOne;
  assert.equal(timers(), before + 1, 'the question is timed');
  controller.abort();
  assert.deepEqual(await settledNow(pending), { error: 'the client went away' });
  assert.equal(timers(), before, 'its timer was cleared');
});

test('a client that leaves between two questions is not asked the second', async () => {
  const controller = new AbortController();
  const requests = new ClientRequests(undefined, silentLog);
  const sent: JsonObject[] = [];
  const before = timers();
  const pending = requests.ask(
    's',
    { first: ELICIT, second: ELICIT },
    (message) => {
      sent.push(message as JsonObject);
      // The client answers the first question and leaves at once.
      if (sent.length === 1)
        queueMicrotask(
          () => (
            requests.deliver('s', { jsonrpc: '2.0', id: (message as JsonObject).id!, result: {} }), controller.abort()
          ),
        );
    },
    controller.signal,
  );
  assert.deepEqual(await settledNow(pending), { error: 'the client went away' });
  assert.equal(sent.length, 1, 'the second question was not sent');
  assert.equal(timers(), before);
});
