// 2025 clients' sessions: the key their session ids are sealed with, and whether they travel between
// replicas through Redis.
import { randomBytes } from 'node:crypto';
import type { GatewayConfig } from '../config/index.js';
import type { Log } from '../../infra/log.js';
import { LegacyClients, loadSessionRelay, type SessionRelay } from '../legacy-client/index.js';
import type { ListenHub } from '../notify/index.js';

export interface LegacySessions {
  clients: LegacyClients;
  /** Closed last on shutdown; undefined when sessions stay on this replica. */
  relay: SessionRelay | undefined;
}

export async function createLegacySessions(
  config: GatewayConfig,
  listen: ListenHub,
  parentLog: Log,
): Promise<LegacySessions> {
  const secret = config.legacyClients.sessionSecret ? Buffer.from(config.legacyClients.sessionSecret) : randomBytes(32);
  const log = parentLog.child({ part: 'legacy-clients' });
  const relay = await sessionRelay(config, secret, log);
  return {
    clients: new LegacyClients({ secret, sessionTtlMs: config.legacyClients.sessionTtlMs, listen, relay, log }),
    relay,
  };
}

/**
 * With Redis and a shared session secret, a 2025 session's stream, subscriptions and answers travel between
 * replicas: no stickiness needed. Without the secret no other replica can open this one's session ids, so
 * the relay's two connections would serve nothing.
 */
async function sessionRelay(config: GatewayConfig, secret: Buffer, log: Log): Promise<SessionRelay | undefined> {
  const { cache, legacyClients } = config;
  if (cache.store === 'redis' && legacyClients.sessionSecret) {
    // Loaded only when configured: a gateway without Redis does not carry ioredis in memory.
    const { SessionRelay } = await loadSessionRelay();
    const { url, sentinel, keyPrefix, commandTimeoutMs } = cache;
    return new SessionRelay({ url, sentinel, keyPrefix, commandTimeoutMs, secret, log });
  }
  if (cache.store === 'redis') {
    log.info(
      {},
      "2025 clients' sessions stay on the replica that opened them: without legacyClients.sessionSecret each " +
        'replica has its own random key. ' +
        'Set the same legacyClients.sessionSecret on every replica to share them through Redis, or send each 2025 ' +
        'client to one replica (sticky sessions)',
    );
  }
  return undefined;
}
