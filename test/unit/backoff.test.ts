import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, CrashWindow, DEFAULT_BACKOFF, type BackoffPolicy } from '../../bridge/backoff.js';

const policy: BackoffPolicy = { initialMs: 100, maxMs: 5_000, crashLimit: 3, windowMs: 10_000 };
const middle = () => 0.5; // no jitter: 0.8 + 0.4 * 0.5 = 1

test('delay doubles from initialMs with each attempt', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, middle)),
    [100, 200, 400, 800, 1600],
  );
});

test('delay is capped at maxMs', () => {
  assert.equal(backoffDelay(7, policy, middle), 5_000); // 6400 → 5000
  assert.equal(backoffDelay(50, policy, middle), 5_000);
  assert.equal(backoffDelay(5_000, policy, middle), 5_000); // 2**4999 is Infinity: still capped
});

test('attempt 0 or below behaves like attempt 1', () => {
  assert.equal(backoffDelay(0, policy, middle), 100);
  assert.equal(backoffDelay(-3, policy, middle), 100);
});

test('jitter spans −20% (random 0) to +20% (random 1)', () => {
  assert.equal(
    backoffDelay(3, policy, () => 0),
    320,
  );
  assert.equal(
    backoffDelay(3, policy, () => 1),
    480,
  );
  assert.equal(
    backoffDelay(100, policy, () => 0),
    4_000,
  );
  assert.equal(
    backoffDelay(100, policy, () => 1),
    6_000,
  );
});

test('with Math.random the delay stays inside the jitter band', () => {
  for (let i = 0; i < 200; i++) {
    const d = backoffDelay(2, DEFAULT_BACKOFF);
    assert.ok(d >= 320 && d <= 480, String(d));
  }
});

test('delays are whole milliseconds', () => {
  assert.ok(Number.isInteger(backoffDelay(1, { ...policy, initialMs: 333 }, () => 0.123)));
});

test('CrashWindow counts crashes within the window, this one included', () => {
  const w = new CrashWindow(1_000);
  assert.equal(w.record(0), 1);
  assert.equal(w.record(100), 2);
  assert.equal(w.record(999), 3);
});

test('CrashWindow forgets crashes that fell out of the window', () => {
  const w = new CrashWindow(1_000);
  w.record(0);
  w.record(500);
  assert.equal(w.record(1_000), 2); // 0 is exactly windowMs old: out; 500 in
  assert.equal(w.record(1_600), 2); // 500 out; 1000 in
  assert.equal(w.record(10_000), 1);
});

test('CrashWindow.reset forgets everything', () => {
  const w = new CrashWindow(1_000);
  w.record(0);
  w.record(1);
  w.reset();
  assert.equal(w.record(2), 1);
});
