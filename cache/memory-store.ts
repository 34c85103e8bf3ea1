// The in-process store: one lru-cache bounded by entries and by bytes (an entry's size is the byte length
// of its JSON plus its key), a ttl per entry, and an index of keys per group so a drop is one map lookup.
import { LRUCache } from 'lru-cache';
import type { CacheStore, StoredEntry } from './store.js';

export interface MemoryStoreOptions {
  maxEntries: number;
  maxBytes: number;
}

interface Slot {
  group: string;
  entry: StoredEntry;
}

export class MemoryStore implements CacheStore {
  private readonly lru: LRUCache<string, Slot>;
  /** group → keys of its entries; kept in step with the LRU through `dispose`. */
  private readonly groups = new Map<string, Set<string>>();
  private readonly maxBytes: number;

  constructor(options: MemoryStoreOptions) {
    this.maxBytes = options.maxBytes;
    this.lru = new LRUCache<string, Slot>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      updateAgeOnGet: false,
      allowStale: false,
      // Staleness read from the clock on each get. The default (1 ms) caches the clock and starts a timer to
      // clear it, which on a busy cache is one timer per hit, and the event loop wakes a millisecond later
      // to run it: a hit pays ~25 µs for it, more than the lookup itself.
      ttlResolution: 0,
      // 'set' means replaced by a newer value under the same key: the key stays in its group.
      dispose: (slot, key, reason) => {
        if (reason !== 'set') this.unindex(slot.group, key);
      },
    });
  }

  async read(group: string, field: string): Promise<StoredEntry | undefined> {
    return this.lru.get(keyOf(group, field))?.entry;
  }

  async write(group: string, field: string, entry: StoredEntry, ttlMs: number): Promise<void> {
    const key = keyOf(group, field);
    const size = Buffer.byteLength(JSON.stringify(entry)) + key.length;
    if (size > this.maxBytes) {
      // Too big to keep at all; an older value under this key must not outlive the newer answer.
      this.lru.delete(key);
      return;
    }
    this.lru.set(key, { group, entry }, { ttl: Math.max(1, Math.ceil(ttlMs)), size });
    let keys = this.groups.get(group);
    if (!keys) this.groups.set(group, (keys = new Set()));
    keys.add(key);
  }

  async dropGroup(group: string): Promise<void> {
    const keys = this.groups.get(group);
    if (!keys) return;
    this.groups.delete(group);
    for (const key of keys) this.lru.delete(key);
  }

  async dropAll(): Promise<void> {
    this.lru.clear();
    this.groups.clear();
  }

  onDropped(): void {
    // Nothing else shares this store.
  }

  /** Entries held (expired ones count until they are touched or evicted). */
  get size(): number {
    return this.lru.size;
  }

  /** Bytes held, as the LRU counts them. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }

  close(): Promise<void> {
    return this.dropAll();
  }

  private unindex(group: string, key: string): void {
    const keys = this.groups.get(group);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.groups.delete(group);
  }
}

/** Length-prefixed, so no (group, field) pair can spell another's key. */
function keyOf(group: string, field: string): string {
  return `${group.length}:${group}${field}`;
}
