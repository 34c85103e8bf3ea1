// The list cache (SEP-2549): answers cacheable requests from a store for as long as the upstream said they
// stay fresh (ttlMs, clamped to [minTtlMs, maxTtlMs]), keeps private answers per authorization context,
// makes concurrent misses share one fetch, and drops whole lists when an upstream says they changed.
//
// Entries are grouped by upstream and method (the unit of invalidation); inside a group a field names the
// scope, the context (private entries only) and the variant (cursor, or uri for resources/read).
//
// Stored results are deep copies, frozen: a hit hands out a shallow copy of the top level (with its own
// ttlMs) carrying the result's bytes (SERIALIZED_RESULT), which the edge writes as they are. Whoever
// changes an answer builds a new response object (as the guard and the aggregator do), which leaves the
// bytes behind; nothing may change a hit's result in place.
import { copyJson, numberOf } from '../protocol/exact-json.js';
import {
  SERIALIZED_RESULT,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcResponse,
  type PreSerialized,
} from '../protocol/jsonrpc.js';
import type { Log } from '../infra/log.js';
import { keepStatusMarks } from '../protocol/error-status.js';
import type { CacheStore, StoredEntry } from './store.js';

export interface CacheKey {
  /** Server name. */
  upstream: string;
  /** e.g. 'tools/list', 'resources/read', 'server/discover'. */
  method: string;
  /** What else selects the result: '' for a first page, the cursor, or the uri for resources/read. */
  variant: string;
  /** The caller's authorization context (an opaque hash); used only for private entries. */
  context: string;
}

export interface CacheStats {
  /** Answers served from the store. */
  hits: number;
  /** Answers not found in the store (including callers that joined another caller's fetch). */
  misses: number;
  /** Calls of `fetch`, i.e. upstream requests made on behalf of the cache. */
  fetches: number;
  /** Invalidations handled: local ones and those heard from other replicas. */
  invalidations: number;
  /** Store operations that failed or were skipped because the store was unreachable. */
  storeErrors: number;
}

export interface ListCacheOptions {
  minTtlMs: number;
  maxTtlMs: number;
  log: Log;
  /** Epoch milliseconds; Date.now by default. Replicas sharing a store compare expiry times across hosts. */
  now?: () => number;
}

/** `changed`: what within those lists is known to have changed (resources/read: URIs); undefined: anything. */
type InvalidateListener = (upstream: string, methods: readonly string[], changed?: readonly string[]) => void;

/** What one fetch produced: the upstream's answer, and the entry stored from it if it was cacheable. */
interface Fetched {
  response: JsonRpcResponse;
  entry: StoredEntry | undefined;
}

/** Between the parts of a hash field (never a Redis key name). */
const SEP = '\u0000';
/**
 * Between a group's server and method: the group is part of Redis key names (`<keyPrefix>g:everything:tools/list`),
 * which `redis-cli --scan` and `DEL` must be able to show and take. Cached method names never contain it.
 */
const GROUP_SEP = ':';

export class ListCache {
  private readonly now: () => number;
  private readonly counts = { hits: 0, misses: 0, fetches: 0, invalidations: 0, storeErrors: 0 };
  /** group → (private field → the fetch under way for it). */
  private readonly flights = new Map<string, Map<string, Promise<Fetched>>>();
  /** group → how often it was invalidated; a fetch that started before an invalidation is not stored. */
  private readonly generations = new Map<string, number>();
  private readonly listeners: InvalidateListener[] = [];
  private readonly missedListeners: (() => void)[] = [];
  /** Bumped when the store may have missed drops: fetches begun before do not store what they bring. */
  private epoch = 0;
  /**
   * Drops heard from other replicas in this tick, merged per upstream (then method) before listeners hear
   * them; a method's value is what changed within it, null when anything may have.
   */
  private heard: Map<string, Map<string, Set<string> | null>> | undefined;
  private storeThrew = false;
  /**
   * Each stored result as UTF-8 JSON without its ttlMs and closing brace, made at its first hit: a hit is
   * then written as these bytes with its own ttlMs after them, not serialised again (a page of 1,000 tools
   * is ~200 KB). Entries are frozen, so the bytes stay true; they go when the entry does.
   */
  private readonly heads = new WeakMap<StoredEntry, Buffer>();

  constructor(
    private readonly store: CacheStore,
    private readonly options: ListCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    store.onDropped((group, changed) => this.droppedElsewhere(group, changed));
    store.onMissedDrops?.(() => this.missedDrops());
  }

  /** Bytes the store holds in this process, for metrics. */
  get bytes(): number {
    return this.store.bytes ?? 0;
  }

  get stats(): CacheStats {
    return { ...this.counts, storeErrors: this.counts.storeErrors + (this.store.errors ?? 0) };
  }

  async get(
    key: CacheKey,
    id: JsonRpcId,
    fetch: () => Promise<JsonRpcResponse>,
  ): Promise<{ response: JsonRpcResponse; hit: boolean }> {
    const group = groupOf(key.upstream, key.method);
    const privateField = privateFieldOf(key.context, key.variant);
    const entry = (await this.read(group, publicFieldOf(key.variant))) ?? (await this.read(group, privateField));
    if (entry) {
      this.counts.hits++;
      return { response: this.answer(id, entry), hit: true };
    }
    this.counts.misses++;

    let flights = this.flights.get(group);
    const pending = flights?.get(privateField);
    if (pending) return this.joined(pending, key, id, fetch);

    const flight = this.fill(group, key, fetch);
    if (!flights) this.flights.set(group, (flights = new Map()));
    flights.set(privateField, flight);
    try {
      return { response: (await flight).response, hit: false };
    } finally {
      const current = this.flights.get(group);
      if (current?.get(privateField) === flight) {
        current.delete(privateField);
        if (current.size === 0) this.flights.delete(group);
      }
    }
  }

  /** `changed`: what within the lists is known to have changed (resources/read: the URIs); told to replicas. */
  async invalidate(upstream: string, methods: readonly string[], changed?: readonly string[]): Promise<void> {
    const groups = methods.map((method) => groupOf(upstream, method));
    for (const group of groups) this.forget(group);
    this.counts.invalidations++;
    // All drops are issued in this tick, so a shared store can send them as one message.
    await Promise.all(groups.map((group) => this.drop(group, changed)));
    this.emit(upstream, methods, changed);
  }

  onInvalidate(listener: InvalidateListener): void {
    this.listeners.push(listener);
  }

  /**
   * The shared store may have missed other replicas' drops (its channel was away): anything may have
   * changed, for every upstream. The cache has already forgotten what it held in memory when this runs.
   */
  onMissedChanges(listener: () => void): void {
    this.missedListeners.push(listener);
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
    this.missedListeners.length = 0;
    await this.store.close();
  }

  /** The one fetch for a key: counts it, and stores a cacheable answer unless the list changed meanwhile. */
  private async fill(group: string, key: CacheKey, fetch: () => Promise<JsonRpcResponse>): Promise<Fetched> {
    const generation = this.generations.get(group) ?? 0;
    const epoch = this.epoch;
    // A shared store's count of drops, taken before the fetch: another replica may drop the group while
    // it runs, and its answer must then not be stored.
    const version = await this.versionOf(group);
    this.counts.fetches++;
    const response = await fetch();
    if (!('result' in response)) return { response, entry: undefined };
    const ttlMs = this.freshFor(response.result);
    if (ttlMs === 0 || (this.generations.get(group) ?? 0) !== generation || this.epoch !== epoch)
      return { response, entry: undefined };
    const field =
      response.result.cacheScope === 'public' ? publicFieldOf(key.variant) : privateFieldOf(key.context, key.variant);
    const entry: StoredEntry = { result: frozenCopy(response.result), expiresAt: this.now() + ttlMs };
    // Not awaited: the caller need not wait for the store. A shared store serialises the entry before its
    // first await and sends commands in order, so a read issued after this one still sees the entry.
    void this.write(group, field, entry, ttlMs, version);
    return { response, entry };
  }

  private async versionOf(group: string): Promise<string | undefined> {
    if (!this.store.version) return undefined;
    try {
      return await this.store.version(group);
    } catch (error) {
      this.storeFailed('read', error);
      return undefined;
    }
  }

  /** A caller that arrived while the same key was being fetched gets that answer under its own id. */
  private async joined(
    pending: Promise<Fetched>,
    key: CacheKey,
    id: JsonRpcId,
    fetch: () => Promise<JsonRpcResponse>,
  ): Promise<{ response: JsonRpcResponse; hit: boolean }> {
    const { response, entry } = await pending;
    if (entry) return { response: this.answer(id, entry), hit: false };
    if ('result' in response && response.result.resultType === 'input_required') {
      // A multi round-trip answer belongs to one request (its requestState may be single-use): ask anew,
      // through the cache again, so those who ask anew share one fetch and a complete answer is stored.
      return this.get(key, id, fetch);
    }
    // Not stored (an error, or ttlMs 0): a copy of its own, since callers may change what they receive.
    const copy = copyJson(response);
    copy.id = id;
    keepStatusMarks(response, copy); // a copy answers with the status the original would have had
    return { response: copy, hit: false };
  }

  /** The entry under the caller's id with the time it has left, its bytes kept beside it (see `heads`). */
  private answer(id: JsonRpcId, entry: StoredEntry): JsonRpcResponse {
    const ttlMs = Math.max(0, Math.ceil(entry.expiresAt - this.now()));
    const response: PreSerialized = { jsonrpc: '2.0', id, result: { ...entry.result, ttlMs } };
    let head = this.heads.get(entry);
    if (head === undefined) {
      const { ttlMs: _, ...rest } = entry.result;
      const text = JSON.stringify(rest);
      if (text === '{}') return response; // nothing but a ttlMs: no comma to put before it
      this.heads.set(entry, (head = Buffer.from(text.slice(0, -1))));
    }
    response[SERIALIZED_RESULT] = [head, `,"ttlMs":${ttlMs}}`];
    return response;
  }

  /** ttlMs after clamping, or 0 when the result may not be stored. A clamp never turns 0 into more. */
  private freshFor(result: JsonObject): number {
    if (result.resultType !== undefined && result.resultType !== 'complete') return 0;
    const asked = numberOf(result.ttlMs); // u64::MAX ("keep it") is kept as written: clamped like any other
    if (asked === undefined || !(asked >= 1)) return 0;
    const ttl = Math.floor(Math.min(Math.max(asked, this.options.minTtlMs), this.options.maxTtlMs));
    return Math.max(ttl, 0);
  }

  /** A fresh entry, or undefined (absent, stale, or the store failed). */
  private async read(group: string, field: string): Promise<StoredEntry | undefined> {
    let entry: StoredEntry | undefined;
    try {
      entry = await this.store.read(group, field);
    } catch (error) {
      this.storeFailed('read', error);
      return undefined;
    }
    return entry && entry.expiresAt > this.now() ? entry : undefined;
  }

  private async write(
    group: string,
    field: string,
    entry: StoredEntry,
    ttlMs: number,
    version: string | undefined,
  ): Promise<void> {
    try {
      await this.store.write(group, field, entry, ttlMs, version);
    } catch (error) {
      this.storeFailed('write', error);
    }
  }

  private async drop(group: string, changed: readonly string[] | undefined): Promise<void> {
    try {
      await this.store.dropGroup(group, changed);
    } catch (error) {
      this.storeFailed('drop', error);
    }
  }

  /** Stores do not throw; if one does anyway, the cache answers from the upstream and says so once. */
  private storeFailed(operation: string, error: unknown): void {
    this.counts.storeErrors++;
    if (this.storeThrew) return;
    this.storeThrew = true;
    this.options.log.error(
      { operation, err: String(error) },
      'cache store threw (stores should not); answering from upstreams',
    );
  }

  /** Later fetches of the group start afresh, and fetches under way do not store what they bring. */
  private forget(group: string): void {
    this.generations.set(group, (this.generations.get(group) ?? 0) + 1);
    this.flights.delete(group);
  }

  private droppedElsewhere(group: string, changed: readonly string[] | undefined): void {
    const at = group.lastIndexOf(GROUP_SEP);
    if (at < 0) return;
    this.forget(group);
    if (!this.heard) {
      this.heard = new Map();
      queueMicrotask(() => this.announceHeard());
    }
    const upstream = group.slice(0, at);
    const method = group.slice(at + 1);
    let methods = this.heard.get(upstream);
    if (!methods) this.heard.set(upstream, (methods = new Map()));
    const known = methods.get(method);
    if (!changed) methods.set(method, null);
    else if (known === undefined) methods.set(method, new Set(changed));
    else if (known !== null) for (const item of changed) known.add(item);
  }

  /** Lists where anything may have changed go out together; each list with known changes on its own. */
  private announceHeard(): void {
    const heard = this.heard;
    this.heard = undefined;
    if (!heard) return;
    for (const [upstream, methods] of heard) {
      this.counts.invalidations++;
      const whole = [...methods].filter(([, changed]) => changed === null).map(([method]) => method);
      if (whole.length) this.emit(upstream, whole, undefined);
      for (const [method, changed] of methods) if (changed) this.emit(upstream, [method], [...changed]);
    }
  }

  private missedDrops(): void {
    this.epoch++;
    this.flights.clear();
    this.counts.invalidations++;
    for (const listener of this.missedListeners) {
      try {
        listener();
      } catch (error) {
        this.options.log.error({ err: String(error) }, 'a missed-changes listener threw');
      }
    }
  }

  private emit(upstream: string, methods: readonly string[], changed: readonly string[] | undefined): void {
    for (const listener of this.listeners) {
      try {
        listener(upstream, methods, changed);
      } catch (error) {
        this.options.log.error({ upstream, methods, err: String(error) }, 'an invalidation listener threw');
      }
    }
  }
}

// The methods cached (tools/list, resources/read, …) never contain ':', so a group splits at its last one; a private
// field carries
// its context's length, so no context and variant can spell another pair's field.
function groupOf(upstream: string, method: string): string {
  return upstream + GROUP_SEP + method;
}

function publicFieldOf(variant: string): string {
  return `public${SEP}${SEP}${variant}`;
}

function privateFieldOf(context: string, variant: string): string {
  return `private${SEP}${context.length}${SEP}${context}${SEP}${variant}`;
}

function frozenCopy(result: JsonObject): JsonObject {
  return deepFreeze(copyJson(result));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
