// Where ListCache keeps its entries. A store holds groups (one per upstream and method) of fields (one per
// scope, authorization context and page or uri), so that an invalidation drops a whole group at once.
// Stores never throw: an unreachable backend reads as a miss and a failed write or drop is logged and counted.
import type { JsonObject } from '../src/protocol/jsonrpc.js';

export interface StoredEntry {
  result: JsonObject;
  /** Epoch milliseconds after which the entry is stale. */
  expiresAt: number;
}

export interface CacheStore {
  read(group: string, field: string): Promise<StoredEntry | undefined>;
  /**
   * Shared stores: how many times the group has been dropped, by any replica, read before a fetch and
   * handed back to `write`, which then stores only if no drop came in between. Undefined: not known.
   */
  version?(group: string): Promise<string | undefined>;
  write(group: string, field: string, entry: StoredEntry, ttlMs: number, version?: string): Promise<void>;
  /** Drops every field of the group; a shared store also tells the other replicas. */
  dropGroup(group: string): Promise<void>;
  /** Drops that other replicas made (shared stores). The memory store never calls it. */
  onDropped(listener: (group: string) => void): void;
  /** Operations that failed or were skipped because the backend was unreachable (shared stores). */
  readonly errors?: number;
  close(): Promise<void>;
}
