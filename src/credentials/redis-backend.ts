// credentials.store: redis — one HASH per principal (`<keyPrefix>cred:<principal index>`, a field per
// server), a HASH of counts per server for the status page, pending links as keys that expire by
// themselves and are taken with GETDEL (single use across every replica). A change is published on
// `<keyPrefix>cred-changed`, so other replicas drop their cached copy at once. Unlike the list cache, a
// failing Redis is an error here, not a miss: a caller whose token cannot be read is not "not connected".
import { randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { failFastRedisOptions, sentinelOptions, type SentinelSettings } from '../../infra/redis-fail-fast.js';
import type { CredentialBackend } from './backend.js';

export interface RedisBackendOptions {
  url: string;
  sentinel?: SentinelSettings;
  keyPrefix: string;
}

/** A credential read waits this long for Redis (longer than the cache's: a miss here costs a person a click). */
const COMMAND_TIMEOUT_MS = 2_000;

export class RedisBackend implements CredentialBackend {
  private readonly client: Redis;
  private subscriber: Redis | undefined;
  private readonly channel: string;
  private readonly instance = randomUUID();
  private readonly options: RedisBackendOptions;
  /** Settles once other replicas' changes are heard (or the subscription failed; then copies revalidate by age). */
  subscribed: Promise<void> = Promise.resolve();

  constructor(options: RedisBackendOptions) {
    this.options = options;
    this.channel = `${options.keyPrefix}cred-changed`;
    this.client = new Redis(options.url, this.connectionOptions('mcp-gateway-credentials'));
  }

  async read(principal: string, server: string): Promise<string | undefined> {
    return (await this.client.hget(this.key(principal), server)) ?? undefined;
  }

  async write(principal: string, server: string, sealed: string, renewal = false): Promise<void> {
    const fresh = await this.client.hset(this.key(principal), server, sealed);
    if (fresh === 1) await this.client.hincrby(this.countsKey(), server, 1);
    await this.announce(principal, server, renewal);
  }

  async remove(principal: string, server: string): Promise<boolean> {
    const removed = (await this.client.hdel(this.key(principal), server)) === 1;
    if (removed) {
      await this.client.hincrby(this.countsKey(), server, -1);
      await this.announce(principal, server, false);
    }
    return removed;
  }

  async readAll(principal: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.client.hgetall(this.key(principal))));
  }

  async counts(): Promise<Map<string, number>> {
    const raw = await this.client.hgetall(this.countsKey());
    return new Map(
      Object.entries(raw)
        .map(([server, count]) => [server, Number(count)] as const)
        .filter(([, count]) => count > 0),
    );
  }

  async putPending(id: string, sealed: string, expiresAt: number): Promise<void> {
    await this.client.set(this.pendingKey(id), sealed, 'PX', Math.max(1, expiresAt - Date.now()));
  }

  async peekPending(id: string): Promise<string | undefined> {
    return (await this.client.get(this.pendingKey(id))) ?? undefined;
  }

  async takePending(id: string): Promise<string | undefined> {
    return (await this.client.getdel(this.pendingKey(id))) ?? undefined;
  }

  onChanged(listener: (principal: string, server: string, renewal: boolean) => void): void {
    if (!this.subscriber) {
      this.subscriber = new Redis(this.options.url, {
        ...this.connectionOptions('mcp-gateway-credentials-sub'),
        enableOfflineQueue: true,
      });
      this.subscribed = this.subscriber.subscribe(this.channel).then(
        () => {},
        () => {},
      );
    }
    this.subscriber.on('message', (_channel: string, text: string) => {
      const [from, principal, server, kind] = text.split('\n');
      if (from !== this.instance && principal !== undefined && server !== undefined)
        listener(principal, server, kind === 'renewal');
    });
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private async announce(principal: string, server: string, renewal: boolean): Promise<void> {
    await this.client
      .publish(this.channel, `${this.instance}\n${principal}\n${server}${renewal ? '\nrenewal' : ''}`)
      .catch(() => {});
  }

  private connectionOptions(name: string): RedisOptions {
    return {
      ...failFastRedisOptions(name),
      ...sentinelOptions(this.options.sentinel, this.options.url),
      enableOfflineQueue: true, // a read right after start waits for the connection instead of failing
      commandTimeout: COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
    } satisfies RedisOptions;
  }

  private key(principal: string): string {
    return `${this.options.keyPrefix}cred:${principal}`;
  }
  private countsKey(): string {
    return `${this.options.keyPrefix}cred-counts`;
  }
  private pendingKey(id: string): string {
    return `${this.options.keyPrefix}cred-link:${id}`;
  }
}
