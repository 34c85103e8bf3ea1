// The HTTP status an MCP answer travels with on Streamable HTTP, decided here and nowhere else. Every path
// that answers a request (JSON, or an SSE stream that has not started yet, on /mcp and /servers/<name>/mcp)
// asks `httpStatusOf`, whether the error came from an upstream or from the gateway itself.
//
// The spec fixes the status of a few errors: HeaderMismatch (-32020), MissingRequiredClientCapability
// (-32021) and UnsupportedProtocolVersion (-32022) are 400, and Method not found (-32601) is 404. Those codes
// have one meaning each, so the code alone decides.
//
// -32602 has two: a request whose `_meta` envelope is invalid (400, a transport-level rejection) and an
// ordinary invalid-params error from a handler — unknown tool, bad arguments, unknown resource — which
// travels in-band with 200. The JSON-RPC error itself does not say which it is (the SDK v2 server, too,
// tells them apart only by where they were raised), so the gateway goes by what the upstream said: a
// -32602 an HTTP upstream answered with HTTP 400 keeps its 400; every other -32602 (from a stdio child,
// from the gateway's own routing, or with 200) travels with 200. The gateway checks `_meta` itself before
// anything goes upstream, so a stdio child's envelope rejection is not expected.
//
// A refusal because an upstream is at capacity (src/layers/limits/, marked by overload.ts) is 503: -32603 alone
// would say nothing a client or balancer could act on.
import { ErrorCode, type JsonRpcResponse } from './jsonrpc.js';
import { keepRetryAfter, retryAfterOf } from './overload.js';

/** The HTTP status an HTTP upstream answered an error with, kept on the error response it returned. */
export const UPSTREAM_STATUS: unique symbol = Symbol('upstreamStatus');

export type MarkedResponse = JsonRpcResponse & { [UPSTREAM_STATUS]?: number };

/**
 * Carries what decides an error's status onto a copy (structuredClone drops symbol-keyed properties): the
 * upstream's own HTTP status and a capacity refusal's Retry-After.
 */
export function keepStatusMarks(from: JsonRpcResponse, to: JsonRpcResponse): void {
  const status = (from as MarkedResponse)[UPSTREAM_STATUS];
  if (status !== undefined) (to as MarkedResponse)[UPSTREAM_STATUS] = status;
  keepRetryAfter(from, to);
}

const FIXED_STATUS: ReadonlyMap<number, 400 | 404> = new Map([
  [ErrorCode.HeaderMismatch, 400],
  [ErrorCode.MissingRequiredClientCapability, 400],
  [ErrorCode.UnsupportedProtocolVersion, 400],
  [ErrorCode.MethodNotFound, 404],
]);

/** 200 for every result and for errors whose status the spec leaves to the payload. */
export function httpStatusOf(response: JsonRpcResponse): 200 | 400 | 404 | 503 {
  if (!('error' in response)) return 200;
  if (retryAfterOf(response) !== undefined) return 503;
  const code = response.error.code;
  const fixed = FIXED_STATUS.get(code);
  if (fixed !== undefined) return fixed;
  if (code === ErrorCode.InvalidParams && (response as MarkedResponse)[UPSTREAM_STATUS] === 400) return 400;
  return 200;
}
