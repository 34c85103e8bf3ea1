// Where ListCache keeps its entries. A store holds groups (one per upstream and method) of fields (one per
// scope, authorization context and page or uri), so that an invalidation drops a whole group at once.
// Stores never throw: an unreachable backend reads as a miss and a failed write or drop is logged and counted.
import type { JsonObject } from '../protocol/jsonrpc.js';

export interface StoredEntry {
  result: JsonObject;
  /** Epoch milliseconds after which the entry is stale. */
  expiresAt: number;
}

export type DropListener = (group: string, changed?: readonly string[]) => void;

export interface CacheStore {
  read(group: string, field: string): Promise<StoredEntry | undefined>;
  /**
   * Shared stores: how many times the group has been dropped, by any replica, read before a fetch and
   * handed back to `write`, which then stores only if no drop came in between. Undefined: not known.
   */
  version?(group: string): Promise<string | undefined>;
  write(group: string, field: string, entry: StoredEntry, ttlMs: number, version?: string): Promise<void>;
  /**
   * Drops every field of the group; a shared store also tells the other replicas. `changed` names what
   * within the group is known to have changed (for resources/read, the URIs); undefined: anything may have.
   */
  dropGroup(group: string, changed?: readonly string[]): Promise<void>;
  /** Drops that other replicas made (shared stores), with their `changed`. The memory store never calls it. */
  onDropped(listener: DropListener): void;
  /**
   * Shared stores: drops other replicas made may have been missed (the channel that carries them was away
   * and is back), so whatever was kept from this store, or fetched meanwhile, may be stale.
   */
  onMissedDrops?(listener: () => void): void;
  /**
   * Shared stores: true while this store answers but cannot hear other replicas' drops (its channel is
   * away), so whatever was kept from it may be stale right now.
   */
  missingDrops?(): boolean;
  /** Drops every group (a store in front of a shared one, catching up after missed drops). */
  dropAll?(): Promise<void>;
  /** Operations that failed or were skipped because the backend was unreachable (shared stores). */
  readonly errors?: number;
  /** Bytes this store holds in this process (a memory store), for metrics. */
  readonly bytes?: number;
  close(): Promise<void>;
}
