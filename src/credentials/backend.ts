// Where sealed credential records and pending connect links live: a file (one gateway) or Redis (every
// replica). A backend stores opaque sealed text under (principal index, server) and knows nothing of what
// it holds; src/credentials/store.ts seals, opens and caches in front of it.

export interface CredentialBackend {
  /** The sealed record of one principal (by its index) for one server. */
  read(principal: string, server: string): Promise<string | undefined>;
  /** `renewal`: the same connection rewritten (a token refreshed), told to other replicas as such. */
  write(principal: string, server: string, sealed: string, renewal?: boolean): Promise<void>;
  /** Whether there was one to remove. */
  remove(principal: string, server: string): Promise<boolean>;
  /** Every server → sealed record of one principal. */
  readAll(principal: string): Promise<Map<string, string>>;
  /** How many records each server has (for the status page: counts, never who). */
  counts(): Promise<Map<string, number>>;
  /** Keeps a pending link's sealed state until `expiresAt` (epoch ms). */
  putPending(id: string, sealed: string, expiresAt: number): Promise<void>;
  /**
   * The pending state, left in place: a page that shows what a link is for before it is spent, or whether it is
   * live.
   */
  peekPending(id: string): Promise<string | undefined>;
  /** The pending state, removed in the same step: a second take of the same id gets nothing, on any replica. */
  takePending(id: string): Promise<string | undefined>;
  /**
   * True for the first claim of `key` until `ttlMs` passes, false for every other (on any replica, with Redis):
   * one process does a thing once (a token's refresh) while the others wait for its result.
   */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Hears of records another replica changed or removed (Redis only), so cached copies are dropped. */
  onChanged?(listener: (principal: string, server: string, renewal: boolean) => void): void;
  close(): Promise<void>;
}
