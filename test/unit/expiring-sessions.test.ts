// Per-session state that expires with the session: adding many entries at once sweeps a few times, not
// once per entry, and entries that expired are dropped once the map grows, so it stays bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpiringSessions } from '../../src/legacy-client/expiring-sessions.js';

test('20,000 live sessions added one after another cost a handful of sweeps, not one per session', () => {
  const now = 1_000_000;
  const map = new ExpiringSessions<true>(() => now);
  for (let i = 0; i < 20_000; i++) map.set(`s${i}`, true, now + 60_000);
  assert.equal(map.size, 20_000);
  assert.ok(map.has('s0') && map.has('s19999'));
  // A sweep each time the map doubles: logarithmic in the count.
  assert.ok(map.sweeps >= 1 && map.sweeps <= Math.ceil(Math.log2(20_000)), `${map.sweeps} sweeps`);
});

test('sessions that expired are forgotten: the map stays small while few are live', () => {
  let now = 1_000_000;
  const map = new ExpiringSessions<string>(() => now);
  // Each session lives 100 ms, one new every ms: about 100 are live at any time.
  for (let i = 0; i < 50_000; i++, now++) {
    map.set(`s${i}`, 'x', now + 100);
    assert.ok(map.size <= 1024, `size ${map.size} after ${i + 1}`);
  }
  assert.equal(map.get('s0'), undefined, 'long expired');
  assert.equal(map.get('s49999'), 'x', 'still live');
  map.delete('s49999');
  assert.equal(map.has('s49999'), false);
});
