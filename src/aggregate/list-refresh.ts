// When /mcp reads a list again to learn routes (a name or URI nobody listed): once at a time and at most once
// a second per list, as the gateway; or, for a name of a server each caller reaches as themselves (router.ts
// confirm), as that caller, once at a time and at most once a second for that principal.
import { LRUCache } from 'lru-cache';
import type { ListMethod } from '../../protocol/mcp.js';
import type { ListReader } from './router.js';

/**
 * A name nobody listed triggers at most one refresh of that list per this many ms (per caller, for one read as them).
 */
const REFRESH_INTERVAL_MS = 1_000;
/** How many lists' (and callers') last refresh times are kept: past it the oldest may refresh again sooner. */
const REFRESHES_REMEMBERED = 10_000;

export class ListRefreshes {
  private readonly running = new Map<string, Promise<void>>();
  private readonly last = new LRUCache<string, number>({ max: REFRESHES_REMEMBERED });

  /** `read` reads every page of one list as `reader` (an empty one: as the gateway), for the routes it records. */
  constructor(private readonly read: (method: ListMethod, reader: ListReader) => Promise<unknown>) {}

  refresh(method: ListMethod, asCaller?: ListReader): Promise<void> {
    const principal = asCaller?.caller?.principal;
    const key = refreshKey(method, principal);
    const running = this.running.get(key);
    if (running) return running;
    if (Date.now() - (this.last.get(key) ?? 0) < REFRESH_INTERVAL_MS) return Promise.resolve();
    // Only who is asking: the request that missed may carry its own signal, stream and notification hooks.
    const reader: ListReader =
      principal === undefined
        ? {}
        : { authContext: asCaller!.authContext, caller: asCaller!.caller, reach: asCaller!.reach };
    const refresh: Promise<void> = this.read(method, reader)
      .then(() => {})
      .finally(() => {
        // A refresh set aside by liftFor (it read a state since changed) leaves the one after it alone.
        if (this.running.get(key) !== refresh) return;
        this.running.delete(key);
        this.last.set(key, Date.now());
      });
    this.running.set(key, refresh);
    return refresh;
  }

  /** A server's routes for `method` were just forgotten: the next miss, anyone's, reads the list again at once. */
  lift(method: string): void {
    const callers = refreshKey(method, '');
    for (const key of this.last.keys()) if (key === method || key.startsWith(callers)) this.last.delete(key);
  }

  /**
   * A caller's connection to a server was made or revoked (here or on another replica): what was read as them is
   * stale, so their next miss reads again at once, and does not join a reading begun before the change. Without
   * this a caller who connected within a second of a refresh that showed them the placeholder, on a replica other
   * than the one the browser finished on, was told the tool they now have is unknown.
   */
  liftFor(isFor: (principal: string) => boolean): void {
    for (const keys of [[...this.last.keys()], [...this.running.keys()]])
      for (const key of keys) {
        const principal = principalOf(key);
        if (principal !== undefined && isFor(principal)) {
          this.last.delete(key);
          this.running.delete(key);
        }
      }
  }
}

/** The principal a refresh key was read as; undefined for one read as the gateway. */
function principalOf(key: string): string | undefined {
  const at = key.indexOf('\0');
  return at < 0 ? undefined : key.slice(at + 1);
}

/** The refresh of one list, as the gateway or as one principal. */
function refreshKey(method: string, principal: string | undefined): string {
  return principal === undefined ? method : `${method}\0${principal}`;
}
