// The cache.sentinel and cache.cluster keys: how the gateway finds a Redis that is more than one server.
import { z } from 'zod';

/** true/false, also from ${VAR} expansion (as in config.ts). */
const bool = () => z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());
const hostPort = z
  .string()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+):\d{1,5}$/, 'give host:port, for example sentinel-0.redis:26379');

/** Find the primary through Sentinel; cache.url then gives only its credentials, database and TLS. */
export const redisSentinel = z.strictObject({
  /** The primary's name as the sentinels monitor it. */
  name: z.string().min(1, 'give the name the sentinels monitor the primary under (sentinel monitor <name> …)'),
  nodes: z.array(hostPort).min(1, 'list at least one sentinel as host:port'),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  /** TLS to the sentinels; TLS to the primary follows cache.url (rediss://). */
  tls: bool().default(false),
});

/** Not supported; the key exists only to say what to do instead. */
export const redisCluster = z
  .unknown()
  .refine(
    () => false,
    'Redis Cluster is not supported (the cache keeps each list in several keys that a cluster may split): point ' +
      'cache.url at one primary, or use cache.sentinel for failover',
  );
