// Two in-process replicas sharing the Redis on 127.0.0.1:6379 (the cache store, and so the MRTR holder
// registry) and one mrtr.secret: what a test needs to send a retry to the replica that does not hold the call.
import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import { Redis } from 'ioredis';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually } from './harness.js';

export const SHARED_REDIS = 'redis://127.0.0.1:6379';

export interface Replicas {
  /** Both set once the describe's `before` hooks have run. */
  a: RunningGateway;
  b: RunningGateway;
}

/**
 * Adds hooks to the calling describe: before, starts two replicas with `start(rest)` (rest: the shared
 * cache and mrtr settings) and waits until both have registered in Redis, so that either can find the
 * other; after, closes them and deletes every key under their prefix (`<name>-<uuid>:`).
 */
export function twoReplicas(name: string, start: (rest: Record<string, unknown>) => Promise<RunningGateway>): Replicas {
  const keyPrefix = `${name}-${randomUUID()}:`;
  const replicas = {} as Replicas;
  let redis: Redis;
  before(async () => {
    const rest = {
      cache: { store: 'redis', url: SHARED_REDIS, keyPrefix },
      mrtr: { secret: 'a shared mrtr secret, 32+ chars long' },
    };
    [replicas.a, replicas.b] = await Promise.all([start(rest), start(rest)]);
    redis = new Redis(SHARED_REDIS, { lazyConnect: true });
    await redis.connect();
    await eventually(async () => (await redis.keys(`${keyPrefix}instance:*`)).length === 2, 10_000);
  });
  after(async () => {
    await Promise.all([replicas.a?.close(), replicas.b?.close()]);
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  return replicas;
}
