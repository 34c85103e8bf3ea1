// What the cache does when its shared store says drops may have been missed, and how a drop's "what
// changed" reaches listeners: with a fake shared store, so each step is seen alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ListCache } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import type { CacheStore, DropListener, StoredEntry } from '../../cache/store.js';
import { TieredStore } from '../../cache/tiered-store.js';
import type { JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';

/** A shared store that holds nothing and lets the test play the other replicas and the channel's gaps. */
class FakeShared implements CacheStore {
  readonly drops: [string, readonly string[] | undefined][] = [];
  private readonly dropListeners: DropListener[] = [];
  private readonly missedListeners: (() => void)[] = [];
  async read(): Promise<StoredEntry | undefined> {
    return undefined;
  }
  async write(): Promise<void> {}
  async dropGroup(group: string, changed?: readonly string[]): Promise<void> {
    this.drops.push([group, changed]);
  }
  onDropped(listener: DropListener): void {
    this.dropListeners.push(listener);
  }
  onMissedDrops(listener: () => void): void {
    this.missedListeners.push(listener);
  }
  droppedElsewhere(group: string, changed?: readonly string[]): void {
    for (const listener of this.dropListeners) listener(group, changed);
  }
  missed(): void {
    for (const listener of this.missedListeners) listener();
  }
  async close(): Promise<void> {}
}

const key = { upstream: 'srv', method: 'tools/list', variant: '', context: 'anonymous' };
const answer = (n: number): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id: 0,
  result: { resultType: 'complete', n, ttlMs: 60_000, cacheScope: 'public' },
});

function setUp() {
  const shared = new FakeShared();
  const cache = new ListCache(new TieredStore(new MemoryStore({ maxEntries: 100, maxBytes: 1 << 20 }), shared), {
    minTtlMs: 0,
    maxTtlMs: 3_600_000,
    log: silentLog,
  });
  return { shared, cache };
}

test('missed drops: memory is emptied, listeners hear of it, and a fetch begun before stores nothing', async () => {
  const { shared, cache } = setUp();
  let fetches = 0;
  await cache.get(key, 1, async () => (fetches++, answer(1)));
  assert.equal((await cache.get(key, 2, async () => (fetches++, answer(2)))).hit, true);

  let release!: (response: JsonRpcResponse) => void;
  const slow = cache.get(
    { ...key, variant: 'page-2' },
    3,
    () => (fetches++, new Promise<JsonRpcResponse>((resolve) => (release = resolve))),
  );
  let told = 0;
  cache.onMissedChanges(() => told++);
  // Let the slow fetch start (it reads the store first).
  while (fetches < 2) await new Promise((resolve) => setImmediate(resolve));
  shared.missed();
  assert.equal(told, 1);
  release(answer(3));
  await slow;

  assert.equal(
    (await cache.get(key, 4, async () => (fetches++, answer(4)))).hit,
    false,
    'the list held before the gap is gone',
  );
  assert.equal(
    (await cache.get({ ...key, variant: 'page-2' }, 5, async () => (fetches++, answer(5)))).hit,
    false,
    'the answer fetched across the gap was not kept',
  );
  assert.equal(
    (await cache.get({ ...key, variant: 'page-2' }, 6, async () => (fetches++, answer(6)))).hit,
    true,
    'fetched after the gap: kept',
  );
});

test('what changed travels with a drop, both ways, and drops heard in one tick are told per kind', async () => {
  const { shared, cache } = setUp();
  const heard: [string, readonly string[], readonly string[] | undefined][] = [];
  cache.onInvalidate((upstream, methods, changed) => heard.push([upstream, methods, changed]));

  await cache.invalidate('srv', ['resources/read'], ['file:///a']);
  assert.deepEqual(shared.drops, [['srv:resources/read', ['file:///a']]]);
  assert.deepEqual(heard, [['srv', ['resources/read'], ['file:///a']]]);

  heard.length = 0;
  shared.droppedElsewhere('srv:resources/read', ['file:///b']);
  shared.droppedElsewhere('srv:resources/read', ['file:///c']);
  shared.droppedElsewhere('srv:tools/list');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(heard, [
    ['srv', ['tools/list'], undefined],
    ['srv', ['resources/read'], ['file:///b', 'file:///c']],
  ]);

  // A drop that names nothing means anything in the list may have changed, and wins over named ones.
  heard.length = 0;
  shared.droppedElsewhere('srv:resources/read', ['file:///b']);
  shared.droppedElsewhere('srv:resources/read');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(heard, [['srv', ['resources/read'], undefined]]);
});

test('while the shared store answers but cannot hear drops, reads skip memory and ask it', async () => {
  const held = new Map<string, StoredEntry>();
  let away = false;
  const shared = Object.assign(new FakeShared(), {
    async read(group: string, field: string) {
      return held.get(`${group}|${field}`);
    },
    async write(group: string, field: string, entry: StoredEntry) {
      held.set(`${group}|${field}`, entry);
    },
    missingDrops: () => away,
  });
  const tiered = new TieredStore(new MemoryStore({ maxEntries: 100, maxBytes: 1 << 20 }), shared);
  const entry: StoredEntry = { result: { resultType: 'complete', n: 1 }, expiresAt: Date.now() + 60_000 };
  await tiered.write('g', 'f', entry, 60_000);
  held.clear(); // another replica dropped the group; this one did not hear it

  away = true;
  assert.equal(await tiered.read('g', 'f'), undefined, 'not the entry memory still holds');
  away = false;
  assert.equal((await tiered.read('g', 'f'))?.result.n, 1, 'with drops heard, memory answers first');
});
