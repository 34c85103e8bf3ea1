// Memory in front of a shared store: reads are served from this process when they can be, writes go to
// both, and a drop — made here or heard from another replica — empties both. So while Redis is down the
// gateway still answers from what it already holds here, and when Redis is up replicas share entries.
// When the shared store says drops may have been missed, memory is emptied: it cannot tell which of its
// entries another replica dropped meanwhile; and while they are being missed, reads skip memory.
import type { CacheStore, DropListener, StoredEntry } from './store.js';

export class TieredStore implements CacheStore {
  private readonly listeners: DropListener[] = [];
  private readonly missedListeners: (() => void)[] = [];

  constructor(
    private readonly near: CacheStore & { dropAll(): Promise<void> },
    private readonly shared: CacheStore,
    private readonly now: () => number = Date.now,
  ) {
    shared.onDropped((group, changed) => {
      void near.dropGroup(group);
      for (const listener of this.listeners) listener(group, changed);
    });
    shared.onMissedDrops?.(() => {
      void near.dropAll();
      for (const listener of this.missedListeners) listener();
    });
  }

  /** The near (memory) store's bytes: the shared store's live elsewhere. */
  get bytes(): number {
    return this.near.bytes ?? 0;
  }

  get errors(): number {
    return this.shared.errors ?? 0;
  }

  async read(group: string, field: string): Promise<StoredEntry | undefined> {
    // While the shared store works but its drops cannot be heard, memory may hold what another replica
    // dropped: the shared store, which that replica emptied, is the one to ask.
    const local = this.shared.missingDrops?.() ? undefined : await this.near.read(group, field);
    if (local && local.expiresAt > this.now()) return local;
    const remote = await this.shared.read(group, field);
    // Remember what another replica fetched, for as long as it stays fresh.
    if (remote && remote.expiresAt > this.now())
      void this.near.write(group, field, remote, remote.expiresAt - this.now());
    return remote;
  }

  version(group: string): Promise<string | undefined> {
    return this.shared.version ? this.shared.version(group) : Promise.resolve(undefined);
  }

  async write(group: string, field: string, entry: StoredEntry, ttlMs: number, version?: string): Promise<void> {
    await Promise.all([
      this.near.write(group, field, entry, ttlMs),
      this.shared.write(group, field, entry, ttlMs, version),
    ]);
  }

  async dropGroup(group: string, changed?: readonly string[]): Promise<void> {
    await Promise.all([this.near.dropGroup(group), this.shared.dropGroup(group, changed)]);
  }

  onDropped(listener: DropListener): void {
    this.listeners.push(listener);
  }

  onMissedDrops(listener: () => void): void {
    this.missedListeners.push(listener);
  }

  async close(): Promise<void> {
    await Promise.all([this.near.close(), this.shared.close()]);
  }
}
