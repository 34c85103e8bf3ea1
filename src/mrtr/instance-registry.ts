// Where each gateway instance can be reached by its replicas, shared through Redis, so that a retry landing
// on the wrong replica is forwarded to the one holding its call. Each instance refreshes its own entry;
// an instance that stops is forgotten when its entry expires. Entries are signed (peer-trust.ts): one that
// anyone with write access to Redis put there is ignored.
import type { Redis } from 'ioredis';
import type { Log } from '../../infra/log.js';
import { sentinelOptions, type SentinelSettings } from '../../infra/redis-fail-fast.js';
import type { PeerTrust } from './peer-trust.js';

const ENTRY_TTL_MS = 60_000;
const REFRESH_MS = 20_000;

export class InstanceRegistry {
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly log: Log,
    private readonly trust: PeerTrust,
    private readonly instance: string,
    url: string,
  ) {
    const register = (): void => {
      this.redis
        .set(this.key(instance), trust.registryEntry(instance, url, Date.now() + ENTRY_TTL_MS), 'PX', ENTRY_TTL_MS)
        .catch((error: Error) =>
          this.log.warn(
            { err: error.message },
            'could not register this instance in Redis; retries held here cannot be forwarded to it',
          ),
        );
    };
    register();
    this.timer = setInterval(register, REFRESH_MS);
    this.timer.unref();
  }

  /** Connects (ioredis is loaded only here) and registers `instance` at `url`. */
  static async create(options: {
    url: string;
    sentinel?: SentinelSettings;
    keyPrefix: string;
    instance: string;
    internalUrl: string;
    trust: PeerTrust;
    log: Log;
  }): Promise<InstanceRegistry> {
    const { Redis } = await import('ioredis');
    const redis = new Redis(options.url, {
      ...sentinelOptions(options.sentinel, options.url),
      protocol: 2,
      enableOfflineQueue: true,
      maxRetriesPerRequest: 1,
      commandTimeout: 1_000,
      connectTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 6), 5_000),
      connectionName: 'mcp-gateway-instances',
    });
    redis.on('error', () => {}); // the cache logs Redis outages; a failed lookup says so itself
    return new InstanceRegistry(
      redis,
      options.keyPrefix,
      options.log,
      options.trust,
      options.instance,
      options.internalUrl,
    );
  }

  /**
   * The URL of a live instance, or undefined when it is unknown (stopped, Redis down, or an entry no replica signed).
   */
  async lookup(instance: string): Promise<string | undefined> {
    try {
      const entry = await this.redis.get(this.key(instance));
      if (entry === null) return undefined;
      const url = this.trust.openRegistryEntry(instance, entry);
      if (url === undefined)
        this.log.warn(
          { instance },
          'ignored an instance entry in Redis that no replica with this mrtr.secret signed (or that expired); check ' +
            'who writes to this Redis',
        );
      return url;
    } catch (error) {
      this.log.warn({ err: (error as Error).message, instance }, 'could not look up an instance in Redis');
      return undefined;
    }
  }

  /**
   * Removes this instance's entry (it is draining and no longer listens), so other replicas answer a retry
   * for its calls at once instead of trying an address that refuses, or in some networks hangs.
   */
  async forget(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.del(this.key(this.instance)).catch(() => undefined); // unreachable: the entry expires
  }

  close(): void {
    clearInterval(this.timer);
    this.redis.disconnect();
  }

  private key(instance: string): string {
    return `${this.keyPrefix}instance:${instance}`;
  }
}
