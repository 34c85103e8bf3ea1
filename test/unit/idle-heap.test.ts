// The young generation that start-up grew is given back once the gateway is idle (src/gateway/idle-heap.ts):
// when the collection runs (mock timers), and what it is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mock, test } from 'node:test';
import { trimHeapWhenIdle } from '../../src/gateway/idle-heap.js';
import { RUN_TS } from '../run-ts.js';

const LOOK_MS = 10_000;

/** A trim whose collection is counted, fed a request count the test moves. */
function counted(): { collections: () => number; request: () => void; trim: ReturnType<typeof trimHeapWhenIdle> } {
  let requests = 0;
  let collections = 0;
  const trim = trimHeapWhenIdle(
    () => requests,
    () => collections++,
  );
  return { collections: () => collections, request: () => requests++, trim };
}

test('a gateway that serves nothing collects once, at the first look', (t) => {
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const { collections } = counted();
  mock.timers.tick(LOOK_MS - 1);
  assert.equal(collections(), 0);
  mock.timers.tick(1);
  assert.equal(collections(), 1);
  mock.timers.tick(LOOK_MS * 10);
  assert.equal(collections(), 1);
});

test('while requests keep coming it does not collect; it does at the first look after a quiet spell', (t) => {
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const { collections, request } = counted();
  for (let look = 0; look < 3; look++) {
    request();
    mock.timers.tick(LOOK_MS);
    assert.equal(collections(), 0, `look ${look + 1}`);
  }
  mock.timers.tick(LOOK_MS);
  assert.equal(collections(), 1);
});

test('a gateway busy through every look is left to V8', (t) => {
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const { collections, request } = counted();
  for (let look = 0; look < 20; look++) {
    request();
    mock.timers.tick(LOOK_MS);
  }
  assert.equal(collections(), 0);
});

test('stopped (the gateway closed) before the first look, it never collects', (t) => {
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const { collections, trim } = counted();
  trim.stop();
  mock.timers.tick(LOOK_MS * 10);
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
