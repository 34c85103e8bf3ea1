// The one rewrite a modern upstream's result may get: `resultType` added where the server left it out.
// Every 2026-07-28 result carries it, and the gateway is a 2026-07-28 server to its clients, so what it
// sends must validate. The spec tells clients to read a missing resultType as "complete", so that is the
// value added; nothing else in the result is touched (the key is appended, the other keys keep their order).
import { isObject, type JsonRpcResponse } from '../src/protocol/jsonrpc.js';
import type { Log } from '../src/protocol/log.js';

export class ResultTypeFiller {
  /** Said once per upstream: a server that leaves it out does so on every answer. */
  private noted = false;

  constructor(private readonly log: Log) {}

  /** Completes the response in place; on the success path one property test. */
  fill(method: string, response: JsonRpcResponse): void {
    if (!('result' in response)) return;
    const result = response.result;
    if (!isObject(result) || 'resultType' in result) return;
    result.resultType = 'complete';
    if (this.noted) return;
    this.noted = true;
    this.log.info({ method }, 'upstream sent a result without resultType (required since MCP 2026-07-28); mcp-gateway adds resultType "complete" to such results, as clients would read them');
  }
}
