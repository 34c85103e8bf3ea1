// src/legacy-client/: 2025-era clients on the same endpoints as modern ones: initialize, sealed session ids,
// their GET streams. The relay of sessions across replicas (through Redis) is loaded only when Redis is
// configured, through loadSessionRelay.
export { LegacyClients } from './legacy-clients.js';
export type { LegacyExchange } from './legacy-clients.js';
export type { SessionRelay } from './session-relay.js';

/** session-relay.ts: 2025 sessions relayed across replicas. */
export const loadSessionRelay = () => import('./session-relay.js');
