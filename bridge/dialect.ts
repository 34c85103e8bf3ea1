// How the gateway speaks to a server over one connection once the server's era is known. Transports hold
// one and call it without asking which era it is: the modern dialect (here) passes requests as they are and
// completes answers to the 2026 result rules; the 2025 one (legacy/legacy-dialect.ts) makes a 2025 server
// look modern. A transport picks its dialect in one place: where a connection learns its server's era.
import type { Log } from '../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.js';
import { ResultFiller } from './modern-result.js';
import type { RequestOptions } from './upstream.js';

export interface Dialect {
  /**
   * Answers a request here instead of the server, or readies the connection for it first; a result of
   * undefined (or a promise of it) means: send it. Absent when nothing is answered here, so the hot path
   * pays nothing for it.
   */
  readonly intercept:
    | ((
        message: JsonRpcRequest,
        options: RequestOptions,
      ) => JsonRpcResponse | Promise<JsonRpcResponse | undefined> | undefined)
    | undefined;
  /** The request as the server must see it (a copy when that differs); absent: as it is. */
  readonly outgoing: ((message: JsonRpcRequest) => JsonRpcRequest) | undefined;
  /** Completes an answer in place before it goes back to its caller. */
  complete(method: string, response: JsonRpcResponse): void;
  /**
   * The server may log for any request in flight, not only for one that asked for logs: a connection that
   * does not say which request a log message belongs to can then attribute it only to a lone request.
   */
  readonly logsUnasked: boolean;
}

/** A 2026-era server: requests go as they are; answers get the fields the revision requires. */
export function modernDialect(log: Log): Dialect {
  const results = new ResultFiller(log);
  return {
    intercept: undefined,
    outgoing: undefined,
    complete: (method, response) => results.fill(method, response),
    logsUnasked: false,
  };
}
