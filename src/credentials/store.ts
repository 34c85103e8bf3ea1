// The credential store: per-(principal, server) records of any kind (record.ts), sealed with
// credentials.key (sealer.ts) in a file or Redis (backend.ts), with an in-process copy in front so that a
// call with a stored credential costs a Map lookup, not a round trip. Also keeps connect links' pending
// state, sealed the same way, single use. Everything that holds a per-user credential goes through here:
// OAuth tokens (src/credentials/oauth/), pasted secrets (per-caller children, issue 34).
import { randomBytes } from 'node:crypto';
import type { CredentialBackend } from './backend.js';
import { type ConnectionSummary, type CredentialRecord, parseRecord, summarize } from './record.js';
import { CredentialSealer } from './sealer.js';

/** A cached copy is read again from the backend after this long, even without word of a change. */
const REVALIDATE_MS = 60_000;
/** Cached copies kept at most; the oldest go first. */
const MAX_CACHED = 10_000;

/** What a change listener hears besides the server: whose record changed, and whether it was only renewed. */
export interface CredentialChange {
  /** Whether the change was to this principal's record (compared by the keyed index, as the backend files it). */
  isFor(principal: string): boolean;
  /** A record rewritten for the same connection (a token refreshed or marked expired): nothing a list shows changed. */
  renewal: boolean;
}

interface Cached {
  /** null: the backend has none (also cached, so an unconnected caller costs no round trip either). */
  record: CredentialRecord | null;
  index: string;
  readAt: number;
}

export class CredentialStore {
  private readonly sealer: CredentialSealer;
  private readonly cache = new Map<string, Cached>();
  private readonly listeners: ((server: string, change: CredentialChange) => void)[] = [];
  /** Links being made, by what they are for: concurrent calls of one caller share one. */
  private readonly making = new Map<string, Promise<string>>();

  constructor(
    key: string,
    private readonly backend: CredentialBackend,
  ) {
    this.sealer = new CredentialSealer(key);
    backend.onChanged?.((index, server, renewal) => this.dropCopies(index, server, renewal));
  }

  /**
   * The hot path: the record as this process last read it, synchronously; `undefined` when there is no
   * fresh copy here (then `get`). `null` means: known to have none.
   */
  cached(principal: string, server: string): CredentialRecord | null | undefined {
    const entry = this.cache.get(cacheKey(principal, server));
    if (entry === undefined || Date.now() - entry.readAt > REVALIDATE_MS) return undefined;
    return entry.record;
  }

  /**
   * The record, from this process's copy or the backend. A record that does not open (altered, another key) counts as
   * none.
   */
  async get(principal: string, server: string): Promise<CredentialRecord | undefined> {
    const cached = this.cached(principal, server);
    if (cached !== undefined) return cached ?? undefined;
    const index = this.sealer.index(principal);
    const sealed = await this.backend.read(index, server);
    const record = sealed === undefined ? null : this.open(sealed, principal, server);
    this.remember(principal, server, index, record);
    return record ?? undefined;
  }

  async put(principal: string, server: string, record: CredentialRecord): Promise<void> {
    const index = this.sealer.index(principal);
    // The same connection rewritten (a refresh keeps connectedAt); a new one, or one after another, is not.
    const before = this.cache.get(cacheKey(principal, server))?.record;
    const renewal = before?.kind === record.kind && before.connectedAt === record.connectedAt;
    await this.backend.write(
      index,
      server,
      this.sealer.seal(JSON.stringify(record), bound(principal, server)),
      renewal,
    );
    this.remember(principal, server, index, record);
    this.announce(server, index, renewal);
  }

  /** Forgets the record (a caller revoking a connection, or a refresh token the server refused). */
  async delete(principal: string, server: string): Promise<boolean> {
    const index = this.sealer.index(principal);
    const removed = await this.backend.remove(index, server);
    this.remember(principal, server, index, null);
    if (removed) this.announce(server, index, false);
    return removed;
  }

  /** A principal's connections, as they may see them: which servers, since when, never the secret. */
  async list(principal: string): Promise<ConnectionSummary[]> {
    const all = await this.backend.readAll(this.sealer.index(principal));
    const summaries: ConnectionSummary[] = [];
    for (const [server, sealed] of all) {
      const record = this.open(sealed, principal, server);
      if (record) summaries.push(summarize(server, record));
    }
    return summaries.sort((a, b) => (a.server < b.server ? -1 : 1));
  }

  /** How many principals hold a record for each server. */
  counts(): Promise<Map<string, number>> {
    return this.backend.counts();
  }

  /**
   * Told the server whose records changed (a connection made, renewed or revoked, here or on another replica), and
   * whose.
   */
  onChange(listener: (server: string, change: CredentialChange) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Keeps `state` sealed under a fresh unguessable id until `ttlMs` from now; the id is the link's secret.
   * `liveFor` names what the link is for (a principal's connect link to a server): while one made for it is
   * live, not taken and has at least half its life left, that same id is handed out again and nothing is added,
   * so repeated calls without a token do not pile links up (issue 45 item 6). On any replica, with Redis.
   */
  async putPending(state: object, ttlMs: number, liveFor?: string): Promise<string> {
    if (liveFor === undefined) return this.addPending(state, ttlMs);
    const making = this.making.get(liveFor);
    if (making) return making;
    const made = this.liveLink(liveFor, ttlMs)
      .then((live) => live ?? this.addPending(state, ttlMs, liveFor))
      .finally(() => this.making.delete(liveFor));
    this.making.set(liveFor, made);
    return made;
  }

  private async addPending(state: object, ttlMs: number, liveFor?: string): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const expiresAt = Date.now() + ttlMs;
    await this.backend.putPending(
      this.sealer.index(id),
      this.sealer.seal(JSON.stringify(state), `link\u0000${id}`),
      expiresAt,
    );
    // The live link's id is sealed too: whoever reads the backend learns no link from it.
    if (liveFor !== undefined) {
      const live: LiveLink = { id, expiresAt };
      await this.backend.putPending(
        liveIndex(this.sealer, liveFor),
        this.sealer.seal(JSON.stringify(live), liveFor),
        expiresAt,
      );
    }
    return id;
  }

  /** The live link made for `liveFor`, when it is still pending and has half of `ttlMs` left at least. */
  private async liveLink(liveFor: string, ttlMs: number): Promise<string | undefined> {
    const sealed = await this.backend.peekPending(liveIndex(this.sealer, liveFor));
    const text = sealed === undefined ? undefined : this.sealer.open(sealed, liveFor);
    if (text === undefined) return undefined;
    const live = JSON.parse(text) as LiveLink;
    if (live.expiresAt - Date.now() < ttlMs / 2) return undefined;
    return (await this.backend.peekPending(this.sealer.index(live.id))) === undefined ? undefined : live.id;
  }

  /**
   * Whether this process is the one to do `what` (a token's refresh) now: the first claim wins for `ttlMs`, on
   * every replica sharing the backend. Filed by a keyed index, so the key names nobody.
   */
  claim(what: string, ttlMs: number): Promise<boolean> {
    return this.backend.claim(this.sealer.index(`claim\u0000${what}`), ttlMs);
  }

  /** The pending state of a link, once: a second take, an expired link or an unknown id gets undefined. */
  async takePending<T extends object>(id: string): Promise<T | undefined> {
    const sealed = await this.backend.takePending(this.sealer.index(id));
    if (sealed === undefined) return undefined;
    const text = this.sealer.open(sealed, `link\u0000${id}`);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  /** The pending state of a link without spending it (a GET shows what the link is for; the POST takes it). */
  async peekPending<T extends object>(id: string): Promise<T | undefined> {
    const sealed = await this.backend.peekPending(this.sealer.index(id));
    if (sealed === undefined) return undefined;
    const text = this.sealer.open(sealed, `link\u0000${id}`);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  private open(sealed: string, principal: string, server: string): CredentialRecord | null {
    const text = this.sealer.open(sealed, bound(principal, server));
    return text === undefined ? null : (parseRecord(text) ?? null);
  }

  private remember(principal: string, server: string, index: string, record: CredentialRecord | null): void {
    const key = cacheKey(principal, server);
    this.cache.delete(key); // re-inserted last: the Map's order is the order of reading
    this.cache.set(key, { record, index, readAt: Date.now() });
    if (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
  }

  /** Another replica changed a record: drop this process's copy, so the next call reads it again. */
  private dropCopies(index: string, server: string, renewal: boolean): void {
    for (const [key, entry] of this.cache)
      if (entry.index === index && key.endsWith(`\u0000${server}`)) this.cache.delete(key);
    this.announce(server, index, renewal);
  }

  private announce(server: string, index: string, renewal: boolean): void {
    if (this.listeners.length === 0) return;
    const change: CredentialChange = { isFor: (principal) => this.sealer.index(principal) === index, renewal };
    for (const listener of this.listeners) listener(server, change);
  }
}

/** Which link is live for a purpose, and until when (epoch ms). */
interface LiveLink {
  id: string;
  expiresAt: number;
}

/** Where the live link for a purpose is filed, beside the pending links (a keyed index: it names nobody). */
function liveIndex(sealer: CredentialSealer, liveFor: string): string {
  return sealer.index(`live\u0000${liveFor}`);
}

function cacheKey(principal: string, server: string): string {
  return `${principal}\u0000${server}`;
}

/** What a record is sealed to: its principal and server, so it opens nowhere else. */
function bound(principal: string, server: string): string {
  return `${principal}\u0000${server}`;
}

/** The store as configured: file or Redis (cache.url, cache.sentinel, cache.keyPrefix). */
export async function openCredentialStore(
  settings: { key: string; store: 'file' | 'redis'; file: string },
  redis: { url: string; sentinel?: import('../../infra/redis-fail-fast.js').SentinelSettings; keyPrefix: string },
): Promise<CredentialStore> {
  if (settings.store === 'redis') {
    const { RedisBackend } = await import('./redis-backend.js');
    const backend = new RedisBackend(redis);
    const store = new CredentialStore(settings.key, backend);
    await backend.subscribed;
    return store;
  }
  const { FileBackend } = await import('./file-backend.js');
  return new CredentialStore(settings.key, await FileBackend.open(settings.file));
}
