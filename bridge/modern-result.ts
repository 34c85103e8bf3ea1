// The fields every 2026-07-28 result of its kind must carry, added where the server left them out — for a
// modern upstream's answers (ResultFiller, which also logs) and a 2025 server's (legacy-adapter.ts), by the
// one function below. The gateway is a 2026-07-28 server to its clients, so what it sends must validate.
// Each value added is the one the spec tells clients to read for the missing field:
// - `resultType` "complete" on every result;
// - on a complete result of a cacheable method (lists, `resources/read`, `server/discover`): `ttlMs`
//   (the default given: 0 for a modern server, absent = stale; `servers.<name>.legacyTtlMs` for a 2025
//   one, which never sends it) and `cacheScope` "private" (the reading that never shares an answer across
//   callers). An `input_required` result is no answer to cache and gets neither.
// A field the server sent, whatever its value, is its own. Nothing else is touched: the keys are appended,
// the other keys keep their order.
import { isObject, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { Log } from '../infra/log.js';
import { CACHEABLE_METHODS } from '../protocol/mcp.js';

export interface ResultDefaults {
  /** ttlMs for a cacheable result that has none. */
  readonly ttlMs: number;
}

/** Told each field completeResult added (for a log line); optional. */
export type OnAdded = (method: string, field: string, value: unknown) => void;

/**
 * Completes `result` in place by the rules above. On a tools/call result that has its resultType: one
 * property test and one Set lookup, no allocation.
 */
export function completeResult(
  method: string,
  result: Record<string, unknown>,
  defaults: ResultDefaults,
  onAdded?: OnAdded,
): void {
  if (!('resultType' in result)) add(method, result, 'resultType', 'complete', onAdded);
  if (!CACHEABLE_METHODS.has(method) || result.resultType !== 'complete') return;
  if (!('ttlMs' in result)) add(method, result, 'ttlMs', defaults.ttlMs, onAdded);
  if (!('cacheScope' in result)) add(method, result, 'cacheScope', 'private', onAdded);
}

function add(
  method: string,
  result: Record<string, unknown>,
  field: string,
  value: unknown,
  onAdded: OnAdded | undefined,
): void {
  result[field] = value;
  onAdded?.(method, field, value);
}

const MODERN_DEFAULTS: ResultDefaults = { ttlMs: 0 };

/** A modern upstream's answers, completed, with one log line per upstream and field. */
export class ResultFiller {
  /** Said once per upstream and field: a server that leaves one out does so on every answer. */
  private readonly noted = new Set<string>();

  constructor(private readonly log: Log) {}

  /** Completes the response in place (results only; errors pass as they came). */
  fill(method: string, response: JsonRpcResponse): void {
    if (!('result' in response)) return;
    const result = response.result;
    if (isObject(result)) completeResult(method, result, MODERN_DEFAULTS, this.noteAdded);
  }

  /** Bound once, so filling allocates nothing. */
  private readonly noteAdded: OnAdded = (method, field, value) => {
    if (this.noted.has(field)) return;
    this.noted.add(field);
    this.log.info(
      { method, field, added: value },
      `upstream sent a result without ${field} (required since MCP 2026-07-28); mcp-gateway adds ` +
        `${JSON.stringify(value)}, as clients would read it`,
    );
  };
}
