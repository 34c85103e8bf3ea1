// How the gateway talks to Redis wherever it does (shared cache, rate limits, 2025 sessions): fail fast
// rather than queue, because Redis only ever speeds a request up or shares a count, and must never stall one.

/**
 * Longest a command may take before it counts as failed (Redis hanging rather than gone), unless
 * cache.commandTimeoutMs says otherwise: an operator whose Redis is far away (another zone, a TLS proxy)
 * raises it so that ordinary round trips are not taken for an outage.
 */
export const COMMAND_TIMEOUT_MS = 150;
/** After a failed command, how long commands are skipped before the next one tries Redis again. */
export const PAUSE_MS = 500;
export const CONNECT_TIMEOUT_MS = 1_000;
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * ioredis options (structurally; this module imports nothing) for a fail-fast connection named `name`, whose
 * commands count as failed after `commandTimeoutMs`.
 */
export function failFastRedisOptions(name: string, commandTimeoutMs = COMMAND_TIMEOUT_MS) {
  return {
    protocol: 2 as const, // RESP2 works with every Redis (and look-alike) that has Lua; nothing here needs RESP3
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 6), MAX_RECONNECT_DELAY_MS),
    connectionName: name,
  };
}

/** cache.sentinel: where Sentinel runs and which primary it watches (validated by the config). */
export interface SentinelSettings {
  /** The primary's name as the sentinels know it (`sentinel monitor <name> …`). */
  name: string;
  /** host:port of each sentinel; any one that answers will do. */
  nodes: readonly string[];
  username?: string;
  password?: string;
  /** TLS to the sentinels (TLS to the primary follows the URL: rediss://). */
  tls?: boolean;
}

/**
 * ioredis options (structurally) that make a connection ask the sentinels for the current primary and
 * follow it through failovers. The connection's URL then gives only the primary's credentials, database
 * and TLS; its host is not used. Without `sentinel`, nothing: the URL names the server.
 */
export function sentinelOptions(sentinel: SentinelSettings | undefined, url: string) {
  if (!sentinel) return {};
  return {
    name: sentinel.name,
    sentinels: sentinel.nodes.map((node) => {
      const colon = node.lastIndexOf(':');
      return { host: node.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(node.slice(colon + 1)) };
    }),
    sentinelUsername: sentinel.username,
    sentinelPassword: sentinel.password,
    sentinelTLS: sentinel.tls ? {} : undefined,
    enableTLSForSentinelMode: url.startsWith('rediss://'),
    // Asking a sentinel is part of connecting: as bounded as connecting itself.
    sentinelCommandTimeout: CONNECT_TIMEOUT_MS,
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
