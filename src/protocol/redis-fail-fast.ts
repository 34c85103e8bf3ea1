// How the gateway talks to Redis wherever it does (shared cache, rate limits, 2025 sessions): fail fast
// rather than queue, because Redis only ever speeds a request up or shares a count, and must never stall one.

/** Longest a command may take before it counts as failed (Redis hanging rather than gone). */
export const COMMAND_TIMEOUT_MS = 150;
/** After a failed command, how long commands are skipped before the next one tries Redis again. */
export const PAUSE_MS = 500;
export const CONNECT_TIMEOUT_MS = 1_000;
const MAX_RECONNECT_DELAY_MS = 2_000;

/** ioredis options (structurally; this module imports nothing) for a fail-fast connection named `name`. */
export function failFastRedisOptions(name: string) {
  return {
    protocol: 2 as const, // RESP2 works with every Redis (and look-alike) that has Lua; nothing here needs RESP3
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 6), MAX_RECONNECT_DELAY_MS),
    connectionName: name,
  };
}

/** host:port of a Redis URL, without credentials (a URL may carry a password), for logs and errors. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'redis';
  }
}
