// The WWW-Authenticate challenge an upstream refused a request with (HTTP 401 or 403), carried from the
// bridge to the layer that holds the caller's credential (src/credentials/): a 403 `insufficient_scope`
// names the scopes a step-up must ask for. A symbol-keyed property, as failure-mark.ts marks failures:
// JSON.stringify never writes it, so the challenge never reaches the caller. Imports nothing but jsonrpc.
import type { JsonRpcResponse } from './jsonrpc.js';

const CHALLENGE = Symbol('mcp-gateway.authChallenge');

type Marked = JsonRpcResponse & { [CHALLENGE]?: string };

/** Keeps the upstream's WWW-Authenticate header on the error response made for its refusal; returns it. */
export function markChallenge<T extends JsonRpcResponse>(response: T, challenge: string | undefined): T {
  if (challenge !== undefined) (response as Marked)[CHALLENGE] = challenge;
  return response;
}

/** The WWW-Authenticate header the upstream refused with, if any. */
export function challengeOf(response: JsonRpcResponse): string | undefined {
  return (response as Marked)[CHALLENGE];
}
