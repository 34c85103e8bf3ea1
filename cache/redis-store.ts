// The shared store: one Redis HASH per group (`<keyPrefix>g:<group>`), fields holding JSON
// `{result, expiresAt}`, the hash living as long as its longest-lived field. Beside it a sorted set
// (`<keyPrefix>e:<group>`) scores each field by its expiry, so that every write also deletes up to
// PRUNE_PER_WRITE expired fields: a busy group does not keep them for as long as its longest-lived one.
// (Redis 7.4's per-field HPEXPIRE would do this, but older servers and look-alikes lack it.) Reads stay
// one HGET. A drop deletes both and publishes the group on `<keyPrefix>invalidate`; a second connection
// subscribes to that channel and hands the drops other replicas made to `onDropped`. When that connection
// comes back after being away, drops were missed: `onMissedDrops` listeners hear of it.
//
// Redis being down must never fail or slow a request: commands are not queued while disconnected and fail
// at once, or after the command timeout if Redis hangs, after which commands are skipped for PAUSE_MS before
// one is tried again (so a hanging Redis costs one timeout per pause, not one per request). Reads then miss,
// writes are skipped, drops are kept and sent when Redis is back. Each outage is logged once when it starts
// and once when it ends.
import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { parseJson } from '../protocol/exact-json.js';
import { isObject } from '../protocol/jsonrpc.js';
import type { Log } from '../infra/log.js';
import {
  describeRedisUrl,
  failFastRedisOptions,
  PAUSE_MS,
  sentinelOptions,
  type SentinelSettings,
} from '../infra/redis-fail-fast.js';
import { OutageLog } from '../infra/redis-outage.js';
import type { CacheStore, DropListener, StoredEntry } from './store.js';

export interface RedisStoreOptions {
  /** redis:// or rediss:// URL. */
  url: string;
  /** Find the primary through Sentinel (the URL then gives only its credentials, database and TLS). */
  sentinel?: SentinelSettings;
  /** Prefixes every key and the invalidation channel; replicas sharing a cache use the same prefix. */
  keyPrefix: string;
  /** When a command counts as failed (cache.commandTimeoutMs); COMMAND_TIMEOUT_MS when absent. */
  commandTimeoutMs?: number;
  log: Log;
}

/** Most expired fields one write deletes: bounds the script's work; a write adds at most one field. */
export const PRUNE_PER_WRITE = 16;

/**
 * HSET and score the field by its expiry, delete up to PRUNE_PER_WRITE fields expired by `now`, then make
 * the hash and its scores live at least ttl ms more (PTTL is -1 without an expiry, -2 without the key).
 * Skipped when the group was dropped since the fetch began (its version moved on): a fetch that started
 * before another replica's invalidation must not put the stale answer back after it.
 * KEYS: hash, version, scores. ARGV: field, json, ttl, version ('' = unknown), expiresAt, now.
 */
const WRITE_SCRIPT = `
if ARGV[4] ~= '' and (redis.call('GET', KEYS[2]) or '0') ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[6], 'LIMIT', 0, ${PRUNE_PER_WRITE})
if #expired > 0 then
  redis.call('HDEL', KEYS[1], unpack(expired))
  redis.call('ZREM', KEYS[3], unpack(expired))
end
local ttl = tonumber(ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
return 1`;

/** Groups to drop, each with what changed within it (null: anything may have). */
type Drops = Map<string, Set<string> | null>;

export class RedisStore implements CacheStore {
  private readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;
  /** Tags this instance's own invalidation messages, which its subscriber then ignores. */
  private readonly instance = randomUUID();
  private readonly listeners: DropListener[] = [];
  private readonly missedListeners: (() => void)[] = [];
  /** Drops asked for in this tick: sent together as one DEL and one message. */
  private batch: { drops: Drops; sent: Promise<void> } | undefined;
  /** Drops Redis did not take (it was down): sent again as soon as it is back. */
  private readonly unsent: Drops = new Map();
  /** The subscriber was away (or never got in) since it last subscribed: drops may have been missed. */
  private missedDrops = false;
  private clientDown = false;
  /** Commands are skipped until then (epoch ms) after a failure. */
  private pausedUntil = 0;
  private subscriberDown = false;
  private readonly outage: OutageLog;
  private closing = false;
  private failures = 0;
  private readonly log: Log;
  private readonly where: string;

  constructor(private readonly options: RedisStoreOptions) {
    this.log = options.log;
    this.channel = `${options.keyPrefix}invalidate`;
    this.where = describeRedisUrl(options.url);
    this.outage = new OutageLog(this.log, this.where, {
      lost: 'Redis unreachable: answering from upstreams without the shared cache until it is back (reconnecting)',
      back: 'Redis reachable again: shared cache and invalidations restored',
    });
    // autoResubscribe off: subscribed again on every 'ready' below, which also covers a failed first try.
    const sentinel = sentinelOptions(options.sentinel, options.url);
    this.client = new Redis(options.url, {
      ...failFastRedisOptions('mcp-gateway-cache', options.commandTimeoutMs),
      ...sentinel,
      autoResubscribe: false,
    } satisfies RedisOptions);
    this.subscriber = new Redis(options.url, {
      ...failFastRedisOptions('mcp-gateway-cache-sub', options.commandTimeoutMs),
      ...sentinel,
      autoResubscribe: false,
    } satisfies RedisOptions);

    this.client.on('error', (error: Error) => this.connectionLost('client', error));
    this.client.on('close', () => this.connectionLost('client', new Error('connection closed')));
    this.client.on('ready', () => this.recovered());

    this.subscriber.on('error', (error: Error) => this.connectionLost('subscriber', error));
    this.subscriber.on('close', () => this.connectionLost('subscriber', new Error('connection closed')));
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel).then(
        () => {
          this.subscriberDown = false;
          this.updateOutage();
          if (this.missedDrops && !this.closing) {
            this.missedDrops = false;
            this.tellMissed();
          }
        },
        (error: unknown) => {
          // Connected but not subscribed (SUBSCRIBE timed out): nothing would try again until the
          // connection dropped, so drop it; the reconnect subscribes anew and then catches up.
          this.connectionLost('subscriber', error);
          if (!this.closing) this.subscriber.disconnect(true);
        },
      );
    });
    this.subscriber.on('message', (channel: string, message: string) => this.heard(channel, message));
  }

  get errors(): number {
    return this.failures;
  }

  async read(group: string, field: string): Promise<StoredEntry | undefined> {
    if (!this.usable()) return this.skipped();
    let raw: string | null;
    try {
      raw = await this.client.hget(this.keyOf(group), field);
    } catch (error) {
      return this.failed(error);
    }
    this.succeeded();
    if (raw === null) return undefined;
    const entry = parseEntry(raw);
    return entry && entry.expiresAt > Date.now() ? entry : undefined;
  }

  /** How many times the group was dropped (by any replica); undefined when Redis cannot say. */
  async version(group: string): Promise<string | undefined> {
    if (!this.usable()) return undefined;
    try {
      const version = (await this.client.get(this.versionKeyOf(group))) ?? '0';
      this.succeeded();
      return version;
    } catch (error) {
      return this.failed(error);
    }
  }

  async write(group: string, field: string, entry: StoredEntry, ttlMs: number, version?: string): Promise<void> {
    const json = JSON.stringify(entry); // before any await: the caller may change its objects afterwards
    if (!this.usable()) return this.skipped();
    try {
      const ttl = Math.max(1, Math.ceil(ttlMs));
      // Expiry and "now" both by this host's clock, as `read` judges freshness.
      await this.client.eval(
        WRITE_SCRIPT,
        3,
        this.keyOf(group),
        this.versionKeyOf(group),
        this.expiryKeyOf(group),
        field,
        json,
        ttl,
        version ?? '',
        entry.expiresAt,
        Date.now(),
      );
    } catch (error) {
      return this.failed(error);
    }
    this.succeeded();
  }

  dropGroup(group: string, changed?: readonly string[]): Promise<void> {
    let batch = this.batch;
    if (!batch) {
      const drops: Drops = new Map();
      batch = this.batch = {
        drops,
        sent: Promise.resolve().then(() => {
          this.batch = undefined;
          return this.sendDrops(drops);
        }),
      };
    }
    addDrop(batch.drops, group, changed);
    return batch.sent;
  }

  onDropped(listener: DropListener): void {
    this.listeners.push(listener);
  }

  onMissedDrops(listener: () => void): void {
    this.missedListeners.push(listener);
  }

  /** Commands work but the subscriber is away (when both are down, memory is all there is: no). */
  missingDrops(): boolean {
    return this.subscriberDown && this.usable();
  }

  async close(): Promise<void> {
    await this.batch?.sent;
    this.closing = true;
    this.listeners.length = 0;
    this.missedListeners.length = 0;
    await Promise.all([quit(this.client), quit(this.subscriber)]);
  }

  private keyOf(group: string): string {
    return `${this.options.keyPrefix}g:${group}`;
  }

  private versionKeyOf(group: string): string {
    return `${this.options.keyPrefix}v:${group}`;
  }

  private expiryKeyOf(group: string): string {
    return `${this.options.keyPrefix}e:${group}`;
  }

  private async sendDrops(drops: Drops): Promise<void> {
    if (!drops.size) return;
    const keep = (): void => {
      for (const [group, changed] of drops) addDrop(this.unsent, group, changed ? [...changed] : undefined);
    };
    if (!this.usable()) {
      keep();
      return this.skipped();
    }
    try {
      const groups = [...drops.keys()];
      // `changed` only for groups where it is known; a replica that does not read it treats the drop as whole.
      const changed: Record<string, string[]> = {};
      for (const [group, items] of drops) if (items) changed[group] = [...items];
      const message = JSON.stringify(
        Object.keys(changed).length ? { from: this.instance, groups, changed } : { from: this.instance, groups },
      );
      const transaction = this.client
        .multi()
        .del(...groups.flatMap((group) => [this.keyOf(group), this.expiryKeyOf(group)]));
      for (const group of groups) transaction.incr(this.versionKeyOf(group));
      const replies = await transaction.publish(this.channel, message).exec();
      const failure = replies === null ? new Error('transaction aborted') : replies.find(([error]) => error)?.[0];
      if (failure) throw failure;
    } catch (error) {
      keep();
      return this.failed(error);
    }
    this.succeeded();
  }

  private tellMissed(): void {
    this.log.info(
      { redis: this.where },
      'invalidation channel back after a gap: dropping what this replica holds in memory and announcing every list ' +
        'as changed',
    );
    for (const listener of this.missedListeners) {
      try {
        listener();
      } catch (error) {
        this.log.error({ err: String(error) }, 'a missed-drops listener threw');
      }
    }
  }

  private heard(channel: string, message: string): void {
    if (channel !== this.channel) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (!isObject(parsed) || parsed.from === this.instance || !Array.isArray(parsed.groups)) return;
    const known = isObject(parsed.changed) ? parsed.changed : {};
    for (const group of parsed.groups) {
      if (typeof group !== 'string') continue;
      const items = known[group];
      const changed =
        Array.isArray(items) && items.every((item): item is string => typeof item === 'string') ? items : undefined;
      for (const listener of this.listeners) {
        try {
          listener(group, changed);
        } catch (error) {
          this.log.error({ err: String(error) }, 'a cache drop listener threw');
        }
      }
    }
  }

  private usable(): boolean {
    return this.client.status === 'ready' && (this.pausedUntil === 0 || Date.now() >= this.pausedUntil);
  }

  private skipped(): undefined {
    this.failures++;
    return undefined;
  }

  private failed(error: unknown): undefined {
    this.failures++;
    this.clientDown = true;
    this.pausedUntil = Date.now() + PAUSE_MS;
    this.updateOutage(error);
    return undefined;
  }

  private succeeded(): void {
    if (this.clientDown) this.recovered();
  }

  /** The client connection (re)connected, or a command worked again after failures. */
  private recovered(): void {
    this.clientDown = false;
    this.pausedUntil = 0;
    this.updateOutage();
    if (this.unsent.size) {
      const drops: Drops = new Map(this.unsent);
      this.unsent.clear();
      void this.sendDrops(drops);
    }
  }

  private connectionLost(which: 'client' | 'subscriber', error: unknown): void {
    if (this.closing) return;
    if (which === 'client') this.clientDown = true;
    else {
      this.subscriberDown = true;
      this.missedDrops = true;
    }
    this.updateOutage(error);
  }

  /** Logs only the edges: the first failure of an outage, and the moment both connections work again. */
  private updateOutage(error?: unknown): void {
    if (this.closing) return;
    if (this.clientDown || this.subscriberDown) this.outage.lost(error);
    else this.outage.back();
  }
}

function addDrop(drops: Drops, group: string, changed: readonly string[] | undefined): void {
  const known = drops.get(group);
  if (!changed) drops.set(group, null);
  else if (known === undefined) drops.set(group, new Set(changed));
  else if (known !== null) for (const item of changed) known.add(item);
}

function parseEntry(raw: string): StoredEntry | undefined {
  try {
    const entry: unknown = parseJson(raw);
    if (isObject(entry) && isObject(entry.result) && typeof entry.expiresAt === 'number') {
      return { result: entry.result, expiresAt: entry.expiresAt };
    }
  } catch {
    // a field this version did not write: treated as absent
  }
  return undefined;
}

async function quit(connection: Redis): Promise<void> {
  if (connection.status === 'ready') {
    try {
      await connection.quit();
      return;
    } catch {
      // fall through
    }
  }
  connection.disconnect();
}
