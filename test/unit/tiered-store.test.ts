import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ListCache } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import type { CacheStore, StoredEntry } from '../../cache/store.js';
import { TieredStore } from '../../cache/tiered-store.js';
import { silentLog } from '../../infra/log.js';

/** A shared store that can be switched off (reads miss, writes vanish) and can report drops from "other replicas". */
class FakeShared implements CacheStore {
  up = true;
  readonly data = new Map<string, StoredEntry>();
  private listeners: ((group: string) => void)[] = [];
  async read(group: string, field: string) {
    return this.up ? this.data.get(`${group}|${field}`) : undefined;
  }
  async write(group: string, field: string, entry: StoredEntry) {
    if (this.up) this.data.set(`${group}|${field}`, entry);
  }
  async dropGroup(group: string) {
    for (const key of [...this.data.keys()]) if (key.startsWith(`${group}|`)) this.data.delete(key);
  }
  onDropped(listener: (group: string) => void) {
    this.listeners.push(listener);
  }
  droppedElsewhere(group: string) {
    for (const listener of this.listeners) listener(group);
  }
  async close() {}
}

const memory = () => new MemoryStore({ maxEntries: 100, maxBytes: 1 << 20 });
const entry = (n: number): StoredEntry => ({ result: { resultType: 'complete', n }, expiresAt: Date.now() + 60_000 });

test('reads come from memory first, then the shared store (and are remembered)', async () => {
  const shared = new FakeShared();
  const tiered = new TieredStore(memory(), shared);
  await shared.write('g', 'f', entry(1));
  assert.equal((await tiered.read('g', 'f'))?.result.n, 1);
  shared.up = false;
  assert.equal((await tiered.read('g', 'f'))?.result.n, 1, 'still served from memory with the shared store gone');
});

test('a drop heard from another replica empties memory too and is passed on', async () => {
  const shared = new FakeShared();
  const tiered = new TieredStore(memory(), shared);
  const heard: string[] = [];
  tiered.onDropped((group) => heard.push(group));
  await tiered.write('g', 'f', entry(2), 60_000);
  shared.droppedElsewhere('g');
  await new Promise((resolve) => setImmediate(resolve));
  shared.data.clear();
  assert.equal(await tiered.read('g', 'f'), undefined);
  assert.deepEqual(heard, ['g']);
});

test('with the shared store down, ListCache keeps answering from this replica: one upstream fetch', async () => {
  const shared = new FakeShared();
  shared.up = false;
  const cache = new ListCache(new TieredStore(memory(), shared), { minTtlMs: 0, maxTtlMs: 3_600_000, log: silentLog });
  let fetches = 0;
  const fetch = async () => {
    fetches++;
    return {
      jsonrpc: '2.0' as const,
      id: 1,
      result: { resultType: 'complete', tools: [], ttlMs: 60_000, cacheScope: 'public' },
    };
  };
  const key = { upstream: 'u', method: 'tools/list', variant: '', context: 'anonymous' };
  await cache.get(key, 1, fetch);
  const second = await cache.get(key, 2, fetch);
  assert.equal(fetches, 1);
  assert.equal(second.hit, true);
  assert.equal(second.response.id, 2);
});
