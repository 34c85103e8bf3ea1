// The list cache and the store under it: memory alone, or memory in front of Redis.
import { ListCache } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import type { CacheStore } from '../../cache/store.js';
import { TieredStore } from '../../cache/tiered-store.js';
import type { GatewayConfig } from '../config/index.js';
import type { Log } from '../../infra/log.js';

export async function createCache(settings: GatewayConfig['cache'], log: Log): Promise<ListCache> {
  const memory = new MemoryStore({ maxEntries: settings.maxEntries, maxBytes: settings.maxBytes });
  // With Redis, memory stays in front: shared entries are read once per replica, and a Redis outage
  // still leaves this replica what it holds.
  let store: CacheStore = memory;
  if (settings.store === 'redis') {
    // Loaded only when configured: a gateway without Redis does not carry ioredis in memory.
    const { RedisStore } = await import('../../cache/redis-store.js');
    store = new TieredStore(
      memory,
      new RedisStore({
        url: settings.url,
        sentinel: settings.sentinel,
        keyPrefix: settings.keyPrefix,
        commandTimeoutMs: settings.commandTimeoutMs,
        log,
      }),
    );
  }
  return new ListCache(store, { minTtlMs: settings.minTtlMs, maxTtlMs: settings.maxTtlMs, log });
}
