// A 2025 server on a connection that does not say which request a message belongs to (a stdio child):
// opening it with initialize, and its own requests mid-call (elicitation, sampling, roots), which go to the
// one caller in flight that may be asked, or are refused with the reason.
import type { Log } from '../../infra/log.js';
import {
  ErrorCode,
  errorResponse,
  isModernError,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { LEGACY_CLIENT_REQUESTS, type ServerInfo } from '../../protocol/mcp.js';
import type { PendingRequests } from '../pending-requests.js';
import { answerServerRequest, initializeParams, parseInitializeResult, relayServerRequest } from './legacy-adapter.js';
import { LegacyDialect } from './legacy-dialect.js';

/** What opening a 2025 session needs of the connection. */
export interface LegacyLine {
  readonly name: string;
  /** Sends the gateway's own request and settles with the answer. */
  ask(request: JsonRpcRequest, timeoutMs: number): Promise<JsonRpcResponse>;
  send(message: JsonRpcNotification | JsonRpcResponse): void;
  /** Whether the server is still there (a child may have exited). */
  alive(): boolean;
  /** What the server said on its way out, worded for the end of an error message ('' for nothing). */
  hint(): string;
}

export interface LegacyLineSettings {
  clientInfo: ServerInfo;
  startupTimeoutMs: number;
  /** ttlMs given to the server's cacheable results. */
  legacyTtlMs: number;
  timeoutMs: number;
}

/**
 * Runs initialize and resolves with the dialect of the session it opened, or 'modern' when the answer
 * shows a 2026-era server after all. Throws with a message naming what went wrong.
 */
export async function openLegacyLine(
  line: LegacyLine,
  settings: LegacyLineSettings,
  log: Log,
): Promise<LegacyDialect | 'modern'> {
  const response = await line.ask(
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: initializeParams(settings.clientInfo) },
    settings.startupTimeoutMs,
  );
  // A modern server may refuse initialize and then exit: its answer still tells the era.
  if ('error' in response && isModernError(response.error)) return 'modern';
  if (!line.alive()) throw new Error(`exited during initialize${line.hint()}`); // the exit has the details
  if ('error' in response) {
    throw new Error(
      `initialize failed: ${response.error.message} (code ${response.error.code})${line.hint()}; ` +
        `if this is a 2026-era server, set servers.${line.name}.era: modern`,
    );
  }
  const handshake = parseInitializeResult(response.result);
  line.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return new LegacyDialect(handshake, settings.legacyTtlMs, (own) => line.ask(own, settings.timeoutMs), log);
}

/**
 * A request the server sends the gateway: a question for the client goes to the one call in flight that
 * may ask (its clock paused while its caller answers); ping is answered; roots/list that no caller can be
 * asked is answered with the configured roots (none when unset); anything else is refused.
 */
export function serveServerRequest(
  request: JsonRpcRequest,
  pending: PendingRequests,
  line: LegacyLine,
  timeoutMs: number,
  log: Log,
  roots?: readonly JsonObject[],
): void {
  if (LEGACY_CLIENT_REQUESTS.has(request.method)) {
    const asker = pending.soleAsker();
    if (asker && 'handler' in asker && asker.handler) {
      pending.pauseClock(asker.id);
      void relayServerRequest(asker.handler, request).then((answer) => {
        pending.resumeClock(asker.id, timeoutMs);
        line.send(answer);
      });
      return;
    }
    if (request.method === 'roots/list') {
      // Servers ask for roots on their own, right after initialize (server-everything, server-filesystem):
      // answered as a client would that has the configured roots, or none, which is no cause for a warning.
      log.debug({ method: request.method, roots: roots?.length ?? 0 }, 'answered roots/list from the config');
      line.send({ jsonrpc: '2.0', id: request.id, result: { roots: roots ? [...roots] : [] } });
      return;
    }
    const why = !asker
      ? 'no call is in flight'
      : 'ambiguous' in asker
        ? `${asker.ambiguous} calls are in flight and stdio does not say which one asks`
        : 'its caller cannot be asked';
    log.warn({ method: request.method, why }, 'refused a request from the upstream');
    line.send(
      errorResponse(request.id, ErrorCode.MethodNotFound, `mcp-gateway cannot relay ${request.method}: ${why}`),
    );
    return;
  }
  const answer = answerServerRequest(request);
  if ('error' in answer) log.warn({ method: request.method }, 'refused a request from the upstream');
  line.send(answer);
}
