// Why an upstream gave no answer of its own, carried from the bridge to the metrics on the error response
// it made instead: timed out, could not be reached (down, refused, crashed, not ready), or answered with
// something that is no JSON-RPC response. A symbol-keyed property, as
// overload.ts marks capacity refusals: JSON.stringify never writes it and no upstream's answer can carry it.
// An error response without a mark is the server's own JSON-RPC error. Imports nothing but jsonrpc.
import type { JsonRpcFailure, JsonRpcResponse } from './jsonrpc.js';

/**
 * timeout: no answer in time; unreachable: not reached, not ready, or gone mid-call; bad_answer: answered, but with no
 * JSON-RPC response.
 */
export type FailureMark = 'timeout' | 'unreachable' | 'bad_answer';

const FAILURE = Symbol('mcp-gateway.upstreamFailure');

type Marked = JsonRpcFailure & { [FAILURE]?: FailureMark };

/** Marks an error response the gateway made because the upstream did not answer; returns it. */
export function markFailure<T extends JsonRpcResponse>(response: T, mark: FailureMark): T {
  (response as Marked)[FAILURE] = mark;
  return response;
}

/** The mark markFailure left, or undefined for the upstream's own answer. */
export function failureMarkOf(response: JsonRpcResponse): FailureMark | undefined {
  return (response as Marked)[FAILURE];
}
