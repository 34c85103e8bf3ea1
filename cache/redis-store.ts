// The shared store: one Redis HASH per group (`<keyPrefix>g:<group>`), fields holding JSON
// `{result, expiresAt}`, the hash living as long as its longest-lived field. A drop deletes the hash and
// publishes the group on `<keyPrefix>invalidate`; a second connection subscribes to that channel and hands
// the drops other replicas made to `onDropped`.
//
// Redis being down must never fail or slow a request: commands are not queued while disconnected and fail
// at once, or after COMMAND_TIMEOUT_MS if Redis hangs, after which commands are skipped for PAUSE_MS before
// one is tried again (so a hanging Redis costs one timeout per pause, not one per request). Reads then miss,
// writes are skipped, drops are kept and sent when Redis is back. Each outage is logged once when it starts
// and once when it ends.
import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { isObject } from '../src/protocol/jsonrpc.js';
import type { Log } from '../src/protocol/log.js';
import { describeRedisUrl, failFastRedisOptions, PAUSE_MS } from '../src/protocol/redis-fail-fast.js';
import type { CacheStore, StoredEntry } from './store.js';

export interface RedisStoreOptions {
  /** redis:// or rediss:// URL. */
  url: string;
  /** Prefixes every key and the invalidation channel; replicas sharing a cache use the same prefix. */
  keyPrefix: string;
  log: Log;
}


/**
 * HSET, then make the hash live at least ttl ms more (PTTL is -1 without an expiry, -2 without the key).
 * Skipped when the group was dropped since the fetch began (its version moved on): a fetch that started
 * before another replica's invalidation must not put the stale answer back after it.
 */
const WRITE_SCRIPT = `
if ARGV[4] ~= '' and (redis.call('GET', KEYS[2]) or '0') ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = tonumber(ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`;

export class RedisStore implements CacheStore {
  private readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;
  /** Tags this instance's own invalidation messages, which its subscriber then ignores. */
  private readonly instance = randomUUID();
  private readonly listeners: ((group: string) => void)[] = [];
  /** Drops asked for in this tick: sent together as one DEL and one message. */
  private batch: { groups: Set<string>; sent: Promise<void> } | undefined;
  /** Drops Redis did not take (it was down): sent again as soon as it is back. */
  private readonly unsent = new Set<string>();
  private clientDown = false;
  /** Commands are skipped until then (epoch ms) after a failure. */
  private pausedUntil = 0;
  private subscriberDown = false;
  private outage = false;
  private closing = false;
  private failures = 0;
  private readonly log: Log;
  private readonly where: string;

  constructor(private readonly options: RedisStoreOptions) {
    this.log = options.log;
    this.channel = `${options.keyPrefix}invalidate`;
    this.where = describeRedisUrl(options.url);
    // autoResubscribe off: subscribed again on every 'ready' below, which also covers a failed first try.
    this.client = new Redis(options.url, { ...failFastRedisOptions('mcp-gateway-cache'), autoResubscribe: false } satisfies RedisOptions);
    this.subscriber = new Redis(options.url, { ...failFastRedisOptions('mcp-gateway-cache-sub'), autoResubscribe: false } satisfies RedisOptions);

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
        },
        (error: unknown) => this.connectionLost('subscriber', error),
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
      await this.client.eval(WRITE_SCRIPT, 2, this.keyOf(group), this.versionKeyOf(group), field, json, ttl, version ?? '');
    } catch (error) {
      return this.failed(error);
    }
    this.succeeded();
  }

  dropGroup(group: string): Promise<void> {
    let batch = this.batch;
    if (!batch) {
      const groups = new Set<string>();
      batch = this.batch = {
        groups,
        sent: Promise.resolve().then(() => {
          this.batch = undefined;
          return this.sendDrops([...groups]);
        }),
      };
    }
    batch.groups.add(group);
    return batch.sent;
  }

  onDropped(listener: (group: string) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    await this.batch?.sent;
    this.closing = true;
    this.listeners.length = 0;
    await Promise.all([quit(this.client), quit(this.subscriber)]);
  }

  private keyOf(group: string): string {
    return `${this.options.keyPrefix}g:${group}`;
  }

  private versionKeyOf(group: string): string {
    return `${this.options.keyPrefix}v:${group}`;
  }

  private async sendDrops(groups: string[]): Promise<void> {
    if (!groups.length) return;
    if (!this.usable()) {
      for (const group of groups) this.unsent.add(group);
      return this.skipped();
    }
    try {
      const message = JSON.stringify({ from: this.instance, groups });
      const transaction = this.client.multi().del(...groups.map((group) => this.keyOf(group)));
      for (const group of groups) transaction.incr(this.versionKeyOf(group));
      const replies = await transaction.publish(this.channel, message).exec();
      const failure = replies === null ? new Error('transaction aborted') : replies.find(([error]) => error)?.[0];
      if (failure) throw failure;
    } catch (error) {
      for (const group of groups) this.unsent.add(group);
      return this.failed(error);
    }
    this.succeeded();
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
    for (const group of parsed.groups) {
      if (typeof group !== 'string') continue;
      for (const listener of this.listeners) {
        try {
          listener(group);
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
      const groups = [...this.unsent];
      this.unsent.clear();
      void this.sendDrops(groups);
    }
  }

  private connectionLost(which: 'client' | 'subscriber', error: unknown): void {
    if (this.closing) return;
    if (which === 'client') this.clientDown = true;
    else this.subscriberDown = true;
    this.updateOutage(error);
  }

  /** Logs only the edges: the first failure of an outage, and the moment both connections work again. */
  private updateOutage(error?: unknown): void {
    if (this.closing) return;
    const down = this.clientDown || this.subscriberDown;
    if (down === this.outage) return;
    this.outage = down;
    if (down) {
      this.log.warn(
        { redis: this.where, err: error instanceof Error ? error.message : String(error) },
        'Redis unreachable: answering from upstreams without the shared cache until it is back (reconnecting)',
      );
    } else {
      this.log.info({ redis: this.where }, 'Redis reachable again: shared cache and invalidations restored');
    }
  }
}

function parseEntry(raw: string): StoredEntry | undefined {
  try {
    const entry: unknown = JSON.parse(raw);
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
