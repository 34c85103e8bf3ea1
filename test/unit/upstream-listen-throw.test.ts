// An upstream breaking its contract (request() rejects instead of answering) must not end the gateway: the
// listen stream it was asked for counts as ended with an error, and is asked for again with backoff.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import { watchUpstream } from '../../src/notify/upstream-listen.js';
import { until } from '../e2e/harness.js';

test('a listen request that rejects leaves no unhandled rejection and is asked for again', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  let asked = 0;
  const upstream = {
    name: 'thrower',
    events: new EventEmitter(),
    status: () => ({ state: 'ready' }),
    request: async () => {
      asked++;
      throw new Error('a bug in the upstream layer');
    },
  } as unknown as Upstream;
  const watch = watchUpstream(upstream, silentLog, () => {});
  try {
    assert.ok(await until(() => asked >= 2, 5_000), `asked again after the first try threw (asked ${asked} times)`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  } finally {
    watch.stop();
    process.off('unhandledRejection', onUnhandled);
  }
});
