// The status page's p95 (issue 36) is estimated within its histogram bucket, not read as the bucket's edge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecentWindow } from '../../src/ops/recent-window.js';

test(
  'calls of 5-15 ms read as a p95 inside (10, 25], ' + 'below the 25 ms edge, and never below the slowest calls seen',
  () => {
    const window = new RecentWindow();
    const now = 1_000_000;
    // 60 calls at 6 ms (bucket (5, 10]) and 40 at 12 ms (bucket (10, 25]): rank 95 is the 35th of 40 in (10, 25].
    for (let i = 0; i < 60; i++) window.record(now, 6, false);
    for (let i = 0; i < 40; i++) window.record(now, 12, false);
    const { p95Ms, meanMs } = window.snapshot(now);
    assert.equal(meanMs, 8.4);
    assert.ok(p95Ms! > 10 && p95Ms! < 25, `p95 ${p95Ms}`);
    assert.equal(p95Ms, 10 + (15 * 35) / 40);
  },
);

test('past the last finite bound the mean stands in; all in the first bucket stays within (0, 1]', () => {
  const window = new RecentWindow();
  for (let i = 0; i < 20; i++) window.record(5, 0.5, false);
  const p95 = window.snapshot(5).p95Ms!;
  assert.ok(p95 > 0 && p95 <= 1, String(p95));
});
