// The rewrites a modern upstream's result may get: the fields every 2026-07-28 result of its kind must carry,
// added where the server left them out. The gateway is a 2026-07-28 server to its clients, so what it sends
// must validate. Each value added is the one the spec tells clients to read for the missing field:
// `resultType` "complete"; on cacheable results `ttlMs` 0 (absent = stale) and `cacheScope` "private" (the
// reading that never shares an answer across callers). Nothing else in the result is touched (the keys are
// appended, the other keys keep their order).
import { isObject, type JsonRpcResponse } from '../src/protocol/jsonrpc.js';
import type { Log } from '../src/protocol/log.js';
import { CACHEABLE_METHODS } from '../src/protocol/mcp.js';

export class ResultTypeFiller {
  /** Said once per upstream and field: a server that leaves one out does so on every answer. */
  private readonly noted = new Set<string>();

  constructor(private readonly log: Log) {}

  /** Completes the response in place; on a tools/call success one property test and one Set lookup. */
  fill(method: string, response: JsonRpcResponse): void {
    if (!('result' in response)) return;
    const result = response.result;
    if (!isObject(result)) return;
    if (!('resultType' in result)) this.add(method, result, 'resultType', 'complete');
    if (!CACHEABLE_METHODS.has(method) || result.resultType !== 'complete') return;
    if (!('ttlMs' in result)) this.add(method, result, 'ttlMs', 0);
    if (!('cacheScope' in result)) this.add(method, result, 'cacheScope', 'private');
  }

  private add(method: string, result: Record<string, unknown>, field: string, value: unknown): void {
    result[field] = value;
    if (this.noted.has(field)) return;
    this.noted.add(field);
    this.log.info({ method, field, added: value }, `upstream sent a result without ${field} (required since MCP 2026-07-28); mcp-gateway adds ${JSON.stringify(value)}, as clients would read it`);
  }
}
