// bridge/legacy/: what makes a 2025-era server look modern to the core, whatever carries it (a stdio child, an
// HTTP session, an HTTP+SSE connection): the initialize handshake, answers completed to the 2026 rules, the
// server's own requests mid-call relayed to the caller.
export {
  answerServerRequest,
  initializeParams,
  parseInitializeResult,
  relayServerRequest,
  toLegacyRequest,
} from './legacy-adapter.js';
export type { LegacyHandshake } from './legacy-adapter.js';
export { LegacyDialect } from './legacy-dialect.js';
export { openLegacyLine, serveServerRequest } from './legacy-line.js';
export type { LegacyLine } from './legacy-line.js';
