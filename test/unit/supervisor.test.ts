// The one supervisor both upstream transports share: backoff, the crash window that marks a connection
// unhealthy, restarts that close() cancels, and callers waiting for a state that lets them go on or fails them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Supervisor } from '../../bridge/supervisor.js';
import type { UpstreamState } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';

const POLICY = { initialMs: 20, maxMs: 200, crashLimit: 3, windowMs: 60_000 };
const REPORT = { fields: {}, counted: 'failures', backingOff: 'backing off' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test(
  'failures back off and restart, ' + 'and crashLimit failures in the window mark the connection unhealthy for maxMs',
  async () => {
    const supervisor = new Supervisor(POLICY, silentLog);
    const states: UpstreamState[] = [];
    supervisor.events.on('state', (state: UpstreamState) => states.push(state));
    let restarted = 0;
    const restart = () => {
      restarted++;
      supervisor.setState('starting');
    };
    supervisor.setState('starting');
    supervisor.lastError = 'first';
    supervisor.failed(REPORT, restart);
    assert.equal(supervisor.state, 'backing-off');
    assert.ok(supervisor.retryAt - Date.now() <= POLICY.initialMs * 1.2 + 5);
    await sleep(POLICY.initialMs * 1.2 + 20);
    assert.equal(restarted, 1);
    supervisor.failed(REPORT, restart);
    await sleep(POLICY.initialMs * 2 * 1.2 + 20);
    assert.equal(restarted, 2);
    const before = Date.now();
    supervisor.failed(REPORT, restart);
    assert.equal(supervisor.state, 'unhealthy');
    assert.ok(supervisor.retryAt >= before + POLICY.maxMs);
    assert.deepEqual(states, ['starting', 'backing-off', 'starting', 'backing-off', 'starting', 'unhealthy']);
    supervisor.stop();
    assert.equal(supervisor.status('modern').lastError, 'first');
  },
);

test('stop() cancels the scheduled restart', async () => {
  const supervisor = new Supervisor(POLICY, silentLog);
  let restarted = 0;
  supervisor.setState('starting');
  supervisor.failed(REPORT, () => restarted++);
  supervisor.stop();
  await sleep(POLICY.initialMs * 1.2 + 30);
  assert.equal(restarted, 0);
  assert.equal(supervisor.state, 'stopped');
});

test(
  'settled(): ready lets a caller go on, ' + 'a fail-fast state fails it at once, the deadline ends the wait',
  async () => {
    const supervisor = new Supervisor(POLICY, silentLog);
    supervisor.setState('starting');
    const waiting = supervisor.settled(Date.now() + 1_000, undefined, new Set(['stopped']));
    setTimeout(() => supervisor.ready(true), 10);
    assert.equal(await waiting, 'ready');

    supervisor.setState('starting');
    const failing = supervisor.settled(Date.now() + 1_000, undefined, new Set(['stopped', 'backing-off']));
    setTimeout(() => supervisor.failed(REPORT, () => {}), 10);
    assert.equal(await failing, 'backing-off');
    supervisor.stop();

    supervisor.setState('starting');
    assert.equal(await supervisor.settled(Date.now() + 20, undefined, new Set(['stopped'])), undefined);
    const cancelled = new AbortController();
    const aborted = supervisor.settled(Date.now() + 1_000, cancelled.signal, new Set(['stopped']));
    cancelled.abort();
    assert.equal(await aborted, undefined);
  },
);
