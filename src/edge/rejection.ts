// One place that words every refusal the edge sends: an HTTP status plus a JSON-RPC error body.
import { errorResponse, type JsonRpcFailure, type JsonRpcId } from '../../protocol/jsonrpc.js';

export interface Rejection {
  status: 400 | 401 | 403 | 404 | 405 | 406 | 413 | 415 | 429 | 500 | 503;
  body: JsonRpcFailure;
}

/** A rejection that carries headers of its own (a challenge's WWW-Authenticate, a 429's Retry-After). */
export interface Refusal extends Rejection {
  headers: Record<string, string>;
}

export function reject(
  status: Rejection['status'],
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): Rejection {
  return { status, body: errorResponse(id, code, message, data) };
}
