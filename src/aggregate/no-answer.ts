// The answer to a /mcp list that no upstream answered. Only when every one of them refused for lack of
// capacity is the list itself a capacity refusal (503, with the soonest Retry-After any of them gave): any
// other failure among them is a fault that waiting need not cure, so the answer is an ordinary error.
import { ErrorCode, errorResponse, type JsonRpcId, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { overloadedResponse } from '../../protocol/overload.js';

/** `failures` worded per upstream; `retryAfters` one per failure that was a capacity refusal. */
export function noUpstreamAnswered(
  id: JsonRpcId,
  method: string,
  failures: readonly string[],
  retryAfters: readonly number[],
): JsonRpcResponse {
  const said = failures.join('; ');
  if (retryAfters.length === failures.length) {
    return overloadedResponse(
      id,
      `No upstream answered ${method}, every one is at capacity: ${said}`,
      { reason: 'every_upstream_at_capacity' },
      Math.min(...retryAfters),
    );
  }
  return errorResponse(id, ErrorCode.InternalError, `No upstream answered ${method}: ${said}`);
}
