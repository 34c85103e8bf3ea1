// How a refusal for lack of capacity travels from the limiter (below the cache) to the edge, which answers
// it with HTTP 503 (error-status.ts) and Retry-After. A symbol-keyed property: JSON.stringify never writes it, object
// spread
// (the MRTR bridge re-ids answers that way) keeps it, and no upstream's answer can carry it. Imports nothing.
import { ErrorCode, errorResponse, type JsonRpcFailure, type JsonRpcId, type JsonRpcResponse } from './jsonrpc.js';

const RETRY_AFTER = Symbol('mcp-gateway.retryAfterSeconds');

type Marked = JsonRpcFailure & { [RETRY_AFTER]?: number };

/** A -32603 answer the edge sends as 503 with `Retry-After: retryAfterSeconds`. */
export function overloadedResponse(
  id: JsonRpcId,
  message: string,
  data: Record<string, unknown>,
  retryAfterSeconds: number,
): JsonRpcFailure {
  const response: Marked = errorResponse(id, ErrorCode.InternalError, message, { ...data, retryAfterSeconds });
  response[RETRY_AFTER] = retryAfterSeconds;
  return response;
}

/** Seconds to wait before retrying, when the answer is a refusal for lack of capacity; otherwise undefined. */
export function retryAfterOf(response: JsonRpcResponse): number | undefined {
  return (response as Marked)[RETRY_AFTER];
}

/** Carries the refusal's mark onto a copy (structuredClone drops symbol-keyed properties). */
export function keepRetryAfter(from: JsonRpcResponse, to: JsonRpcResponse): void {
  const seconds = (from as Marked)[RETRY_AFTER];
  if (seconds !== undefined) (to as Marked)[RETRY_AFTER] = seconds;
}

/** The Retry-After header for a refusal for lack of capacity; undefined for any other answer. */
export function retryAfterHeaders(response: JsonRpcResponse): Record<string, string> | undefined {
  const seconds = (response as Marked)[RETRY_AFTER];
  return seconds === undefined ? undefined : { 'retry-after': String(seconds) };
}
