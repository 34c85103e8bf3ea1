// A 2025-era server made to look modern, whatever carries it: requests lose the modern _meta keys, answers
// are completed to the 2026 rules, server/discover is answered from what the server said at initialize, and
// a caller's log level is set on the shared connection before its request goes out (legacy-log-level.ts).
import type { Log } from '../../src/infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/jsonrpc.js';
import type { Dialect } from '../dialect.js';
import { discoverResult, toLegacyRequest, toModernResponse, type LegacyHandshake, type LegacyOptions } from './legacy-adapter.js';
import { asksForLogs, LegacyLogLevel, type SendOwn } from './legacy-log-level.js';

export class LegacyDialect implements Dialect {
  readonly outgoing = toLegacyRequest;
  readonly logsUnasked = true;
  private readonly options: LegacyOptions;
  /** The connection's log level, raised as callers ask (a new connection starts from the server's default). */
  private readonly logLevel: LegacyLogLevel;

  constructor(
    readonly handshake: LegacyHandshake,
    ttlMs: number,
    /** Sends the gateway's own request on the connection (logging/setLevel). */
    sendOwn: SendOwn,
    log: Log,
  ) {
    this.options = { ttlMs };
    this.logLevel = new LegacyLogLevel('logging' in handshake.capabilities, sendOwn, log);
  }

  readonly intercept = (message: JsonRpcRequest): JsonRpcResponse | Promise<JsonRpcResponse | undefined> | undefined => {
    if (message.method === 'server/discover') return { jsonrpc: '2.0', id: message.id, result: discoverResult(this.handshake, this.options) };
    return asksForLogs(message) ? this.logLevel.prepare(message) : undefined;
  };

  complete(method: string, response: JsonRpcResponse): void {
    toModernResponse(method, response, this.handshake, this.options);
  }
}
