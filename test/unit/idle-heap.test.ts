// The young generation that start-up grew is given back once the gateway is idle (src/gateway/idle-heap.ts):
// when the collection runs and how often (mock timers, a young generation the test controls), and what it is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mock, test } from 'node:test';
import { trimHeapWhenIdle } from '../../src/gateway/idle-heap.js';
import { RUN_TS } from '../run-ts.js';

const LOOK_MS = 5_000;
const MB = 2 ** 20;

/**
 * A trim over a young generation the test controls: 32 MB (grown) until a collection that `shrinks` lets
 * shrink, then 1 MB; the request count moves when the test says.
 */
function counted(shrinks: (collection: number) => boolean = () => true) {
  let requests = 0;
  let collections = 0;
  let bytes = 32 * MB;
  const trim = trimHeapWhenIdle(() => requests, {
    bytes: () => bytes,
    collect: () => {
      collections++;
      if (shrinks(collections)) bytes = MB;
    },
  });
  return {
    collections: () => collections,
    request: () => requests++,
    shrunk: () => (bytes = MB),
    trim,
  };
}

function mockTimers(t: { after: (fn: () => void) => void }): void {
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
}

/** Lets `n` looks pass, one at a time (a mocked tick does not run the timers set while it runs). */
function looks(n: number): void {
  for (let i = 0; i < n; i++) mock.timers.tick(LOOK_MS);
}

test('a gateway that serves nothing collects once, at the first look', (t) => {
  mockTimers(t);
  const { collections } = counted();
  mock.timers.tick(LOOK_MS - 1);
  assert.equal(collections(), 0);
  mock.timers.tick(1);
  assert.equal(collections(), 1);
  looks(20);
  assert.equal(collections(), 1);
});

test('while requests keep coming it does not collect; it does at the first look after a quiet spell', (t) => {
  mockTimers(t);
  const { collections, request } = counted();
  for (let look = 0; look < 3; look++) {
    request();
    mock.timers.tick(LOOK_MS);
    assert.equal(collections(), 0, `look ${look + 1}`);
  }
  mock.timers.tick(LOOK_MS);
  assert.equal(collections(), 1);
});

test('a collection that left the young generation grown is tried again at the next quiet look', (t) => {
  mockTimers(t);
  const { collections } = counted((collection) => collection === 3);
  looks(2);
  assert.equal(collections(), 2);
  mock.timers.tick(LOOK_MS);
  assert.equal(collections(), 3);
  looks(20);
  assert.equal(collections(), 3);
});

test('a young generation V8 has already shrunk is not collected again', (t) => {
  mockTimers(t);
  const { collections, shrunk } = counted();
  shrunk();
  looks(20);
  assert.equal(collections(), 0);
});

test('after a minute of looks (busy, or never shrinking) it leaves V8 to itself', (t) => {
  mockTimers(t);
  const busy = counted();
  const stubborn = counted(() => false);
  for (let look = 0; look < 30; look++) {
    busy.request();
    mock.timers.tick(LOOK_MS);
  }
  assert.equal(busy.collections(), 0);
  assert.equal(stubborn.collections(), 12);
});

test('stopped (the gateway closed) before the first look, it never collects', (t) => {
  mockTimers(t);
  const { collections, trim } = counted();
  trim.stop();
  looks(20);
  assert.equal(collections(), 0);
});

// In a child of its own (the flags it sets are process-wide): an object nothing holds, made in an earlier
// turn (a WeakRef keeps its target through the turn that made it), is gone after the collection, so it was a
// full one; and no gc function is left where code could reach it. Whether V8 also shrinks the young
// generation in it is V8's call, made on its allocation rate: npm run bench:idle measures that.
const CHILD = `
import { runInNewContext } from 'node:vm';
import { fullCollection } from ${JSON.stringify(new URL('../../src/gateway/idle-heap.ts', import.meta.url).href)};
const unheld = new WeakRef({ big: new Array(1000).fill('x') });
await new Promise((resolve) => setImmediate(resolve));
fullCollection();
console.log(JSON.stringify({ collected: unheld.deref() === undefined,
  gcHere: typeof globalThis.gc, gcInNewContext: runInNewContext('typeof gc') }));
`;

test('the collection is a full one, and leaves no gc function about', () => {
  const child = spawnSync(process.execPath, [...RUN_TS, '--input-type=module', '--eval', CHILD], {
    encoding: 'utf8',
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), { collected: true, gcHere: 'undefined', gcInNewContext: 'undefined' });
});

// Old-generation pages left half full (every other object dropped) are below the 70% empty that a plain full
// collection moves, so only a compacting one gives them back: the old space must shrink well below its size.
const FRAGMENTED_CHILD = `
import { getHeapSpaceStatistics } from 'node:v8';
import { fullCollection } from ${JSON.stringify(new URL('../../src/gateway/idle-heap.ts', import.meta.url).href)};
const oldSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_size;
const held = Array.from({ length: 100_000 }, (_, i) => ({ i, pad: [i, i, i, i] }));
fullCollection();
fullCollection();
for (let i = 0; i < held.length; i += 2) held[i] = null;
const before = oldSpace();
fullCollection();
console.log(JSON.stringify({ before, after: oldSpace(), held: held.length }));
`;

test('the collection gives back old-generation pages left half empty (it compacts)', () => {
  const child = spawnSync(process.execPath, [...RUN_TS, '--input-type=module', '--eval', FRAGMENTED_CHILD], {
    encoding: 'utf8',
  });
  assert.equal(child.status, 0, child.stderr);
  const { before, after } = JSON.parse(child.stdout) as { before: number; after: number };
  // The objects dropped were about half of what the old space held beyond start-up's few MB.
  assert.ok(after < before - 3 * MB, `old space ${before / MB} MB before, ${after / MB} MB after`);
});
