// How the upstreams hear that a caller went away, and the one answer a request gets when it did.
// CancelSignal is the slice of AbortSignal they use; an AbortSignal fits it, and so does the edge's
// cheaper ClientGone, which spares every request an AbortController.
import { ErrorCode, errorResponse, type JsonRpcFailure, type JsonRpcId } from './jsonrpc.js';

export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * The answer to a request whose client went away before it was answered, whichever layer noticed (queue,
 * cache wait, held MRTR call, stdio child): nobody reads it, but every path still resolves with one.
 */
export function cancelledResponse(id: JsonRpcId): JsonRpcFailure {
  return errorResponse(id, ErrorCode.InternalError, 'Request cancelled by the client');
}
